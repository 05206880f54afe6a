/* The SGEMM kernels, written once for any vector width. An ISA file defines the thin mapping
 * below and includes this header; the AVX2 and AVX-512 kernels differ only in that mapping
 * and in the tile size, so the AVX2 tests validate the logic of both.
 *
 * The ISA file defines, before including:
 *   GEMM_MR          rows of the register tile
 *   GEMM_NV          vectors per row of the tile (NR = GEMM_NV * VL columns)
 *   GEMM_GV          vectors per row of the matrix-vector tile (1 x GV * VL)
 *   GEMM_INPLACE_B_MAX_M  the most rows of A for which a row-major B is read in place
 *   GEMV_T_ROWS      (optional, default 4) rows of B^T per block of the m == 1 dot kernel
 *   GEMM_DOT, GEMM_DOT_NAME  (optional) the ISA's few-rows A B^T kernel (gemm_kernel.dot)
 *   GEMM_SUFFIX      the ISA suffix token of every symbol (__avx2)
 *   GEMM_UKERNEL     the micro-kernel's name (ridge_f32_gemm_ukernel_6x16__avx2)
 *   GEMM_TABLE       the name of the exported gemm_kernel table
 *   GEMM_NAME        its ukernel name ("f32-gemm-6x16-avx2")
 *   VL, vf, vmask    lanes per vector, the vector type, the lane-mask type
 *   V_ZERO() V_SET1(x) V_LOAD(p) V_STORE(p, x) V_FMA(a, b, c) = a * b + c, V_MUL V_ADD
 *   V_MAX(a, b)      max, returning b when either is NaN (x86 maxps with b second)
 *   V_MASK(n)        lanes [0, n) on, 0 <= n <= VL
 *   V_MASKLOAD(p, m) lanes off read as 0 and are not accessed; V_MASKSTORE(p, m, x)
 *   V_HSUM(x)        horizontal sum to a float
 *   V_ACT(act, x)    GELU-tanh, sigmoid, tanh on a vector (the vec family's inline math)
 *
 * Micro-kernel (BLIS): the tile of C, MR x NR, lives in MR * GEMM_NV accumulators for the
 * whole k loop; per k step it loads GEMM_NV vectors of B, broadcasts MR elements of A and
 * issues MR * GEMM_NV FMAs. A is packed (k-major MR-row panels, zero-padded) and B either
 * packed (k-major NR-column panels, zero-padded, b_rs == NR) or read in place from a row-major
 * matrix (b_rs == ldb, masked loads on the last partial panel), the path for products with
 * few rows (GEMM_INPLACE_B_MAX_M). After the k loop the epilogue (alpha, beta, bias,
 * activation, residual) runs on the accumulators before the single store, with masked stores
 * on edge tiles.
 * The per-tile parameters (GEMM_MR, GEMM_NV and the names) and the template's own macros are
 * undefined at the end, so one ISA file can instantiate several tiles (f32-gemm-avx512.c).
 * Packing transposes 8 x 8 blocks with 256-bit instructions in both ISAs (every AVX-512 CPU
 * has AVX2), so that part is also exercised by the AVX2 tests. */
#include <immintrin.h>
#include <stddef.h>
#include <string.h>

#include "gemm/gemm-internal.h"

#define GEMM_NR (GEMM_NV * VL)
#define GEMM_C_PREFETCH_MIN_KC 128
#define GEMM_CAT_(a, b) a##b
#define GEMM_CAT(a, b) GEMM_CAT_(a, b)
#define GEMM_FN(name) GEMM_CAT(name, GEMM_SUFFIX)
#define GEMM_INLINE static inline __attribute__((always_inline))

/* ---- epilogue ------------------------------------------------------------------------------ */

GEMM_INLINE vf GEMM_FN(act)(ridge_epi_act act, vf x)
{
    if (act == RIDGE_EPI_RELU) return V_MAX(V_ZERO(), x);
    return V_ACT(act, x);
}

/* The common cases (a plain product, and every k block but the last): C = acc or C + acc,
 * without the epilogue's per-element tests, which for small k cost as much as the FMAs.
 * C + acc is what the general path's fma(1, C, acc) gives, bit for bit. */
GEMM_INLINE void GEMM_FN(store_plain_vec)(float *cv, vf x, int read_c)
{
    V_STORE(cv, read_c ? V_ADD(V_LOAD(cv), x) : x);
}

static void GEMM_FN(store_plain)(const int R, vf acc[][GEMM_NV], float *c, size_t ldc,
                                  size_t mr, size_t nr, int read_c)
{
    for (int r = 0; r < R && (size_t)r < mr; r++) {
        float *cr = c + r * ldc;
        for (int v = 0; v < GEMM_NV && (size_t)v * VL < nr; v++) {
            long left = (long)nr - v * VL;
            if (left >= VL) {
                GEMM_FN(store_plain_vec)(cr + v * VL, acc[r][v], read_c);
            } else {
                vmask m = V_MASK((int)left);
                vf x = read_c ? V_ADD(V_MASKLOAD(cr + v * VL, m), acc[r][v]) : acc[r][v];
                V_MASKSTORE(cr + v * VL, m, x);
            }
        }
    }
}

/* Finishes and stores rows [0, mr) x columns [0, nr) of an R x GEMM_NV accumulator tile.
 * `full` (a constant after inlining) means mr == R and nr == NR: no masks. */
GEMM_INLINE void GEMM_FN(store_tile)(const int R, vf acc[][GEMM_NV], float *c, size_t ldc,
                                     size_t mr, size_t nr, const gemm_tile_params *t,
                                     const int full)
{
    if (t->plain) {
        GEMM_FN(store_plain)(R, acc, c, ldc, mr, nr, t->beta != 0.0f);
        return;
    }
    vmask mk[GEMM_NV];
    for (int v = 0; v < GEMM_NV; v++) {
        long left = (long)nr - v * VL;
        mk[v] = V_MASK(left < 0 ? 0 : left > VL ? VL : left);
    }
#define GEMM_LD(p, v) (full ? V_LOAD(p) : V_MASKLOAD(p, mk[v]))
    const vf alpha = V_SET1(t->alpha), beta = V_SET1(t->beta);
    const int scale = t->alpha != 1.0f, read_c = t->beta != 0.0f;
    const int col_bias = t->last && t->bias_kind == RIDGE_BIAS_COL;
    const int row_bias = t->last && t->bias_kind == RIDGE_BIAS_ROW;
    const ridge_epi_act act = t->last ? t->act : RIDGE_EPI_NONE;
    const float *res = t->last ? t->res : NULL;
    vf bcol[GEMM_NV];
    for (int v = 0; v < GEMM_NV; v++) bcol[v] = col_bias ? GEMM_LD(t->bias + v * VL, v) : V_ZERO();
    for (int r = 0; r < R; r++) {
        if (!full && (size_t)r >= mr) break;
        float *cr = c + r * ldc;
        const vf brow = V_SET1(row_bias ? t->bias[r] : 0.0f);
        for (int v = 0; v < GEMM_NV; v++) {
            if (!full && (size_t)v * VL >= nr) break;
            vf x = acc[r][v];
            if (scale) x = V_MUL(x, alpha);
            if (read_c) x = V_FMA(beta, GEMM_LD(cr + v * VL, v), x);
            if (col_bias) x = V_ADD(x, bcol[v]);
            if (row_bias) x = V_ADD(x, brow);
            if (act != RIDGE_EPI_NONE) x = GEMM_FN(act)(act, x);
            if (res) x = V_ADD(x, GEMM_LD(res + r * t->ldr + v * VL, v));
            if (full) V_STORE(cr + v * VL, x);
            else V_MASKSTORE(cr + v * VL, mk[v], x);
        }
    }
#undef GEMM_LD
}

/* The tiles that are not full or carry an epilogue, out of line: the accumulators arrive by
 * value, so the kernel never takes their address (GEMM_UKERNEL) */
typedef struct GEMM_FN(acc_tile) {
    vf v[GEMM_MR][GEMM_NV];
} GEMM_FN(acc_tile);

static __attribute__((noinline)) void GEMM_FN(store_rest)(GEMM_FN(acc_tile) a, float *c,
                                                          size_t ldc, size_t mr, size_t nr,
                                                          const gemm_tile_params *t)
{
    if (mr == GEMM_MR && nr == GEMM_NR) GEMM_FN(store_tile)(GEMM_MR, a.v, c, ldc, mr, nr, t, 1);
    else GEMM_FN(store_tile)(GEMM_MR, a.v, c, ldc, mr, nr, t, 0);
}

/* A full MR x NR tile with nothing to apply, stored straight from the registers, the row
 * pointer stepped by ldc. Written as c + r * ldc, gcc kept the MR row addresses of C live
 * across the k loop, and with A's row offsets in the other registers they went to the stack,
 * each tile's stores reloading them. A tile of a short reduction does few FMAs per store, so
 * that showed when this VM's host was busy: two clean builds, stepped over computed (Zen 5,
 * scripts/gemm-ab-small.c, 1 thread), 64 x 128 x 10 NN 1.18-1.19x and 64 x 256 x 10 NN
 * 1.24x in slow spells, 0.98-1.04x in quiet ones; 64 x 128 x 32, 32 x 128 x 784 and 256 x 768
 * x 768 NT within 1%. */
GEMM_INLINE void GEMM_FN(store_full_plain)(vf acc[][GEMM_NV], float *c, size_t ldc, int read_c)
{
#pragma GCC unroll 16
    for (int r = 0; r < GEMM_MR; r++, c += ldc)
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++)
            GEMM_FN(store_plain_vec)(c + v * VL, acc[r][v], read_c);
}

/* ---- micro-kernel -------------------------------------------------------------------------- */

/* acc (R x NR) = A x B (kc rows b_rs apart). A is a packed panel (k-major, R_stride floats
 * per k) or, with a_direct, read in place: element (r, p) at ap[r * a_rs + p * a_cs], rows
 * >= rows reading the last row (their sums are not stored). With `masked`, B columns >= nr
 * are neither read nor used. pf's lines are prefetched on the way (gemm_prefetch;
 * driver_block says whose). */
GEMM_INLINE void GEMM_FN(tile_core)(const int R, const int R_stride, vf acc[][GEMM_NV],
                                    size_t kc, const float *ap, const int a_direct, size_t a_rs,
                                    size_t a_cs, size_t rows, const float *b, size_t b_rs,
                                    size_t nr, const int masked, gemm_prefetch pf)
{
    size_t pf_next = 0;
    vmask bm[GEMM_NV];
    for (int v = 0; v < GEMM_NV; v++) {
        long left = (long)nr - v * VL;
        bm[v] = V_MASK(left < 0 ? 0 : left > VL ? VL : left);
    }
    /* every loop over the rows unrolled: gcc otherwise left the 14-row tile's rolled on its
     * masked path, its accumulators on the stack (B in place with a partial last panel, 100 x
     * 147 x 3000 NN: 0.75x) */
    const float *ar[R];
    if (a_direct)
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) ar[r] = ap + ((size_t)r < rows ? (size_t)r : rows - 1) * a_rs;
    size_t q = 0; /* p * a_cs */
#pragma GCC unroll 16
    for (int r = 0; r < R; r++)
        for (int v = 0; v < GEMM_NV; v++) acc[r][v] = V_ZERO();
#pragma GCC unroll 2
    for (size_t p = 0; p < kc; p++) {
        if (pf.lines && p == pf_next) {
            _mm_prefetch((const char *)(pf.row + pf.off), _MM_HINT_T0);
            pf.off += GEMM_LINE_FLOATS;
            if (pf.off >= pf.len) pf.off = 0, pf.row += pf.rs;
            pf.lines--, pf_next += pf.step;
        }
        vf bv[GEMM_NV];
        for (int v = 0; v < GEMM_NV; v++)
            bv[v] = masked ? V_MASKLOAD(b + v * VL, bm[v]) : V_LOAD(b + v * VL);
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            const vf av = V_SET1(a_direct ? ar[r][q] : ap[r]);
            for (int v = 0; v < GEMM_NV; v++) acc[r][v] = V_FMA(av, bv[v], acc[r][v]);
        }
        if (a_direct) q += a_cs;
        else ap += R_stride;
        b += b_rs;
    }
}

/* The MR x NR tile C[0:mr, 0:nr] from A (a packed panel, or in place with a_direct) and B
 * (packed or in place). */
/* An edge tile of exactly R < MR rows: only R rows of FMAs (B is read the same way). */
#define GEMM_SHORT_TILE(R)                                                                         \
    do {                                                                                           \
        vf accr[R][GEMM_NV];                                                                       \
        if (nr == GEMM_NR || b_padded)                                                             \
            GEMM_FN(tile_core)(R, GEMM_MR, accr, kc, ap, a_direct, a_rs, a_cs, mr, b, b_rs, nr, 0, \
                               (gemm_prefetch){0});                                                \
        else                                                                                       \
            GEMM_FN(tile_core)(R, GEMM_MR, accr, kc, ap, a_direct, a_rs, a_cs, mr, b, b_rs, nr, 1, \
                               (gemm_prefetch){0});                                                \
        GEMM_FN(store_tile)(R, accr, c, ldc, mr, nr, t, 0);                                        \
    } while (0)

GEMM_INLINE void GEMM_FN(ukernel_body)(const int a_direct, size_t kc, const float *ap,
                                       size_t a_rs, size_t a_cs, const float *b, size_t b_rs,
                                       int b_padded, float *c, size_t ldc, size_t mr, size_t nr,
                                       const gemm_tile_params *t)
{
    /* C is loaded and stored after the k loop: start bringing its lines in now. Not for a
     * short k block, whose loop ends before the lines come, and where the prefetches are a
     * share of the tile's work (Zen 5, scripts/gemm-ab-small.c, without them below k 128:
     * 64 x 128 x 10 NN 1.06x, 64 x 32 x 10 1.07x, 256 x 3072 x 16 1.04x, 256 x 768 x 64
     * 1.03x, 64 x 3136 x 64 1.01x, 64 x 128 x 64 1.00x). */
    for (size_t r = 0; kc >= GEMM_C_PREFETCH_MIN_KC && r < mr; r++) {
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + GEMM_NR - 1), _MM_HINT_T0);
    }
    /* Short edge tiles (m == 1 with a plan, the last rows of m): fewer FMAs than a full tile.
     * Tiles of at most 8 rows run edges of 5 rows or more as a full tile; a taller one has
     * every height (64 rows as 14 x 4 + 8 ran 1.08x 14 x 5 on an Intel Xeon) */
    switch (mr) {
    case 1: GEMM_SHORT_TILE(1); return;
    case 2: GEMM_SHORT_TILE(2); return;
    case 3: GEMM_SHORT_TILE(3); return;
    case 4: GEMM_SHORT_TILE(4); return;
#if GEMM_MR > 8
    case 5: GEMM_SHORT_TILE(5); return;
    case 6: GEMM_SHORT_TILE(6); return;
    case 7: GEMM_SHORT_TILE(7); return;
    case 8: GEMM_SHORT_TILE(8); return;
    case 9: GEMM_SHORT_TILE(9); return;
    case 10: GEMM_SHORT_TILE(10); return;
    case 11: GEMM_SHORT_TILE(11); return;
    case 12: GEMM_SHORT_TILE(12); return;
    case 13: GEMM_SHORT_TILE(13); return;
#endif
    default: break;
    }
    vf acc[GEMM_MR][GEMM_NV];
    if (nr == GEMM_NR || b_padded)
        GEMM_FN(tile_core)(GEMM_MR, GEMM_MR, acc, kc, ap, a_direct, a_rs, a_cs, mr, b, b_rs, nr, 0,
                           t->pf);
    else
        GEMM_FN(tile_core)(GEMM_MR, GEMM_MR, acc, kc, ap, a_direct, a_rs, a_cs, mr, b, b_rs, nr, 1,
                           (gemm_prefetch){0});
    /* A full tile with no epilogue (most tiles of a large product) stores straight from the
     * registers; the other cases get a copy, so that acc's address never escapes and gcc
     * keeps it in registers (it used to store all 16 accumulators to the stack after the k
     * loop and load them back) */
    if (mr == GEMM_MR && nr == GEMM_NR && t->plain) {
        GEMM_FN(store_full_plain)(acc, c, ldc, t->beta != 0.0f);
        return;
    }
    GEMM_FN(acc_tile) cp;
#pragma GCC unroll 16
    for (int r = 0; r < GEMM_MR; r++)
#pragma GCC unroll 4
        for (int v = 0; v < GEMM_NV; v++) cp.v[r][v] = acc[r][v];
    GEMM_FN(store_rest)(cp, c, ldc, mr, nr, t);
}

/* a_cs 0: ap is a packed A panel; else A in place, element (r, p) at ap[r * a_rs + p * a_cs]
 * (gemm_kernel.ukernel) */
static void GEMM_UKERNEL(size_t kc, const float *ap, size_t a_rs, size_t a_cs, const float *b,
                         size_t b_rs, int b_padded, float *c, size_t ldc, size_t mr, size_t nr,
                         const gemm_tile_params *t)
{
    if (a_cs)
        GEMM_FN(ukernel_body)(1, kc, ap, a_rs, a_cs, b, b_rs, b_padded, c, ldc, mr, nr, t);
    else GEMM_FN(ukernel_body)(0, kc, ap, 0, 0, b, b_rs, b_padded, c, ldc, mr, nr, t);
}
#undef GEMM_SHORT_TILE

/* block()'s full tiles (MR x NR, plain, A and B in place) down one panel: rows [0, return)
 * of C[0:m, 0:NR]. */
GEMM_INLINE size_t GEMM_FN(block_panel)(size_t m, size_t k, const float *a, size_t a_rs,
                                        size_t a_cs, const float *b, size_t b_rs, float *c,
                                        size_t ldc, int read_c)
{
    size_t i = 0;
    for (; i + GEMM_MR <= m; i += GEMM_MR, a += GEMM_MR * a_rs) {
        vf acc[GEMM_MR][GEMM_NV];
#pragma GCC unroll 16
        for (int r = 0; r < GEMM_MR; r++)
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++) acc[r][v] = V_ZERO();
        for (size_t p = 0; p < k; p++) {
            vf bv[GEMM_NV];
#pragma GCC unroll 4
            for (int v = 0; v < GEMM_NV; v++) bv[v] = V_LOAD(b + p * b_rs + v * VL);
#pragma GCC unroll 16
            for (int r = 0; r < GEMM_MR; r++) {
                const vf av = V_SET1(a[r * a_rs + p * a_cs]);
#pragma GCC unroll 4
                for (int v = 0; v < GEMM_NV; v++) acc[r][v] = V_FMA(av, bv[v], acc[r][v]);
            }
        }
        GEMM_FN(store_full_plain)(acc, c + i * ldc, ldc, read_c);
    }
    return i;
}

/* C[0:m, 0:n] over one k block of a small product, A and B both in place (B row-major, rows
 * b_rs apart), tile by tile (gemm_kernel.block). The full plain tiles run a bare k loop with
 * nothing to prefetch (B's panel is in cache after its first tile); the others (edges,
 * epilogues) call the micro-kernel, as the driver does (inlined, its variants made this
 * function ten times larger for no measured gain). Panels outer, so that each panel of B is
 * read from cache by all of its tiles after the first. t's bias and res point at C[0][0]'s. */
static void GEMM_FN(block)(size_t m, size_t n, size_t k, const float *a, size_t a_rs,
                           size_t a_cs, const float *b, size_t b_rs, float *c, size_t ldc,
                           const gemm_tile_params *t0)
{
    gemm_tile_params t = *t0;
    t.pf = (gemm_prefetch){0};
    const int read_c = t.beta != 0.0f;
    for (size_t j = 0; j < n; j += GEMM_NR) {
        const size_t nr = RIDGE_MIN((size_t)GEMM_NR, n - j);
        size_t i = nr == GEMM_NR && t.plain
                       ? GEMM_FN(block_panel)(m, k, a, a_rs, a_cs, b + j, b_rs, c + j, ldc, read_c)
                       : 0;
        for (; i < m; i += GEMM_MR) {
            const size_t mr = RIDGE_MIN((size_t)GEMM_MR, m - i);
            gemm_tile_at(&t, t0->bias, t0->res, i, j);
            GEMM_UKERNEL(k, a + i * a_rs, a_rs, a_cs, b + j, b_rs, 0, c + i * ldc + j, ldc, mr,
                         nr, &t);
        }
    }
}

/* ---- packing ------------------------------------------------------------------------------- */

/* dst[q * ldd + r] = src[r * lds + q] for an 8 x 8 block (256-bit: AVX-512 CPUs have AVX2). */
GEMM_INLINE void GEMM_FN(transpose8x8)(const float *src, size_t lds, float *dst, size_t ldd)
{
    __m256 r0 = _mm256_loadu_ps(src + 0 * lds), r1 = _mm256_loadu_ps(src + 1 * lds);
    __m256 r2 = _mm256_loadu_ps(src + 2 * lds), r3 = _mm256_loadu_ps(src + 3 * lds);
    __m256 r4 = _mm256_loadu_ps(src + 4 * lds), r5 = _mm256_loadu_ps(src + 5 * lds);
    __m256 r6 = _mm256_loadu_ps(src + 6 * lds), r7 = _mm256_loadu_ps(src + 7 * lds);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst + 0 * ldd, _mm256_permute2f128_ps(s0, s4, 0x20));
    _mm256_storeu_ps(dst + 1 * ldd, _mm256_permute2f128_ps(s1, s5, 0x20));
    _mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(s2, s6, 0x20));
    _mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(s3, s7, 0x20));
    _mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(s0, s4, 0x31));
    _mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(s1, s5, 0x31));
    _mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(s2, s6, 0x31));
    _mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(s3, s7, 0x31));
}

/* A (mc x kc, element (i, p) at a[i * rs + p * cs]) into MR-row panels, each kc x MR k-major,
 * the rows past mc zero. */
static void GEMM_FN(pack_a)(size_t mc, size_t kc, const float *a, size_t rs, size_t cs,
                            float *ap)
{
    for (size_t i = 0; i < mc; i += GEMM_MR, ap += GEMM_MR * kc) {
        size_t mr = RIDGE_MIN((size_t)GEMM_MR, mc - i);
        const float *ai = a + i * rs;
        if (mr == GEMM_MR && cs == 1) {
            /* rows contiguous in p: 8 x 8 transposes of groups of up to 8 rows, each k's
             * group written as 8 floats at ap[p * MR + r0]. A partial group (g < 8 rows)
             * spills 8 - g floats into the next k's first rows: so partial groups go first
             * and full ones overwrite the spill, and k runs upwards (the last spill lands in
             * the next panel or the buffer's slack of MR * kc floats, rewritten later). */
            size_t p = 0;
            for (; p + 8 <= kc; p += 8) {
                const int g0 = GEMM_MR % 8; /* rows in the partial group, at the end */
                if (g0) {
                    float blk[8][8] = {{0}};
                    for (int r = 0; r < g0; r++)
                        _mm256_storeu_ps(blk[r], _mm256_loadu_ps(ai + (GEMM_MR - g0 + r) * rs + p));
                    GEMM_FN(transpose8x8)(&blk[0][0], 8, ap + p * GEMM_MR + GEMM_MR - g0, GEMM_MR);
                }
                for (int r0 = 0; r0 + 8 <= GEMM_MR; r0 += 8)
                    GEMM_FN(transpose8x8)(ai + r0 * rs + p, rs, ap + p * GEMM_MR + r0, GEMM_MR);
            }
            for (; p < kc; p++)
                for (int r = 0; r < GEMM_MR; r++) ap[p * GEMM_MR + r] = ai[r * rs + p];
        } else if (mr == GEMM_MR && rs == 1) {
            for (size_t p = 0; p < kc; p++)
                for (int r = 0; r < GEMM_MR; r++) ap[p * GEMM_MR + r] = ai[p * cs + r];
        } else {
            for (size_t p = 0; p < kc; p++)
                for (size_t r = 0; r < GEMM_MR; r++)
                    ap[p * GEMM_MR + r] = r < mr ? ai[r * rs + p * cs] : 0.0f;
        }
    }
}

/* B (kc x nc, element (p, j) at b[p * rs + j * cs]) into NR-column panels, each kc x NR
 * k-major, the columns past nc zero. */
static void GEMM_FN(pack_b)(size_t kc, size_t nc, const float *b, size_t rs, size_t cs,
                            float *bp)
{
    if (cs == 1 && nc >= GEMM_NR) {
        /* B rows contiguous: 8 rows at a time across every full panel, so that each row is
         * read in address order and each panel gets 8 rows' lines in a row. Panel by panel
         * instead, kc rows ldb apart were read 64 bytes each (a page and a line per row, the
         * line's neighbour prefetched for the next panel and evicted before it came). */
        const size_t full = nc / GEMM_NR;
        for (size_t p0 = 0; p0 < kc; p0 += 8) {
            const size_t pe = RIDGE_MIN(p0 + 8, kc);
            for (size_t jp = 0; jp < full; jp++) {
                const float *src = b + jp * GEMM_NR;
                float *dst = bp + jp * GEMM_NR * kc;
                for (size_t p = p0; p < pe; p++)
                    for (int v = 0; v < GEMM_NV; v++)
                        V_STORE(dst + p * GEMM_NR + v * VL, V_LOAD(src + p * rs + v * VL));
            }
        }
        if (full * GEMM_NR == nc) return;
        b += full * GEMM_NR, bp += full * GEMM_NR * kc, nc -= full * GEMM_NR;
    }
    for (size_t j = 0; j < nc; j += GEMM_NR, bp += GEMM_NR * kc) {
        size_t nr = RIDGE_MIN((size_t)GEMM_NR, nc - j);
        const float *bj = b + j * cs;
        if (nr == GEMM_NR && cs == 1) {
            for (size_t p = 0; p < kc; p++)
                for (int v = 0; v < GEMM_NV; v++)
                    V_STORE(bp + p * GEMM_NR + v * VL, V_LOAD(bj + p * rs + v * VL));
        } else if (nr == GEMM_NR && rs == 1) {
            /* B^T rows are contiguous in p: 8 x 8 transposes */
            size_t p = 0;
            for (; p + 8 <= kc; p += 8)
                for (int jj = 0; jj < GEMM_NR; jj += 8)
                    GEMM_FN(transpose8x8)(bj + jj * cs + p, cs, bp + p * GEMM_NR + jj, GEMM_NR);
            for (; p < kc; p++)
                for (int jj = 0; jj < GEMM_NR; jj++) bp[p * GEMM_NR + jj] = bj[jj * cs + p];
        } else {
            for (size_t p = 0; p < kc; p++)
                for (size_t jj = 0; jj < GEMM_NR; jj++)
                    bp[p * GEMM_NR + jj] = jj < nr ? bj[p * rs + jj * cs] : 0.0f;
        }
    }
}

/* ---- matrix-vector ------------------------------------------------------------------------- */

/* y[j0:j1] for m == 1 and B in place with unit column stride: y = a (1 x k, a[p * a_cs]) x B
 * (k rows ldb apart). The weights stream once, in address order: B is read in blocks of
 * GEMV_RB whole rows (every column of a range of at most GEMV_JB), a tile of GV * VL columns
 * at a time with GV independent accumulators, whose partial sums wait in an L1-resident row
 * (acc) between blocks. Reading one tile's columns down all k rows instead (two passes for
 * 128 columns) ran 1.14-1.35x slower at 1 x 128 x 784: the cache's next-line prefetch
 * fetched the other tile's half of every row, to be evicted before its own pass. Each column
 * still sums its k products in order, in one chain. Rows a multiple of 4 KiB apart fall in the
 * same L1 sets, so then a block is 8 rows (the L1's ways; 1 x 1024 x 1024: 1.23x faster than
 * 16), else 16 (8 was 0.94x at 1 x 128 x 784 and 1 x 2304 x 768, 32 and 64 mixed). */
#define GEMV_RB 16
#define GEMV_JB 512

/* y[jb:jb+nb] = epilogue(acc[0:nb]), acc zero-padded to whole NR tiles. */
static void GEMM_FN(gemv_finish)(const float *acc, float *y, size_t jb, size_t nb,
                                 const gemm_tile_params *t)
{
    for (size_t off = 0; off < nb; off += GEMM_NR) {
        vf piece[1][GEMM_NV];
        for (int u = 0; u < GEMM_NV; u++) piece[0][u] = V_LOAD(acc + off + u * VL);
        gemm_tile_params tt = *t;
        gemm_tile_at(&tt, t->bias, t->res, 0, jb + off);
        GEMM_FN(store_tile)(1, piece, y + jb + off, 0, 1, nb - off, &tt, 0);
    }
}

/* One block of rb rows over columns [0, nb), a tile of W columns at a time: the sums start
 * from src (NULL: zero) and end in dst, plus add's (add + sums, gemv_sum's order) unless add
 * is NULL. Inlined with constant NULLs, each use is its own loop without the tests. */
GEMM_INLINE void GEMM_FN(gemv_block)(size_t rb, const float *ap, size_t a_cs, const float *b,
                                     size_t ldb, const float *src, float *dst, const float *add,
                                     size_t nb)
{
    const size_t W = GEMM_GV * VL;
    for (size_t j = 0; j < nb; j += W) {
        size_t nw = RIDGE_MIN(W, nb - j);
        const float *bj = b + j;
        vf s[GEMM_GV];
        for (int v = 0; v < GEMM_GV; v++) s[v] = src ? V_LOAD(src + j + v * VL) : V_ZERO();
        if (nw == W) {
            /* unrolled by 2 (the chains' order unchanged). By 4 ran 1 x 128 x 784 1.06x on
             * an Intel Xeon (2 threads 1.10x; by 8 the same), but on Zen 5 by 4 or 8 took
             * 3.5 us and by 1 or 2 2.3 (scripts/gemm-ab-small.c, 1 thread; 1 x 768 x 3072
             * 1.10x by 2 against 8) */
#pragma GCC unroll 2
            for (size_t p = 0; p < rb; p++) {
                const vf av = V_SET1(ap[p * a_cs]);
                for (int v = 0; v < GEMM_GV; v++)
                    s[v] = V_FMA(av, V_LOAD(bj + p * ldb + v * VL), s[v]);
            }
        } else {
            vmask bm[GEMM_GV];
            for (int v = 0; v < GEMM_GV; v++) {
                long left = (long)nw - v * VL;
                bm[v] = V_MASK(left < 0 ? 0 : left > VL ? VL : left);
            }
            for (size_t p = 0; p < rb; p++) {
                const vf av = V_SET1(ap[p * a_cs]);
                for (int v = 0; v < GEMM_GV; v++)
                    s[v] = V_FMA(av, V_MASKLOAD(bj + p * ldb + v * VL, bm[v]), s[v]);
            }
        }
        for (int v = 0; v < GEMM_GV; v++)
            V_STORE(dst + j + v * VL, add ? V_ADD(V_LOAD(add + j + v * VL), s[v]) : s[v]);
    }
}

/* One segment of rows: its sums a (1 x k, k >= 1) x B (k rows ldb apart, from column 0) over
 * columns [0, nb), from zero, in blocks of rows, kept in `part` between blocks; the last block
 * stores them into acc (`first`) or adds them to it. */
static void GEMM_FN(gemv_rows)(size_t k, const float *a, size_t a_cs, const float *b, size_t ldb,
                               float *part, float *acc, size_t nb, int first)
{
    /* one tile of columns: all k rows in one block, its sums never leaving the registers */
    const size_t RB = nb <= GEMM_GV * VL ? k : ldb % 1024 == 0 ? 8 : GEMV_RB;
    size_t p0 = 0;
    if (k > RB) {
        GEMM_FN(gemv_block)(RB, a, a_cs, b, ldb, NULL, part, NULL, nb);
        for (p0 = RB; k - p0 > RB; p0 += RB)
            GEMM_FN(gemv_block)(RB, a + p0 * a_cs, a_cs, b + p0 * ldb, ldb, part, part, NULL, nb);
    }
    const float *src = p0 ? part : NULL;
    if (first)
        GEMM_FN(gemv_block)(k - p0, a + p0 * a_cs, a_cs, b + p0 * ldb, ldb, src, acc, NULL, nb);
    else
        GEMM_FN(gemv_block)(k - p0, a + p0 * a_cs, a_cs, b + p0 * ldb, ldb, src, acc, acc, nb);
}

/* y[j0:j1] = epilogue of the sum of segments [s0, s1) of k's nseg (ridge_partition, grain 8:
 * none empty, gemv_segments sees to it); each segment is summed from zero and the segments
 * added in order, so one call for all of them gives the bits of gemv_sum over calls for one
 * each. With t NULL, the plain sum. */
static void GEMM_FN(gemv_n)(size_t k, const float *a, size_t a_cs, const float *b, size_t ldb,
                            size_t nseg, size_t s0, size_t s1, float *y, size_t j0, size_t j1,
                            const gemm_tile_params *t)
{
    /* gemv_rows writes whole tiles of acc, which gemv_finish reads in whole NR pieces */
    _Static_assert(GEMV_JB % (GEMM_GV * VL) == 0, "GEMV_JB must hold whole tiles");
    float acc[GEMV_JB] __attribute__((aligned(64))), part[GEMV_JB] __attribute__((aligned(64)));
    for (size_t jb = j0; jb < j1; jb += GEMV_JB) {
        size_t nb = RIDGE_MIN((size_t)GEMV_JB, j1 - jb);
        for (size_t s = s0; s < s1; s++) {
            size_t kb, ke;
            ridge_partition(k, 8, (int)s, (int)nseg, &kb, &ke);
            GEMM_FN(gemv_rows)(ke - kb, a + kb * a_cs, a_cs, b + kb * ldb + jb, ldb, part, acc, nb,
                               s == s0);
        }
        if (t) GEMM_FN(gemv_finish)(acc, y, jb, nb, t);
        else memcpy(y + jb, acc, nb * sizeof(float));
    }
}

/* y[j0:j1] = epilogue(the sum of nseg partial rows, ld apart, added in row order). */
static void GEMM_FN(gemv_sum)(const float *part, size_t nseg, size_t ld, float *y, size_t j0,
                              size_t j1, const gemm_tile_params *t)
{
    float acc[GEMV_JB] __attribute__((aligned(64)));
    for (size_t jb = j0; jb < j1; jb += GEMV_JB) {
        size_t nb = RIDGE_MIN((size_t)GEMV_JB, j1 - jb);
        for (size_t j = 0; j < (nb + GEMM_NR - 1) / GEMM_NR * GEMM_NR; j += VL) {
            long left = (long)nb - (long)j;
            vmask m = V_MASK(left < 0 ? 0 : left > VL ? VL : (int)left);
            vf s = V_MASKLOAD(part + jb + j, m);
            for (size_t q = 1; q < nseg; q++) s = V_ADD(s, V_MASKLOAD(part + q * ld + jb + j, m));
            V_STORE(acc + j, s);
        }
        GEMM_FN(gemv_finish)(acc, y, jb, nb, t);
    }
}
#undef GEMV_RB
#undef GEMV_JB

#ifndef GEMV_T_ROWS
#define GEMV_T_ROWS 4
#endif
/* The GEMV_T_ROWS sums across lanes of s0[q] + s1[q] into out[q]. An ISA may define
 * GEMV_T_SUMS(s0, s1, out) to do them as one transposed reduction (in its own order). */
#ifndef GEMV_T_SUMS
#define GEMV_T_SUMS(s0, s1, out)                                                                   \
    for (int q = 0; q < GEMV_T_ROWS; q++) (out)[q] = V_HSUM(V_ADD((s0)[q], (s1)[q]))
#endif
/* y[j0:j1] for m == 1 and B^T in place: y[j] = dot(a (k contiguous), row j of B^T (ldb
 * apart)). GEMV_T_ROWS rows at a time, two accumulators each; the k tail masked. The sums
 * wait in acc for a whole NR tile, whose epilogue then runs on vectors (gemv_finish). */
_Static_assert(GEMM_NR % GEMV_T_ROWS == 0, "gemv_t fills acc in whole blocks of rows");
static void GEMM_FN(gemv_t)(size_t k, const float *a, const float *b, size_t ldb, float *y,
                            size_t j0, size_t j1, const gemm_tile_params *t)
{
    const vmask tail = V_MASK((int)(k % VL));
    const size_t kv = k - k % VL;
    float acc[GEMM_NR];
    for (size_t jt = j0; jt < j1; jt += GEMM_NR) { /* acc: y[jt:jt+nt] */
        const size_t nt = RIDGE_MIN((size_t)GEMM_NR, j1 - jt);
        for (size_t j = jt; j < jt + nt; j += GEMV_T_ROWS) {
            size_t nj = RIDGE_MIN((size_t)GEMV_T_ROWS, jt + nt - j);
            vf s0[GEMV_T_ROWS], s1[GEMV_T_ROWS];
            const float *row[GEMV_T_ROWS];
            for (int q = 0; q < GEMV_T_ROWS; q++) {
                s0[q] = s1[q] = V_ZERO();
                row[q] = b + (j + ((size_t)q < nj ? (size_t)q : 0)) * ldb;
            }
            size_t p = 0;
            /* unrolled: 1 x 128 x 784 NT 1.07-1.08x (Intel Xeon, scripts/gemm-ab-small.c; by 4 no
             * further) */
#pragma GCC unroll 2
            for (; p + 2 * VL <= kv; p += 2 * VL) {
                const vf a0 = V_LOAD(a + p), a1 = V_LOAD(a + p + VL);
                for (int q = 0; q < GEMV_T_ROWS; q++) {
                    s0[q] = V_FMA(a0, V_LOAD(row[q] + p), s0[q]);
                    s1[q] = V_FMA(a1, V_LOAD(row[q] + p + VL), s1[q]);
                }
            }
            if (p < kv) {
                const vf a0 = V_LOAD(a + p);
                for (int q = 0; q < GEMV_T_ROWS; q++) s0[q] = V_FMA(a0, V_LOAD(row[q] + p), s0[q]);
                p += VL;
            }
            if (p < k) {
                const vf a0 = V_MASKLOAD(a + p, tail);
                for (int q = 0; q < GEMV_T_ROWS; q++)
                    s1[q] = V_FMA(a0, V_MASKLOAD(row[q] + p, tail), s1[q]);
            }
            GEMV_T_SUMS(s0, s1, acc + (j - jt));
        }
        for (size_t q = nt; q < GEMM_NR; q++) acc[q] = 0.0f; /* gemv_finish's padding */
        GEMM_FN(gemv_finish)(acc, y, jt, nt, t);
    }
}

const gemm_kernel GEMM_TABLE = {
    .name = GEMM_NAME,
    .mr = GEMM_MR,
    .nr = GEMM_NR,
    .inplace_b_max_m = GEMM_INPLACE_B_MAX_M,
    .ukernel = GEMM_UKERNEL,
    .block = GEMM_FN(block),
    .pack_a = GEMM_FN(pack_a),
    .pack_b = GEMM_FN(pack_b),
    .gemv_n = GEMM_FN(gemv_n),
    .gemv_sum = GEMM_FN(gemv_sum),
    .gemv_t = GEMM_FN(gemv_t),
#ifdef GEMM_DOT
    .dot = GEMM_DOT,
    .dot_name = GEMM_DOT_NAME,
#endif
};

/* Undefined here, so that an ISA file may include this header again for another tile: the
 * template's own names and the per-tile parameters (the mapping and the ISA-wide GEMM_GV,
 * GEMM_INPLACE_B_MAX_M, GEMV_T_ROWS and GEMM_DOT stay) */
#undef GEMM_NR
#undef GEMM_C_PREFETCH_MIN_KC
#undef GEMM_CAT_
#undef GEMM_CAT
#undef GEMM_FN
#undef GEMM_INLINE
#undef GEMM_MR
#undef GEMM_NV
#undef GEMM_SUFFIX
#undef GEMM_UKERNEL
#undef GEMM_TABLE
#undef GEMM_NAME
