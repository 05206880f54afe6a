/* The SGEMM micro-kernel's tile shapes alone, with A and B in L1, against an FMA loop timed in
 * the same rounds: the ceiling a whole product can reach on this core before any cache,
 * packing or driver cost. Each kernel is the template's hot loop written out plainly (B
 * vectors loaded, A broadcast, MR x NV FMAs per k step, KC = 256), called 400 times a round;
 * the FMA loop has 16 independent chains in registers, as `ridge roofline`'s probe does.
 * Prints each tile's median GFLOP/s over 41 rounds and its share of the FMA loop's median.
 *
 *   cc -O3 -mavx512f -mfma scripts/ukernel-alone.c -o /tmp/ukernel-alone && /tmp/ukernel-alone
 */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

#define KERNEL(NAME, MR, NV)                                                                       \
    __attribute__((noinline)) static void NAME(size_t kc, const float *ap, const float *b,        \
                                               float *c)                                           \
    {                                                                                              \
        __m512 acc[MR][NV];                                                                        \
        for (int r = 0; r < MR; r++)                                                               \
            for (int v = 0; v < NV; v++) acc[r][v] = _mm512_setzero_ps();                         \
        _Pragma("GCC unroll 2") for (size_t p = 0; p < kc; p++)                                    \
        {                                                                                          \
            __m512 bv[NV];                                                                         \
            for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + v * 16);                      \
            for (int r = 0; r < MR; r++) {                                                         \
                const __m512 av = _mm512_set1_ps(ap[r]);                                           \
                for (int v = 0; v < NV; v++) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);   \
            }                                                                                      \
            ap += MR, b += NV * 16;                                                                \
        }                                                                                          \
        for (int r = 0; r < MR; r++)                                                               \
            for (int v = 0; v < NV; v++)                                                           \
                _mm512_storeu_ps(c + (r * NV + v) * 16,                                            \
                                 _mm512_add_ps(_mm512_loadu_ps(c + (r * NV + v) * 16), acc[r][v])); \
    }
KERNEL(tile_8x32, 8, 2)
KERNEL(tile_14x32, 14, 2)
KERNEL(tile_6x64, 6, 4)

/* GFLOP/s of 16 independent FMA chains in registers */
__attribute__((noinline)) static double fma_loop(long iters)
{
    __m512 x0 = _mm512_set1_ps(0.1f), x1 = x0, x2 = x0, x3 = x0, x4 = x0, x5 = x0, x6 = x0,
           x7 = x0, x8 = x0, x9 = x0, x10 = x0, x11 = x0, x12 = x0, x13 = x0, x14 = x0, x15 = x0;
    const __m512 m = _mm512_set1_ps(0.9999f), a = _mm512_set1_ps(1e-6f);
    double t = now();
    for (long k = 0; k < iters; k++) {
#define F(x) x = _mm512_fmadd_ps(x, m, a);
        F(x0) F(x1) F(x2) F(x3) F(x4) F(x5) F(x6) F(x7) F(x8) F(x9) F(x10) F(x11) F(x12) F(x13)
        F(x14) F(x15)
#undef F
        /* two barriers: one asm takes at most 30 operands */
        __asm__ volatile("" : "+v"(x0), "+v"(x1), "+v"(x2), "+v"(x3), "+v"(x4), "+v"(x5),
                         "+v"(x6), "+v"(x7));
        __asm__ volatile("" : "+v"(x8), "+v"(x9), "+v"(x10), "+v"(x11), "+v"(x12), "+v"(x13),
                         "+v"(x14), "+v"(x15));
    }
    t = now() - t;
    __m512 s = _mm512_add_ps(_mm512_add_ps(x0, x5), _mm512_add_ps(x10, x15));
    if (_mm512_reduce_add_ps(s) == 12345.0f) puts("");
    return 32.0 * 16 * (double)iters / t / 1e9;
}

int main(void)
{
    enum { KC = 256, ROUNDS = 41, CALLS = 400, TILES = 3 };
    static float a[KC * 16], b[KC * 64], c[16 * 64];
    for (int i = 0; i < KC * 16; i++) a[i] = 1e-3f * (float)(i % 7);
    for (int i = 0; i < KC * 64; i++) b[i] = 1e-3f * (float)(i % 5);
    void (*fn[TILES])(size_t, const float *, const float *, float *) = {tile_8x32, tile_14x32,
                                                                         tile_6x64};
    const char *name[TILES] = {"8 x 32", "14 x 32", "6 x 64"};
    const int mr[TILES] = {8, 14, 6}, nr[TILES] = {32, 32, 64};
    static double rate[TILES + 1][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        rate[TILES][r] = fma_loop(200000);
        for (int q = 0; q < TILES; q++) {
            double t = now();
            for (int i = 0; i < CALLS; i++) fn[q](KC, a, b, c);
            t = now() - t;
            rate[q][r] = 2.0 * mr[q] * nr[q] * KC * CALLS / t / 1e9;
        }
    }
    for (int q = 0; q <= TILES; q++) qsort(rate[q], ROUNDS, sizeof(double), cmpd);
    const double peak = rate[TILES][ROUNDS / 2];
    printf("FMA loop (16 chains): %.1f GFLOP/s\n", peak);
    for (int q = 0; q < TILES; q++)
        printf("%-8s %.1f GFLOP/s, %.1f%% of the FMA loop\n", name[q], rate[q][ROUNDS / 2],
               100.0 * rate[q][ROUNDS / 2] / peak);
    return 0;
}
