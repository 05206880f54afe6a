/* int8 GEMM for AVX512-VNNI: a 14 x 32 int32 tile (28 zmm accumulators, 2 for B, 1 for the A
 * broadcast: 31 of 32), k in groups of 4 bytes, one vpdpbusd per 64 multiply-adds (u8 A x s8
 * B into int32, no intermediate saturation). 28 independent chains cover vpdpbusd's latency
 * on two pipes. Cannot run on the Zen 3 this was written on: tests SKIP it there, and the
 * AVX2 kernel's tests validate the shared template.
 * The direct and depthwise int8 convolution kernels come from the same mapping
 * (qconv-template.h). All logic is in the templates; this file is only the mapping. */
#include <immintrin.h>

#define Q_MR 14
#define Q_NV 2
#define Q_KG 4
#define Q_ELEM_BITS 8
#define Q_UKERNEL ridge_u8s8_gemm_ukernel_14x32c4__avx512vnni
#define Q_TABLE ridge_lowp_u8s8_avx512vnni
#define Q_NAME "u8s8-gemm-14x32c4-avx512vnni"
#define Q_DCONV ridge_u8s8_dconv_ukernel_14x32__avx512vnni
#define Q_DWCONV ridge_u8s8_dwconv_ukernel_14x32__avx512vnni

#include "lowp/lowp-avx512.h"
/* acc = _mm512_dpbusd_epi32(acc, a, b) (a: u8, b: s8), in asm so that acc stays in its
 * register: gcc 12 compiles the intrinsic here into copies and spills on every k step.
 * AT&T order: vpdpbusd src2 (s8), src1 (u8), dst, as gcc emits for the intrinsic. */
static inline __m512i dot_avx512vnni(__m512i acc, __m512i a, __m512i b)
{
    __asm__("vpdpbusd %[b], %[a], %[acc]" : [acc] "+v"(acc) : [a] "v"(a), [b] "v"(b));
    return acc;
}
#define VI_DOT(acc, a, b) dot_avx512vnni(acc, a, b)

#include "lowp/qgemm-template.h"
