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
