/* bf16 GEMM for AVX512-BF16 (Cooper Lake, Sapphire Rapids, Zen 4/5): a 14 x 32 fp32 tile (28
 * zmm accumulators), k in pairs: one vdpbf16ps per 16 lanes x 2 products, the pairs packed as
 * 32-bit words in A and B. vdpbf16ps sums each pair without the FMA's intermediate
 * rounding order and flushes denormals (DAZ/FTZ), so its bits differ from the AVX2 kernel's;
 * both are within the stated bound. Cannot run on the Zen 3 this was written on: tests SKIP
 * it there, and the AVX2 kernel's tests validate the shared template.
 * All logic is in bgemm-template.h; this file is only the mapping. */
#include <immintrin.h>

#define B_MR 14
#define B_NV 2
#define B_KG 2
#define B_ELEM_BYTES 4
#define B_A_BITS 16
#define B_UKERNEL ridge_bf16_gemm_ukernel_14x32c2__avx512bf16
#define B_TABLE ridge_lowp_bf16_avx512bf16
#define B_NAME "bf16-gemm-14x32c2-avx512bf16"

#include "lowp/lowp-avx512.h"
typedef __m512bh va;
typedef __m512bh vb;
#define B_LOADB(p) ((__m512bh)_mm512_loadu_si512((const void *)(p)))
#define B_BCASTA(p) ((__m512bh)_mm512_set1_epi32(*(const int32_t *)(const void *)(p)))
#define B_DOT(acc, a, b) _mm512_dpbf16_ps(acc, a, b)

#include "lowp/bgemm-template.h"
