/* In-process A/B timing of ridge_sgemm from two libridge builds, for changes whose effect is
 * smaller than this VM's run-to-run noise (docs/PERFORMANCE.md, gemm, session 5).
 *
 * Both shared libraries are loaded with dlopen(RTLD_LOCAL), each with its own context (threads
 * from RIDGE_NUM_THREADS, default 1). The two are called alternately, the first of each round
 * swapping, one product per call. Each call is bracketed by a register-only FMA loop (~1 ms),
 * and its rate is divided by the faster of the two loops: a slow phase of the shared host
 * lowers both, so the ratio moves less than the raw rate. Printed: each build's median rate as
 * % of the FMA loop, and the median and range of the per-round ratio B/A (> 1: B faster).
 *
 * A build's blocking can be forced (ridge_gemm_set_blocking_for_tests: KC,MC,NC; 0 keeps the
 * default) to compare blockings with one library: copy it to two file names first, since
 * dlopen returns the same handle for the same path.
 *
 *   cc -O2 scripts/gemm-ab.c -ldl -o gemm-ab
 *   taskset -c 1 ./gemm-ab old/libridge.so new/libridge.so 4096 4096 4096 0 0 7
 *   taskset -c 1 ./gemm-ab a.so b.so 2048 2048 2048 0 0 11 0,0,0 384,102,1024
 *
 * usage: gemm-ab LIB_A LIB_B M N K TRANS_A TRANS_B ROUNDS [KC,MC,NC for A] [KC,MC,NC for B] */
#include <dlfcn.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"

typedef int (*ctx_create_fn)(const void *, void **);
typedef int (*sgemm_fn)(void *, int, int, size_t, size_t, size_t, float, const float *, size_t,
                        const float *, size_t, float, float *, size_t);
typedef void (*blocking_fn)(size_t, size_t, size_t);

#define MAX_ROUNDS 201

/* GFLOP/s of 10 independent FMA chains in registers, ~1 ms */
__attribute__((target("avx2,fma"), noinline)) static double fma_rate(void)
{
    __m256 a0 = _mm256_set1_ps(0.1f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
           a7 = a0, a8 = a0, a9 = a0;
    const __m256 m = _mm256_set1_ps(0.9999f), c = _mm256_set1_ps(1e-6f);
    const long iters = 1000000;
    double t0 = now();
    for (long k = 0; k < iters; k++) {
#define F(x) x = _mm256_fmadd_ps(x, m, c);
        F(a0) F(a1) F(a2) F(a3) F(a4) F(a5) F(a6) F(a7) F(a8) F(a9)
#undef F
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                         "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9));
    }
    double t = now() - t0;
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5),
                                           _mm256_add_ps(_mm256_add_ps(a6, a7),
                                                         _mm256_add_ps(a8, a9))));
    float x[8];
    _mm256_storeu_ps(x, s);
    if (x[0] == 12345.0f) puts("");
    return 16.0 * 10 * (double)iters / t / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 9) {
        fprintf(stderr, "usage: %s LIB_A LIB_B M N K TRANS_A TRANS_B ROUNDS [KC,MC,NC] [KC,MC,NC]\n",
                argv[0]);
        return 2;
    }
    if (!getenv("RIDGE_NUM_THREADS")) setenv("RIDGE_NUM_THREADS", "1", 1);
    void *ctx[2];
    sgemm_fn gemm[2];
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        ctx_create_fn create = (ctx_create_fn)dlsym(h, "ridge_ctx_create");
        gemm[i] = (sgemm_fn)dlsym(h, "ridge_sgemm");
        blocking_fn blocking = (blocking_fn)dlsym(h, "ridge_gemm_set_blocking_for_tests");
        if (!create || !gemm[i] || create(NULL, &ctx[i])) {
            fprintf(stderr, "%s: no usable ridge_ctx_create / ridge_sgemm\n", argv[1 + i]);
            return 1;
        }
        size_t kc, mc, nc;
        if (argc > 9 + i && blocking && sscanf(argv[9 + i], "%zu,%zu,%zu", &kc, &mc, &nc) == 3)
            blocking(kc, mc, nc);
    }
    size_t m = strtoul(argv[3], NULL, 10), n = strtoul(argv[4], NULL, 10);
    size_t k = strtoul(argv[5], NULL, 10);
    int ta = atoi(argv[6]), tb = atoi(argv[7]), rounds = atoi(argv[8]);
    if (!m || !n || !k || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "sizes must be positive and ROUNDS in 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    /* 64-byte aligned, as ridge_malloc and the benchmarks allocate: with malloc's 16-byte
     * alignment an in-place B panel row straddles two lines, which once made a blocking
     * change look 1.68x faster here and no faster in `ridge bench gemm` */
#define ALLOC64(n) aligned_alloc(64, ((n) * sizeof(float) + 63) / 64 * 64)
    float *a = ALLOC64(m * k), *b = ALLOC64(k * n), *c = ALLOC64(m * n);
    if (!a || !b || !c) return 1;
    memset(c, 0, m * n * sizeof *c);
    for (size_t i = 0; i < m * k; i++) a[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)(i % 5) * 0.1f;
    size_t lda = ta ? m : k, ldb = tb ? k : n;
    double flop = 2.0 * (double)m * (double)n * (double)k;
    static double pct[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
    for (int i = 0; i < 2; i++) /* warm-up: scratch, packing buffers, pages */
        if (gemm[i](ctx[i], ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n)) return 1;
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < 2; q++) {
            int i = (q + r) & 1;
            double f0 = fma_rate(), t0 = now();
            gemm[i](ctx[i], ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
            double t = now() - t0, f1 = fma_rate();
            pct[i][r] = flop / t / 1e9 / (f0 > f1 ? f0 : f1) * 100.0;
        }
    for (int r = 0; r < rounds; r++) ratio[r] = pct[1][r] / pct[0][r];
    qsort(pct[0], (size_t)rounds, sizeof(double), cmpd);
    qsort(pct[1], (size_t)rounds, sizeof(double), cmpd);
    qsort(ratio, (size_t)rounds, sizeof(double), cmpd);
    printf("%zux%zux%zu %c%c: A %.1f%%  B %.1f%% of the FMA loop (medians)  B/A %.3f [%.3f..%.3f]\n",
           m, n, k, ta ? 'T' : 'N', tb ? 'T' : 'N', pct[0][rounds / 2], pct[1][rounds / 2],
           ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
    return 0;
}
