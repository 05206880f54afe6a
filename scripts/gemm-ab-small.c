/* In-process A/B timing of ridge_sgemm from two libridge builds for products that take
 * microseconds (matrix-vector, small layers), where gemm-ab.c's one call per sample measures
 * the clock and the cold start rather than the product.
 *
 * Both libraries are loaded with dlopen(RTLD_LOCAL), each with its own context (threads from
 * RIDGE_NUM_THREADS, default all). Per round each build runs 50 untimed calls, then CALLS
 * timed ones on the same operands (warm: as a layer finds its weights in cache); the builds
 * alternate, the first swapping every round. Printed: each build's median time per call and
 * the median and range of the per-round speed ratio B/A (> 1: B faster).
 *
 *   cc -O2 scripts/gemm-ab-small.c -ldl -o gemm-ab-small
 *   RIDGE_NUM_THREADS=1 taskset -c 1 ./gemm-ab-small old/libridge.so new/libridge.so \
 *       1 128 784 N 41 500
 *
 * With FLUSH=MiB in the environment, each call is timed alone after writing that many MiB of
 * another buffer (untimed), so that it starts with its operands out of L2, as in `ridge bench
 * gemm --peers`, where the peers' calls run between ridge's; TOUCH=1 then reads B back, TOUCH=2
 * writes C, TOUCH=3 both, to split the cold start's cost between them.
 *
 * usage: gemm-ab-small LIB_A LIB_B M N K TRANS ROUNDS CALLS, TRANS op(B) alone (N|T, A not
 * transposed) or op(A) op(B) (NN|NT|TN|TT) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

typedef int (*ctx_create_fn)(const void *, void **);
typedef int (*sgemm_fn)(void *, int, int, size_t, size_t, size_t, float, const float *, size_t,
                        const float *, size_t, float, float *, size_t);

#define MAX_ROUNDS 401

int main(int argc, char **argv)
{
    if (argc != 9) {
        fprintf(stderr, "usage: %s LIB_A LIB_B M N K TRANS(N|T|NN|NT|TN|TT) ROUNDS CALLS\n",
                argv[0]);
        return 2;
    }
    size_t m = strtoul(argv[3], NULL, 10), n = strtoul(argv[4], NULL, 10);
    size_t k = strtoul(argv[5], NULL, 10);
    const int two = argv[6][0] && argv[6][1];
    const int ta = two && argv[6][0] == 'T', tb = argv[6][two] == 'T';
    int rounds = atoi(argv[7]), calls = atoi(argv[8]);
    if (!m || !n || !k || rounds < 1 || rounds > MAX_ROUNDS || calls < 1) {
        fprintf(stderr, "%s: sizes >= 1, 1 <= ROUNDS <= %d, CALLS >= 1\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    void *ctx[2];
    sgemm_fn f[2];
    for (int l = 0; l < 2; l++) {
        void *h = dlopen(argv[1 + l], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        ctx_create_fn create = (ctx_create_fn)dlsym(h, "ridge_ctx_create");
        f[l] = (sgemm_fn)dlsym(h, "ridge_sgemm");
        if (!create || !f[l] || create(NULL, &ctx[l])) {
            fprintf(stderr, "%s: no ridge_ctx_create / ridge_sgemm, or no context\n", argv[1 + l]);
            return 1;
        }
    }
    /* 64-byte aligned, as ridge_malloc and the bench give: malloc's large blocks start 16
     * bytes into a page, so every vector load would straddle two lines */
    float *a = aligned_alloc(64, (m * k * sizeof *a + 63) / 64 * 64);
    float *b = aligned_alloc(64, (k * n * sizeof *b + 63) / 64 * 64);
    float *c = aligned_alloc(64, (m * n * sizeof *c + 63) / 64 * 64);
    if (!a || !b || !c) return 1;
    for (size_t i = 0; i < m * k; i++) a[i] = (float)rand() / (float)RAND_MAX;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)rand() / (float)RAND_MAX;
    const size_t lda = ta ? m : k, ldb = tb ? k : n;
    const size_t flush = getenv("FLUSH") ? strtoul(getenv("FLUSH"), NULL, 10) << 18 : 0;
    const int touch = getenv("TOUCH") ? atoi(getenv("TOUCH")) : 0;
    float *fb = flush ? calloc(flush, sizeof *fb) : NULL;
    volatile float sink = 0;
    if (flush && !fb) return 1;
    static double t[2][MAX_ROUNDS], r[MAX_ROUNDS];
#define CALL(l) f[l](ctx[l], ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, n)
    for (int q = 0; q < rounds; q++) {
        for (int s = 0; s < 2; s++) {
            int l = (q + s) & 1;
            for (int w = 0; w < 50; w++) CALL(l);
            double spent = 0;
            if (!flush) {
                double t0 = now();
                for (int w = 0; w < calls; w++) CALL(l);
                spent = now() - t0;
            } else {
                for (int w = 0; w < calls; w++) { /* each call alone, after the flush */
                    for (size_t z = 0; z < flush; z += 16) fb[z] += 1.0f;
                    if (touch & 1)
                        for (size_t z = 0; z < k * n; z += 16) sink += b[z];
                    if (touch & 2)
                        for (size_t z = 0; z < m * n; z += 16) c[z] = 0.0f;
                    double t0 = now();
                    CALL(l);
                    spent += now() - t0;
                }
            }
            t[l][q] = spent / calls;
        }
        r[q] = t[0][q] / t[1][q];
    }
    qsort(t[0], (size_t)rounds, sizeof(double), cmpd);
    qsort(t[1], (size_t)rounds, sizeof(double), cmpd);
    qsort(r, (size_t)rounds, sizeof(double), cmpd);
#undef CALL
    printf("%zux%zux%zu %c%c: A %.2f us  B %.2f us (medians)  B/A %.3f [%.3f..%.3f]\n", m, n, k,
           ta ? 'T' : 'N', tb ? 'T' : 'N', 1e6 * t[0][rounds / 2], 1e6 * t[1][rounds / 2],
           r[rounds / 2], r[0], r[rounds - 1]);
    return 0;
}
