/* SGEMM kernels for AVX-512F in three register tiles; gemm.c's select_kernel picks one.
 *
 * 8 x 32 (16 zmm accumulators, 2 for B, 1 for the A broadcast): intensity
 * 2 * 8 * 32 / (8 + 32) = 12.8 FLOP per float loaded; 16 independent FMA chains cover the
 * 4-cycle latency of the FMA pipes. On AMD cores no taller tile beat it: on Zen 4 (512-bit FMAs
 * issued over two 256-bit halves) 8 x 32 ran 1.02x 14 x 32 at 2048^3 and 4096^3 and 1.01-1.07x
 * on the GPT-2, conv and dense shapes (6 x 32, 7 x 32, 4 x 64 and 6 x 64 within 1%; 12 x 32
 * and 8 x 48 like 14 x 32); on Zen 5, 12 x 32 ran 0.95-1.02x it. Fewer rows of C per tile also
 * crowd fewer lines into one L1 set when ldc is a multiple of 4 KiB, and 8 divides the batch
 * and sequence sizes models use.
 *
 * 14 x 32 (28 accumulators): intensity 19.5, and the B micro-panel (KC x 32 floats, up to
 * 96 KiB, streamed from L2) read once per 28 FMAs instead of 16. On an Intel Xeon (48 KiB L1d,
 * 2 MiB L2), where 8 x 32 ran at 78% of the FMA loop and oneDNN at 88%, 14 x 32 ran 1.07x
 * 8 x 32 at 2048^3, 1.08-1.14x on the GPT-2 shapes and 1.08-1.10x on the conv shapes with 64
 * rows (12 x 32 1.05-1.09x, 8 x 48 1.04-1.13x; scripts/gemm-ab.c, PERFORMANCE.md session 19).
 *
 * 6 x 64 (24 accumulators, 4 B vectors, 1 broadcast: 29 registers): 10 loads per 24 FMAs,
 * against 16 per 28 for 14 x 32 and 10 per 16 for 8 x 32; on the Intel Xeon it ran faster
 * where B is packed and A has 256 rows or more (2048^3 1.05-1.08x 14 x 32, 768 x 3072 x 256
 * TN 1.065x, 256 x 3072 x 768 NN with B aliased 1.07-1.09x), slower where B is read in place
 * (0.96-0.97x). Inside products each tile there ran faster the fewer loads it issues per
 * FMA; alone, with A and B in L1, all three ran at 96-97% of the FMA loop
 * (scripts/ukernel-alone.c), so what separates them is how they meet the caches, not the load
 * ports.
 *
 * The matrix-vector tile is 1 x 128 (8 chains). All logic is in f32-gemm-template.h; this file
 * is only the 512-bit mapping (masks are k-registers) and the three tiles' sizes. */
#include <immintrin.h>

#include "gemm/gemm-internal.h"
#include "vec/math-avx512.h"

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

/* Shared by the three tiles: the matrix-vector tile, the in-place B limit, the dot kernel. */
#define GEMM_GV 8
#define GEMM_INPLACE_B_MAX_M 512
/* 8 rows per dot block (16 accumulators, and a's two vectors loaded once per 16 FMAs, not
 * per 8): 1 x 128 x 784 NT 1.32-1.36x on Zen 5 (scripts/gemm-ab.c); 12 rows 0.88-0.95x of 8 */
#define GEMV_T_ROWS 8

#define GEMM_MR 8
#define GEMM_NV 2
#define GEMM_SUFFIX _8x32__avx512
#define GEMM_UKERNEL ridge_f32_gemm_ukernel_8x32__avx512
#define GEMM_TABLE ridge_gemm_kernel_8x32_avx512
#define GEMM_NAME "f32-gemm-8x32-avx512"
#include "gemm/f32-gemm-template.h"

#define GEMM_MR 14
#define GEMM_NV 2
#define GEMM_SUFFIX _14x32__avx512
#define GEMM_UKERNEL ridge_f32_gemm_ukernel_14x32__avx512
#define GEMM_TABLE ridge_gemm_kernel_14x32_avx512
#define GEMM_NAME "f32-gemm-14x32-avx512"
#include "gemm/f32-gemm-template.h"

#define GEMM_MR 6
#define GEMM_NV 4
#define GEMM_SUFFIX _6x64__avx512
#define GEMM_UKERNEL ridge_f32_gemm_ukernel_6x64__avx512
#define GEMM_TABLE ridge_gemm_kernel_6x64_avx512
#define GEMM_NAME "f32-gemm-6x64-avx512"
#include "gemm/f32-gemm-template.h"
