/* The algorithms: when each applies, how it packs the weights, how much workspace it needs,
 * and its forward pass (threading and the loops around the per-ISA kernels).
 *
 *   direct     per output row: the window's valid rows [r0, r1) come from saturating index
 *              arithmetic, the row's interior pixels (every column tap inside the input) go to
 *              the 6xNR micro-kernel in one call; the border columns go down runs of rows
 *              (a column's pixels share its taps), or along the row in tiles whose pixels
 *              each have their own column range (row_masked). No padded copy of the input
 *              exists. Work is split over (rows) x (output channel blocks).
 *   pointwise  1x1, stride 1, no padding: a GEMM straight on the input (pixels x c_in times
 *              c_in x c_out): ridge_sgemm in NCHW and NHWC, the micro-kernel over the flat
 *              pixels of an image in NCHW16c.
 *   im2col     lowers a strip of output pixels (never the whole lowered matrix) and multiplies
 *              it: ridge_sgemm in NCHW and NHWC (1 MiB strips), the micro-kernel in NCHW16c
 *              (~128 KiB strips, per thread, so they stay in L2).
 *   depthwise  per output row, vectorized across channels (NHWC, NCHW16c); NCHW runs plane
 *              rows with the pixel loop innermost.
 *   winograd   F(m x m, 3 x 3), m = 2 or 4: weights transformed once (U = G g G^T, in fp64),
 *              per block of TB tiles: input transform (V = B^T d B), alpha^2 GEMMs on
 *              the micro-kernel (M = V U), output transform (Y = A^T M A) fused with the
 *              epilogue. TB is sized so V and M fit ~512 KiB, or larger when U is past L2.
 *              Blocks go to threads whole, or, when there are fewer blocks than threads and
 *              U is large, the threads share each block step by step.
 *   fft        overlap-save FFT tiles with the channel reduction as per-bin complex GEMMs:
 *              conv-fft.c. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "conv/conv.h"

static const float zeros[64];

/* ---- Winograd matrices ----------------------------------------------------------------------- */

static const float bt2[16] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
static const float g2[12] = {1, 0, 0, 0.5f, 0.5f, 0.5f, 0.5f, -0.5f, 0.5f, 0, 0, 1};
static const float at2[8] = {1, 1, 1, 0, 0, 1, -1, -1};
static const float bt4[36] = {4, 0, -5, 0,  1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0,
                              0, -2, -1, 2, 1, 0, 0, 2, -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1};
static const float g4[18] = {1.0f / 4,   0,          0,          -1.0f / 6, -1.0f / 6, -1.0f / 6,
                             -1.0f / 6,  1.0f / 6,   -1.0f / 6,  1.0f / 24, 1.0f / 12, 1.0f / 6,
                             1.0f / 24,  -1.0f / 12, 1.0f / 6,   0,         0,         1};
static const float at4[24] = {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0,
                              0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1};
static const conv_wino_mats wino2 = {2, 4, bt2, g2, at2};
static const conv_wino_mats wino4 = {4, 6, bt4, g4, at4};

const conv_wino_mats *conv_wino_mats_get(int m)
{
    return m == 2 ? &wino2 : &wino4;
}

static int wino_m(ridge_conv_algo a)
{
    return a == RIDGE_CONV_WINOGRAD_2X3 ? 2 : 4;
}

/* ---- applicability, sizes -------------------------------------------------------------------- */

ridge_status conv_algo_applies(const ridge_conv2d_desc *d, ridge_conv_algo a, char *why,
                               size_t n)
{
    why[0] = 0;
    switch (a) {
    case RIDGE_CONV_POINTWISE:
        if (d->r != 1 || d->s != 1 || d->stride_h != 1 || d->stride_w != 1 || d->pad_top ||
            d->pad_bottom || d->pad_left || d->pad_right) {
            snprintf(why, n, "needs a 1x1 kernel, stride 1 and no padding");
            return RIDGE_EUNSUPPORTED;
        }
        return RIDGE_OK;
    case RIDGE_CONV_DEPTHWISE:
        if (d->groups != d->c_in || d->groups != d->c_out) {
            snprintf(why, n, "needs groups = c_in = c_out (got %lld, %lld, %lld)",
                     (long long)d->groups, (long long)d->c_in, (long long)d->c_out);
            return RIDGE_EUNSUPPORTED;
        }
        return RIDGE_OK;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3:
        if (d->r != 3 || d->s != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dil_h != 1 ||
            d->dil_w != 1) {
            snprintf(why, n, "needs a 3x3 kernel, stride 1, dilation 1 (got %lldx%lld, stride "
                     "%lldx%lld, dilation %lldx%lld)", (long long)d->r, (long long)d->s,
                     (long long)d->stride_h, (long long)d->stride_w, (long long)d->dil_h,
                     (long long)d->dil_w);
            return RIDGE_EUNSUPPORTED;
        }
        return RIDGE_OK;
    case RIDGE_CONV_FFT: {
        /* the tiles conv_fft_tile offers: square up to 64 x 64 for a 2-D kernel, one row or
         * one column up to CONV_FFT_MAX_SIDE for a 1-D one */
        const int64_t kh = d->dil_h * (d->r - 1) + 1, kw = d->dil_w * (d->s - 1) + 1;
        const int fits = d->r == 1 || d->s == 1 ? RIDGE_MAX(kh, kw) <= CONV_FFT_MAX_SIDE
                                                : RIDGE_MAX(kh, kw) <= CONV_FFT_MAX_SQUARE;
        if (d->stride_h != 1 || d->stride_w != 1 || d->groups != 1 || !fits) {
            snprintf(why, n, "needs stride 1, groups 1 and a (dilated) kernel of at most 64x64, "
                     "or 1x%d / %dx1 (got stride %lldx%lld, groups %lld, %lldx%lld)",
                     CONV_FFT_MAX_SIDE, CONV_FFT_MAX_SIDE, (long long)d->stride_h,
                     (long long)d->stride_w, (long long)d->groups, (long long)kh, (long long)kw);
            return RIDGE_EUNSUPPORTED;
        }
        return RIDGE_OK;
    }
    default: return RIDGE_OK; /* ref, direct and im2col run any valid descriptor */
    }
}

static int64_t im2col_strip(const ridge_conv2d_plan *p)
{
    const int mr = p->k->mr;
    int64_t K = p->cig * p->d.r * p->d.s;
    int64_t P = 32768 / K / mr * mr; /* 128 KiB of lowered strip */
    P = RIDGE_MAX(P, mr);
    return RIDGE_MIN(P, 1024);
}

/* pixels per lowered strip on the SGEMM route */
static int64_t gemm_strip(const ridge_conv2d_plan *p)
{
    int64_t K = p->cig * p->d.r * p->d.s, hw = p->oh * p->ow;
    int64_t P = RIDGE_MAX(262144 / K, 64); /* 1 MiB of lowered strip */
    return RIDGE_MIN(P, hw);
}

static int64_t wino_tiles(const ridge_conv2d_plan *p, int m)
{
    const int mr = p->k->mr, al = m + 2;
    int64_t cogp = p->ncob * p->k->nr;
    /* V + M in 512 KiB, but at least 4 micro-tiles: every block streams all of U (alpha^2 c_in
     * c_out floats), about 2/TB bytes per FLOP. When U itself is past L2 (1 MiB: 9.4 MB at 256
     * channels for F(4,3)) it is the traffic that counts: 16 micro-tiles per block, or all
     * the tiles if fewer. */
    int64_t tb = 131072 / (al * al * (p->cig + cogp)) / mr * mr;
    tb = RIDGE_MAX(tb, 4 * mr);
    if ((int64_t)al * al * p->cig * cogp * p->d.groups > (1 << 18)) tb = 16 * mr;
    int64_t T = p->d.n * ((p->oh + m - 1) / m) * ((p->ow + m - 1) / m);
    tb = RIDGE_MIN(tb, (T + mr - 1) / mr * mr);
    return RIDGE_MIN(tb, 16 * mr);
}

/* The depthwise ring (depthwise_range): NHWC 3x3 at stride 1 or 2 with 384 channels or more
 * (at stride 2 not where dw_s2_by_tap's blocks run), or at stride 1 with channels that crowd
 * into few L1 sets (dw_few_sets: 3x3, and square windows 4 to 7 wide).
 * Each thread copies the input rows its output rows read into as many rows of its workspace
 * area as the window has (at most DW_RING_ROWS), each row once, with the pixels DW_RING_PAD
 * floats further apart, and the kernel reads them there, one slab of channels at a time
 * (dw_ring_slab): its rows fill at most half the L1d, so each copied row is read for 2 or 3
 * output rows (3x3) from L1. In place, a
 * block's 27 input lines (one channel vector, 3 rows of 9 pixels) fell into one L1 set of 12
 * ways where a channel's pixels are 4 KiB apart (C 1024; 2 sets at C 512), and 3 input rows
 * outgrew L1 from C 384 on 14 x 14 (63 KiB), so each block reloaded its rows from L2. Against
 * in place (session 46, scripts/dw-loop.c, medians of 5 alternating runs, 1 thread):
 * C 1024 7 x 7 1.38x, C 960 7 x 7 1.15x, C 512 7 x 7 1.19x, C 512 14 x 14 1.65x, C 384
 * 14 x 14 1.27x; stride 2 C 512 14 -> 7 1.29x, C 1024 14 -> 7 1.86x. Not below C 384 (C 256
 * 28 x 28 0.97-1.06x, C 192 28 x 28 0.96-1.02x, C 128 56 x 56 0.63x), nor where a slab would
 * hold fewer than DW_RING_MIN_SLAB channels (rows wider than 14 pixels: stride 2 C 512
 * 28 -> 14 0.87x, with slabs of 48).
 * On several threads each thread takes one block of rows and runs its slabs over it (with the
 * slabs split between the threads instead, each thread writing half of every pixel, 2 threads
 * ran 1.18-1.47x in place in one hour and 0.58-0.75x in the next). Where the blocks are at
 * most an image tall, every other block walks its rows last to first: walked forwards, the
 * second block's rows ran ~1.5x slower per row than the first's, whichever thread ran them,
 * and walked apart, C 512 14 x 14 at batch 1 ran 1.26-1.34x faster on 2 threads (batch 2
 * 1.07-1.19x; at batch 8 no gain, so not there). Walked apart, blocks of 3-4 rows (7 x 7 on
 * 2 threads) pay too: against the whole-row ring at C 1024 1.10-1.15x (walked forwards they
 * lost, 0.84-0.87x), against in place at C 960 1.04-1.10x, at C 512 0.95-1.12x. At stride 2,
 * where neighbouring output rows share one input row of 3, not 2, blocks of 3-4 rows did
 * not (C 512 14 -> 7 on 2 threads 0.88x; 7-row blocks at batch 2 1.24x). A block shorter
 * than DW_RING_BLOCK (_S2) rows copies its 2 halo rows too often; there C a multiple of 1024
 * at stride 1 still gets the ring one whole row wide (session 45: 1.15-1.19x on 2 threads at
 * 7 x 7, with rows claimed one at a time). */
#define DW_RING_ROWS 7 /* the most rows a ring holds (the window's) */
#define DW_RING_PAD 16
#define DW_RING_MIN_C 384
#define DW_RING_MIN_SLAB 128
#define DW_RING_MIN_SLAB_SETS 32 /* where the pixels crowd into few L1 sets: dw_few_sets */
#define DW_RING_BLOCK 3    /* rows, stride 1 */
#define DW_RING_BLOCK_S2 7 /* stride 2 */

/* Whether one channel vector's pixels, in place, fall into too few L1 sets for a 14-pixel
 * block's lines at stride 1 (3x3: its 3 input rows of 16 pixels and its 14 outputs, 62 lines):
 * the pixels are C floats apart, so they take 4096 / gcd(4 C, 4096) of the 64 sets (an L1 of
 * 64-byte lines indexed within a 4 KiB page), each l1d / 4 KiB ways deep. On Zen 5 (48 KiB,
 * 12 ways) that is C a multiple of 256: 4 sets (48 lines) at C 256 and 768, 2 at C 512, 1 at
 * C 1024. There, the ring's slabs of 32 to 48 channels (rows up to 40 pixels) ran faster than
 * in place (session 50, scripts/dw-ab.c, batch 1, 1 thread unless said): C 256 28 x 28
 * 1.12-1.13x (2 threads 1.19x), C 256 20 x 20 1.17x, C 256 40 x 40 1.18x, C 256 14 x 14
 * (slabs of 128) 1.07x, C 512 28 x 28 1.41-1.45x (2 threads 1.40x), C 512 40 x 40 1.54x, C 768
 * 20 x 20 1.31x, C 768 28 x 28 0.94-1.05x, C 1024 20 x 20 1.22x against the whole-row ring,
 * 0.98x at 28 x 28; at batch 8 1.01-1.04x (C 512 28 x 28 0.99x). Not at C 128 (8 sets: C 128
 * 56 x 56 0.95-0.99x), nor with slabs of 16 (C 256 56 x 56 0.73x), nor at stride 2, where the
 * ring would take the place of the 7-pixel x 4-vector blocks (C 256 28 -> 14 0.54x).
 * Square windows 4 to 7 wide (dw_row_wide) take the ring by the same rule, with as many ring
 * rows as the window has (session 50, scripts/conv-ab.c, 1 thread, oneDNN between the calls,
 * 5x5 / 7x7): on 7 x 7, C 1024 1.35-1.49x / 1.63-1.79x, C 2048 2.31x / 2.40x; on 14 x 14,
 * C 512 1.30-1.32x / 1.11-1.21x, C 768 1.27x / 1.23x, C 256 0.99x / 1.12x. Their blocks read
 * more lines (5x5: 104, 7x7: 154), but the ring lost at C 128 (8 sets: 0.84x / 0.89x) and
 * gained little at C 384 (8 sets: 1.05x / 1.07x); not at stride 2 (C 768 14 -> 7 0.89-0.91x). */
static int dw_few_sets(const ridge_conv2d_desc *d)
{
    int64_t a = 4 * d->c_in, b = 4096; /* gcd(4 C, 4096) */
    while (b) {
        const int64_t t = a % b;
        a = b, b = t;
    }
    const int64_t sets = RIDGE_MIN(4096 / a, 64), ways = (int64_t)(ridge_cpu_get()->l1d / 4096);
    return d->stride_h == 1 && sets * ways < 3 * 16 + 14;
}

/* Whether the depthwise kernel runs the window in dw_row_wide's blocks: 4 to 7 columns wide,
 * stride 1 or 2, no dilation */
static int dw_wide_window(const ridge_conv2d_desc *d)
{
    return d->s >= 4 && d->s <= 7 && d->dil_w == 1 && d->stride_w <= 2;
}

/* Whether stride 2 runs in the kernel's 7-pixel x 4-vector blocks one tap at a time
 * (dw_row_3x3_cwide: 16-float vectors, C a multiple of 64 but not of 1024, rows of 7 outputs
 * or more), which read in place: against the ring at 14 -> 7 (session 50, 1 thread,
 * scripts/dw-ab.c) C 384 1.21x, C 512 1.33x, C 768 1.33x, C 1152 1.17x, batch 8 C 512 1.13x;
 * with oneDNN between the calls (scripts/conv-ab.c) 1.07-1.31x. (When the session 47 rule was
 * set, those blocks walked columns, and lost to the ring: C 512 and 1024 0.88-0.90x. C 1024
 * still walks them, even with the ring: 0.99x.) */
static int dw_s2_by_tap(const ridge_conv2d_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    return p->k->vlen == 16 && d->stride_w == 2 && d->c_in % 64 == 0 && d->c_in % 1024 != 0 &&
           p->ow >= 7;
}

static int dw_ring(const ridge_conv2d_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    if (d->layout != RIDGE_NHWC || d->groups != d->c_in || d->stride_h != d->stride_w ||
        d->dil_h != 1 || d->dil_w != 1)
        return 0;
    if (d->r == 3 && d->s == 3)
        return d->stride_h <= 2 && (d->c_in >= DW_RING_MIN_C || dw_few_sets(d)) &&
               !dw_s2_by_tap(p);
    return d->r == d->s && dw_wide_window(d) && dw_few_sets(d);
}

/* Channels per slab: as many (a multiple of 16) as keep the slab's ring rows within half
 * the L1d, spread evenly over the slabs; 0 below DW_RING_MIN_SLAB (DW_RING_MIN_SLAB_SETS
 * where dw_few_sets) */
static int64_t dw_ring_slab(const ridge_conv2d_desc *d)
{
    const int64_t half = (int64_t)(ridge_cpu_get()->l1d / 2 / sizeof(float));
    const int64_t most = (half / (d->r * d->w) - DW_RING_PAD) / 16 * 16;
    if (most < (dw_few_sets(d) ? DW_RING_MIN_SLAB_SETS : DW_RING_MIN_SLAB)) return 0;
    const int64_t slabs = (d->c_in + most - 1) / most;
    return ((d->c_in + slabs - 1) / slabs + 15) / 16 * 16;
}

/* Whether the ring may hold whole rows (3x3, C a multiple of 1024, stride 1: session 45) */
static int dw_ring_whole(const ridge_conv2d_desc *d)
{
    return d->c_in % 1024 == 0 && d->stride_h == 1 && d->r == 3;
}

/* The ring's width in channels for `rows` output rows on nth threads: a slab, or a whole row
 * (dw_ring_whole); 0: no ring */
static int64_t dw_ring_width(const ridge_conv2d_plan *p, int64_t rows, int nth)
{
    const ridge_conv2d_desc *d = &p->d;
    if (!dw_ring(p)) return 0;
    const int64_t slab = dw_ring_slab(d);
    const int64_t block = d->stride_h == 1 ? DW_RING_BLOCK : DW_RING_BLOCK_S2;
    if (slab && (nth == 1 || rows / nth >= block)) return slab;
    return dw_ring_whole(d) ? d->c_in : 0;
}

/* bytes per thread: the rows' tags (which input row each holds), then the rows */
static size_t dw_ring_bytes(const ridge_conv2d_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    if (!dw_ring(p)) return 0;
    const int64_t c = dw_ring_whole(d) ? d->c_in : dw_ring_slab(d);
    if (!c) return 0;
    return RIDGE_ALIGN + (size_t)(d->r * d->w * (c + DW_RING_PAD)) * sizeof(float);
}

size_t conv_algo_ws_per_thread(const ridge_conv2d_plan *p, ridge_conv_algo a)
{
    size_t f = 0;
    if (conv_gemm_route(&p->d, a)) { /* one strip (the SGEMM calls run one after another) */
        if (a == RIDGE_CONV_IM2COL) f = (size_t)(gemm_strip(p) * p->cig * p->d.r * p->d.s);
        return (f * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
    }
    switch (a) {
    case RIDGE_CONV_FFT: return conv_fft_ws_per_thread(p);
    case RIDGE_CONV_DEPTHWISE: return dw_ring_bytes(p);
    case RIDGE_CONV_IM2COL: f = (size_t)(im2col_strip(p) * p->cig * p->d.r * p->d.s); break;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3: {
        int m = wino_m(a), al = m + 2;
        int64_t tb = wino_tiles(p, m), cogp = p->ncob * p->k->nr;
        f = (size_t)(al * al * p->cig + al * al * tb * (p->cig + cogp) + m * m * p->cog);
        break;
    }
    default: break;
    }
    return (f * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
}

/* ---- weight packing -------------------------------------------------------------------------- */

/* r[i][j] = (G g)[i] for 3 taps g = (a[j], b[j], c[j]), j < n: F(2,3)'s and F(4,3)'s G as
 * butterflies (G's rows for m = 4: 1/4 a; -(a + b + c) / 6; -(a - b + c) / 6; a / 24 + b / 12
 * + c / 6; a / 24 - b / 12 + c / 6; c), in double, j innermost so the loops vectorize. The
 * backward data pass transforms its weights on every call: against G as a 6 x 3 product, this
 * took that transform (64 x 32 filters) from 32% to 22% of a batch-4 dx (14 x 14, 1 thread,
 * Zen 5): 1.18-1.20x the call. */
static void wino_g_cols(int m, const double *restrict a, const double *restrict b,
                        const double *restrict c, double (*restrict r)[64], int64_t n)
{
    if (m == 2) {
        for (int64_t j = 0; j < n; j++) {
            const double s = 0.5 * (a[j] + c[j]), h = 0.5 * b[j];
            r[0][j] = a[j], r[1][j] = s + h, r[2][j] = s - h, r[3][j] = c[j];
        }
        return;
    }
    const double q4 = 0.25, q6 = 1.0 / 6, q12 = 1.0 / 12, q24 = 1.0 / 24;
    for (int64_t j = 0; j < n; j++) {
        const double s = a[j] + c[j], e = q24 * a[j] + q6 * c[j], o = q12 * b[j];
        r[0][j] = q4 * a[j];
        r[1][j] = -q6 * (s + b[j]);
        r[2][j] = -q6 * (s - b[j]);
        r[3][j] = e + o;
        r[4][j] = e - o;
        r[5][j] = c[j];
    }
}

void conv_wino_transform(const ridge_conv2d_plan *p, const float *w, int rot, int64_t b0,
                         int64_t b1, float *U)
{
    /* U[xi][g][cob][ci][nr] = (G g G^T)[xi], in double, a block of nr output channels at a
     * time so each of U's rows is written whole (zeros past the group's channels) */
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, cig = p->cig, cog = p->cog, G = d->groups;
    const int m = wino_m(p->algo), al = m + 2;
    for (int64_t blk = b0; blk < b1; blk++) {
        const int64_t g = blk / p->ncob, cob = blk % p->ncob;
        const int64_t nco = RIDGE_MIN(nr, cog - cob * nr);
        for (int64_t ci = 0; ci < cig; ci++) {
            double k[9][64], t[3][6][64], u[6][64]; /* taps; G g per column; per row of G g */
            for (int64_t j = 0; j < nr; j++) {
                const int64_t cl = cob * nr + j;
                for (int q = 0; q < 9; q++)
                    k[q][j] = j >= nco ? 0.0
                              : rot    ? w[((g * cig + ci) * cog + cl) * 9 + 8 - q]
                                       : w[((g * cog + cl) * cig + ci) * 9 + q];
            }
            for (int c = 0; c < 3; c++) wino_g_cols(m, k[c], k[3 + c], k[6 + c], t[c], nr);
            for (int i = 0; i < al; i++) {
                wino_g_cols(m, t[0][i], t[1][i], t[2][i], u, nr);
                for (int jj = 0; jj < al; jj++) {
                    const int64_t xi = i * al + jj;
                    float *o = U + (((xi * G + g) * p->ncob + cob) * cig + ci) * nr;
                    for (int64_t j = 0; j < nr; j++) o[j] = (float)u[jj][j];
                }
            }
        }
    }
}

ridge_status conv_algo_pack(ridge_conv2d_plan *p, const float *w)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, R = d->r, S = d->s, cig = p->cig, cog = p->cog, G = d->groups;
    size_t n;
    if (p->algo == RIDGE_CONV_FFT) return conv_fft_pack(p, w);
    switch (p->algo) {
    case RIDGE_CONV_DEPTHWISE: n = (size_t)(R * S * ((d->c_out + nr - 1) / nr * nr)); break;
    case RIDGE_CONV_WINOGRAD_2X3: n = (size_t)(16 * G * p->ncob * cig * nr); break;
    case RIDGE_CONV_WINOGRAD_4X3: n = (size_t)(36 * G * p->ncob * cig * nr); break;
    default: n = (size_t)(G * p->ncob * R * S * cig * nr); break;
    }
    p->wp = ridge_calloc(n, sizeof(float));
    if (!p->wp) return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for %zu weights", n);
    p->wp_elems = n;
    float *wp = p->wp;

    if (p->algo == RIDGE_CONV_DEPTHWISE && d->layout == RIDGE_NCHW) { /* OIHW: [c][R][S] */
        memcpy(wp, w, (size_t)(d->c_out * R * S) * sizeof(float));
        return RIDGE_OK;
    }
    if (p->algo == RIDGE_CONV_DEPTHWISE) { /* [R][S][cp] */
        int64_t cp = (d->c_out + nr - 1) / nr * nr;
        for (int64_t c = 0; c < d->c_out; c++)
            for (int64_t t = 0; t < R * S; t++) wp[t * cp + c] = w[c * R * S + t];
        return RIDGE_OK;
    }
    if (p->algo == RIDGE_CONV_WINOGRAD_2X3 || p->algo == RIDGE_CONV_WINOGRAD_4X3) {
        conv_wino_transform(p, w, 0, 0, G * p->ncob, wp);
        return RIDGE_OK;
    }
    /* direct, im2col, pointwise: [g][cob][r][s][ci][nr] (= [g][cob][K][nr] for im2col) */
    for (int64_t co = 0; co < d->c_out; co++) {
        int64_t g = co / cog, cl = co % cog, cob = cl / nr, j = cl % nr;
        float *blk = wp + (g * p->ncob + cob) * R * S * cig * nr;
        for (int64_t ci = 0; ci < cig; ci++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t s = 0; s < S; s++)
                    blk[((r * S + s) * cig + ci) * nr + j] = w[((co * cig + ci) * R + r) * S + s];
    }
    return RIDGE_OK;
}

/* Orders this thread's non-temporal stores before what follows (the pool's completion flag
 * is a plain release store, which does not order them). */
static void stream_fence(void)
{
#if defined(__x86_64__) || defined(__i386__)
    _mm_sfence();
#endif
}

/* ---- shared pieces of the forward passes ----------------------------------------------------- */

typedef struct fwd {
    const ridge_conv2d_plan *p;
    const float *wp;   /* the packed or transformed weights: p->wp, or a caller's
                        * (conv_forward_with) */
    const float *x;
    float *y;
    const float *bias; /* padded: [g][ncob * nr] (depthwise: [c_out + 2 nr]) */
    const float *res;
    int act;
    char *ws;
    size_t row0;       /* depthwise: the first output row (n*oh + oh) of this call */
    ptrdiff_t yshift;  /* depthwise, pointwise: subtracted from y offsets (a strip's origin) */
    int64_t pixels;    /* pointwise: pixels per image when not the plan's oh*ow (a strip) */
    int nt;            /* direct, pointwise, depthwise: stream y (conv_streams) */
    int pf;            /* depthwise, cached: prefetch the input (CONV_STORES_PREFETCHED) */
    size_t seg, cseg;  /* direct, depthwise: column segments per row (column_segments; 0 or 1:
                        * whole rows), and where there are more, this call's (column_segment) */
    size_t wstride;    /* between the per-thread areas in ws (conv_area_stride) */
    int64_t ring;      /* depthwise: the ring's width in channels (dw_ring_width), 0 none */
    int back;          /* depthwise ring blocks (one row per kernel call): the rows last to
                        * first (depthwise_task) */
} fwd;

/* Valid taps k in [*k0, *k1) of a window starting at `start` (possibly negative) with
 * dilation dil over an input of n: 0 <= start + k*dil < n. Saturating, never branches per tap. */
static void tap_range(int64_t start, int64_t n, int64_t dil, int64_t K, int *k0, int *k1)
{
    int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
    int64_t hi = start > n - 1 ? 0 : (n - 1 - start) / dil + 1;
    hi = RIDGE_MIN(hi, K);
    lo = RIDGE_MIN(lo, K);
    *k0 = (int)lo;
    *k1 = (int)RIDGE_MAX(hi, lo);
}

/* The outputs [*lo, *hi) (of out) whose whole window of K taps (dilation dil, stride st) lies
 * inside an input of n with padding pad before it: the ones tap_range gives every tap. */
static void whole_windows(int64_t pad, int64_t n, int64_t K, int64_t dil, int64_t st,
                          int64_t out, int64_t *lo, int64_t *hi)
{
    int64_t last = n - 1 - (K - 1) * dil + pad; /* o * st <= last */
    *lo = RIDGE_MIN((pad + st - 1) / st, out);
    *hi = RIDGE_MAX(RIDGE_MIN(last < 0 ? 0 : last / st + 1, out), *lo);
}


/* Fills the output-channel fields of a row call for group g, block cob, and its packed
 * weights ([g][cob][r][s][ci][nr]: direct, pointwise and im2col alike). */
static void row_channels(const fwd *f, conv_row_args *a, int64_t g, int64_t cob)
{
    const ridge_conv2d_plan *p = f->p;
    const int nr = p->k->nr;
    a->w = f->wp + (g * p->ncob + cob) * p->d.r * p->d.s * p->cig * nr;
    a->yco = p->yco + g * p->cog + cob * nr;
    a->nco = (int)RIDGE_MIN(nr, p->cog - cob * nr);
    a->yfast = p->yfast[g * p->ncob + cob];
    a->nt = f->nt && a->yfast;
    a->bias = f->bias + (g * p->ncob + cob) * nr;
    a->res = f->res;
    a->act = f->act;
    a->y = f->y;
}

/* Whether channel block cb + 1 (< e1) is in cb's group and the kernel runs two blocks at
 * once; if so, b becomes a (set up for block cb) moved to block cb + 1. */
static int pair_next(const fwd *f, const conv_row_args *a, size_t cb, size_t e1,
                     conv_row_args *b)
{
    const ridge_conv2d_plan *p = f->p;
    if (!p->k->row_pair || cb + 1 >= e1 || (int64_t)(cb + 1) % p->ncob == 0) return 0;
    *b = *a;
    row_channels(f, b, (int64_t)(cb + 1) / p->ncob, (int64_t)(cb + 1) % p->ncob);
    return 1;
}

/* How many column segments each row goes in, for images too few rows high to give each of
 * nth threads rows of its own (a 1-D signal is one row): 1 (whole rows) unless `items` (rows
 * times channel blocks) gives fewer than two a thread; then about four items a thread, each
 * segment at least `unit` of the row's `pixels`. */
static size_t column_segments(size_t items, int64_t pixels, int64_t unit, int nth)
{
    if (nth < 2 || items >= 2 * (size_t)nth) return 1;
    const size_t want = (4 * (size_t)nth + items - 1) / items;
    return RIDGE_MAX(RIDGE_MIN(want, (size_t)(pixels / unit)), 1);
}

/* The output columns [*c0, *c1) of f's segment of a row of ow (all of them for whole rows):
 * the `width` columns from lo split at multiples of `unit` from lo, the first segment from
 * column 0 and the last to ow (so they hold the row's borders). */
static void column_segment(const fwd *f, int64_t lo, int64_t width, int64_t unit, int64_t ow,
                           int64_t *c0, int64_t *c1)
{
    const int64_t units = (width + unit - 1) / unit, s = (int64_t)f->seg, ns = (int64_t)f->cseg;
    *c0 = ns > 1 && s ? lo + units * s / ns * unit : 0;
    *c1 = ns > 1 && s + 1 < ns ? lo + units * (s + 1) / ns * unit : ow;
}

/* ---- direct ---------------------------------------------------------------------------------- */

/* The kernel on each border column ow outside [lo, hi) with its own column tap range; xrow and
 * yrow are the offsets of column 0 (the window's left edge before the padding) of the first
 * pixel, whose stride a->xps / a->yps already holds (along the row, or down the column). */
static void direct_border(const fwd *f, conv_row_args *a, int64_t lo, int64_t hi, ptrdiff_t xrow,
                          ptrdiff_t yrow)
{
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    a->roff = p->roff, a->soff = p->soff, a->cunit = 0;
    a->S = (int)d->s, a->kc = p->cig;
    for (int64_t ow = 0; ow < p->ow; ow++) {
        if (ow == lo) ow = hi;
        if (ow >= p->ow) break;
        tap_range(ow * d->stride_w - d->pad_left, d->w, d->dil_w, d->s, &a->s0, &a->s1);
        a->xo = xrow + ow * d->stride_w * p->xv.sw;
        a->yo = yrow + ow * p->yv.sw;
        p->k->row(a);
    }
}

/* The border columns (outside [lo, hi)) of one output row along the row, up to MR pixels a
 * tile, each pixel with its own column taps (row_masked), for channel block a and, when b is
 * not NULL, the next block b (row_masked_pair): a tile reads the weights once for its pixels,
 * where pixels one by one read them once each (the 11x11 layer on 28 x 28, whose 2 MB of
 * weights come from the L3: 10 of its 28 columns are border columns). A single border column
 * on each side (a 3x3 kernel's) goes as one tile of two pixels ow - 1 apart: a lone pixel's
 * FMA chains wait on each other. g: the group, whose channel offset goes into xo (its channels
 * are one run in x: masked in direct_range). b comes from pair_next, so only where the kernel
 * pairs blocks (row_pair and row_masked_pair come together). */
static void direct_edges(const fwd *f, const conv_row_args *row, const conv_row_args *b,
                         int64_t lo, int64_t hi, ptrdiff_t xrow, ptrdiff_t yrow, int64_t g)
{
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t step = d->stride_w * p->xv.sw;
    const int mr = p->k->mr, both = lo == 1 && hi == p->ow - 1 && p->ow > 1;
    const int64_t gap = both ? p->ow - 1 : 1; /* a tile's pixels are q + i * gap */
    int ps0[16], ps1[16];
    conv_row_args e = *row, t; /* e: block a's tiles; t: the same pixels in block b */
    conv_row_args *a = &e;
    a->roff = p->roff, a->soff = p->soff;
    a->S = (int)d->s, a->kc = p->cig, a->ps0 = ps0, a->ps1 = ps1, a->zx = p->zrow;
    for (int side = 0; side < 2 - both; side++) {
        const int64_t b0 = side ? hi : 0, end = side ? p->ow : lo, cnt = end - b0;
        /* tiles of even size: 7 pixels as 4 + 3, not 6 + 1 */
        const int64_t tiles = (cnt + mr - 1) / mr, per = tiles ? (cnt + tiles - 1) / tiles : 1;
        for (int64_t q = b0; q < end; q += per) {
            const int n = both ? 2 : (int)RIDGE_MIN(per, end - q);
            int s0 = (int)d->s, s1 = 0;
            for (int i = 0; i < n; i++) {
                tap_range((q + i * gap) * d->stride_w - d->pad_left, d->w, d->dil_w, d->s,
                          &ps0[i], &ps1[i]);
                if (ps0[i] < ps1[i]) s0 = RIDGE_MIN(s0, ps0[i]), s1 = RIDGE_MAX(s1, ps1[i]);
            }
            a->s0 = s0 < s1 ? s0 : 0, a->s1 = s0 < s1 ? s1 : 0;
            a->xps = gap * step, a->yps = gap * p->yv.sw;
            a->xo = xrow + q * step + p->xco[g * p->cig];
            a->yo = yrow + q * p->yv.sw;
            a->npix = n;
            if (!b) {
                p->k->row_masked(a);
                continue;
            }
            t = *a;
            t.w = b->w, t.yco = b->yco, t.nco = b->nco, t.yfast = b->yfast, t.nt = b->nt;
            t.bias = b->bias;
            p->k->row_masked_pair(a, &t);
        }
    }
}

#define DIRECT_SMALL_IMAGE 16384 /* bytes of one input image */
#define DIRECT_RUN_MIN 3         /* rows: shorter runs take their border columns along rows */
#define DIRECT_SEG_UNIT 12        /* pixels: whole tiles of MR = 6 and groups of 4 (sk_row) */

/* Whether each group's input channels are one run in x: border pixels then go along rows in
 * tiles (direct_edges), and the interior [lo, *hin) is whole tiles when the reduction is
 * longer than 9 steps (its last (hi - lo) % MR columns go with the border columns, down a run
 * or in direct_edges's tiles, where the row's last few pixels ran as a short tile: 3x3 on
 * 28 x 28, 26 = 4 x 6 + 2; the 3x3 128 layer 1.08x on 1 and 2 threads). Not for reductions of
 * 9 steps or fewer, whose rows take any width in groups of 4 (CONV_SMALL_REDUCTION;
 * fmnist-conv1 0.95x that way). */
static int direct_interior(const ridge_conv2d_plan *p, int64_t lo, int64_t hi, int64_t *hin)
{
    const ridge_conv2d_desc *d = &p->d;
    const int masked = conv_runs_contiguous(p->xco, (int)d->c_in, (int)p->cig);
    *hin = masked && d->r * d->s * p->cig > 9 ? lo + (hi - lo) / p->k->mr * p->k->mr : hi;
    return masked;
}

/* Whether the kernel runs whole rows, border pixels included (conv_kernels.row_edges): a 3x3
 * (or 1 x 3, 2 x 3) window over one input channel per group, stride 1 and padding 1 across,
 * rows wider than one group of the kernel's (DIRECT_EDGE_MIN_OW). The border columns are then
 * no vertical runs: fmnist-conv1 (1 -> 32, 28 x 28) ran 0.95-0.96x its padded copy with them. */
#define DIRECT_EDGE_MIN_OW 5
static int direct_row_edges(const ridge_conv2d_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    return p->k->row_edges && p->cig == 1 && d->r <= 3 && d->s == 3 && d->stride_w == 1 &&
           d->dil_w == 1 && d->pad_left == 1 && d->pad_right == 1 && p->ow >= DIRECT_EDGE_MIN_OW;
}

/* The direct algorithm's columns: [*lo, *hin) run along rows as the interior (the whole row
 * with row_edges: *edges, where edges is not NULL), the rest as border columns. */
static int direct_columns(const ridge_conv2d_plan *p, int64_t *lo, int64_t *hin, int *edges)
{
    const ridge_conv2d_desc *d = &p->d;
    int64_t hi;
    whole_windows(d->pad_left, d->w, d->s, d->dil_w, d->stride_w, p->ow, lo, &hi);
    const int masked = direct_interior(p, *lo, hi, hin);
    const int whole = direct_row_edges(p);
    if (whole) *lo = 0, *hin = p->ow;
    if (edges) *edges = whole;
    return masked;
}

static void direct_range(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    const fwd *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t R = d->r, S = d->s, sw = d->stride_w, dw = d->dil_w;
    /* the interior columns, [lo, hin), and the rows whose whole window is inside the input,
     * [rlo, rhi) */
    int64_t lo, hin, rlo, rhi;
    int edges;
    const int masked = direct_columns(p, &lo, &hin, &edges);
    whole_windows(d->pad_top, d->h, R, d->dil_h, d->stride_h, p->oh, &rlo, &rhi);
    /* this call's columns [c0, c1) (direct_segments): its part of the interior, [ilo, ihi),
     * and the border sides it holds, passed on as the columns [elo, ehi) to skip */
    int64_t c0, c1;
    column_segment(f, lo, hin - lo, DIRECT_SEG_UNIT, p->ow, &c0, &c1);
    const int64_t ilo = RIDGE_MAX(lo, c0), ihi = RIDGE_MIN(hin, c1);
    const int64_t elo = c0 > 0 ? 0 : lo, ehi = c1 < p->ow ? p->ow : hin;
    const int borders = elo > 0 || ehi < p->ow;
    /* When a window row is one contiguous run of s*c_in floats (NHWC with groups 1, no
     * dilation), the interior pixels reduce over it as one loop: the packed weights
     * [r][s][ci][nr] are already [r][s*ci][nr]. Longer reductions, less loop overhead (the
     * first layer's c_in = 3 becomes 21 per row). */
    const int row_run = p->xv.sw == p->cig && dw == 1 &&
                        conv_runs_contiguous(p->xco, (int)p->cig, (int)p->cig);
    /* the border columns' vertical runs: a micro-tile of rows, or every row of an image
     * small enough to stay in L1 (fmnist-conv1, 3 KB: one call per side, not five; 1.08-1.09x
     * in scripts/conv-ab-threads.c, and 0.95-0.99 of the padded copy's speed, from 0.89-0.95)
     * or of a reduction of at most 9 steps, whose column calls cost more in their setup than
     * in their few FMAs (the direct path on depthwise 3x3, C = 64 56 x 56 and C = 32 112 x
     * 112: 1.03-1.04x, 0.96 -> 0.99-1.00 of the padded copy without the copy's time) */
    const size_t run_max =
        (size_t)p->xv.sn * sizeof(float) <= DIRECT_SMALL_IMAGE || R * S * p->cig <= 9
            ? (size_t)p->oh
            : (size_t)p->k->mr;
    conv_row_args a = {0}, bp;
    a.xb = f->x;
    for (size_t row = b0; row < e0;) {
        int64_t n = (int64_t)row / p->oh, oh = (int64_t)row % p->oh;
        int64_t ih0 = oh * d->stride_h - d->pad_top;
        tap_range(ih0, d->h, d->dil_h, R, &a.r0, &a.r1);
        /* rows whose windows are whole in height, up to run_max of them: their border
         * columns go as vertical tiles after the rows' interiors (a column's pixels share its
         * tap range); a run stays short so its input rows are still in cache. Found from
         * [rlo, rhi), not row by row: four divisions a row were 3-4% of fmnist-conv1. */
        const int full = oh >= rlo && oh < rhi;
        size_t end = row + 1;
        if (full)
            end = RIDGE_MIN(RIDGE_MIN(e0, row + run_max), (size_t)(n * p->oh + rhi));
        /* border pixels along the row: rows cut by the top or bottom border, and runs too
         * short for vertical tiles (a thread's share cut them, or the image is one row high,
         * as the 1-D kernels' are) */
        const int along = masked && (!full || end - row < DIRECT_RUN_MIN);
        a.xps = sw * p->xv.sw, a.yps = p->yv.sw;
        for (size_t rw = row; rw < end; rw++) {
            int64_t ohr = (int64_t)rw % p->oh, ihr = ohr * d->stride_h - d->pad_top;
            ptrdiff_t xrow = n * p->xv.sn + ihr * p->xv.sh - d->pad_left * p->xv.sw;
            ptrdiff_t yrow = n * p->yv.sn + ohr * p->yv.sh;
            for (size_t cb = b1; cb < e1; cb++) {
                int64_t g = (int64_t)cb / p->ncob, cob = (int64_t)cb % p->ncob;
                row_channels(f, &a, g, cob);
                /* the interior in one call */
                a.xo = xrow + ilo * a.xps;
                a.yo = yrow + ilo * a.yps;
                a.npix = ihi - ilo;
                if (row_run) { /* the group's channel offset moves into xo */
                    a.xo += p->xco[g * p->cig];
                    a.roff = p->roff, a.soff = p->iota, a.coff = p->iota, a.cunit = 1;
                    a.S = 1, a.s0 = 0, a.s1 = 1, a.kc = S * p->cig;
                } else {
                    a.roff = p->roff, a.soff = p->soff, a.coff = p->xco + g * p->cig, a.cunit = 0;
                    a.S = (int)S, a.s0 = 0, a.s1 = (int)S, a.kc = p->cig;
                }
                const int paired = a.npix > 0 && !edges && pair_next(f, &a, cb, e1, &bp);
                a.edge = (ilo == 0) | (ihi == p->ow) << 1;
                if (paired) p->k->row_pair(&a, &bp);
                else if (a.npix > 0) (edges ? p->k->row_edges : p->k->row)(&a);
                if (borders && along) {
                    direct_edges(f, &a, paired ? &bp : NULL, elo, ehi, xrow, yrow, g);
                } else if (borders && !full) {
                    /* a row cut by the border, its border pixels one by one */
                    a.coff = p->xco + g * p->cig;
                    a.npix = 1;
                    direct_border(f, &a, elo, ehi, xrow, yrow);
                    if (paired) {
                        bp.coff = a.coff, bp.npix = 1;
                        direct_border(f, &bp, elo, ehi, xrow, yrow);
                    }
                }
                cb += (size_t)paired;
            }
        }
        if (full && !along && borders) {
            /* the run's border columns: one call per column, its pixels a row apart (whole
             * micro-tiles, where single pixels ran load-bound: 11x11 c=64 on 56x56 and 28x28
             * 1.16x and 1.34x faster, no longer slower than the same kernel on a padded copy) */
            a.xps = d->stride_h * p->xv.sh, a.yps = p->yv.sh;
            a.npix = (int64_t)(end - row);
            /* the run's length depends on where the thread's rows began: the pixels must sum
             * the same way in a run of one as in a longer one */
            a.one_chain = 1;
            for (size_t cb = b1; cb < e1; cb++) {
                int64_t g = (int64_t)cb / p->ncob, cob = (int64_t)cb % p->ncob;
                row_channels(f, &a, g, cob);
                a.coff = p->xco + g * p->cig;
                direct_border(f, &a, elo, ehi,
                              n * p->xv.sn + ih0 * p->xv.sh - d->pad_left * p->xv.sw,
                              n * p->yv.sn + oh * p->yv.sh);
            }
            a.one_chain = 0;
        }
        row = end;
    }
    if (f->nt) stream_fence();
}

/* Rows in column segments (column_segments): unit u is segment u % cseg of row u / cseg. The
 * segments split the interior at multiples of DIRECT_SEG_UNIT pixels from its start, the
 * first takes the left border, the last the right, so each pixel sums as in a whole row. */
static void direct_segments(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    fwd g = *(const fwd *)arg;
    for (size_t u = b0; u < e0; u++) {
        g.seg = u % g.cseg;
        direct_range(&g, u / g.cseg, u / g.cseg + 1, b1, e1, ith);
    }
}

/* ---- pointwise ------------------------------------------------------------------------------- */

#define PW_BLOCK 96 /* pixels per work item: 16 micro-tiles */

/* Pixels [q0, q1) of image n, channel blocks [b1, e1), PW_BLOCK pixels a kernel call. */
static void pointwise_pixels(const fwd *f, int64_t n, int64_t q0, int64_t q1, size_t b1, size_t e1)
{
    const ridge_conv2d_plan *p = f->p;
    conv_row_args a = {0};
    a.xb = f->x;
    a.xps = p->xv.sw;
    a.roff = p->iota, a.soff = p->iota;
    a.r0 = a.s0 = 0, a.r1 = a.s1 = a.S = 1;
    a.kc = p->cig;
    a.yps = p->yv.sw;
    /* each group's input channels one run (NHWC; NCHW16c with groups inside a block): the
     * kernel then reads no offset table */
    const int unit = conv_runs_contiguous(p->xco, (int)p->d.c_in, (int)p->cig);
    a.pfx = unit && a.xps == a.kc;
    conv_row_args bp;
    for (int64_t q = q0; q < q1; q += PW_BLOCK)
        for (size_t cb = b1; cb < e1; cb++) {
            int64_t g = (int64_t)cb / p->ncob, cob = (int64_t)cb % p->ncob;
            row_channels(f, &a, g, cob);
            a.coff = unit ? p->iota : p->xco + g * p->cig, a.cunit = unit;
            a.xo = n * p->xv.sn + q * p->xv.sw + (unit ? p->xco[g * p->cig] : 0);
            a.yo = n * p->yv.sn + q * p->yv.sw - f->yshift;
            a.npix = RIDGE_MIN(PW_BLOCK, q1 - q);
            if (pair_next(f, &a, cb, e1, &bp)) {
                p->k->row_pair(&a, &bp);
                cb++;
            } else
                p->k->row(&a);
        }
}

/* Units [b, e) of `unit` pixels each, numbered over all images (an image's last unit may be
 * short), x channel blocks [b1, e1): one pointwise_pixels call per image touched. */
static void pointwise_span(const fwd *f, int64_t unit, size_t b, size_t e, size_t b1, size_t e1)
{
    const int64_t hw = f->pixels ? f->pixels : f->p->oh * f->p->ow;
    const int64_t units = (hw + unit - 1) / unit;
    while (b < e) {
        const int64_t n = (int64_t)b / units, u0 = (int64_t)b % units;
        const int64_t u1 = RIDGE_MIN(units, u0 + (int64_t)(e - b));
        pointwise_pixels(f, n, u0 * unit, RIDGE_MIN(u1 * unit, hw), b1, e1);
        b += (size_t)(u1 - u0);
    }
    if (f->nt) stream_fence();
}

/* Blocks [b0, e0) of PW_BLOCK pixels x channel blocks [b1, e1). */
static void pointwise_range(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    pointwise_span(arg, PW_BLOCK, b0, e0, b1, e1);
}

/* Units [b, e) of a micro-tile's pixels, every channel block: a thread's static share, the
 * same pixels on every call. */
static void pointwise_units(void *arg, size_t b, size_t e, int ith)
{
    const fwd *f = arg;
    pointwise_span(f, f->p->k->mr, b, e, 0, (size_t)(f->p->d.groups * f->p->ncob));
}

/* ---- im2col ---------------------------------------------------------------------------------- */

/* Lowers pixels [q0, q0 + np) of image n, group g, to rows col[q][(r*S + s)*cig + ci] (zero
 * where the tap is in the padding): the A operand of a GEMM with the weights as
 * [(r, s, ci)][c_out]. */
static void lower_pixels(const ridge_conv2d_plan *p, const float *xb, int64_t n, int64_t g,
                         int64_t q0, int64_t np, float *col)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t cig = p->cig, K = cig * d->r * d->s;
    const ptrdiff_t *xco = p->xco + g * cig;
    int contig = conv_runs_contiguous(xco, (int)cig, (int)cig);
    /* a window row is one run of s*cig floats when the group's channels fill the pixel
     * (NHWC, groups 1) and the kernel is not dilated: one copy per row */
    int row_run = contig && p->xv.sw == cig && d->dil_w == 1;
    for (int64_t q = 0; q < np; q++) {
        int64_t oh = (q0 + q) / p->ow, ow = (q0 + q) % p->ow;
        int64_t ih0 = oh * d->stride_h - d->pad_top, iw0 = ow * d->stride_w - d->pad_left;
        float *c = col + q * K;
        for (int64_t r = 0; r < d->r; r++) {
            int64_t ih = ih0 + r * d->dil_h;
            if (row_run) {
                int s0, s1;
                tap_range(iw0, d->w, 1, d->s, &s0, &s1);
                if (ih < 0 || ih >= d->h) s0 = s1 = 0;
                memset(c, 0, (size_t)(s0 * cig) * sizeof(float));
                if (s1 > s0)
                    memcpy(c + s0 * cig,
                           xb + n * p->xv.sn + ih * p->xv.sh + (iw0 + s0) * cig + xco[0],
                           (size_t)((s1 - s0) * cig) * sizeof(float));
                memset(c + s1 * cig, 0, (size_t)((d->s - s1) * cig) * sizeof(float));
                c += d->s * cig;
                continue;
            }
            for (int64_t s = 0; s < d->s; s++, c += cig) {
                int64_t iw = iw0 + s * d->dil_w;
                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) {
                    memset(c, 0, (size_t)cig * sizeof(float));
                    continue;
                }
                const float *x = xb + n * p->xv.sn + ih * p->xv.sh + iw * p->xv.sw;
                if (contig) memcpy(c, x + xco[0], (size_t)cig * sizeof(float));
                else
                    for (int64_t ci = 0; ci < cig; ci++) c[ci] = x[xco[ci]];
            }
        }
    }
}

static void im2col_range(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    const fwd *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t P = im2col_strip(p), hw = p->oh * p->ow, nstrip = (hw + P - 1) / P;
    const int64_t K = p->cig * d->r * d->s;
    float *col = (float *)(f->ws + (size_t)ith * f->wstride);
    conv_row_args a = {0}, bp;
    a.xb = col;
    a.xps = K;
    a.roff = p->iota, a.soff = p->iota, a.coff = p->iota, a.cunit = 1;
    a.r0 = a.s0 = 0, a.r1 = a.s1 = a.S = 1;
    a.kc = K;
    a.yps = p->yv.sw;
    for (size_t it = b0; it < e0; it++) {
        int64_t n = (int64_t)it / nstrip, q0 = (int64_t)it % nstrip * P;
        int64_t np = RIDGE_MIN(P, hw - q0);
        for (size_t g = b1; g < e1; g++) {
            lower_pixels(p, f->x, n, (int64_t)g, q0, np, col);
            const size_t gb = g * (size_t)p->ncob, ge = gb + (size_t)p->ncob;
            for (size_t cb = gb; cb < ge; cb++) {
                row_channels(f, &a, (int64_t)g, (int64_t)(cb - gb));
                a.xo = 0;
                a.yo = n * p->yv.sn + q0 * p->yv.sw;
                a.npix = np;
                if (pair_next(f, &a, cb, ge, &bp)) {
                    p->k->row_pair(&a, &bp);
                    cb++;
                } else
                    p->k->row(&a);
            }
        }
    }
}

/* ---- im2col and pointwise on ridge_sgemm (NCHW, NHWC)
 * ----------------------------------------------
 *
 * NHWC:  Y[pixels][c_out] = A[pixels][K] * W^T[K][c_out]: A is the input itself (pointwise,
 *        lda = c_in) or a lowered strip (im2col, rows (r, s, ci)); W^T is prepacked once per
 *        group in the plan (ridge_sgemm_plan), bias per column.
 * NCHW:  Y[c_out][pixels] = W[c_out][K] * B[K][pixels]: B is the input itself (pointwise,
 *        ldb = h*w) or a lowered strip of rows (ci, r, s) (the classic im2col), bias per row.
 * The residual rides in C with beta = 1 (the GEMM epilogue adds its own residual after the
 * activation; ours goes before). The strip is lowered in parallel, then one SGEMM call runs
 * on the pool. */

int conv_gemm_route(const ridge_conv2d_desc *d, ridge_conv_algo a)
{
    /* pointwise in NHWC and NCHW16c runs the micro-kernel over whole images as one row of
     * pixels, which measured faster than SGEMM on these shapes */
    return (a == RIDGE_CONV_IM2COL && d->layout != RIDGE_NCHW16C) ||
           (a == RIDGE_CONV_POINTWISE && d->layout == RIDGE_NCHW);
}

ridge_status conv_gemm_pack(ridge_ctx *ctx, ridge_conv2d_plan *p, const float *w)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t K = p->cig * d->r * d->s, RS = d->r * d->s, cig = p->cig, cog = p->cog;
    if (d->layout == RIDGE_NCHW) { /* A = W as given: [g][cog][(ci, r, s)] */
        size_t n = (size_t)(d->c_out * K);
        p->wp = ridge_malloc(n * sizeof(float));
        if (!p->wp) return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for weights");
        memcpy(p->wp, w, n * sizeof(float));
        p->wp_elems = n;
        return RIDGE_OK;
    }
    p->gplan = ridge_calloc((size_t)d->groups, sizeof *p->gplan);
    float *perm = ridge_malloc((size_t)(cog * K) * sizeof(float));
    if (!p->gplan || !perm) {
        ridge_free(perm);
        return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for weights");
    }
    ridge_status st = RIDGE_OK;
    for (int64_t g = 0; g < d->groups && !st; g++) {
        /* perm[co][(r*S + s)*cig + ci]: op(B) = perm^T is K x cog */
        for (int64_t co = 0; co < cog; co++)
            for (int64_t ci = 0; ci < cig; ci++)
                for (int64_t t = 0; t < RS; t++)
                    perm[co * K + t * cig + ci] = w[((g * cog + co) * cig + ci) * RS + t];
        st = ridge_sgemm_plan_create(ctx, RIDGE_TRANS, (size_t)cog, (size_t)K, perm, (size_t)K,
                                     &p->gplan[g]);
    }
    ridge_free(perm);
    return st;
}

typedef struct lower_args {
    const ridge_conv2d_plan *p;
    const float *x;
    int64_t n, g, q0, np;
    float *col;
} lower_args;

static void lower_nhwc_range(void *arg, size_t b, size_t e, int ith)
{
    const lower_args *l = arg;
    const int64_t K = l->p->cig * l->p->d.r * l->p->d.s;
    lower_pixels(l->p, l->x, l->n, l->g, l->q0 + (int64_t)b, (int64_t)(e - b),
                 l->col + (int64_t)b * K);
}

/* NCHW rows col[(ci*R + r)*S + s][q], q over the strip. */
static void lower_nchw_range(void *arg, size_t b, size_t e, int ith)
{
    const lower_args *l = arg;
    const ridge_conv2d_plan *p = l->p;
    const ridge_conv2d_desc *d = &p->d;
    for (size_t kk = b; kk < e; kk++) {
        int64_t ci = (int64_t)kk / (d->r * d->s), r = (int64_t)kk / d->s % d->r,
                s = (int64_t)kk % d->s;
        const float *xc = l->x + l->n * p->xv.sn + p->xco[l->g * p->cig + ci];
        float *row = l->col + (int64_t)kk * l->np;
        int64_t oh = l->q0 / p->ow, ow = l->q0 % p->ow;
        for (int64_t q = 0; q < l->np; q++) {
            int64_t ih = oh * d->stride_h - d->pad_top + r * d->dil_h;
            int64_t iw = ow * d->stride_w - d->pad_left + s * d->dil_w;
            row[q] = ih >= 0 && ih < d->h && iw >= 0 && iw < d->w ? xc[ih * p->xv.sh + iw] : 0.0f;
            if (++ow == p->ow) ow = 0, oh++;
        }
    }
}

/* Copies the residual block (rows x cols at ld) into y when they are not the same memory. */
static void copy_block(float *y, const float *res, int64_t rows, int64_t cols, int64_t ld)
{
    if (res == y) return;
    for (int64_t i = 0; i < rows; i++)
        memcpy(y + i * ld, res + i * ld, (size_t)cols * sizeof(float));
}

static ridge_status gemm_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *x,
                                 float *y, const float *bias, int act, const float *res, char *ws)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t cig = p->cig, cog = p->cog, K = cig * d->r * d->s, hw = p->oh * p->ow;
    const int pw = p->algo == RIDGE_CONV_POINTWISE;
    ridge_epilogue e = {0};
    e.act = act ? RIDGE_EPI_RELU : RIDGE_EPI_NONE;
    const float beta = res ? 1.0f : 0.0f;
    ridge_status st = RIDGE_OK;
    float *col = (float *)ws;
    if (d->layout == RIDGE_NHWC) {
        e.bias_kind = bias ? RIDGE_BIAS_COL : RIDGE_BIAS_NONE;
        if (pw) { /* all images at once: n*h*w rows of c_in */
            const int64_t rows = d->n * hw;
            for (int64_t g = 0; g < d->groups && !st; g++) {
                e.bias = bias ? bias + g * cog : NULL;
                if (res) copy_block(y + g * cog, res + g * cog, rows, cog, d->c_out);
                st = ridge_sgemm_plan_execute(ctx, p->gplan[g], RIDGE_NO_TRANS, (size_t)rows, 1.0f,
                                              x + g * cig, (size_t)d->c_in, beta, y + g * cog,
                                              (size_t)d->c_out, &e);
            }
            return st;
        }
        const int64_t P = gemm_strip(p);
        for (int64_t n = 0; n < d->n; n++)
            for (int64_t q0 = 0; q0 < hw; q0 += P)
                for (int64_t g = 0; g < d->groups && !st; g++) {
                    lower_args l = {p, x, n, g, q0, RIDGE_MIN(P, hw - q0), col};
                    ridge_parallel_for(ctx, (size_t)l.np, 8, lower_nhwc_range, &l);
                    float *yc = y + n * p->yv.sn + q0 * d->c_out + g * cog;
                    e.bias = bias ? bias + g * cog : NULL;
                    if (res) copy_block(yc, res + (yc - y), l.np, cog, d->c_out);
                    st = ridge_sgemm_plan_execute(ctx, p->gplan[g], RIDGE_NO_TRANS, (size_t)l.np,
                                                  1.0f, col, (size_t)K, beta, yc,
                                                  (size_t)d->c_out, &e);
                }
        return st;
    }
    /* NCHW */
    e.bias_kind = bias ? RIDGE_BIAS_ROW : RIDGE_BIAS_NONE;
    const int64_t P = pw ? hw : gemm_strip(p);
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t q0 = 0; q0 < hw; q0 += P)
            for (int64_t g = 0; g < d->groups && !st; g++) {
                const int64_t np = RIDGE_MIN(P, hw - q0);
                const float *b = x + n * p->xv.sn + g * cig * hw; /* pointwise: the input */
                size_t ldb = (size_t)hw;
                if (!pw) {
                    lower_args l = {p, x, n, g, q0, np, col};
                    ridge_parallel_for(ctx, (size_t)K, 1, lower_nchw_range, &l);
                    b = col, ldb = (size_t)np;
                }
                float *yc = y + n * p->yv.sn + g * cog * hw + q0;
                e.bias = bias ? bias + g * cog : NULL;
                if (res) copy_block(yc, res + (yc - y), cog, np, hw);
                st = ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, (size_t)cog, (size_t)np,
                                    (size_t)K, 1.0f, p->wp + g * cog * K, (size_t)K, b, ldb, beta,
                                    yc, (size_t)hw, &e);
            }
    return st;
}

/* ---- depthwise ------------------------------------------------------------------------------- */

/* p[0] = lo, p[1] = hi as one 8-byte store, for pairs of int fields of conv_dw_args that the
 * row kernels read together. gcc merges reads such as `a->edge_l || a->edge_r` and `a->s0 == 0
 * && a->s1 == 3` into one 8-byte load, which two 4-byte stores cannot forward to: the load then
 * waits for both stores to leave the store buffer, behind the previous row's stores of y. In
 * NHWC, where those stores drain slowest, `perf` put 10% of a depthwise call on such a load;
 * written this way, C = 64 56 x 56 ran 1.03-1.06x (scripts/conv-ab.c, batch 1 and 8). */
typedef struct int_pair {
    int lo, hi;
} int_pair;
_Static_assert(offsetof(conv_dw_args, r1) == offsetof(conv_dw_args, r0) + sizeof(int) &&
                   offsetof(conv_dw_args, s1) == offsetof(conv_dw_args, s0) + sizeof(int) &&
                   offsetof(conv_dw_args, edge_r) == offsetof(conv_dw_args, edge_l) + sizeof(int),
               "conv_dw_args: the paired fields must be adjacent");
static inline void put_pair(int *p, int lo, int hi)
{
    const int_pair v = {lo, hi};
    memcpy(p, &v, sizeof v);
}

/* Output rows per depthwise kernel call (conv_dw_args.nrows), at most. The 3x3 kernel then
 * runs each block of 14 pixels x 16 channels down the rows, so a block finds 2 of its 3
 * input rows in L1, where row after row it reloads all 3 from L2 whenever 3 input rows and an
 * output row outgrow L1. Only then, and only with pixels at most 256 bytes apart: grouped,
 * rows that fit L1 ran slower than one after the other, and so did pixels 512 bytes or more
 * apart (NHWC C >= 128), whose lines down 10 rows crowd a few L1 sets. Grouped against one
 * row per call, Zen 5, 1 thread (scripts/conv-ab.c, medians of 41 rounds): C = 32 112 x 112
 * 1.09-1.21, C = 64 56 x 56 1.09-1.17, C = 64 112 x 112 stride 2 1.11-1.15, NCHW16c 1.06-1.12,
 * C = 48 80 x 80 1.03, C = 64 112 x 112 and C = 32 224 x 224 1.01; 2 threads 1.04-1.15; but
 * C = 64 28 x 28 0.86, C = 32 56 x 56 0.90, C = 256 28 x 28 0.85, C = 128 56 x 56 0.98, which
 * the rule keeps at one row. 4 rows ran 0.96-0.97x of 8, 16 rows 0.98-0.99x. Windows 4 to 7
 * wide (dw_row_wide) read 5-7 input rows per output row, so grouping pays up to pixels 512
 * bytes apart (session 37, one row per call against grouped, 1 thread, batch 1 unless said):
 * 5x5 C = 32 112 x 112 1.11-1.16, C = 128 28 x 28 1.11-1.12, C = 128 56 x 56 1.18-1.22; 7x7
 * C = 64 56 x 56 1.10-1.13, C = 96 56 x 56 1.20 (2 threads 1.03-1.15, batch 8 1.23-1.33 and
 * 1.11-1.27); but 5x5 C = 240 28 x 28 batch 8 0.84-0.86 (2 threads 0.93-0.95), so not past
 * 128 floats. */
#define DW_ROWS 8

#define DW_SEG_UNIT 64 /* pixels */

/* The offset in `rows` (the ring, pixels rps floats apart) of input row ih of image n,
 * channels [k0, k0 + c): copied there unless its ring row already holds it (tag). */
static ptrdiff_t dw_ring_row(const fwd *f, int64_t *tag, float *rows, ptrdiff_t rps, int64_t n,
                             int64_t ih, int64_t k0, int64_t c)
{
    const ridge_conv2d_desc *d = &f->p->d;
    const int64_t k = ih % d->r, key = (k0 / f->ring * d->n + n) * d->h + ih;
    float *dst = rows + k * d->w * rps;
    if (tag[k] != key) {
        tag[k] = key;
        const float *src = f->x + n * f->p->xv.sn + ih * f->p->xv.sh + k0;
        for (int64_t iw = 0; iw < d->w; iw++)
            memcpy(dst + iw * rps, src + iw * f->p->xv.sw, (size_t)c * sizeof(float));
    }
    return dst - rows;
}

/* Output rows per kernel call in depthwise_range: DW_ROWS where 3 input rows and an output
 * row outgrow L1 and the pixels are close enough, else 1 (and 1 with the ring) */
static int dw_rows_max(const ridge_conv2d_plan *p, int64_t ring)
{
    const size_t row_bytes = (size_t)(p->d.w * p->d.c_in) * sizeof(float);
    return !ring && 4 * row_bytes > ridge_cpu_get()->l1d &&
                   p->xv.sw <= (dw_wide_window(&p->d) ? 128 : 64)
               ? DW_ROWS
               : 1;
}

static void depthwise_range(void *arg, size_t b0, size_t e0, int ith)
{
    const fwd *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t S = d->s, sw = d->stride_w, dw = d->dil_w;
    int64_t lo, hi;
    whole_windows(d->pad_left, d->w, S, dw, sw, p->ow, &lo, &hi);
    conv_dw_args a;
    a.xb = f->x;
    a.xps = sw * p->xv.sw;
    a.roff = p->roff, a.soff = p->soff, a.xco = p->xco;
    a.S = (int)S;
    a.c = d->c_out;
    a.cp = (d->c_out + p->k->nr - 1) / p->k->nr * p->k->nr;
    a.w = f->wp;
    a.y = f->y;
    a.yps = p->yv.sw;
    a.yco = p->yco;
    a.bias = f->bias;
    a.res = f->res;
    a.act = f->act;
    /* streamed: prefetch the next output row's new input rows (stride_h of them) */
    a.pf_rows = (int)d->stride_h, a.pf_rs = p->xv.sh;
    a.pf_off = p->roff[d->r - 1] + p->xv.sh;
    /* When the row's only border pixels are its first, missing just its first column tap,
     * and its last, missing just its last (pad 1 for 3x3), the whole row is one call with
     * edge_l / edge_r: the kernel then runs the border pixels in its blocks too. */
    int el = 0, er = 0;
    if (hi > lo && lo == 1) {
        int t0, t1;
        tap_range(-d->pad_left, d->w, dw, S, &t0, &t1);
        el = t0 == 1 && t1 == (int)S;
    }
    if (hi > lo && hi == p->ow - 1) {
        int t0, t1;
        tap_range((p->ow - 1) * sw - d->pad_left, d->w, dw, S, &t0, &t1);
        er = t0 == 0 && t1 == (int)S - 1;
    }
    /* windows 4 to 7 wide: the whole row in one call too, its border pixels inside the
     * kernel's blocks (dw_row_wide) */
    const int wide = dw_wide_window(d);
    const int whole = wide || ((lo == 0 || el) && (hi == p->ow || er));
    if (whole) lo = 0, hi = p->ow;
    /* this call's columns [c0, c1) (depthwise_segments), and its part of the interior */
    int64_t c0, c1;
    column_segment(f, 0, p->ow, DW_SEG_UNIT, p->ow, &c0, &c1);
    const int64_t ilo = RIDGE_MAX(lo, c0), ihi = RIDGE_MIN(hi, c1);
    a.xrs = d->stride_h * p->xv.sh, a.yrs = p->yv.sh;
    /* the ring (dw_ring): tags, rows; the window's row r at ring row rr[r] */
    const int64_t ring = f->ring, cs = ring ? ring : d->c_in;
    const int rows_max = dw_rows_max(p, ring);
    /* stride 2, channels far apart: the kernel's 7-pixel x 4-vector blocks (conv_dw_args) */
    a.cwide = !ring && !f->nt && d->layout == RIDGE_NHWC && d->r == 3 && S == 3 && sw == 2 &&
                      dw == 1 && p->xv.sw >= 128 && d->c_out % 64 == 0
                  ? 1 + f->pf
                  : 0;
    int64_t *tag = NULL;
    float *rows = NULL;
    const ptrdiff_t rps = cs + DW_RING_PAD;
    ptrdiff_t rr[DW_RING_ROWS], rsoff[DW_RING_ROWS];
    if (ring) {
        tag = (int64_t *)(f->ws + (size_t)ith * f->wstride);
        rows = (float *)((char *)tag + RIDGE_ALIGN);
        for (int k = 0; k < S; k++) rsoff[k] = k * rps;
        a.xb = rows, a.xps = sw * rps, a.roff = rr, a.soff = rsoff;
    }
    for (int64_t k0 = 0; k0 < d->c_in; k0 += cs) { /* the slabs [k0, k0 + cs) */
        if (ring) {
            a.c = RIDGE_MIN(cs, d->c_in - k0);
            a.w = f->wp + k0, a.bias = f->bias + k0, a.y = f->y + k0;
            a.res = f->res ? f->res + k0 : NULL;
        }
        for (size_t i = b0; i < e0; i += (size_t)a.nrows) {
            const size_t row = f->row0 + (f->back ? e0 - 1 - (i - b0) : i), end = f->row0 + e0;
            int64_t n = (int64_t)row / p->oh, oh = (int64_t)row % p->oh;
            int64_t ih0 = oh * d->stride_h - d->pad_top;
            int r0, r1;
            tap_range(ih0, d->h, d->dil_h, d->r, &r0, &r1);
            put_pair(&a.r0, r0, r1);
            /* the rows below of the same image with the same taps go in the same call */
            a.nrows = 1;
            for (int r = r0; ring && r < r1; r++)
                rr[r] = dw_ring_row(f, tag, rows, rps, n, ih0 + r, k0, a.c);
            for (int64_t oh1 = oh + 1;
                 a.nrows < rows_max && row + (size_t)a.nrows < end && oh1 < p->oh;
                 oh1++, a.nrows++) {
                int t0, t1;
                tap_range(oh1 * d->stride_h - d->pad_top, d->h, d->dil_h, d->r, &t0, &t1);
                if (t0 != r0 || t1 != r1) break;
            }
            ptrdiff_t xrow = ring ? -d->pad_left * rps
                                  : n * p->xv.sn + ih0 * p->xv.sh - d->pad_left * p->xv.sw;
            ptrdiff_t yrow = n * p->yv.sn + oh * p->yv.sh - f->yshift;
            put_pair(&a.s0, 0, (int)S);
            a.xo = xrow + ilo * a.xps;
            a.yo = yrow + ilo * a.yps;
            a.npix = ihi - ilo;
            put_pair(&a.edge_l, whole && !wide && el && c0 == 0,
                     whole && !wide && er && c1 == p->ow);
            a.iw = wide ? d->w : 0;
            a.padl = d->pad_left - ilo * sw;
            a.nt = f->nt;
            a.pf = f->pf;
            if (a.npix > 0) p->k->dw_row(&a);
            put_pair(&a.edge_l, 0, 0);
            a.nt = a.pf = 0;
            for (int64_t ow = c0; ow < c1; ow++) {
                if (ow == ilo) ow = RIDGE_MAX(hi, ilo);
                if (ow >= c1) break;
                int s0, s1;
                tap_range(ow * sw - d->pad_left, d->w, dw, S, &s0, &s1);
                put_pair(&a.s0, s0, s1);
                a.xo = xrow + ow * a.xps;
                a.yo = yrow + ow * a.yps;
                a.npix = 1;
                p->k->dw_row(&a);
            }
        }
    }
    if (f->nt) stream_fence();
}

/* How direct, pointwise or depthwise writes y (ridge_conv2d_plan_options.stream; a streamed
 * plan still stores through the cache when y is not 64-byte aligned); why says why. By
 * default, only NHWC streams, and only where y would be evicted before the next layer reads
 * it: past a quarter of the L3 a core can count on for direct and pointwise, past half of it
 * for depthwise. Alone, a layer called again and again on the same x gained from streaming
 * from a quarter on (at batch 8: depthwise, 26 and 13 MB, 1.2-1.55x with its input prefetch;
 * pointwise 64 1.10-1.13x; the 7x7 first layer ~1.12x), but in a chain, where each layer
 * reads what the one before wrote, the 13 MB depthwise layers ran 1.0-3.9x faster through
 * the cache, the 26 MB ones 1.04-1.17x faster streamed, and the 13 MB pointwise ones within
 * 10% either way (scripts/conv-chain.c). Past a quarter, depthwise stores through the cache
 * but prefetches its input as the streamed path does (alone at 13 MB on 1 thread, 1.3-1.5x;
 * in the chain, as fast). At batch 1 the 1.6 MB depthwise measured 0.61-0.66x streamed
 * (docs/PERFORMANCE.md). On an Intel Xeon VM, whose usable L3 is 96 MiB (cpu.c), the same
 * rules held: depthwise alone ran best through the cache to ~32 MB and streamed from ~38 MB,
 * in the chain through the cache to 77 MB; pointwise in the chain through the cache from 12.8
 * to 38.5 MB (docs/PERFORMANCE.md, session 24). Elsewhere (the 32 MiB cap: AMD's chiplet)
 * depthwise streams only past the whole usable L3: once the 3x3 kernel's prefetched mode ran
 * its rows grouped (session 42, Zen 5), it beat streaming at 26 MB in a chain (1.03-1.49x),
 * called again and again (1.24-1.7x), and within 0.90-1.02x with oneDNN between the calls. */
int conv_stream_choice(const ridge_conv2d_plan *p, char *why, size_t why_len)
{
    const ridge_conv2d_desc *d = &p->d;
    const int dw = p->algo == RIDGE_CONV_DEPTHWISE;
    why[0] = 0;
    if (p->gemm_route || (p->algo != RIDGE_CONV_DIRECT && p->algo != RIDGE_CONV_POINTWISE && !dw))
        return CONV_STORES_CACHED;
    const double bytes =
        4.0 * (double)d->n * (double)(d->c_in * d->h * d->w + d->c_out * p->oh * p->ow);
    const ridge_cpu *cpu = ridge_cpu_get();
    const double l3 = (double)cpu->l3_usable;
    const int part = !dw ? 4 : ridge_cpu_vendor_is_intel(cpu->vendor) ? 2 : 1; /* L3 / part */
    const double limit = l3 / part;
    /* every 16-channel block a whole, aligned line: per group for direct and pointwise (the
     * AVX-512 stream instruction faults on a misaligned address), over all channels for the
     * depthwise 3x3 kernel */
    const int not3x3 = dw && (d->r != 3 || d->s != 3), wide = not3x3 && dw_wide_window(d);
    const char *no = p->stream < 0                 ? "opts.stream = -1"
                     : d->layout == RIDGE_NCHW     ? "NCHW"
                     : not3x3 && !wide             ? "not a depthwise 3x3 or wide window"
                     : dw ? (d->c_out % 16 ? "c_out not a multiple of 16" : NULL)
                     : p->cog % 16                 ? "c_out / groups not a multiple of 16"
                                                   : NULL;
    if (no) return snprintf(why, why_len, "%s", no), CONV_STORES_CACHED;
    /* the wide window's kernel (dw_row_wide) has no streamed stores: it prefetches instead */
    const int streamed = wide ? CONV_STORES_PREFETCHED : CONV_STORES_STREAMED;
    if (p->stream == 1) return snprintf(why, why_len, "opts.stream = 1"), streamed;
    if (d->layout != RIDGE_NHWC)
        return snprintf(why, why_len, "NCHW16c streams only with opts.stream = 1"),
               CONV_STORES_CACHED;
    snprintf(why, why_len, "x + y = %.1f MB, %s %sthe usable L3 (%.1f MB)", bytes / 1e6,
             bytes > limit ? "over" : "within",
             part == 1 ? "" : part == 2 ? "half " : "a quarter of ", limit / 1e6);
    if (bytes > limit) return streamed;
    return dw && 4 * bytes > l3 ? CONV_STORES_PREFETCHED : CONV_STORES_CACHED;
}

/* The plan's choice for this call: y must be 64-byte aligned too */
static int conv_streams(const ridge_conv2d_plan *p, const float *y)
{
    return p->stores == CONV_STORES_STREAMED && (uintptr_t)y % 64 == 0;
}

/* Depthwise rows (NHWC, NCHW16c) in chunks claimed from counters rather than one static block
 * per thread: a thread that starts late (a futex wake-up in a VM takes tens of microseconds,
 * a core shared with another process far longer) then takes fewer chunks instead of holding
 * up the whole call, which lasts only ~0.1 ms here. The rows are split into one share per
 * thread, each with its own counter: a thread claims the chunks of its own share first and
 * then helps with the others'. So when every thread is on time, each computes the same rows
 * as in the call before, whose input and output lines its own L2 still holds; with one
 * counter for all the rows, which thread took which chunk changed from call to call (Intel
 * Xeon, 2 threads, scripts/conv-ab.c: C=64 56x56 1.05-1.19x, at batch 8 1.27x, C=32 112x112
 * 1.12x, stride 2 1.15x, NCHW16c 1.19x). A helper takes a share whose thread has not started
 * from its start, as that thread would; a started share's rows one at a time from the far
 * end of its walk, where its own thread would come last (from_end in claim_from_shares), so
 * that the rows that change hands are the same few from call to call and each thread's
 * stream of rows is not broken. Taking the chunks next to the owner's instead moved rows
 * between the cores from call to call: from session 33 to 48, where x and y stay cached, a
 * helper left started shares alone (then C=32 112x112 ran 1.00-1.20x faster, C=32 56x56
 * 1.13-1.19x, C=64 56x56 0.97-0.98x). But on this VM one vCPU ran the same share 1.2-1.5x
 * slower than the other in some spells (the caller's thread done 10-14 us early at C 32 112
 * x 112, `ridge_profile_start` spans), and the call waited for it. Taking from the far end
 * against leaving alone (session 49, scripts/dw-ab.c, 2 threads, batch 1, 3x3): C 32 112 x
 * 112 1.03-1.06x, C 64 56 x 56 1.04-1.17x, C 128 56 x 56 1.03-1.06x, C 256 28 x 28
 * 1.05-1.19x, C 128 28 x 28 1.06-1.24x, C 256 14 x 14 1.25-1.28x, C 512 14 x 14 1.01-1.26x, C
 * 1024 7 x 7 0.95-1.00x (one chunk a share: nothing left to take), stride 2 0.98-1.23x, 5x5
 * 1.07x; against taking the next chunk (batch 8, the streamed and prefetched stores, where x
 * and y come from memory), about even: C 128 56 x 56 1.03-1.04x, C 64 56 x 56 0.99-1.06x, C 32
 * 112 x 112 0.96-1.04x, C 512 14 x 14 1.05x, stride 2 1.00-1.01x, 5x5 1.01x. The fused
 * separable block's threads claim its units the same way (scripts/separable-ab.c, 2 threads:
 * batch 1 1.01x, batch 8 1.00x). Each row is computed whole by one thread, so the result does
 * not depend on which thread took it. */
#define DW_MAX_SHARES 16

/* Walking apart (shares.apart): the even shares are handed out from their end and walked last row
 * first, so that neighbouring shares start at their common edge and walk away from each other.
 * Walked the same way, the second share's rows ran up to ~1.5x slower per row than the first's,
 * whichever thread ran them (dw_ring); we think each core's prefetcher, at the end of its share,
 * reads the lines of y the other core writes first, so that core waits for them back at its next
 * call (not measured: this VM has no counters). Walked apart in two chunks each, against 8 forward
 * chunks, 2 threads, batch 1 (session 47, scripts/dw-ab.c, medians of 9-11 blocks of 100 calls):
 * 3x3 C 32 28 x 28 2.23x, C 64 14 x 14 1.66x, C 128 28 x 28 1.48x, C 32 56 x 56 1.54x, C 256 14 x
 * 14 1.23x, C 128 56 x 56 1.13x, stride 2 1.02-1.12x, batch 2 1.52x, 5x5 and 7x7 1.08-1.31x. Not
 * where rows go several to a kernel call (C 64 56 x 56 ran 0.81x, C 48 80 x 80 0.89x), nor where a
 * share is taller than an image (batch 8 0.94-1.08x). In one chunk, not two, 1.01-1.11x faster
 * again, but a thread that starts late then leaves the other its whole share.
 *
 * [0, n) split into `count` contiguous shares (ridge_partition, one per thread, at most
 * DW_MAX_SHARES), each with its own counter, on its own line: how many items were taken from
 * the start of the share's walk and how many from its end (all 0 at the start: SHARES_INIT),
 * the walk's start being the share's end for a share walked backwards. */
typedef struct share_counter {
    /* a line of its own: its thread adds to it per chunk. Items taken from the share's walk
     * start (low 32 bits: its own thread, and helpers before it starts) and from its walk end
     * (high 32 bits: helpers after it started) */
    _Alignas(64) _Atomic uint64_t taken;
    _Atomic int started; /* the share's own thread has claimed from it */
} share_counter;
typedef struct shares {
    int count;
    int apart;        /* the even shares handed out from their end, to be walked backwards */
    share_counter s[DW_MAX_SHARES];
} shares;
#define SHARES_INIT(nth, apart) {(int)RIDGE_MIN((nth), DW_MAX_SHARES), (apart), {{0}}}
/* taken's unit at the end; two ends only for shares short enough that the start's count,
 * overshot by at most a chunk per thread, stays in its 32 bits */
#define SHARE_END_ONE ((uint64_t)1 << 32)
#define SHARE_TWO_ENDED_MAX (SHARE_END_ONE / (2 * DW_MAX_SHARES + 2))

typedef struct dw_job {
    const fwd *f;
    size_t n, chunk;
    shares sh;
} dw_job;

/* The next chunk [*b, *e) of [0, n) for thread ith: from its own share first, then from the
 * others' in turn (*q: how many shares it has used up, 0 at the start); from a share whose own
 * thread has started, one item at a time from the far end of its walk (from_end). *back: the
 * chunk is an even share's (apart), to be walked last item first. Returns 0 when none is left
 * to it. */
static int claim_from_shares(shares *sh, size_t n, size_t chunk, int ith, int *q, size_t *b,
                             size_t *e, int *back)
{
    for (; *q < sh->count; ++*q) {
        const int r = (ith + *q) % sh->count;
        size_t b0, e0;
        ridge_partition(n, 1, r, sh->count, &b0, &e0);
        const uint64_t len = e0 - b0;
        const int rev = sh->apart && r % 2 == 0; /* the share is walked last item first */
        const int two_ended = len <= SHARE_TWO_ENDED_MAX; /* else taken counts the start alone */
        int from_end = 0;
        if (*q == 0) {
            if (!atomic_load_explicit(&sh->s[r].started, memory_order_relaxed))
                atomic_store_explicit(&sh->s[r].started, 1, memory_order_relaxed);
        } else if (atomic_load_explicit(&sh->s[r].started, memory_order_relaxed)) {
            if (!two_ended) continue;
            from_end = 1;
        }
        /* one atomic word for both ends: each claim sees how many the other end took */
        const uint64_t old = atomic_fetch_add_explicit(
            &sh->s[r].taken, from_end ? SHARE_END_ONE : (uint64_t)chunk, memory_order_relaxed);
        const uint64_t f = two_ended ? old & (SHARE_END_ONE - 1) : old;
        const uint64_t t = two_ended ? old >> 32 : 0;
        if (f >= len || t >= len - f) continue; /* nothing left between the two ends */
        size_t s, l; /* items [s, s + l) in the share's walk order */
        if (from_end) s = (size_t)(len - t - 1), l = 1;
        else s = (size_t)f, l = (size_t)RIDGE_MIN((uint64_t)chunk, len - t - f);
        *back = rev;
        *b = rev ? e0 - s - l : b0 + s;
        *e = *b + l;
        return 1;
    }
    return 0;
}

long conv_shares_check_for_tests(size_t n, int nth, size_t chunk, int apart, int first,
                                 size_t *helped)
{
    shares sh = SHARES_INIT(nth, apart);
    unsigned char *seen = calloc(n ? n : 1, 1);
    if (!seen) return -1;
    int q[DW_MAX_SHARES] = {0}, back;
    size_t b, e;
    long bad = 0;
    *helped = 0;
    /* round 0: one claim each; 1: `first` until none is left to it; 2: the others */
    for (int round = 0; round < 3; round++)
        for (int t = 0; t < sh.count; t++) {
            if (round > 0 && (round == 1) != (t == first)) continue;
            while (claim_from_shares(&sh, n, chunk, t, &q[t], &b, &e, &back)) {
                size_t o0 = 0, o1 = 0; /* the share that holds item b */
                int r = 0;
                for (; r < sh.count; r++) {
                    ridge_partition(n, 1, r, sh.count, &o0, &o1);
                    if (b >= o0 && b < o1) break;
                }
                if (b >= e || e > o1) { /* empty, or across two shares */
                    bad++;
                    break;
                }
                if (round == 1 && r != t) *helped += e - b;
                for (size_t i = b; i < e; i++) seen[i]++;
                if (round == 0) break;
            }
        }
    for (size_t i = 0; i < n; i++) bad += seen[i] != 1;
    free(seen);
    return bad;
}

/* Rows in column segments (column_segments): unit u is segment u % cseg of row u / cseg,
 * split at multiples of DW_SEG_UNIT pixels. */
static void depthwise_segments(const fwd *f, size_t b0, size_t e0, int ith)
{
    fwd g = *f;
    for (size_t u = b0; u < e0; u++) {
        g.seg = u % g.cseg;
        depthwise_range(&g, u / g.cseg, u / g.cseg + 1, ith);
    }
}

static void depthwise_task(void *arg, int ith, int nth)
{
    dw_job *j = arg;
    (void)nth;
    int q = 0, back;
    size_t b, e;
    while (claim_from_shares(&j->sh, j->n, j->chunk, ith, &q, &b, &e, &back)) {
        if (j->f->cseg > 1) depthwise_segments(j->f, b, e, ith);
        else if (back) {
            fwd g = *j->f;
            g.back = 1;
            depthwise_range(&g, b, e, ith);
        } else depthwise_range((void *)j->f, b, e, ith);
    }
}

/* NCHW depthwise: one (image, channel, output row) per item, on the kernel's plane row
 * (vectors of output pixels, valid taps only at the borders: no padded copy here either). */
static void depthwise_nchw_range(void *arg, size_t b0, size_t e0, int ith)
{
    const fwd *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t OW = p->ow;
    conv_dwp_args a;
    a.xrs = d->dil_h * d->w;
    a.S = (int)d->s;
    a.dw = d->dil_w, a.pl = d->pad_left, a.sw = d->stride_w, a.iw = d->w;
    a.act = f->act;
    a.ow = OW;
    for (size_t it = b0; it < e0; it++) {
        int64_t oh = (int64_t)it % p->oh, nc = (int64_t)it / p->oh, c = nc % d->c_out;
        int64_t ih0 = oh * d->stride_h - d->pad_top;
        tap_range(ih0, d->h, d->dil_h, d->r, &a.r0, &a.r1);
        a.x = f->x + nc * d->h * d->w + ih0 * d->w;
        a.w = f->wp + c * d->r * d->s;
        a.y = f->y + nc * p->oh * OW + oh * OW;
        a.res = f->res ? f->res + nc * p->oh * OW + oh * OW : NULL;
        a.bias = f->bias[c];
        p->k->dwp_row(&a);
    }
}

/* ---- Winograd -------------------------------------------------------------------------------- */

/* The three steps of a block of nt tiles starting at tile t0, group g. V and M are the
 * block's [alpha^2][TB][cig] and [alpha^2][TB][cogp] planes. */
typedef struct wino_blk {
    const fwd *f;
    int64_t t0, nt, g;
    float *V, *M;
    int64_t TB; /* wino_tiles: V's and M's rows per transform point (computed once, not per
                 * tile: it was 2.5% of a call's samples) */
} wino_blk;

/* Transforms tile t0 + t's alpha x alpha patch (zeros outside the image) into V's row t. With
 * a group's channels contiguous (NHWC) the transform reads the patch from x in place, testing
 * each point against the image only on border tiles; otherwise the patch is gathered into
 * dbuf first. Read in place against gathered with memcpy, same bits (scripts/conv-ab.c and
 * convbwd-ab.c, Zen 5, both orders): forward 3x3 64 56 x 56 1.06-1.11x,
 * dx of 64 x 14 x 14 32 -> 64 1.03-1.24x on 1 and 2 threads, its dW 1.04-1.21x; testing every
 * point, also on interior tiles, had lost 1-5% on the forward (0.95-0.99). */
static void wino_gather(const wino_blk *b, int64_t t, float *dbuf)
{
    const ridge_conv2d_plan *p = b->f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int m = wino_m(p->algo), al = m + 2;
    const int64_t cig = p->cig, tw = (p->ow + m - 1) / m, tpi = (p->oh + m - 1) / m * tw;
    const ptrdiff_t *xco = p->xco + b->g * cig;
    const int xcontig = conv_runs_contiguous(xco, (int)cig, (int)cig);
    int64_t tt = b->t0 + t, n = tt / tpi, ty = tt % tpi / tw, tx = tt % tw;
    int64_t ih0 = ty * m - d->pad_top, iw0 = tx * m - d->pad_left;
    if (xcontig) { /* read in place */
        conv_patch pt;
        conv_patch_at(&pt, b->f->x, n * p->xv.sn + xco[0], p->xv.sh, p->xv.sw, ih0, iw0, d->h,
                      d->w, al);
        p->k->wino_in(m, &pt, cig, b->V + t * cig, b->TB * cig);
        return;
    }
    for (int i = 0; i < al; i++)
        for (int j = 0; j < al; j++) {
            float *dp = dbuf + (i * al + j) * cig;
            int64_t ih = ih0 + i, iw = iw0 + j;
            if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) {
                memset(dp, 0, (size_t)cig * sizeof(float));
                continue;
            }
            const float *x = b->f->x + n * p->xv.sn + ih * p->xv.sh + iw * p->xv.sw;
            for (int64_t c = 0; c < cig; c++) dp[c] = x[xco[c]];
        }
    const conv_patch pt = {dbuf, 0, al * cig, cig, 0, al, 0, al};
    p->k->wino_in(m, &pt, cig, b->V + t * cig, b->TB * cig);
}

/* M[xi][.][cob block] = V[xi] (nt x cig) * U[xi][g][cob] (cig x nr). */
static void wino_gemm(const wino_blk *b, int64_t xi, int64_t cob)
{
    const ridge_conv2d_plan *p = b->f->p;
    const int nr = p->k->nr;
    const int64_t cig = p->cig, cogp = p->ncob * nr, TB = b->TB;
    conv_row_args a = {0};
    a.xb = b->V + xi * TB * cig;
    a.xo = 0;
    a.xps = cig;
    a.roff = p->iota, a.soff = p->iota, a.coff = p->iota, a.cunit = 1;
    a.r0 = a.s0 = 0, a.r1 = a.s1 = a.S = 1;
    a.kc = cig;
    a.w = b->f->wp + ((xi * p->d.groups + b->g) * p->ncob + cob) * cig * nr;
    a.y = b->M + xi * TB * cogp;
    a.yo = cob * nr;
    a.yps = cogp;
    a.yco = p->iota;
    a.nco = nr;
    a.yfast = 1;
    a.bias = zeros;
    a.res = NULL;
    a.act = 0;
    a.npix = b->nt;
    /* a block's tiles depend on where a thread's share began: a lone last tile sums in one
     * chain, as in a full micro-tile, so 1 and 2 threads give the same bits */
    a.one_chain = 1;
    p->k->row(&a);
}

/* The output transform of tile t0 + t fused with bias, residual and activation; layouts whose
 * group channels are not contiguous go through O (m*m*cog floats) and an indexed store. */
static void wino_scatter(const wino_blk *b, int64_t t, float *O)
{
    const fwd *f = b->f;
    const ridge_conv2d_plan *p = f->p;
    const int m = wino_m(p->algo);
    const int64_t cog = p->cog, cogp = p->ncob * p->k->nr, TB = b->TB;
    const int64_t tw = (p->ow + m - 1) / m, tpi = (p->oh + m - 1) / m * tw;
    const ptrdiff_t *yco = p->yco + b->g * cog;
    const float *bias = f->bias + b->g * cogp;
    int64_t tt = b->t0 + t, n = tt / tpi, ty = tt % tpi / tw, tx = tt % tw;
    int mh = (int)RIDGE_MIN(m, p->oh - ty * m), mw = (int)RIDGE_MIN(m, p->ow - tx * m);
    ptrdiff_t o = n * p->yv.sn + ty * m * p->yv.sh + tx * m * p->yv.sw;
    if (conv_runs_contiguous(yco, (int)cog, (int)cog)) {
        p->k->wino_out(m, b->M + t * cogp, TB * cogp, cog, f->y, o + yco[0], p->yv.sh, p->yv.sw,
                       mh, mw, bias, f->res, f->act);
        return;
    }
    p->k->wino_out(m, b->M + t * cogp, TB * cogp, cog, O, 0, m * cog, cog, mh, mw, bias, NULL, 0);
    for (int i = 0; i < mh; i++)
        for (int j = 0; j < mw; j++) {
            ptrdiff_t oo = o + i * p->yv.sh + j * p->yv.sw;
            const float *op = O + (i * m + j) * cog;
            for (int64_t c = 0; c < cog; c++) {
                float v = op[c] + (f->res ? f->res[oo + yco[c]] : 0.0f);
                f->y[oo + yco[c]] = f->act && !(v > 0.0f) ? 0.0f : v;
            }
        }
}

/* Per-thread areas: dbuf [alpha^2][cig], V, M, O (see conv_algo_ws_per_thread). */
static void wino_areas(const fwd *f, int ith, float **dbuf, float **V, float **M, float **O)
{
    const ridge_conv2d_plan *p = f->p;
    const int m = wino_m(p->algo), A2 = (m + 2) * (m + 2);
    const int64_t TB = wino_tiles(p, m), cogp = p->ncob * p->k->nr;
    *dbuf = (float *)(f->ws + (size_t)ith * f->wstride);
    *V = *dbuf + A2 * p->cig;
    *M = *V + A2 * TB * p->cig;
    *O = *M + A2 * TB * cogp;
}

/* Many blocks: each thread runs blocks of TB tiles over its own contiguous range of tiles
 * [b0, e0) (an equal share, so no thread waits on a larger share of whole blocks), in its own
 * areas. A tile's result does not depend on the block it is computed in. */
static void winograd_range(void *arg, size_t b0, size_t e0, int ith)
{
    const fwd *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const int m = wino_m(p->algo), A2 = (m + 2) * (m + 2);
    const int64_t TB = wino_tiles(p, m);
    float *dbuf, *V, *M, *O;
    wino_areas(f, ith, &dbuf, &V, &M, &O);
    for (int64_t t0 = (int64_t)b0; t0 < (int64_t)e0; t0 += TB) {
        for (int64_t g = 0; g < p->d.groups; g++) {
            wino_blk b = {f, t0, RIDGE_MIN(TB, (int64_t)e0 - t0), g, V, M, TB};
            for (int64_t t = 0; t < b.nt; t++) wino_gather(&b, t, dbuf);
            for (int64_t xi = 0; xi < A2; xi++)
                for (int64_t cob = 0; cob < p->ncob; cob++) wino_gemm(&b, xi, cob);
            for (int64_t t = 0; t < b.nt; t++) wino_scatter(&b, t, O);
        }
    }
}

static void winograd_units(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    (void)b1, (void)e1;
    winograd_range(arg, b0, e0, ith);
}

/* Fewer blocks than threads and U past WINO_SHARED_U (batch-1 layers with 256 channels): the
 * threads share each block, step by step, in thread 0's V and M, splitting tiles, then
 * (plane, channel block) pairs, then tiles again; each streams only its share of U. */
static void wino_in_range(void *arg, size_t b, size_t e, int ith)
{
    const wino_blk *blk = arg;
    float *dbuf, *V, *M, *O;
    wino_areas(blk->f, ith, &dbuf, &V, &M, &O);
    for (size_t t = b; t < e; t++) wino_gather(blk, (int64_t)t, dbuf);
}

static void wino_gemm_range(void *arg, size_t b, size_t e, int ith)
{
    const wino_blk *blk = arg;
    const int64_t ncob = blk->f->p->ncob;
    for (size_t it = b; it < e; it++) wino_gemm(blk, (int64_t)it / ncob, (int64_t)it % ncob);
}

static void wino_out_range(void *arg, size_t b, size_t e, int ith)
{
    const wino_blk *blk = arg;
    float *dbuf, *V, *M, *O;
    wino_areas(blk->f, ith, &dbuf, &V, &M, &O);
    for (size_t t = b; t < e; t++) wino_scatter(blk, (int64_t)t, O);
}

#define WINO_SHARED_U 4194304.0 /* bytes of U past which few blocks are shared (above) */

static void winograd_forward(ridge_ctx *ctx, const fwd *f)
{
    const ridge_conv2d_plan *p = f->p;
    const int m = wino_m(p->algo), A2 = (m + 2) * (m + 2);
    const int64_t T = p->d.n * ((p->oh + m - 1) / m) * ((p->ow + m - 1) / m);
    const int64_t TB = wino_tiles(p, m), nblk = (T + TB - 1) / TB;
    const int threads = ridge_ctx_threads(ctx);
    /* with few blocks, each thread still takes whole blocks of its own tiles while every
     * thread streaming all of U costs less than the shared steps' three meetings per block:
     * on Zen 5, 2 threads, 3x3 128 on 28 x 28 (U 2.4 MB) 1.34-1.37x and fmnist-conv2 (0.3
     * MB) 1.51-1.61x this way, 3x3 256 on 14 x 14 (9.4 MB) 0.70x (on Zen 4, session 15,
     * fmnist-conv2 had lost 0.92-0.99x) */
    const double u_bytes = 4.0 * A2 * p->cig * p->ncob * p->k->nr * p->d.groups;
    if (nblk >= 2 * threads || threads == 1 || u_bytes <= WINO_SHARED_U) {
        /* claimed in units of a block (fewer tiles when there are fewer blocks than threads),
         * not split into one static range per thread, so that a worker that wakes late costs
         * its share only, not the whole call's wait for it (Intel Xeon, 2 threads, `ridge bench
         * conv --peers --batch 8`: fmnist-conv2 ran at its 1-thread time with the split) */
        const int64_t unit = RIDGE_MIN(TB, (T + threads - 1) / threads);
        ridge_parallel_for_2d_dynamic(ctx, (size_t)T, 1, (size_t)unit, 1, winograd_units,
                                      (void *)f);
        return;
    }
    float *dbuf, *V, *M, *O;
    wino_areas(f, 0, &dbuf, &V, &M, &O);
    for (int64_t blk = 0; blk < nblk; blk++)
        for (int64_t g = 0; g < p->d.groups; g++) {
            wino_blk b = {f, blk * TB, RIDGE_MIN(TB, T - blk * TB), g, V, M, TB};
            ridge_parallel_for(ctx, (size_t)b.nt, 1, wino_in_range, &b);
            ridge_parallel_for(ctx, (size_t)(A2 * p->ncob), 1, wino_gemm_range, &b);
            ridge_parallel_for(ctx, (size_t)b.nt, 1, wino_out_range, &b);
        }
}

/* ---- the fused depthwise-separable block ---------------------------------------------------- */

/* The workspace's strip: rows x ow x c floats, ~256 KiB, within the L2. */
int64_t conv_separable_strip_rows(const ridge_conv2d_plan *dw)
{
    int64_t rows = 65536 / (dw->ow * dw->d.c_out);
    return RIDGE_MAX(1, RIDGE_MIN(rows, dw->oh));
}

typedef struct sep_job {
    const ridge_conv2d_plan *dw, *pw;
    const float *x, *dw_bias, *pw_bias, *res;
    float *y, *strip;
    int dw_act, pw_act;
    int dw_pf, pw_nt;   /* the plans' store choices: x prefetched, y streamed */
    int64_t sub, units; /* rows per unit, units per image */
    shares sh;          /* the units' shares (dw_job) */
} sep_job;

/* Each thread takes units (an image's next sub output rows) and runs both steps on its own
 * share of the strip: the depthwise rows into it, then the pointwise product out of it, while
 * it is still in this core's L2. No barrier between the steps and no line of the intermediate
 * crosses to the other core. (Before, the threads split each strip's depthwise rows, met,
 * then split its pointwise pixels, met again: on 2 threads the fused block ran 0.82-0.95x the
 * two separate calls.) The units are claimed as the depthwise rows are (dw_job): one share
 * per thread, its own first, so that a thread reads the same part of x as in the call before
 * (1.035-1.075x on 2 threads, scripts/separable-ab.c, Intel Xeon). */
static void separable_task(void *arg, int ith, int nth)
{
    sep_job *j = arg;
    const ridge_conv2d_plan *dw = j->dw, *pw = j->pw;
    (void)nth;
    float *strip = j->strip + (size_t)ith * (size_t)(j->sub * dw->ow * dw->d.c_out);
    const size_t total = (size_t)(dw->d.n * j->units);
    int q = 0, back;
    size_t u, end;
    while (claim_from_shares(&j->sh, total, 1, ith, &q, &u, &end, &back)) {
        int64_t n = (int64_t)u / j->units, oh0 = (int64_t)u % j->units * j->sub;
        int64_t nr = RIDGE_MIN(j->sub, dw->oh - oh0), np = nr * dw->ow;
        fwd f = {dw, dw->wp, j->x, strip, j->dw_bias, NULL, j->dw_act, NULL,
                 (size_t)(n * dw->oh + oh0), n * dw->yv.sn + oh0 * dw->yv.sh, 0, 0, j->dw_pf,
                 0, 0, 0, 0, 0};
        depthwise_range(&f, 0, (size_t)nr, ith);
        /* the strip is one image of np pixels; y's rows start at (n, oh0) */
        fwd g = {pw, pw->wp, strip, j->y, j->pw_bias, j->res, j->pw_act, NULL, 0,
                 -(n * pw->yv.sn + oh0 * pw->yv.sh), np, j->pw_nt, 0, 0, 0, 0, 0, 0};
        pointwise_range(&g, 0, (size_t)((np + PW_BLOCK - 1) / PW_BLOCK), 0, (size_t)pw->ncob,
                        ith);
    }
}

void conv_separable_forward(ridge_ctx *ctx, const ridge_conv2d_plan *dw,
                            const ridge_conv2d_plan *pw, const float *x, float *y,
                            const float *dw_bias, int dw_act, const float *pw_bias, int pw_act,
                            const float *res, float *strip)
{
    const int64_t rows = conv_separable_strip_rows(dw), oh = dw->oh;
    const int nth = (int)RIDGE_MIN((int64_t)ridge_ctx_threads(ctx), rows);
    /* units of at most rows / nth rows (each thread's share of the strip), as many per image
     * as a multiple of nth where the image is tall enough, so one image splits evenly (56
     * rows, 2 threads: 8 units of 7 rows, where 9-row units made 7, 4 against 3) */
    int64_t units = (oh + rows / nth - 1) / (rows / nth);
    if (oh >= (int64_t)nth * ((units + nth - 1) / nth)) units = (units + nth - 1) / nth * nth;
    const int64_t sub = (oh + units - 1) / units;
    /* past the cache (batch 8 at 64 x 56 x 56: x and y 6.4 MB each) the depthwise step
     * prefetches x and the pointwise step streams y where the two plans would alone; the
     * strip between them stays cached */
    sep_job j = {dw, pw, x, dw_bias, pw_bias, res, y, strip, dw_act, pw_act,
                 dw->stores != CONV_STORES_CACHED, conv_streams(pw, y), sub, (oh + sub - 1) / sub,
                 SHARES_INIT(nth, 0)};
    if (nth == 1) separable_task(&j, 0, 1);
    else ridge_parallel_run(ctx, nth, separable_task, &j);
}

/* ---- dispatch -------------------------------------------------------------------------------- */

#define DIRECT_GUIDED_MIN_FLOP 2e7 /* per thread */
/* Below this many FLOPs per thread a second thread costs more than it saves: this VM's
 * fork-join round trip is about 1 us (bench pool), and the worker starts with cold caches.
 * fmnist-conv1 (0.45 MFLOP) ran 3 us on 1 thread and 5 us on 2; fmnist-conv2 (7.2 MFLOP)
 * 21 us on 1 and 19-20 on 2 (scripts/conv-ab-threads.c); fmnist-conv1 at batch 8 (3.6
 * MFLOP), called back to back, 0.026 ms on 1 thread (0.84 of oneDNN on 2) and 0.020-0.023
 * on 2 (`bench conv --peers --threads 2 --batch 8`). */
#define DIRECT_MIN_FLOP_PER_THREAD 1e6

/* Depthwise NHWC and NCHW16c: threads for at least DW_MIN_BYTES_PER_THREAD of x + y each.
 * Smaller layers ran slower on 2 threads than on 1, a second thread's wake-up and its share's
 * cold start costing more than its half of the rows saved (session 49, 1 and 2-thread
 * contexts in turn, medians of 41 x 100 calls, 3x3, 2 threads against 1, x + y in
 * brackets): C 64 14 x 14 (100 KB) 0.44-0.50x, C 16 28 x 28 and C 256 7 x 7 (100 KB) 0.50x,
 * C 32 28 x 28 (200 KB) 0.62-1.05x, C 128 14 x 14 (200 KB) 0.68x, C 512 7 x 7 (200 KB)
 * 0.63-0.69x, C 64 20 x 20 (205 KB) 0.92x, stride 2 C 32 28 x 28 and C 128 14 x 14 (125 KB)
 * 0.45-0.53x; but C 96 20 x 20 (307 KB) 1.07x, C 64 28 x 28 (400 KB) 0.87-1.35x, C 256 14 x
 * 14 (400 KB) 1.46x, C 1024 7 x 7 (400 KB) 1.25x, stride 2 C 512 14 x 14 (500 KB) 1.10x. */
#define DW_MIN_BYTES_PER_THREAD (128.0 * 1024)
static double dw_min_bytes = DW_MIN_BYTES_PER_THREAD;

void conv_set_dw_min_bytes_for_tests(double bytes)
{
    dw_min_bytes = bytes < 0 ? DW_MIN_BYTES_PER_THREAD : bytes;
}

static int dw_threads(const ridge_ctx *ctx, const ridge_conv2d_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    const double bytes = sizeof(float) * (double)d->n *
                         (double)(d->c_in * d->h * d->w + d->c_out * p->oh * p->ow);
    const double most = dw_min_bytes > 0 ? bytes / dw_min_bytes : INFINITY;
    const int t = ridge_ctx_threads(ctx);
    return most < 1 ? 1 : most < t ? (int)most : t;
}

ridge_status conv_algo_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *wp,
                               const float *x, float *y, const float *bias, const float *ubias,
                               int act, const float *res, char *ws)
{
    if (p->gemm_route) return gemm_forward(ctx, p, x, y, ubias, act, res, ws);
    fwd f = {p, wp ? wp : p->wp, x, y, bias, res, act, ws, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    f.wstride = conv_area_stride(p->ws_per_thread, ridge_ctx_threads(ctx));
    const ridge_conv2d_desc *d = &p->d;
    const size_t ncb = (size_t)(d->groups * p->ncob);
    switch (p->algo) {
    case RIDGE_CONV_DIRECT: {
        f.nt = conv_streams(p, y);
        const double flop = ridge_conv2d_flops(d); /* validates d: once per call */
        const size_t rows = (size_t)(d->n * p->oh);
        /* output rows handed out guided, one row the unit: a static half each ended with one
         * thread waiting on the other whenever a vCPU ran its half 5-15% slower, as this VM's
         * do at random (the first 7x7 layer at 2 threads 1.01-1.05x; units of 6 rows, the
         * row groups' height, ended up to 6 rows apart and gained nothing). Not for small
         * layers, whose short chunks cut their border columns' vertical runs (fmnist-conv2,
         * 7 MFLOP: best 0.032-0.034 ms guided, 0.029-0.031 static) */
        int64_t lo, hin;
        direct_columns(p, &lo, &hin, NULL);
        const int alone = flop < 2 * DIRECT_MIN_FLOP_PER_THREAD;
        f.cseg = alone ? 1
                       : column_segments(rows * ncb, hin - lo, DIRECT_SEG_UNIT,
                                         ridge_ctx_threads(ctx));
        if (alone) direct_range(&f, 0, rows, 0, ncb, 0);
        else if (f.cseg > 1)
            ridge_parallel_for_2d_dynamic(ctx, rows * f.cseg, ncb, 1, 1, direct_segments, &f);
        else if (flop < DIRECT_GUIDED_MIN_FLOP * ridge_ctx_threads(ctx))
            ridge_parallel_for_2d(ctx, rows, ncb, 1, 1, direct_range, &f);
        else ridge_parallel_for_2d_dynamic(ctx, rows, ncb, 1, 1, direct_range, &f);
        break;
    }
    case RIDGE_CONV_POINTWISE: {
        f.nt = conv_streams(p, y);
        const int64_t hw = p->oh * p->ow;
        /* Small layers: one contiguous share of pixels per thread, in micro-tile units, so
         * each thread finds the x and y lines of its pixels in its own core's L2 on the next
         * call, as direct does below DIRECT_GUIDED_MIN_FLOP. Against blocks of PW_BLOCK pixels
         * handed out guided (which varies the thread a block goes to), `ridge bench conv
         * --peers --threads 2 --filter resnet-1x1`, the two builds in turn, three runs each
         * (Zen 5, session 52), 64 -> 64 on 56 x 56: 0.069, 0.070, 0.065 ms against 0.069,
         * 0.075, 0.072 (with a static split in whole blocks: 0.058-0.061 against 0.062-0.063).
         * Larger ones: guided blocks (a static split of 33 blocks ended 17 against 16: 1.02-1.03x
         * guided at 2 threads, session 9). */
        if (ridge_conv2d_flops(d) < DIRECT_GUIDED_MIN_FLOP * ridge_ctx_threads(ctx)) {
            const int64_t units = (hw + p->k->mr - 1) / p->k->mr;
            ridge_parallel_for(ctx, (size_t)(d->n * units), 1, pointwise_units, &f);
        } else {
            const size_t nblk = (size_t)((hw + PW_BLOCK - 1) / PW_BLOCK);
            ridge_parallel_for_2d_dynamic(ctx, (size_t)d->n * nblk, ncb, 1, 1, pointwise_range,
                                          &f);
        }
        break;
    }
    case RIDGE_CONV_IM2COL: {
        int64_t P = im2col_strip(p);
        size_t ns = (size_t)((p->oh * p->ow + P - 1) / P);
        ridge_parallel_for_2d(ctx, (size_t)d->n * ns, (size_t)d->groups, 1, 1, im2col_range, &f);
        break;
    }
    case RIDGE_CONV_DEPTHWISE:
        if (d->layout == RIDGE_NCHW)
            ridge_parallel_for(ctx, (size_t)(d->n * d->c_out * p->oh), 1, depthwise_nchw_range,
                               &f);
        else {
            const int nthr = dw_threads(ctx, p);
            f.cseg = column_segments((size_t)(d->n * p->oh), p->ow, DW_SEG_UNIT, nthr);
            const size_t units = (size_t)(d->n * p->oh) * f.cseg; /* rows or segments */
            const int nth = (int)RIDGE_MIN((size_t)nthr, units);
            f.nt = conv_streams(p, y);
            f.pf = p->stores == CONV_STORES_PREFETCHED;
            if (ws && !f.nt && !f.pf && f.cseg <= 1)
                f.ring = dw_ring_width(p, d->n * p->oh, nth);
            for (int t = 0; f.ring && t < nth; t++) /* no input row in any ring yet */
                for (int k = 0; k < DW_RING_ROWS; k++)
                    ((int64_t *)(ws + (size_t)t * f.wstride))[k] = -1;
            /* slabs: one block of rows per thread. Shares walk apart (shares.apart) where they
             * are at most an image tall, y stays cached and each call runs one row. */
            const int blocks = f.ring && f.ring < d->c_in;
            const size_t share = (units + nth - 1) / nth;
            const int apart = !f.nt && !f.pf && f.cseg <= 1 && (int64_t)share <= p->oh &&
                              dw_rows_max(p, f.ring) == 1;
            const size_t chunk = blocks  ? share
                                 : apart ? (share + 1) / 2
                                         : RIDGE_MAX(units / (8 * (size_t)nth), 1);
            dw_job j = {&f, units, chunk, SHARES_INIT(nth, apart)};
            if (nth > 1) ridge_parallel_run(ctx, nth, depthwise_task, &j);
            else depthwise_range(&f, 0, units, 0); /* cseg 1: one thread, whole rows */
        }
        break;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3: winograd_forward(ctx, &f); break;
    case RIDGE_CONV_FFT: conv_fft_forward(ctx, p, x, y, bias, act, res, ws); break;
    default: break;
    }
    return RIDGE_OK;
}
