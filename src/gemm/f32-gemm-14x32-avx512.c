/* SGEMM kernels for AVX-512F: a 14 x 32 register tile (28 zmm accumulators, 2 for B, 1 for the
 * A broadcast: 31 of the 32 zmm registers). Intensity 2 * 14 * 32 / (14 + 32) = 19.5 FLOP per
 * float loaded, the best the 32-register budget allows with 2 B vectors (6 x 64 gives 17.5);
 * 28 independent FMA chains cover the latency of two 512-bit FMA pipes. The matrix-vector tile
 * is 1 x 128 (8 chains). All logic is in f32-gemm-template.h; this file is only the 512-bit
 * mapping (masks are k-registers). */
#include <immintrin.h>

#include "gemm/gemm-internal.h"
#include "vec/math-avx512.h"

#define GEMM_MR 14
#define GEMM_NV 2
#define GEMM_GV 8
#define GEMM_SUFFIX __avx512
#define GEMM_UKERNEL ridge_f32_gemm_ukernel_14x32__avx512
#define GEMM_TABLE ridge_gemm_kernel_avx512
#define GEMM_NAME "f32-gemm-14x32-avx512"

#define VL 16
typedef __m512 vf;
typedef __mmask16 vmask;
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_STORE(p, x) _mm512_storeu_ps(p, x)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_MAX(a, b) _mm512_max_ps(a, b)
#define V_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define V_MASKLOAD(p, m) _mm512_maskz_loadu_ps(m, p)
#define V_MASKSTORE(p, m, x) _mm512_mask_storeu_ps(p, m, x)
#define V_HSUM(x) _mm512_reduce_add_ps(x)
#define V_ACT(act, x) act_avx512(act, x)

/* The smooth activations from the vec family's inline math (ReLU is in the template). */
static inline __m512 act_avx512(ridge_epi_act act, __m512 x)
{
    switch (act) {
    case RIDGE_EPI_GELU_TANH: return ridge_gelu_tanh_f32x16(x);
    case RIDGE_EPI_SIGMOID: return ridge_sigmoid_f32x16(x);
    case RIDGE_EPI_TANH: return ridge_tanh_f32x16(x);
    default: return x;
    }
}

#include "gemm/f32-gemm-template.h"
