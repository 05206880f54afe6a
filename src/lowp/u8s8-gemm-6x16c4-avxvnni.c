/* int8 GEMM for AVX-VNNI (Alder Lake and later, Zen 5): the AVX2 kernel's 6 x 16 int32 tile
 * with k in groups of 4 bytes, one vpdpbusd per 32 multiply-adds (u8 A x s8 B into int32,
 * no intermediate saturation; 15 of 16 ymm registers). Cannot run on the Zen 3 this was
 * written on: tests SKIP it there, and the AVX2 kernel's tests validate the shared template.
 * The direct and depthwise int8 convolution kernels come from the same mapping
 * (qconv-template.h). All logic is in the templates; this file is only the mapping. */
#include <immintrin.h>

#define Q_MR 6
#define Q_NV 2
#define Q_KG 4
#define Q_ELEM_BITS 8
#define Q_UKERNEL ridge_u8s8_gemm_ukernel_6x16c4__avxvnni
#define Q_TABLE ridge_lowp_u8s8_avxvnni
#define Q_NAME "u8s8-gemm-6x16c4-avxvnni"
#define Q_DCONV ridge_u8s8_dconv_ukernel_6x16__avxvnni
#define Q_DWCONV ridge_u8s8_dwconv_ukernel_6x16__avxvnni

#include "lowp/lowp-avx2.h"
/* acc = _mm256_dpbusd_avx_epi32(acc, a, b) (a: u8, b: s8), in asm so that acc stays in its
 * register: gcc 12 compiles the intrinsic here into a copy and a spill per instruction.
 * AT&T order: vpdpbusd src2 (s8), src1 (u8), dst, as gcc emits for the intrinsic. */
static inline __m256i dot_avxvnni(__m256i acc, __m256i a, __m256i b)
{
    __asm__("%{vex%} vpdpbusd %[b], %[a], %[acc]" : [acc] "+x"(acc) : [a] "x"(a), [b] "x"(b));
    return acc;
}
#define VI_DOT(acc, a, b) dot_avxvnni(acc, a, b)

#include "lowp/qgemm-template.h"
