/* The bf16 dot-product peak: vdpbf16ps on zmm (AVX512-BF16), 16 independent chains. One
 * instruction does 16 lanes x 2 bf16 pairs multiplied and added into fp32 = 64 FLOP. Small
 * operands keep the fp32 accumulators finite for any trial length. Compiled with the bf16
 * flags only; measure.c calls it only when the CPU reports AVX512-BF16. */
#include <immintrin.h>

#include "perf/probe.h"

/* gcc 12 otherwise copies every accumulator through spare registers and the stack on each
 * iteration (the instruction overwrites its accumulator); an empty asm that takes and
 * returns the register keeps each chain in place. */
#define PIN(x) __asm__("" : "+v"(x))

#define CHAINS(X)                                                                             \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

ridge_probe_result ridge_probe_dot_bf16__bf16(uint64_t iters)
{
    const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
    const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(1e-3f));
#define DECL(j) __m512 acc##j = _mm512_set1_ps((float)(j));
#define STEP(j) acc##j = _mm512_dpbf16_ps(acc##j, a, b); PIN(acc##j);
#define SUM(j) s = _mm512_add_ps(s, acc##j);
    CHAINS(DECL)
    for (uint64_t i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    __m512 s = _mm512_setzero_ps();
    CHAINS(SUM)
    ridge_probe_result r = {(double)iters * 16 * 16 * 2 * 2, _mm512_reduce_add_ps(s)};
#undef DECL
#undef STEP
#undef SUM
    return r;
}
