/* The thin intrinsic mapping for AVX-512 F/DQ (16 floats): the same names as simd-avx2.h
 * (read that file for the contract), so math-template.h and vec-template.h expand to the
 * AVX-512 variants unchanged. Masks are __mmask16 instead of vectors. */
#include <immintrin.h>

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
