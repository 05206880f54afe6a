/* In-process A/B timing of two libridge builds and the bench's plain C loop on one short vec
 * call (sum_f32, or axpy in place on y), for changes smaller than the run-to-run noise of the
 * bench's separate processes (docs/PERFORMANCE.md, sessions 8 and 9). axpy-chain calls axpy
 * on the same y every time, as `ridge bench vec` does, so that each call waits for the last
 * one's stores (a latency: a load forwarded from a store, the FMA, the store); axpy takes
 * turns over 8 outputs, so that calls overlap (the cost of a call).
 *
 * Both builds are loaded with dlopen(RTLD_LOCAL), each with its own 1-thread context; then
 * batches of 2000 calls of A, B and the plain loop (bench/vec-plain.c, compiled as the bench
 * compiles it) take turns, 301 rounds, and the medians of ns per call are printed with
 * plain/A and plain/B (> 1: faster than the plain loop). The sums feed a register
 * accumulator, not a volatile: a volatile's load-add-store chain (12 cycles) bounded all three.
 *
 *   cc -O2 -Iinclude -c scripts/vec-ab.c -o vec-ab.o
 *   cc -O3 -falign-functions=64 -Ibench -Iinclude -c bench/vec-plain.c -o vec-plain.o
 *   cc vec-ab.o vec-plain.o -ldl -lm -o vec-ab
 *   taskset -c 1 ./vec-ab old/libridge.so new/libridge.so 10 sum     (or axpy, axpy-chain)
 *
 * Paths to the libraries need a slash (./libridge.so): dlopen searches the library path
 * otherwise. RIDGE_ISA=avx2 times the AVX2 kernels on an AVX-512 machine. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/core.h"

float plain_sum_f32(const float *x, size_t n);
void plain_axpy(float *y, float a, const float *x, size_t n);

typedef ridge_status (*sum_fn)(ridge_ctx *, const float *, size_t, float *);
typedef ridge_status (*axpy_fn)(ridge_ctx *, float *, float, const float *, size_t);

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

enum { ROUNDS = 301, BATCH = 2000, NMAX = 1024 };

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[4], "sum") && strcmp(argv[4], "axpy") &&
                      strcmp(argv[4], "axpy-chain"))) {
        fprintf(stderr, "usage: vec-ab LIB_A LIB_B N sum|axpy|axpy-chain\n");
        return 2;
    }
    size_t n = (size_t)strtoul(argv[3], NULL, 10);
    int axpy = !strncmp(argv[4], "axpy", 4), chain = !strcmp(argv[4], "axpy-chain");
    if (n < 1 || n > NMAX) {
        fprintf(stderr, "vec-ab: N must be in 1..%d\n", NMAX);
        return 2;
    }
    sum_fn sum[2];
    axpy_fn ax[2];
    ridge_ctx *ctx[2];
    for (int i = 0; i < 2; i++) {
        void *h = dlopen(argv[1 + i], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "vec-ab: %s\n", dlerror());
            return 1;
        }
        void (*init)(ridge_ctx_options *) = (void (*)(ridge_ctx_options *))dlsym(h, "ridge_ctx_options_init");
        ridge_status (*create)(const ridge_ctx_options *, ridge_ctx **) =
            (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
        sum[i] = (sum_fn)dlsym(h, "ridge_vec_sum_f32");
        ax[i] = (axpy_fn)dlsym(h, "ridge_vec_axpy_f32");
        ridge_ctx_options o;
        init(&o);
        o.threads = 1;
        if (!sum[i] || !ax[i] || create(&o, &ctx[i]) != RIDGE_OK) {
            fprintf(stderr, "vec-ab: %s: no context or symbols\n", argv[1 + i]);
            return 1;
        }
    }
    /* axpy: the calls take turns over 8 outputs, 64-byte aligned; axpy-chain: one */
    const size_t slot = chain ? 0 : (n + 15) & ~(size_t)15;
    float *x = aligned_alloc(64, NMAX * sizeof(float)),
          *y = aligned_alloc(64, 8 * NMAX * sizeof(float));
    for (int i = 0; i < NMAX; i++) x[i] = (float)(i % 7) * 0.25f;
    for (int i = 0; i < 8 * NMAX; i++) y[i] = 0;
    static double t[3][ROUNDS];
    volatile float sink;
    for (int r = 0; r < ROUNDS; r++)
        for (int m = 0; m < 3; m++) {
            float acc = 0, out;
            double t0 = now_ns();
            if (axpy && m < 2)
                for (int k = 0; k < BATCH; k++) ax[m](ctx[m], y + (k & 7) * slot, 1e-3f, x, n);
            else if (axpy)
                for (int k = 0; k < BATCH; k++) plain_axpy(y + (k & 7) * slot, 1e-3f, x, n);
            else if (m < 2)
                for (int k = 0; k < BATCH; k++) sum[m](ctx[m], x, n, &out), acc += out;
            else
                for (int k = 0; k < BATCH; k++) acc += plain_sum_f32(x, n);
            t[m][r] = (now_ns() - t0) / BATCH;
            sink = acc;
        }
    (void)sink;
    for (int m = 0; m < 3; m++) qsort(t[m], ROUNDS, sizeof(double), cmpd);
    double a = t[0][ROUNDS / 2], b = t[1][ROUNDS / 2], p = t[2][ROUNDS / 2];
    printf("%s n=%zu ns/call median: A %.2f B %.2f plain %.2f | plain/A %.2f plain/B %.2f\n",
           argv[4], n, a, b, p, p / a, p / b);
    return 0;
}
