/* The thin intrinsic mapping for AVX2 + FMA (8 floats). The math (math-template.h) and the
 * kernels (vec-template.h) are written once against these names; simd-avx512.h maps the same
 * names to AVX-512, so the two ISAs differ only here. No include guard: simd-undef.h removes
 * the names again, so a file can include the mapping around the templates it expands.
 *
 * Semantics every mapping must keep (the templates rely on them):
 *   rv_max(a, b) / rv_min(a, b): like vmaxps/vminps: if either is NaN the result is b.
 *   rv_sel(m, t, f): t where the mask is set, f elsewhere.
 *   rv_cmp(a, b, P): P is an _CMP_* predicate; the result is a mask (rv_m). */
#include <immintrin.h>

#define RV_W 8
#define RV_SFX f32x8
#define rv_f __m256
#define rv_i __m256i
#define rv_m __m256

#define rv_set1(c) _mm256_set1_ps(c)
#define rv_set1i(c) _mm256_set1_epi32(c)
#define rv_zero() _mm256_setzero_ps()
#define rv_load(p) _mm256_loadu_ps(p)
#define rv_store(p, v) _mm256_storeu_ps((p), (v))
#define rv_add(a, b) _mm256_add_ps((a), (b))
#define rv_sub(a, b) _mm256_sub_ps((a), (b))
#define rv_mul(a, b) _mm256_mul_ps((a), (b))
#define rv_div(a, b) _mm256_div_ps((a), (b))
#define rv_min(a, b) _mm256_min_ps((a), (b))
#define rv_max(a, b) _mm256_max_ps((a), (b))
#define rv_fma(a, b, c) _mm256_fmadd_ps((a), (b), (c))   /* a b + c */
#define rv_fnma(a, b, c) _mm256_fnmadd_ps((a), (b), (c)) /* c - a b */
#define rv_fms(a, b, c) _mm256_fmsub_ps((a), (b), (c))   /* a b - c */
#define rv_round(a) _mm256_round_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define rv_and(a, b) _mm256_and_ps((a), (b))
#define rv_or(a, b) _mm256_or_ps((a), (b))
#define rv_xor(a, b) _mm256_xor_ps((a), (b))
#define rv_cmp(a, b, p) _mm256_cmp_ps((a), (b), (p))
#define rv_sel(m, t, f) _mm256_blendv_ps((f), (t), (m))
#define rv_mor(a, b) _mm256_or_ps((a), (b))
#define rv_mand(a, b) _mm256_and_ps((a), (b))
#define rv_any(m) (_mm256_movemask_ps(m) != 0)
#define rv_mbits(m) ((unsigned)_mm256_movemask_ps(m))
#define rv_cvt(a) _mm256_cvtps_epi32(a)
/* a 2^n, n integral with a 2^n normal: 2^n built in the exponent field */
#define rv_scale2(a, n)                                                                            \
    _mm256_mul_ps((a), _mm256_castsi256_ps(_mm256_slli_epi32(                                      \
                           _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23)))
#define rv_cvtf(i) _mm256_cvtepi32_ps(i)
#define rv_asi(a) _mm256_castps_si256(a)
#define rv_asf(i) _mm256_castsi256_ps(i)
#define rv_iadd(a, b) _mm256_add_epi32((a), (b))
#define rv_isub(a, b) _mm256_sub_epi32((a), (b))
#define rv_iand(a, b) _mm256_and_si256((a), (b))
#define rv_ior(a, b) _mm256_or_si256((a), (b))
#define rv_slli(a, n) _mm256_slli_epi32((a), (n))
#define rv_srli(a, n) _mm256_srli_epi32((a), (n))
#define rv_srai(a, n) _mm256_srai_epi32((a), (n))
/* makes gcc keep v in a register: a loaded vector used twice is then loaded once, not again
 * as the memory operand of its second use (which costs a load port per reuse) */
#define rv_keep(v) __asm__("" : "+x"(v))

/* ---- used by the kernels (vec-template.h) ---- */
#define rv_load_n(p, n, fill) ridge_avx2_load_n((p), (n), (fill)) /* n < RV_W lanes, rest fill */
#define rv_load_nz(p, n) _mm256_maskload_ps((p), ridge_avx2_tail_mask(n)) /* n <= W, rest 0 */
#define rv_store_n(p, v, n) ridge_avx2_store_n((p), (v), (n))
/* the first n < RV_W lanes, in pieces of 4, 2 and 1 floats (vmaskmovps stores are slow on AMD
 * cores) */
#define rv_store_part(p, v, n) ridge_avx2_store_part((p), (v), (n))
#define rv_reduce_add(v) ridge_avx2_reduce_add(v) /* lane j + lane j + W/2, recursively */
#define rv_reduce_min(v) ridge_avx2_reduce_min(v)
#define rv_reduce_max(v) ridge_avx2_reduce_max(v)
/* double */
#define RD_W 4
#define rd_f __m256d
#define rd_zero() _mm256_setzero_pd()
#define rd_set1(c) _mm256_set1_pd(c)
#define rd_load(p) _mm256_loadu_pd(p)
#define rd_load_n(p, n) ridge_avx2_load_n_pd((p), (n)) /* n <= RD_W lanes, rest 0 */
#define rd_add(a, b) _mm256_add_pd((a), (b))
#define rd_mul(a, b) _mm256_mul_pd((a), (b))
#define rd_fma(a, b, c) _mm256_fmadd_pd((a), (b), (c))
#define rd_min(a, b) _mm256_min_pd((a), (b))
#define rd_max(a, b) _mm256_max_pd((a), (b))
#define rd_cmp(a, b, p) _mm256_cmp_pd((a), (b), (p))
#define rd_mor(a, b) _mm256_or_pd((a), (b))
#define rd_mbits(m) ((unsigned)_mm256_movemask_pd(m))
#define rd_reduce_add(v) ridge_avx2_reduce_add_pd(v)
#define rd_reduce_min(v) ridge_avx2_reduce_min_pd(v)
#define rd_reduce_max(v) ridge_avx2_reduce_max_pd(v)
/* int32 lanes (rv_i) and int64 lanes (also __m256i) */
#define RL_W 4
#define ri_load(p) _mm256_loadu_si256((const __m256i *)(p))
#define ri_zero() _mm256_setzero_si256()
#define ri_add32(a, b) _mm256_add_epi32((a), (b))
#define ri_min32(a, b) _mm256_min_epi32((a), (b))
#define ri_max32(a, b) _mm256_max_epi32((a), (b))
#define ri_eq32_bits(a, b) ((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32((a), (b)))))
#define ri_store(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define ri_load_n(p, n) _mm256_maskload_epi32((const int *)(p), ridge_avx2_tail_mask(n)) /* rest 0 */
#define ri_hsum32(v) ridge_avx2_hsum_epi32(v) /* the sum of the lanes, wrapped to int32 */
#define ri_mul32(a, b) _mm256_mul_epi32((a), (b)) /* low signed 32 of each 64-bit lane -> 64 */
/* int32 lanes 0..3 / 4..7 sign-extended to int64 lanes */
#define ri_widen_lo(a) _mm256_cvtepi32_epi64(_mm256_castsi256_si128(a))
#define ri_widen_hi(a) _mm256_cvtepi32_epi64(_mm256_extracti128_si256((a), 1))
#define rl_set1(c) _mm256_set1_epi64x(c)
#define rl_load_n(p, n) _mm256_castpd_si256(ridge_avx2_load_n_pd((const double *)(p), (n)))
#define rl_hsum(v) ridge_avx2_hsum_epi64(v) /* the sum of the lanes, wrapped to int64 */
#define rl_add(a, b) _mm256_add_epi64((a), (b))
#define rl_and(a, b) _mm256_and_si256((a), (b))
#define rl_srli(a, n) _mm256_srli_epi64((a), (n))
#define rl_srai32(a) ridge_avx2_srai32_epi64(a)
#define rl_min(a, b) _mm256_blendv_epi8((a), (b), _mm256_cmpgt_epi64((a), (b)))
#define rl_max(a, b) _mm256_blendv_epi8((b), (a), _mm256_cmpgt_epi64((a), (b)))
#define rl_eq_bits(a, b) ((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64((a), (b)))))
#define ri_reduce_min32(v) ridge_avx2_reduce_epi32(v, 0)
#define ri_reduce_max32(v) ridge_avx2_reduce_epi32(v, 1)
#define rl_reduce_min(v) ridge_avx2_reduce_epi64(v, 0)
#define rl_reduce_max(v) ridge_avx2_reduce_epi64(v, 1)

#ifndef RIDGE_SIMD_AVX2_FUNCS
#define RIDGE_SIMD_AVX2_FUNCS
static const int32_t ridge_avx2_tail_bits[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                 0, 0, 0, 0, 0, 0, 0, 0};
static inline __m256i ridge_avx2_tail_mask(size_t n)
{
    return _mm256_loadu_si256((const __m256i *)(ridge_avx2_tail_bits + 8 - n));
}
static inline __m256 ridge_avx2_load_n(const float *p, size_t n, __m256 fill)
{
    __m256i m = ridge_avx2_tail_mask(n);
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}
static inline void ridge_avx2_store_n(float *p, __m256 v, size_t n)
{
    _mm256_maskstore_ps(p, ridge_avx2_tail_mask(n), v);
}
static inline void ridge_avx2_store_part(float *p, __m256 v, size_t n)
{
    __m128 t = _mm256_castps256_ps128(v);
    if (n & 4) _mm_storeu_ps(p, t), p += 4, t = _mm256_extractf128_ps(v, 1);
    if (n & 2) _mm_storel_epi64((__m128i *)p, _mm_castps_si128(t)), p += 2, t = _mm_movehl_ps(t, t);
    if (n & 1) _mm_store_ss(p, t);
}
static inline __m256d ridge_avx2_load_n_pd(const double *p, size_t n)
{
    /* n in 0..4: 64-bit lane i is on when both its 32-bit halves are (entries 2i, 2i+1) */
    __m256i m = _mm256_loadu_si256((const __m256i *)(ridge_avx2_tail_bits + 8 - 2 * n));
    return _mm256_maskload_pd(p, m);
}
static inline float ridge_avx2_reduce_add(__m256 v)
{
    __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_add_ps(a, _mm_movehl_ps(a, a));
    a = _mm_add_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline float ridge_avx2_reduce_min(__m256 v)
{
    __m128 a = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_min_ps(a, _mm_movehl_ps(a, a));
    a = _mm_min_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline float ridge_avx2_reduce_max(__m256 v)
{
    __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    a = _mm_max_ps(a, _mm_movehl_ps(a, a));
    a = _mm_max_ss(a, _mm_movehdup_ps(a));
    return _mm_cvtss_f32(a);
}
static inline double ridge_avx2_reduce_add_pd(__m256d v)
{
    __m128d a = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(a, _mm_unpackhi_pd(a, a)));
}
static inline double ridge_avx2_reduce_min_pd(__m256d v)
{
    __m128d a = _mm_min_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_min_sd(a, _mm_unpackhi_pd(a, a)));
}
static inline double ridge_avx2_reduce_max_pd(__m256d v)
{
    __m128d a = _mm_max_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_max_sd(a, _mm_unpackhi_pd(a, a)));
}
static inline int32_t ridge_avx2_hsum_epi32(__m256i v)
{
    __m128i a = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4e));
    return _mm_cvtsi128_si32(_mm_add_epi32(a, _mm_shuffle_epi32(a, 0xb1)));
}
static inline int64_t ridge_avx2_hsum_epi64(__m256i v)
{
    __m128i a = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return _mm_cvtsi128_si64(_mm_add_epi64(a, _mm_unpackhi_epi64(a, a)));
}
/* the least (max = 0) or greatest (max = 1) of the lanes */
static inline int32_t ridge_avx2_reduce_epi32(__m256i v, int max)
{
    __m128i a = _mm256_castsi256_si128(v), b = _mm256_extracti128_si256(v, 1);
    a = max ? _mm_max_epi32(a, b) : _mm_min_epi32(a, b);
    b = _mm_shuffle_epi32(a, 0x4e);
    a = max ? _mm_max_epi32(a, b) : _mm_min_epi32(a, b);
    b = _mm_shuffle_epi32(a, 0xb1);
    return _mm_cvtsi128_si32(max ? _mm_max_epi32(a, b) : _mm_min_epi32(a, b));
}
static inline int64_t ridge_avx2_reduce_epi64(__m256i v, int max)
{
    __m256i b = _mm256_permute4x64_epi64(v, 0x4e), gt = _mm256_cmpgt_epi64(v, b);
    v = max ? _mm256_blendv_epi8(b, v, gt) : _mm256_blendv_epi8(v, b, gt);
    b = _mm256_shuffle_epi32(v, 0x4e), gt = _mm256_cmpgt_epi64(v, b);
    v = max ? _mm256_blendv_epi8(b, v, gt) : _mm256_blendv_epi8(v, b, gt);
    return _mm_cvtsi128_si64(_mm256_castsi256_si128(v));
}
/* int64 lanes >> 32, arithmetic (AVX2 has no vpsraq): high dwords from the sign */
static inline __m256i ridge_avx2_srai32_epi64(__m256i v)
{
    return _mm256_blend_epi32(_mm256_srli_epi64(v, 32), _mm256_srai_epi32(v, 31), 0xaa);
}
#endif /* RIDGE_SIMD_AVX2_FUNCS */
