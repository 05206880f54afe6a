/* bf16 GEMM for AVX2 + FMA: a 6 x 16 fp32 tile (12 ymm accumulators), k one at a time. A bf16
 * is the top half of an fp32, so widening is exact and cheap: B (packed bf16, 16 bytes per 8
 * columns) is zero-extended to 32 bits and shifted left 16 (vpmovzxwd + vpslld) in the loop;
 * A is widened once while it is packed (fp32 words, broadcast from memory). So B moves at half
 * the bytes of fp32 and the arithmetic is the SGEMM kernel's: 12 FMAs per k on 2 conversions
 * + 2 loads + 6 broadcasts. No AVX2 instruction computes in bf16; on this ISA the gain over
 * fp32 is memory traffic only.
 * All logic is in bgemm-template.h; this file is only the mapping. */
#include <immintrin.h>

#define B_MR 6
#define B_NV 2
#define B_KG 1
#define B_ELEM_BYTES 2
#define B_A_BITS 32
#define B_UKERNEL ridge_bf16_gemm_ukernel_6x16__avx2
#define B_TABLE ridge_lowp_bf16_avx2
#define B_NAME "bf16-gemm-6x16-avx2"

#include "lowp/lowp-avx2.h"
typedef __m256 va;
typedef __m256 vb;
#define B_LOADB(p) _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#define B_BCASTA(p) _mm256_set1_ps(*(const float *)(const void *)(p)) /* not broadcast_ss: gcc 12 then keeps acc on the stack */
#define B_DOT(acc, a, b) _mm256_fmadd_ps(a, b, acc)

#include "lowp/bgemm-template.h"
