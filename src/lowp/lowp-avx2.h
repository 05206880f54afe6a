/* The 256-bit integer and float mapping shared by the AVX2 and AVX-VNNI lowp kernels. */
#ifndef RIDGE_LOWP_AVX2_H
#define RIDGE_LOWP_AVX2_H
#include <immintrin.h>
#include <stdint.h>

#define VL 8
typedef __m256i vi;
typedef __m256 vf;
#define VI_ZERO() _mm256_setzero_si256()
#define VI_SET1(x) _mm256_set1_epi32(x)
#define VI_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VI_STORE(p, x) _mm256_storeu_si256((__m256i *)(void *)(p), x)
#define VI_ADD(a, b) _mm256_add_epi32(a, b)
#define VI_SUB(a, b) _mm256_sub_epi32(a, b)
#define VI_MULLO(a, b) _mm256_mullo_epi32(a, b)
#define VI_MAX(a, b) _mm256_max_epi32(a, b)
#define VI_BCAST32(p) _mm256_set1_epi32(*(const int32_t *)(const void *)(p))
#define LOWP_MASK8(n) _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define VI_MASKLOAD(p, n) _mm256_maskload_epi32((const int *)(const void *)(p), LOWP_MASK8(n))
#define VF_MASKLOAD(p, n) _mm256_maskload_ps((const float *)(p), LOWP_MASK8(n))
#define VF_SET1(x) _mm256_set1_ps(x)
#define VF_LOAD(p) _mm256_loadu_ps(p)
#define VF_STORE(p, x) _mm256_storeu_ps(p, x)
#define VF_ADD(a, b) _mm256_add_ps(a, b)
#define VF_MUL(a, b) _mm256_mul_ps(a, b)
#define VF_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VF_MIN(a, b) _mm256_min_ps(a, b)
#define VF_MAX(a, b) _mm256_max_ps(a, b)
#define VF_FROM_I(x) _mm256_cvtepi32_ps(x)
#define VI_FROM_F(x) _mm256_cvtps_epi32(x)
#define V_STORE8(p, x, sgn) lowp_store8_avx2(p, x, sgn)
#define VI_WIDEN_I16(p) _mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define VI_WIDEN_U8(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))

/* 8 int32 lanes already in byte range -> 8 bytes (the packs saturate, but nothing is out of
 * range; packs_epi32 on the two 128-bit halves keeps the lane order). */
static inline void lowp_store8_avx2(void *p, __m256i x, int sgn)
{
    __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    __m128i b = sgn ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
    _mm_storel_epi64((__m128i *)p, b);
}
#endif /* RIDGE_LOWP_AVX2_H */
