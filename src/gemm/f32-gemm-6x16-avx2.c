/* SGEMM kernels for AVX2 + FMA: a 6 x 16 register tile (12 ymm accumulators, 2 for B, 1 for
 * the A broadcast: 15 of the 16 ymm registers). Intensity 2 * 6 * 16 / (6 + 16) = 8.7 FLOP per
 * float loaded, enough for two FMA pipes with two loads per cycle; 12 independent FMA chains
 * cover the 4-cycle latency x 2 pipes. The matrix-vector tile is 1 x 64 (8 chains).
 * All logic is in f32-gemm-template.h; this file is only the 256-bit mapping. */
#include <immintrin.h>

#include "gemm/gemm-internal.h"
#include "vec/math-avx2.h"

#define GEMM_MR 6
#define GEMM_NV 2
#define GEMM_GV 8
#define GEMM_INPLACE_B_MAX_M 64
#define GEMM_SUFFIX __avx2
#define GEMM_UKERNEL ridge_f32_gemm_ukernel_6x16__avx2
#define GEMM_TABLE ridge_gemm_kernel_avx2
#define GEMM_NAME "f32-gemm-6x16-avx2"

#define VL 8
typedef __m256 vf;
typedef __m256i vmask;
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_STORE(p, x) _mm256_storeu_ps(p, x)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_MAX(a, b) _mm256_max_ps(a, b)
#define V_MASK(n) _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define V_MASKLOAD(p, m) _mm256_maskload_ps(p, m)
#define V_MASKSTORE(p, m, x) _mm256_maskstore_ps(p, m, x)
#define V_HSUM(x) hsum_avx2(x)

static inline float hsum_avx2(__m256 x)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
#define V_ACT(act, x) act_avx2(act, x)

/* The smooth activations from the vec family's inline math (ReLU is in the template). */
static inline __m256 act_avx2(ridge_epi_act act, __m256 x)
{
    switch (act) {
    case RIDGE_EPI_GELU_TANH: return ridge_gelu_tanh_f32x8(x);
    case RIDGE_EPI_SIGMOID: return ridge_sigmoid_f32x8(x);
    case RIDGE_EPI_TANH: return ridge_tanh_f32x8(x);
    default: return x;
    }
}

#include "gemm/f32-gemm-template.h"
