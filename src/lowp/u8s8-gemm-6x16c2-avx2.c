/* int8 GEMM for AVX2: a 6 x 16 tile of int32 (12 ymm accumulators, 2 for B, 1 for the A
 * broadcast, 1 for the product: all 16 registers), k in groups of 2.
 *
 * Why vpmaddwd on widened values and not vpmaddubsw: vpmaddubsw multiplies u8 by s8 and adds
 * adjacent pairs into int16 WITH SATURATION; 255 * 127 + 255 * 127 = 64770 > 32767, so it is
 * wrong for general inputs (it is exact only when u8 < 128 or |s8| < 64, the "7-bit" trick
 * some libraries use). Here A (u8) and B (s8) are widened to int16 at packing time (B once,
 * in the plan), and vpmaddwd multiplies int16 pairs into int32 sums exactly (|pair| <= 2 *
 * 255 * 128 = 65280). On Zen 3 this costs no throughput: both paths end in a vpmaddwd per
 * 16 multiply-adds (vpmaddubsw needs a second vpmaddwd by ones to reach int32), so each
 * runs at 2 multiply instructions per cycle. The price is twice the bytes per packed B word
 * (2 k per 32-bit word instead of 4).
 * The direct and depthwise int8 convolution kernels come from the same mapping
 * (qconv-template.h). All logic is in the templates; this file is only the 256-bit mapping. */
#include <immintrin.h>

#define Q_MR 6
#define Q_NV 2
#define Q_KG 2
#define Q_ELEM_BITS 16
#define Q_UKERNEL ridge_u8s8_gemm_ukernel_6x16c2__avx2
#define Q_TABLE ridge_lowp_u8s8_avx2
#define Q_NAME "u8s8-gemm-6x16c2-avx2"
#define Q_DCONV ridge_u8s8_dconv_ukernel_6x16__avx2
#define Q_DWCONV ridge_u8s8_dwconv_ukernel_6x16__avx2

#include "lowp/lowp-avx2.h"
/* acc += vpmaddwd(a, b). In asm so that acc stays in its register: with 16 ymm registers
 * live (12 accumulators, 2 B, 1 A, 1 product), gcc 12 otherwise spills accumulators to the
 * stack and copies the others around on every k step. */
static inline __m256i dot_avx2(__m256i acc, __m256i a, __m256i b)
{
    __m256i t;
    __asm__("vpmaddwd %[b], %[a], %[t]\n\tvpaddd %[t], %[acc], %[acc]"
            : [acc] "+x"(acc), [t] "=&x"(t)
            : [a] "x"(a), [b] "x"(b));
    return acc;
}
#define VI_DOT(acc, a, b) dot_avx2(acc, a, b)

#include "lowp/qgemm-template.h"
