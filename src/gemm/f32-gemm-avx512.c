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

/* The dot kernel's sums across lanes, as a transposed reduction: each step adds two vectors
 * lane by lane after two shuffles that pack both vectors' elements into one, halving the lanes
 * each element owns. Within each 128-bit quarter, lanes (0 + 2) + (1 + 3) by in-lane unpacks;
 * then the quarters, (0 + 2) + (1 + 3), by 128-bit shuffles. Every element's 16 lanes are summed
 * in this one order wherever it sits: its bits do not depend on the tile. Against folds that
 * blend and permute across the whole vector at every step (15 lane-crossing permutes for 16
 * elements, here 6), on Zen 5 (scripts/gemm-ab-small.c, 1 thread, both orders): 64 x 10 x 128
 * NT 1.03-1.06x, 3136 x 16 x 64 1.05-1.06x, 256 x 10 x 784 1.02x, 64 x 24 x 128 1.03-1.05x,
 * 1 x 128 x 784, 1 x 768 x 768, 8 x 2304 x 768 and 32 x 128 x 784 0.99-1.01x. */
static inline __m512 dot_fold1(__m512 a, __m512 b) /* [a0+a2, b0+b2, a1+a3, b1+b3] */
{
    return _mm512_add_ps(_mm512_unpacklo_ps(a, b), _mm512_unpackhi_ps(a, b));
}

/* a = dot_fold1(u, v), b = dot_fold1(w, x): [u, v, w, x], each its quarter's 4-lane sum */
static inline __m512 dot_fold2(__m512 a, __m512 b)
{
    const __m512d x = _mm512_castps_pd(a), y = _mm512_castps_pd(b);
    return _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)),
                         _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
}

/* quarters (0 + 2, 1 + 3) of a, then of b */
static inline __m512 dot_fold3(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
}

/* quarters (0 + 1, 2 + 3) of a, then of b */
static inline __m512 dot_fold4(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD));
}

/* The sums of v[0..15], element e in lane e. */
static inline __attribute__((always_inline)) __m512 dot_sum16(const __m512 *v)
{
    __m512 h[8], q[4];
    _Pragma("GCC unroll 8") for (int e = 0; e < 8; e++) h[e] = dot_fold1(v[2 * e], v[2 * e + 1]);
    _Pragma("GCC unroll 4") for (int e = 0; e < 4; e++) q[e] = dot_fold2(h[2 * e], h[2 * e + 1]);
    return dot_fold4(dot_fold3(q[0], q[1]), dot_fold3(q[2], q[3]));
}

/* The sums of v[0..7], element e in lanes e and e + 8: the same steps, the last on itself. */
static inline __attribute__((always_inline)) __m512 dot_sum8(const __m512 *v)
{
    __m512 h[4];
    _Pragma("GCC unroll 4") for (int e = 0; e < 4; e++) h[e] = dot_fold1(v[2 * e], v[2 * e + 1]);
    const __m512 w = dot_fold3(dot_fold2(h[0], h[1]), dot_fold2(h[2], h[3]));
    return dot_fold4(w, w);
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
/* Its 8 sums across lanes as one transposed reduction (dot_sum8). With the vector epilogue (the template's gemv_t), on Zen 5
 * (scripts/gemm-ab-small.c, 1 thread): 1 x 64 x 64 NT 1.52-1.58x, 1 x 32 x 256 1.21x, 1 x 768
 * x 768 1.04x, 1 x 128 x 784 1.00-1.02x (the sums alone 1.02-1.03x). */
static inline __attribute__((always_inline)) void gemv_t_sums8(const __m512 *s0, const __m512 *s1,
                                                               float *out)
{
    __m512 v[8];
    _Pragma("GCC unroll 8") for (int q = 0; q < 8; q++) v[q] = _mm512_add_ps(s0[q], s1[q]);
    _mm256_storeu_ps(out, _mm512_castps512_ps256(dot_sum8(v)));
}
#define GEMV_T_SUMS(s0, s1, out) gemv_t_sums8(s0, s1, out)

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

/* Row x of a dot tile's sums in lanes 0..NC-1: element (x, y) sits in lane x NC + y of f0,
 * f1 (dot_tile), lanes 16-31 being f1's. */
static inline __attribute__((always_inline)) __m512 dot_row(const int NC, int x, __m512 f0,
                                                            __m512 f1)
{
    int idx[16] = {0};
    _Pragma("GCC unroll 8") for (int y = 0; y < NC; y++) idx[y] = x * NC + y;
    return _mm512_permutex2var_ps(f0, _mm512_loadu_si512(idx), f1);
}

/* Rows [0, mr) of a dot tile's sums to C, masked to nr columns, plus C with read_c:
 * store_plain's values. */
static inline __attribute__((always_inline)) void dot_store_plain(const int NC, __m512 f0,
                                                                  __m512 f1, float *c, size_t ldc,
                                                                  size_t mr, size_t nr,
                                                                  const int read_c)
{
    const __mmask16 m = (__mmask16)((1u << nr) - 1u);
    _Pragma("GCC unroll 8") for (int x = 0; x < GEMM_DOT_MR; x++) {
        if ((size_t)x >= mr) break;
        __m512 v = dot_row(NC, x, f0, f1);
        if (read_c) v = _mm512_add_ps(_mm512_maskz_loadu_ps(m, c + x * ldc), v);
        _mm512_mask_storeu_ps(c + x * ldc, m, v);
    }
}

/* C[0:mr, 0:nr] (mr <= GEMM_DOT_MR, nr <= NC) = epilogue(A B^T) over all k, A's rows lda apart
 * and B^T's rows ldb apart, both contiguous in k, with NC (2, 4 or 6) columns of
 * accumulators. Each element is a dot product summed in 16 lanes (the k tail masked) and then
 * across them (dot_sum16, dot_sum8): its bits depend on k only, not on the tile it falls in.
 * Rows past mr re-read row 0 and columns past nr row 0 of B^T, and are not stored. t as for the
 * micro-kernel (one k block: t->last). */
static inline __attribute__((always_inline)) void
dot_tile(const int NC, size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c,
         size_t ldc, size_t mr, size_t nr, const gemm_tile_params *t)
{
    const float *ar[GEMM_DOT_MR], *br[GEMM_DOT_NR];
    _Pragma("GCC unroll 8") for (int x = 0; x < GEMM_DOT_MR; x++)
        ar[x] = a + ((size_t)x < mr ? (size_t)x : 0) * lda;
    _Pragma("GCC unroll 8") for (int y = 0; y < NC; y++)
        br[y] = b + ((size_t)y < nr ? (size_t)y : 0) * ldb;
    /* v[x * NC + y]: element (x, y). Every loop over it unrolled: gcc otherwise keeps it in
     * memory (a zeroing loop becomes a memset), with a store per FMA. */
    __m512 v[GEMM_DOT_MR * GEMM_DOT_NR];
    _Pragma("GCC unroll 24") for (int e = 0; e < GEMM_DOT_MR * NC; e++)
        v[e] = _mm512_setzero_ps();
    size_t p = 0;
#define DOT_STEP(LOAD)                                                                             \
    do {                                                                                           \
        __m512 bv[GEMM_DOT_NR];                                                                    \
        _Pragma("GCC unroll 8") for (int y = 0; y < NC; y++) bv[y] = LOAD(br[y] + p);              \
        _Pragma("GCC unroll 8") for (int x = 0; x < GEMM_DOT_MR; x++) {                            \
            const __m512 av = LOAD(ar[x] + p);                                                     \
            _Pragma("GCC unroll 8") for (int y = 0; y < NC; y++)                                   \
                v[x * NC + y] = _mm512_fmadd_ps(av, bv[y], v[x * NC + y]);                         \
        }                                                                                          \
    } while (0)
    for (; p + 16 <= k; p += 16) DOT_STEP(_mm512_loadu_ps);
    if (p < k) {
        const __mmask16 m = (__mmask16)((1u << (k - p)) - 1u);
#define DOT_MASKED(q) _mm512_maskz_loadu_ps(m, q)
        DOT_STEP(DOT_MASKED);
#undef DOT_MASKED
    }
#undef DOT_STEP
    /* 4 x NC elements: 24 = 16 + 8, 16, or 8. Element e < 16 ends in lane e of f0, the others
     * in lane e - 16 of f1: permute index e either way (16-31 are f1's). */
    const __m512 f0 = GEMM_DOT_MR * NC >= 16 ? dot_sum16(v) : dot_sum8(v);
    const __m512 f1 = GEMM_DOT_MR * NC == 24 ? dot_sum8(v + 16) : f0;
    /* no epilogue (alpha 1, beta 0 or 1): each row's sums straight to C, masked to nr
     * columns, as store_plain would store them. Through store_tile's sums array they went to
     * the stack and back (Zen 5, scripts/gemm-ab-small.c, 1 thread, two builds of one tree:
     * 64 x 10 x 128 NT 1.10x, 64 x 24 x 128 1.09x, 3136 x 16 x 64 1.15x). */
    if (t->plain) {
        if (t->beta == 0.0f) dot_store_plain(NC, f0, f1, c, ldc, mr, nr, 0);
        else dot_store_plain(NC, f0, f1, c, ldc, mr, nr, 1);
        return;
    }
    /* else the micro-kernel's epilogue on each row's sums in lanes 0..NC-1 (the 8 x 32 tile's
     * store_tile: masked to nr columns, it stores the first vector of each row only) */
    __m512 sums[GEMM_DOT_MR][2];
    _Pragma("GCC unroll 8") for (int x = 0; x < GEMM_DOT_MR; x++) {
        sums[x][0] = dot_row(NC, x, f0, f1);
        sums[x][1] = _mm512_setzero_ps();
    }
    store_tile_8x32__avx512(GEMM_DOT_MR, sums, c, ldc, mr, nr, t, 0);
}

static void ridge_f32_gemm_dot_4x6__avx512(size_t k, const float *a, size_t lda, const float *b,
                                           size_t ldb, float *c, size_t ldc, size_t mr, size_t nr,
                                           const gemm_tile_params *t)
{
    /* Fewer columns than 6 run tiles of 4 or 2 (10 classes: 6 + 4), with the same bits. With
     * these and the folds, against 6 columns always and each row's six sums reduced alone
     * (56 shuffles a tile, and spills), on the Intel Xeon (scripts/gemm-ab-small.c, 1
     * thread): 64 x 10 x 128 NT 1.34x (the folds alone 1.15x), 256 x 10 x 784 1.24x,
     * 3136 x 16 x 64 1.51x, 64 x 31 x 256 1.26x, 32 x 128 x 784 1.07x, 8 x 2304 x 768 1.06x. */
    if (nr <= 2) dot_tile(2, k, a, lda, b, ldb, c, ldc, mr, nr, t);
    else if (nr <= 4) dot_tile(4, k, a, lda, b, ldb, c, ldc, mr, nr, t);
    else dot_tile(6, k, a, lda, b, ldb, c, ldc, mr, nr, t);
}
