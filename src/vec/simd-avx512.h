/* The thin intrinsic mapping for AVX-512 F/DQ (16 floats): the same names as simd-avx2.h
 * (read that file for the contract), so math-template.h and vec-template.h expand to the
 * AVX-512 variants unchanged. Masks are __mmask16 instead of vectors. */
#include <immintrin.h>
#include <stdint.h>

#define RV_W 16
#define RV_SFX f32x16
#define rv_f __m512
#define rv_i __m512i
#define rv_m __mmask16

#define rv_set1(c) _mm512_set1_ps(c)
#define rv_set1i(c) _mm512_set1_epi32(c)
#define rv_zero() _mm512_setzero_ps()
#define rv_load(p) _mm512_loadu_ps(p)
#define rv_store(p, v) _mm512_storeu_ps((p), (v))
#define rv_add(a, b) _mm512_add_ps((a), (b))
#define rv_sub(a, b) _mm512_sub_ps((a), (b))
#define rv_mul(a, b) _mm512_mul_ps((a), (b))
#define rv_div(a, b) _mm512_div_ps((a), (b))
#define rv_min(a, b) _mm512_min_ps((a), (b))
#define rv_max(a, b) _mm512_max_ps((a), (b))
#define rv_fma(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define rv_fnma(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define rv_fms(a, b, c) _mm512_fmsub_ps((a), (b), (c))
#define rv_round(a) _mm512_roundscale_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define rv_and(a, b) _mm512_and_ps((a), (b))
#define rv_or(a, b) _mm512_or_ps((a), (b))
#define rv_xor(a, b) _mm512_xor_ps((a), (b))
#define rv_cmp(a, b, p) _mm512_cmp_ps_mask((a), (b), (p))
#define rv_sel(m, t, f) _mm512_mask_blend_ps((m), (f), (t))
#define rv_mor(a, b) ((__mmask16)((a) | (b)))
#define rv_mand(a, b) ((__mmask16)((a) & (b)))
#define rv_any(m) ((m) != 0)
#define rv_mbits(m) ((unsigned)(m))
#define rv_cvt(a) _mm512_cvtps_epi32(a)
#define rv_scale2(a, n) _mm512_scalef_ps((a), (n)) /* a 2^n, n integral */
#define rv_cvtf(i) _mm512_cvtepi32_ps(i)
#define rv_asi(a) _mm512_castps_si512(a)
#define rv_asf(i) _mm512_castsi512_ps(i)
#define rv_iadd(a, b) _mm512_add_epi32((a), (b))
#define rv_isub(a, b) _mm512_sub_epi32((a), (b))
#define rv_iand(a, b) _mm512_and_si512((a), (b))
#define rv_ior(a, b) _mm512_or_si512((a), (b))
#define rv_slli(a, n) _mm512_slli_epi32((a), (n))
#define rv_srli(a, n) _mm512_srli_epi32((a), (n))
#define rv_srai(a, n) _mm512_srai_epi32((a), (n))
#define rv_keep(v) __asm__("" : "+v"(v))
#define rv_imax(a, b) _mm512_max_epi32((a), (b))
/* t[i] per lane from a 32-float table (64-byte aligned), i in 0..31 (its low 5 bits are used) */
#define RV_LUT32 1
#define rv_lut32(t, i) _mm512_permutex2var_ps(_mm512_load_ps(t), (i), _mm512_load_ps((t) + 16))

/* ---- used by the kernels (vec-template.h) ---- */
#define rv_load_n(p, n, fill) _mm512_mask_loadu_ps((fill), ridge_avx512_tail(n), (p))
#define rv_load_nz(p, n) _mm512_maskz_loadu_ps(ridge_avx512_tail(n), (p))
#define rv_store_n(p, v, n) _mm512_mask_storeu_ps((p), ridge_avx512_tail(n), (v))
#define rv_store_part(p, v, n) rv_store_n((p), (v), (n)) /* masked stores are not slow here */
/* Spans shorter than a vector take one vector (vec-template.h, RV_MASKED_SHORT): masked
 * loads whose lanes past n are not read but filled with `fill` (an element of the span, for
 * min, max and find), or two overlapping 8-lane halves (elementwise) */
#define RV_MASKED_SHORT 1
/* n in 8..16: elements 0..7 in the low half, n-8..n-1 in the high half; stored back the same way */
#define rv_load_halves(p, n)                                                                       \
    _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)), _mm256_loadu_ps((p) + (n)-8), 1)
#define rv_store_halves(p, v, n)                                                                   \
    (_mm256_storeu_ps((p), _mm512_castps512_ps256(v)),                                             \
     _mm256_storeu_ps((p) + (n) - 8, _mm512_extractf32x8_ps((v), 1)))
/* In place, spans of 8 to 15 floats go in pieces of 8, 4 and 2 floats and a scalar, each
 * loaded into the low lanes of a vector and stored back at its own width, so that the next
 * call's loads of the span are forwarded from single stores (vec-template.h, EW_PIECES). The
 * lanes above are not defined by the casts (in practice the load's zeros: no instruction
 * is spent to clear them, which cost a cycle on the chain through y) and never stored. */
#define rv_load8(p) _mm512_castps256_ps512(_mm256_loadu_ps(p))
#define rv_store8(p, v) _mm256_storeu_ps((p), _mm512_castps512_ps256(v))
#define rv_load4(p) _mm512_castps128_ps512(_mm_loadu_ps(p))
#define rv_store4(p, v) _mm_storeu_ps((p), _mm512_castps512_ps128(v))
#define rv_load2(p) _mm512_castps128_ps512(_mm_castsi128_ps(_mm_loadu_si64(p)))
#define rv_store2(p, v) _mm_storeu_si64((p), _mm_castps_si128(_mm512_castps512_ps128(v)))
#define rv_load_fill(p, n, fill)                                                                   \
    _mm512_mask_loadu_ps(_mm512_set1_ps(fill), ridge_avx512_tail(n), (p))
#define rd_load_fill(p, n, fill)                                                                   \
    _mm512_mask_loadu_pd(_mm512_set1_pd(fill), (__mmask8)ridge_avx512_tail(n), (p))
#define ri_load_fill(p, n, fill)                                                                   \
    _mm512_mask_loadu_epi32(_mm512_set1_epi32(fill), ridge_avx512_tail(n), (p))
#define rl_load_fill(p, n, fill)                                                                   \
    _mm512_mask_loadu_epi64(_mm512_set1_epi64(fill), (__mmask8)ridge_avx512_tail(n), (p))
#define rv_reduce_add(v) ridge_avx512_reduce_add(v)
#define rv_reduce_min(v) ridge_avx512_reduce_min(v)
#define rv_reduce_max(v) ridge_avx512_reduce_max(v)
/* double */
#define RD_W 8
#define rd_f __m512d
#define rd_zero() _mm512_setzero_pd()
#define rd_set1(c) _mm512_set1_pd(c)
#define rd_load(p) _mm512_loadu_pd(p)
#define rd_load_n(p, n) _mm512_maskz_loadu_pd((__mmask8)ridge_avx512_tail(n), (p))
#define rd_add(a, b) _mm512_add_pd((a), (b))
#define rd_mul(a, b) _mm512_mul_pd((a), (b))
#define rd_fma(a, b, c) _mm512_fmadd_pd((a), (b), (c))
#define rd_min(a, b) _mm512_min_pd((a), (b))
#define rd_max(a, b) _mm512_max_pd((a), (b))
#define rd_cmp(a, b, p) _mm512_cmp_pd_mask((a), (b), (p))
#define rd_mor(a, b) ((__mmask8)((a) | (b)))
#define rd_mbits(m) ((unsigned)(m))
#define rd_reduce_add(v) ridge_avx512_reduce_add_pd(v)
#define rd_reduce_min(v) ridge_avx512_reduce_min_pd(v)
#define rd_reduce_max(v) ridge_avx512_reduce_max_pd(v)
/* int32 lanes (rv_i) and int64 lanes (also __m512i) */
#define RL_W 8
#define ri_load(p) _mm512_loadu_si512((const void *)(p))
#define ri_zero() _mm512_setzero_si512()
#define ri_add32(a, b) _mm512_add_epi32((a), (b))
#define ri_min32(a, b) _mm512_min_epi32((a), (b))
#define ri_max32(a, b) _mm512_max_epi32((a), (b))
#define ri_eq32_bits(a, b) ((unsigned)_mm512_cmpeq_epi32_mask((a), (b)))
#define ri_store(p, v) _mm512_storeu_si512((void *)(p), (v))
#define ri_load_n(p, n) _mm512_maskz_loadu_epi32(ridge_avx512_tail(n), (p))
#define ri_hsum32(v) ridge_avx512_hsum_epi32(v) /* the sum of the lanes, wrapped to int32 */
#define ri_mul32(a, b) _mm512_mul_epi32((a), (b))
#define ri_widen_lo(a) _mm512_cvtepi32_epi64(_mm512_castsi512_si256(a))
#define ri_widen_hi(a) _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64((a), 1))
#define rl_set1(c) _mm512_set1_epi64(c)
#define rl_load_n(p, n) _mm512_maskz_loadu_epi64((__mmask8)ridge_avx512_tail(n), (p))
#define rl_hsum(v) ridge_avx512_hsum_epi64(v) /* the sum of the lanes, wrapped to int64 */
#define rl_add(a, b) _mm512_add_epi64((a), (b))
#define rl_and(a, b) _mm512_and_si512((a), (b))
#define rl_srli(a, n) _mm512_srli_epi64((a), (n))
#define rl_srai32(a) _mm512_srai_epi64((a), 32)
#define rl_min(a, b) _mm512_min_epi64((a), (b))
#define rl_max(a, b) _mm512_max_epi64((a), (b))
#define rl_eq_bits(a, b) ((unsigned)_mm512_cmpeq_epi64_mask((a), (b)))
#define ri_reduce_min32(v) _mm512_reduce_min_epi32(v)
#define ri_reduce_max32(v) _mm512_reduce_max_epi32(v)
#define rl_reduce_min(v) _mm512_reduce_min_epi64(v)
#define rl_reduce_max(v) _mm512_reduce_max_epi64(v)

#ifndef RIDGE_SIMD_AVX512_FUNCS
#define RIDGE_SIMD_AVX512_FUNCS
/* Wrapped lane sums. Not gcc's _mm512_reduce_add_epi32/64: those add the lanes with C's signed
 * +, whose overflow UBSan reports (int64 sums wrap on purpose and check the result after) */
static inline int64_t ridge_avx512_hsum_epi64(__m512i v)
{
    __m256i h = _mm256_add_epi64(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i q = _mm_add_epi64(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    q = _mm_add_epi64(q, _mm_unpackhi_epi64(q, q));
    return _mm_cvtsi128_si64(q);
}
static inline int32_t ridge_avx512_hsum_epi32(__m512i v)
{
    __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i q = _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
    q = _mm_add_epi32(q, _mm_unpackhi_epi64(q, q));
    q = _mm_add_epi32(q, _mm_shuffle_epi32(q, 0x55));
    return _mm_cvtsi128_si32(q);
}
/* the first n lanes, n in 0..16 */
static inline __mmask16 ridge_avx512_tail(size_t n) { return (__mmask16)((1u << n) - 1); }
/* the same tree as AVX2's: the 256-bit halves first, then within 256 bits */
static inline float ridge_avx512_reduce_add(__m512 v)
{
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    a = _mm_add_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline float ridge_avx512_reduce_min(__m512 v)
{
    __m256 h = _mm256_min_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 a = _mm_min_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    a = _mm_min_ps(a, _mm_movehl_ps(a, a));
    a = _mm_min_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline float ridge_avx512_reduce_max(__m512 v)
{
    __m256 h = _mm256_max_ps(_mm512_castps512_ps256(v),
                             _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline double ridge_avx512_reduce_add_pd(__m512d v)
{
    __m256d h = _mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d a = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a)));
}
static inline double ridge_avx512_reduce_min_pd(__m512d v)
{
    __m256d h = _mm256_min_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d a = _mm_min_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_min_sd(a, _mm_unpackhi_pd(a, a)));
}
static inline double ridge_avx512_reduce_max_pd(__m512d v)
{
    __m256d h = _mm256_max_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1));
    __m128d a = _mm_max_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_max_sd(a, _mm_unpackhi_pd(a, a)));
}
#endif /* RIDGE_SIMD_AVX512_FUNCS */
