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

/* ---- A B^T with few rows or few columns: dot products, nothing packed ----------------------- */

/* Lanes 0..5 of the result: the sums of the 16 lanes of v[0..5] (the other lanes: copies or
 * zeros). Pairs, then quads within each 128-bit lane, then across the four 128-bit lanes. */
static inline __m512 dot_hsum6(const __m512 v[GEMM_DOT_NR])
{
    const __m512 z = _mm512_setzero_ps();
    /* per 128-bit lane: [a0 + a2, b0 + b2, a1 + a3, b1 + b3] */
    __m512 t01 = _mm512_add_ps(_mm512_unpacklo_ps(v[0], v[1]), _mm512_unpackhi_ps(v[0], v[1]));
    __m512 t23 = _mm512_add_ps(_mm512_unpacklo_ps(v[2], v[3]), _mm512_unpackhi_ps(v[2], v[3]));
    __m512 t45 = _mm512_add_ps(_mm512_unpacklo_ps(v[4], v[5]), _mm512_unpackhi_ps(v[4], v[5]));
    /* per 128-bit lane: [a, b, c, d] and [e, f, 0, 0] */
    __m512 u0 = _mm512_add_ps(_mm512_shuffle_ps(t01, t23, 0x44), _mm512_shuffle_ps(t01, t23, 0xEE));
    __m512 u1 = _mm512_add_ps(_mm512_shuffle_ps(t45, z, 0x44), _mm512_shuffle_ps(t45, z, 0xEE));
    /* 128-bit lanes [u0.0 + u0.2, u0.1 + u0.3, u1.0 + u1.2, u1.1 + u1.3] */
    __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(u0, u1, 0x44), _mm512_shuffle_f32x4(u0, u1, 0xEE));
    /* [s.0 + s.1, s.2 + s.3, ...]: a..d in lanes 0-3, e and f in lanes 4 and 5 */
    return _mm512_add_ps(_mm512_shuffle_f32x4(s, s, 0xD8), _mm512_shuffle_f32x4(s, s, 0x8D));
}

/* The dot kernel (below the tiles: it finishes with the 8 x 32 tile's epilogue) */
static void ridge_f32_gemm_dot_4x6__avx512(size_t k, const float *a, size_t lda, const float *b,
                                           size_t ldb, float *c, size_t ldc, size_t mr, size_t nr,
                                           const gemm_tile_params *t);
#define GEMM_DOT ridge_f32_gemm_dot_4x6__avx512
#define GEMM_DOT_NAME "f32-gemm-dot-4x6-avx512"

/* Shared by the three tiles: the matrix-vector tile, the in-place B limit, the m == 1 dot
 * kernel's rows. */
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

/* C[0:mr, 0:nr] (mr <= GEMM_DOT_MR, nr <= GEMM_DOT_NR) = epilogue(A B^T) over all k, A's rows
 * lda apart and B^T's rows ldb apart, both contiguous in k. Each element is a dot product
 * summed in 16 lanes (the k tail masked) and then across them (dot_hsum6): its bits depend on
 * k only, not on the tile it falls in. Rows and columns past mr and nr re-read row 0 and are
 * not stored. 24 accumulators, 10 loads per 24 FMAs; t as for the micro-kernel (one k block:
 * t->last). */
static void ridge_f32_gemm_dot_4x6__avx512(size_t k, const float *a, size_t lda, const float *b,
                                           size_t ldb, float *c, size_t ldc, size_t mr, size_t nr,
                                           const gemm_tile_params *t)
{
    const float *ar[GEMM_DOT_MR], *br[GEMM_DOT_NR];
    for (size_t x = 0; x < GEMM_DOT_MR; x++) ar[x] = a + (x < mr ? x : 0) * lda;
    for (size_t y = 0; y < GEMM_DOT_NR; y++) br[y] = b + (y < nr ? y : 0) * ldb;
    __m512 acc[GEMM_DOT_MR][GEMM_DOT_NR];
    for (int x = 0; x < GEMM_DOT_MR; x++)
        for (int y = 0; y < GEMM_DOT_NR; y++) acc[x][y] = _mm512_setzero_ps();
    size_t p = 0;
    for (; p + 16 <= k; p += 16) {
        __m512 bv[GEMM_DOT_NR];
        for (int y = 0; y < GEMM_DOT_NR; y++) bv[y] = _mm512_loadu_ps(br[y] + p);
        for (int x = 0; x < GEMM_DOT_MR; x++) {
            const __m512 av = _mm512_loadu_ps(ar[x] + p);
            for (int y = 0; y < GEMM_DOT_NR; y++) acc[x][y] = _mm512_fmadd_ps(av, bv[y], acc[x][y]);
        }
    }
    if (p < k) {
        const __mmask16 m = (__mmask16)((1u << (k - p)) - 1u);
        __m512 bv[GEMM_DOT_NR];
        for (int y = 0; y < GEMM_DOT_NR; y++) bv[y] = _mm512_maskz_loadu_ps(m, br[y] + p);
        for (int x = 0; x < GEMM_DOT_MR; x++) {
            const __m512 av = _mm512_maskz_loadu_ps(m, ar[x] + p);
            for (int y = 0; y < GEMM_DOT_NR; y++) acc[x][y] = _mm512_fmadd_ps(av, bv[y], acc[x][y]);
        }
    }
    /* the micro-kernel's epilogue on each row's sums, lanes 0..nr-1 of one vector (the 8 x 32
     * tile's store_tile: masked to nr columns, it stores the first vector of each row only) */
    __m512 sums[GEMM_DOT_MR][2];
    for (int x = 0; x < GEMM_DOT_MR; x++)
        sums[x][0] = dot_hsum6(acc[x]), sums[x][1] = _mm512_setzero_ps();
    store_tile_8x32__avx512(GEMM_DOT_MR, sums, c, ldc, mr, nr, t, 0);
}
