/* The int8 dot-product peak: vpdpbusd on zmm (AVX512-VNNI), 16 independent chains. One
 * instruction does 16 lanes x 4 u8*s8 multiply-adds into int32 = 128 OP. The accumulators
 * wrap harmlessly (vpdpbusd does not saturate). Compiled with the vnni flags only; measure.c
 * calls it only when the CPU reports AVX512-VNNI. */
#include <immintrin.h>

#include "perf/probe.h"

/* gcc 12 otherwise copies every accumulator through spare registers and the stack on each
 * iteration (the instruction overwrites its accumulator); an empty asm that takes and
 * returns the register keeps each chain in place. */
#define PIN(x) __asm__("" : "+v"(x))

#define CHAINS(X)                                                                             \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

ridge_probe_result ridge_probe_dot_i8__vnni(uint64_t iters)
{
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
#define DECL(j) __m512i acc##j = _mm512_set1_epi32(j);
#define STEP(j) acc##j = _mm512_dpbusd_epi32(acc##j, a, b); PIN(acc##j);
#define SUM(j) s = _mm512_add_epi32(s, acc##j);
    CHAINS(DECL)
    for (uint64_t i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    __m512i s = _mm512_setzero_si512();
    CHAINS(SUM)
    /* the lanes summed wrapping (gcc's _mm512_reduce_add_epi32 uses signed +: UB on overflow) */
    uint32_t lanes[16], sum = 0;
    _mm512_storeu_si512(lanes, s);
    for (int i = 0; i < 16; i++) sum += lanes[i];
    ridge_probe_result r = {(double)iters * 16 * 16 * 4 * 2, (float)sum};
#undef DECL
#undef STEP
#undef SUM
    return r;
}
