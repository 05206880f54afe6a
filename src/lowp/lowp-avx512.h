/* The 512-bit integer and float mapping shared by the AVX512-VNNI and AVX512-BF16 kernels. */
#ifndef RIDGE_LOWP_AVX512_H
#define RIDGE_LOWP_AVX512_H
#include <immintrin.h>
#include <stdint.h>

#define VL 16
typedef __m512i vi;
typedef __m512 vf;
#define VI_ZERO() _mm512_setzero_si512()
#define VI_SET1(x) _mm512_set1_epi32(x)
#define VI_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define VI_STORE(p, x) _mm512_storeu_si512((void *)(p), x)
#define VI_ADD(a, b) _mm512_add_epi32(a, b)
#define VI_SUB(a, b) _mm512_sub_epi32(a, b)
#define VI_MULLO(a, b) _mm512_mullo_epi32(a, b)
#define VI_MAX(a, b) _mm512_max_epi32(a, b)
#define VI_BCAST32(p) _mm512_set1_epi32(*(const int32_t *)(const void *)(p))
#define LOWP_MASK16(n) ((__mmask16)(0xFFFFu >> (16 - (n)))) /* 1 <= n <= 16 */
#define VI_MASKLOAD(p, n) _mm512_maskz_loadu_epi32(LOWP_MASK16(n), (const void *)(p))
#define VF_MASKLOAD(p, n) _mm512_maskz_loadu_ps(LOWP_MASK16(n), (const void *)(p))
#define VF_SET1(x) _mm512_set1_ps(x)
#define VF_LOAD(p) _mm512_loadu_ps(p)
#define VF_STORE(p, x) _mm512_storeu_ps(p, x)
#define VF_ADD(a, b) _mm512_add_ps(a, b)
#define VF_MUL(a, b) _mm512_mul_ps(a, b)
#define VF_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VF_MIN(a, b) _mm512_min_ps(a, b)
#define VF_MAX(a, b) _mm512_max_ps(a, b)
#define VF_FROM_I(x) _mm512_cvtepi32_ps(x)
#define VI_FROM_F(x) _mm512_cvtps_epi32(x)
/* vpmovdb truncates; the lanes are already in byte range */
#define V_STORE8(p, x, sgn) _mm_storeu_si128((__m128i *)(void *)(p), _mm512_cvtepi32_epi8(x))
#define VI_WIDEN_I16(p) _mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define VI_WIDEN_U8(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#endif /* RIDGE_LOWP_AVX512_H */
