/* Convolution backward: the plan (phase tables, segments, channel runs), the entry points and
 * the fast passes, all on the forward's per-ISA kernels.
 *
 *   dx, direct   dx[ih][iw][ci] = sum_{co, r, s} dy[oh][ow][co] w[co][ci][r][s] over the taps
 *                with ih + pad_top = oh*sh + r*dh (likewise columns). Per dx row, the stride
 *                phase a = (ih + pad_top) mod sh decides which kernel rows can reach it (those
 *                with r*dh = a mod sh), and consecutive such taps are (dh/gcd) dy rows apart:
 *                the phase's tap list with negative dy offsets replaces the rotated kernel,
 *                and the saturating range of taps whose dy row exists replaces the zero-padded
 *                dy. Columns likewise: the pixels of one column phase are sw apart in dx and
 *                1 apart in dy, so a run of them that shares its valid taps (a segment,
 *                precomputed per phase) is one call of the 6xNR micro-kernel, rows = dx
 *                pixels, NR = input channels, reduction = (valid taps) x (group's c_out). The
 *                weights are packed per call into [g][ci block][phase pair][taps][co][NR];
 *                nothing else is copied. Split over (dx rows) x (ci blocks): disjoint outputs.
 *   dx, depthwise  stride 1, dilation 1, padding below the window: the forward depthwise
 *                kernel on dy with the window turned by 180 degrees and padding R - 1 - pad
 *                (dx_fwd, as Winograd's); otherwise the same phases and segments as direct on
 *                the depthwise row kernel (NHWC, NCHW16c).
 *   dx, winograd   3x3 stride 1: the forward's Winograd plan on dy with the kernel rotated and
 *                transposed (the rotation folded into its weight transform), padding 2 - pad.
 *                The plan is made once with the backward plan; each call only transforms the
 *                weights (they change every step) into the workspace.
 *   dx, im2col   NHWC: SGEMM dcol = dy W per chunk of images, then a col2im gather per dx row.
 *   dw, direct   per (group, co block of NR, tap (r, s)) work item, the micro-kernel with the
 *                group's input channels as its "pixels" (x read in place, a uniform-stride run
 *                at a time) and the tap's valid output pixels as the reduction (rows [oh_lo,
 *                oh_hi) x columns [ow_lo, ow_hi), dy packed once into [g][cob][n][oh*ow][NR]).
 *                The reduction is cut into chunks of a few output rows, each accumulated onto
 *                the previous through the kernel's residual input, so the dy chunk stays in
 *                L1 and the x rows in L2 across the channel tiles. Items are disjoint outputs:
 *                no reduction across threads at all, so the bits do not depend on the thread
 *                count.
 *   dw, direct on NHWC  per (co block, tap) item, the dwt tile: MR input channels (x
 *                broadcasts, in place) x NR output channels (dy vectors, from the same packed
 *                dy: a block's pixels 64 bytes apart stream through L1 better than dy rows of
 *                c_out floats: 3x3 at 64/128/256 channels 2.9/3.4/3.6 ms in place, 2.6/2.7/2.9
 *                packed), the tap's valid output pixels as the reduction. Images and chunks of
 *                output rows outermost, so a chunk's dy and x rows stay in L2 while all of a
 *                thread's items pass over them. (x packed per channel tile measured no
 *                faster.)
 *   dw, winograd   3x3 stride 1, NHWC, groups 1: F(4x4, 3x3) transposed (see dw_winograd):
 *                per chunk of tiles the input and dy transforms, then per transform point a
 *                c_in x c_out GEMM over the tiles on the dwt tile, then dW = G^T M G.
 *   dw, im2col   NHWC: lowering of ~4 MiB chunks of images, dW = dy^T col by SGEMM (dy read
 *                in place), chunks added in order.
 *   dw, depthwise  per 16-channel block, the ISA's dwgrad kernel: every tap's sums in
 *                registers, one window row over one output row at a time (dy and x read from
 *                L1 by the row's taps), db in the same pass; windows up to 7 x 7 whose block
 *                is whole in x (NHWC, NCHW16c), else scalar loops per tap.
 *   db           fp64 sums (direct: while packing dy, per channel block; im2col: float sums
 *                of 64 pixels added in double; depthwise: each row's float sum, then the
 *                rows', in dwgrad, or fp64 per channel). */
#include <string.h>

#include "conv/conv-backward.h"
#include "ridge/gemm.h"

static const float zeros[64];

/* ---- small helpers --------------------------------------------------------------------------- */

/* Valid taps [*k0, *k1) of a window starting at `start` (possibly negative) over an input of n
 * with dilation dil: 0 <= start + k*dil < n. */
static void tap_range(int64_t start, int64_t n, int64_t dil, int64_t K, int *k0, int *k1)
{
    int64_t lo = start >= 0 ? 0 : (-start + dil - 1) / dil;
    int64_t hi = start > n - 1 ? 0 : (n - 1 - start) / dil + 1;
    hi = RIDGE_MIN(hi, K);
    lo = RIDGE_MIN(lo, K);
    *k0 = (int)lo;
    *k1 = (int)RIDGE_MAX(hi, lo);
}

static size_t round_bytes(size_t floats)
{
    return (floats * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
}

/* For dx position `pos` (ih or iw) of phase taps tap[0..nt) (stride st, dilation dil, padding
 * pad, dy extent n): the dy index of tap 0 (*o0) and the taps [*k0, *k1) whose dy index
 * o0 - (tap[k] - tap[0]) * dil / st lies in [0, n). */
static void phase_range(int64_t pos, int64_t pad, int64_t st, int64_t dil, const int64_t *tap,
                        int nt, int64_t n, int64_t *o0, int *k0, int *k1)
{
    *k0 = *k1 = 0;
    *o0 = 0;
    if (nt == 0) return;
    *o0 = (pos + pad - tap[0] * dil) / st; /* exact: tap[0] is in this position's phase */
    int lo = nt, hi = 0;
    for (int k = 0; k < nt; k++) {
        int64_t o = *o0 - (tap[k] - tap[0]) * dil / st;
        if (o >= 0 && o < n) {
            if (k < lo) lo = k;
            hi = k + 1;
        }
    }
    if (lo < hi) *k0 = lo, *k1 = hi;
}

/* dw im2col: images lowered per SGEMM, so the lowered chunk stays near 4 MiB */
static int64_t im2col_images(const ridge_conv2d_bwd_plan *p)
{
    int64_t per = p->oh * p->ow * p->d.c_in * p->d.r * p->d.s;
    return RIDGE_MAX(1, RIDGE_MIN(p->d.n, (1 << 20) / per));
}

/* ---- plan ------------------------------------------------------------------------------------ */

void ridge_conv2d_bwd_options_init(ridge_conv2d_bwd_options *o)
{
    o->data_algo = RIDGE_CONV_AUTO;
    o->weights_algo = RIDGE_CONV_AUTO;
}

/* dw by Winograd F(4x4, 3x3) (see dw_winograd): NHWC, 3x3, stride 1, dilation 1, groups 1 */
static int wdw_applies(const ridge_conv2d_desc *d)
{
    return d->layout == RIDGE_NHWC && d->r == 3 && d->s == 3 && d->stride_h == 1 &&
           d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 && d->groups == 1;
}

/* dw Winograd: tiles per chunk, so V and Q (36 x tiles x channels each) stay near 1 MiB
 * together (measured on 3x3 64->64 56x56: 1.1 ms at 1 MiB, 1.2 at 512 KiB, 1.6 at 4 MiB), the
 * chunks of equal size */
static int64_t wdw_tiles_per_chunk(const ridge_conv2d_bwd_plan *p)
{
    const int64_t T = p->d.n * ((p->oh + 3) / 4) * ((p->ow + 3) / 4);
    const int64_t cogp = p->ncob * p->k->nr;
    const int64_t most = RIDGE_MAX(16, (1 << 18) / (36 * (p->cig + cogp)));
    const int64_t chunks = (T + most - 1) / most;
    return (T + chunks - 1) / chunks;
}

/* dw Winograd: the partial sums of M, each over every other chunk (see dw_winograd): two,
 * unless there is one chunk or M is past 1 MiB, where each thread's passes over a whole M of
 * its own cost more than the transforms crossing between the cores (Zen 5: 3x3 128 -> 128
 * 28 x 28, M 2.4 MB, 1 thread 0.90-0.95x; 2 threads 1.17x at batch 8 but 0.74x at batch 1,
 * two chunks; 256 -> 256 14 x 14 batch 16, M 9.4 MB, 0.55x and 0.85x). A constant, not the
 * L2's size, so that the sums depend on the shape only. */
#define WDW_PARTS_MAX_M_BYTES (1024.0 * 1024)
static int wdw_parts(const ridge_conv2d_bwd_plan *p)
{
    const int64_t T = p->d.n * ((p->oh + 3) / 4) * ((p->ow + 3) / 4);
    const double m_bytes = 36.0 * (double)(p->ncob * p->k->nr) * (double)p->cig * sizeof(float);
    return T > wdw_tiles_per_chunk(p) && m_bytes <= WDW_PARTS_MAX_M_BYTES ? 2 : 1;
}

/* dw Winograd: the bytes of one part's V, Q and M (the input transform reads x in place) */
static size_t wdw_part_bytes(const ridge_conv2d_bwd_plan *p)
{
    const int64_t TB = wdw_tiles_per_chunk(p), nr = p->k->nr, cogp = p->ncob * nr;
    return round_bytes((size_t)(36 * TB * p->cig)) + round_bytes((size_t)(36 * TB * cogp)) +
           round_bytes((size_t)(36 * p->ncob * p->cig * nr));
}

/* the parts conv_area_stride apart where each runs on its own thread */
static size_t wdw_part_stride(const ridge_conv2d_bwd_plan *p)
{
    return conv_area_stride(wdw_part_bytes(p), RIDGE_MIN(wdw_parts(p), p->threads));
}

static size_t wdw_ws(const ridge_conv2d_bwd_plan *p)
{
    return (size_t)(wdw_parts(p) - 1) * wdw_part_stride(p) + wdw_part_bytes(p);
}

/* dw direct by the dwtaps tile: a thin layer (1-2 input channels per group, groups 1) in
 * NHWC whose output channels fill whole NR blocks (the tile reads dy in place, unmasked).
 * nr: the kernel's block. */
static int dw_taps_applies(const ridge_conv2d_desc *d, int nr)
{
    return d->layout == RIDGE_NHWC && d->groups == 1 && d->c_in <= 2 && d->c_out % nr == 0;
}

/* Floats of one zero-padded image of dw_taps. */
static size_t dw_taps_img(const ridge_conv2d_bwd_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    return (size_t)((d->h + d->pad_top + d->pad_bottom) * (d->w + d->pad_left + d->pad_right) *
                    p->cig);
}

/* dw_taps's workspace: per thread a zero-padded image, then the chunks' partial sums
 * [chunk][cob][T NR + NR] (T = cig R S; the last NR: db). */
static size_t dw_taps_ws(const ridge_conv2d_bwd_plan *p, int threads)
{
    const ridge_conv2d_desc *d = &p->d;
    const size_t img = dw_taps_img(p);
    const size_t part =
        (size_t)(p->dw_chunks * p->ncob * (p->cig * d->r * d->s + 1) * p->k->nr);
    return (size_t)threads * round_bytes(img) + round_bytes(part);
}

static ridge_status bwd_algo_check(const ridge_conv2d_desc *d, ridge_conv_algo a,
                                   ridge_conv_algo *out, const char *which)
{
    int dw = d->groups == d->c_in && d->groups == d->c_out;
    int dw_layout = d->layout != RIDGE_NCHW;
    const int weights = !strcmp(which, "weights");
    if (a == RIDGE_CONV_AUTO) {
        /* what `ridge bench convbwd` measured faster: Winograd F(4x4, 3x3) where it applies,
         * the channels fill its GEMMs and there are at least 32 output tiles (its per-call
         * transforms of weights or of dW's accumulator cost 36 c_in c_out each, paid back
         * per tile: on 3x3 256->256 14x14, 16 tiles, it took 1.5-1.8x direct's time), dw
         * only on NHWC with groups 1; else direct (on NHWC, dw direct's tile beat or matched
         * im2col + SGEMM on the other benchmark shapes but 3x3 stride 2, 64 -> 128, within
         * 5-9%) */
        const int64_t tiles = d->n * ((d->h + d->pad_top + d->pad_bottom - 2 + 3) / 4) *
                              ((d->w + d->pad_left + d->pad_right - 2 + 3) / 4);
        const int wino = d->r == 3 && d->s == 3 && d->stride_h == 1 && d->stride_w == 1 &&
                         d->dil_h == 1 && d->dil_w == 1 && d->pad_top <= 2 &&
                         d->pad_bottom <= 2 && d->pad_left <= 2 && d->pad_right <= 2 &&
                         d->c_in / d->groups >= 8 && d->c_out / d->groups >= 8 && tiles >= 32;
        /* dx with fewer than 16 input channels per group on NHWC: im2col's GEMM then col2im.
         * The direct and Winograd dx tiles vectorize over dx's channels, c_in, so they fill
         * 1-12 of 16 lanes (3x3 c_in -> 64 at 56 x 56, batch 16, 1 thread: c_in 1-12 ran
         * 1.7-3.5x faster on im2col than direct, 8-12 2.2-2.5x than Winograd; c_in 16
         * direct 1.4x slower but Winograd 1.5x faster, c_in 24 even, 32 direct 1.08x faster;
         * the 7x7 first layer 2.3-3.0x; docs/PERFORMANCE.md, session 38) */
        const int thin_dx = !weights && d->layout == RIDGE_NHWC && d->c_in / d->groups < 16;
        /* dw on NHWC with 1 or 2 input channels per group (the dwt tile would fill 1-2 of its
         * 6 rows; the CNN's first layer, 1 -> 32 channels 28x28 batch 64: im2col 2.4 against
         * direct 2.9 ms) or a 1x1 kernel (9x fewer FLOPs per dy byte, so packing dy shows:
         * 64 -> 64 56x56: im2col 0.42 against 0.55 ms): im2col + SGEMM */
        const int thin = weights && d->layout == RIDGE_NHWC &&
                         (d->c_in / d->groups <= 2 || d->r * d->s == 1);
        /* ... unless the dwtaps tile takes it (1-2 input channels, output channels in
         * blocks of 32, the widest NR): on the CNN's first layer it ran 4-5x im2col's speed
         * (docs/PERFORMANCE.md, session 15) */
        *out = dw && dw_layout                       ? RIDGE_CONV_DEPTHWISE
               : thin_dx                              ? RIDGE_CONV_IM2COL
               : wino && (!weights || wdw_applies(d)) ? RIDGE_CONV_WINOGRAD_4X3
               : thin && !dw_taps_applies(d, 32)      ? RIDGE_CONV_IM2COL
                                                     : RIDGE_CONV_DIRECT;
        return RIDGE_OK;
    }
    if (a == RIDGE_CONV_IM2COL) {
        if (d->layout != RIDGE_NHWC)
            return ridge_error(RIDGE_EUNSUPPORTED, "conv2d backward %s: im2col needs layout "
                               "nhwc (dy read as a pixels x channels matrix)", which);
        *out = a;
        return RIDGE_OK;
    }
    if (a == RIDGE_CONV_REF || a == RIDGE_CONV_DIRECT) {
        *out = a;
        return RIDGE_OK;
    }
    if (a == RIDGE_CONV_WINOGRAD_4X3 && weights) {
        if (!wdw_applies(d))
            return ridge_error(RIDGE_EUNSUPPORTED, "conv2d backward weights: winograd-4x3 needs "
                               "a 3x3 kernel, stride 1, dilation 1, groups 1 and layout nhwc");
        *out = a;
        return RIDGE_OK;
    }
    if ((a == RIDGE_CONV_WINOGRAD_2X3 || a == RIDGE_CONV_WINOGRAD_4X3) && !weights) {
        if (d->r != 3 || d->s != 3 || d->stride_h != 1 || d->stride_w != 1 || d->dil_h != 1 ||
            d->dil_w != 1 || d->pad_top > 2 || d->pad_bottom > 2 || d->pad_left > 2 ||
            d->pad_right > 2)
            return ridge_error(RIDGE_EUNSUPPORTED, "conv2d backward data: %s needs a 3x3 kernel, "
                               "stride 1, dilation 1 and padding <= 2", ridge_conv_algo_name(a));
        *out = a;
        return RIDGE_OK;
    }
    if (a == RIDGE_CONV_DEPTHWISE) {
        if (!dw)
            return ridge_error(RIDGE_EUNSUPPORTED,
                               "conv2d backward %s: depthwise needs groups = c_in = c_out (got "
                               "%lld, %lld, %lld)", which, (long long)d->groups,
                               (long long)d->c_in, (long long)d->c_out);
        if (!dw_layout)
            return ridge_error(RIDGE_EUNSUPPORTED,
                               "conv2d backward %s: depthwise needs layout nhwc or nchw16c",
                               which);
        *out = a;
        return RIDGE_OK;
    }
    if (a > RIDGE_CONV_AUTO && a < RIDGE_CONV_ALGO_COUNT)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "conv2d backward %s: algorithm %s has no backward "
                           "pass (use direct, im2col, depthwise or ref; winograd-2x3/4x3 for "
                           "data, winograd-4x3 for weights)",
                           which, ridge_conv_algo_name(a));
    return ridge_error(RIDGE_EINVAL, "conv2d backward %s: algo = %d is not a ridge_conv_algo",
                       which, (int)a);
}

void ridge_conv2d_bwd_plan_destroy(ridge_conv2d_bwd_plan *p)
{
    if (!p) return;
    ridge_free(p->xco);
    ridge_free(p->yco);
    ridge_free(p->iota);
    ridge_free(p->dx_yfast);
    ridge_free(p->rtap);
    ridge_free(p->stap);
    ridge_free(p->rph);
    ridge_free(p->sph);
    ridge_free(p->roff);
    ridge_free(p->soff);
    ridge_free(p->wph);
    ridge_free(p->seg);
    ridge_free(p->segph);
    ridge_free(p->runs);
    ridge_free(p->dw_roff);
    ridge_free(p->dw_soff);
    ridge_free(p->dw_toff);
    ridge_conv2d_plan_destroy(p->dx_fwd);
    ridge_free(p);
}

/* Orders taps 0..K-1 by stride phase (tap*dil mod st) into tap[], with phase starts ph[0..st]
 * and dy offsets relative to each phase's first tap (unit: one dy row/column = step). */
static void build_phases(int64_t K, int64_t st, int64_t dil, ptrdiff_t step, int64_t *tap,
                         int *ph, ptrdiff_t *off)
{
    int n = 0;
    for (int64_t a = 0; a < st; a++) {
        ph[a] = n;
        for (int64_t k = 0; k < K; k++)
            if (k * dil % st == a) {
                tap[n] = k;
                off[n] = -(ptrdiff_t)((k - tap[ph[a]]) * dil / st) * step;
                n++;
            }
    }
    ph[st] = n;
}

/* The column segments of every phase (see bwd_seg). Returns the count, filling seg if not
 * NULL. */
static int64_t build_segments(const ridge_conv2d_bwd_plan *p, bwd_seg *seg, int *segph)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t sw = d->stride_w;
    int64_t n = 0;
    for (int64_t b = 0; b < sw; b++) {
        if (segph) segph[b] = (int)n;
        const int nt = p->sph[b + 1] - p->sph[b];
        const int64_t *tap = p->stap + p->sph[b];
        int64_t first = ((b - d->pad_left) % sw + sw) % sw;
        bwd_seg cur = {0, 0, 0, 0, 0};
        for (int64_t iw = first; iw < d->w; iw += sw) {
            int64_t o0;
            int k0, k1;
            phase_range(iw, d->pad_left, sw, d->dil_w, tap, nt, p->ow, &o0, &k0, &k1);
            if (cur.npix && k0 == cur.s0 && k1 == cur.s1 && o0 == cur.ow0 + cur.npix) {
                cur.npix++;
                continue;
            }
            if (cur.npix) {
                if (seg) seg[n] = cur;
                n++;
            }
            cur = (bwd_seg){iw, 1, o0, k0, k1};
        }
        if (cur.npix) {
            if (seg) seg[n] = cur;
            n++;
        }
    }
    if (segph) segph[sw] = (int)n;
    return n;
}

/* Uniform-stride runs of each group's input channels (see bwd_run). */
static int64_t build_runs(const ridge_conv2d_bwd_plan *p, bwd_run *runs)
{
    int64_t n = 0;
    for (int64_t g = 0; g < p->d.groups; g++) {
        const ptrdiff_t *c = p->xco + g * p->cig;
        int64_t i = 0;
        while (i < p->cig) {
            bwd_run r = {g, i, 1, 1};
            if (i + 1 < p->cig) {
                r.stride = c[i + 1] - c[i];
                while (i + r.len < p->cig && c[i + r.len] - c[i + r.len - 1] == r.stride) r.len++;
            }
            if (runs) runs[n] = r;
            n++;
            i += r.len;
        }
    }
    return n;
}

/* Depthwise dx at stride 1 and dilation 1 with padding below the window's size: the forward
 * depthwise kernel on dy with the window turned by 180 degrees (the transposed convolution),
 * whose 3x3 and 4-7 wide paths run blocks of pixels with the window's rows in registers, where
 * the phase-and-segment path (dx_depthwise_range) goes pixel by pixel through the generic
 * loop. */
static int dx_depthwise_flipped(const ridge_conv2d_bwd_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    return p->data_algo == RIDGE_CONV_DEPTHWISE && d->stride_h == 1 && d->stride_w == 1 &&
           d->dil_h == 1 && d->dil_w == 1 && d->pad_top < d->r && d->pad_bottom < d->r &&
           d->pad_left < d->s && d->pad_right < d->s;
}

/* Depthwise dx by stride phases with each (dx row, column phase) one call of the kernel's
 * blocked path for windows up to 7 wide (dw_row_wide: blocks of pixels, each dy column loaded
 * once into every tap it feeds), where the segment path goes pixel by pixel through the
 * generic loop: dilation 1 across, every column phase 1 to 7 taps (a stride at most the
 * window's width). The phase's column taps are packed last to first (p->dx_dw_rows), so that
 * they walk dy's columns left to right, as the forward's window does. */
static int dx_depthwise_rows(const ridge_conv2d_bwd_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    if (p->data_algo != RIDGE_CONV_DEPTHWISE || p->dx_fwd || d->dil_w != 1) return 0;
    for (int64_t b = 0; b < d->stride_w; b++) {
        const int nb = p->sph[b + 1] - p->sph[b];
        if (nb < 1 || nb > 7) return 0;
    }
    return 1;
}

/* dx by the forward plan of the transposed convolution (dy -> dx, c_out -> c_in, the window
 * turned by 180 degrees, padding R - 1 - pad): Winograd's, and the depthwise kernel's at stride
 * 1 (dx_depthwise_flipped). Made on zero weights and then without them (each call brings its
 * own). */
static ridge_status dx_fwd_plan(ridge_ctx *ctx, ridge_conv2d_bwd_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    ridge_conv2d_desc t = *d;
    t.c_in = d->c_out, t.c_out = d->c_in, t.h = p->oh, t.w = p->ow;
    t.pad_top = d->r - 1 - d->pad_top, t.pad_bottom = d->r - 1 - d->pad_bottom;
    t.pad_left = d->s - 1 - d->pad_left, t.pad_right = d->s - 1 - d->pad_right;
    float *zw = ridge_calloc((size_t)(d->c_in * p->cog * d->r * d->s), sizeof(float));
    if (!zw) return ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory");
    ridge_conv2d_plan_options o = {.algo = p->data_algo};
    ridge_status st = ridge_conv2d_plan_create(ctx, &t, zw, &o, &p->dx_fwd);
    ridge_free(zw);
    if (st) return st;
    ridge_free(p->dx_fwd->wp); /* unused: every call passes its own U (wp_elems still sizes it) */
    p->dx_fwd->wp = NULL;
    return RIDGE_OK;
}

ridge_status ridge_conv2d_bwd_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                          const ridge_conv2d_bwd_options *opts,
                                          ridge_conv2d_bwd_plan **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "conv2d_bwd_plan_create: out is NULL");
    *out = NULL;
    if (!ctx || !d) return ridge_error(RIDGE_EINVAL, "conv2d_bwd_plan_create: ctx or d is NULL");
    ridge_conv2d_bwd_options o;
    if (opts) o = *opts;
    else ridge_conv2d_bwd_options_init(&o);
    int64_t oh, ow;
    ridge_status st = ridge_conv2d_desc_check(d, &oh, &ow);
    if (st) return st;
    ridge_conv_algo da, wa;
    if ((st = bwd_algo_check(d, o.data_algo, &da, "data"))) return st;
    if ((st = bwd_algo_check(d, o.weights_algo, &wa, "weights"))) return st;

    ridge_conv2d_bwd_plan *p = ridge_calloc(1, sizeof *p);
    if (!p) return ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory");
    p->d = *d;
    p->oh = oh, p->ow = ow;
    p->cig = d->c_in / d->groups, p->cog = d->c_out / d->groups;
    p->data_algo = da, p->weights_algo = wa;
    p->k = conv_kernels_for(ridge_ctx_isa(ctx));
    const int nr = p->k->nr;
    p->xv = conv_view_make(d->layout, d->c_in, d->h, d->w);
    p->yv = conv_view_make(d->layout, d->c_out, oh, ow);
    p->ncib = (p->cig + nr - 1) / nr;
    p->ncob = (p->cog + nr - 1) / nr;
    const int64_t R = d->r, S = d->s, sh = d->stride_h, sw = d->stride_w;
    int64_t iota_n = RIDGE_MAX(d->c_in, d->c_out) + nr;
    p->xco = ridge_malloc(sizeof(ptrdiff_t) * (size_t)(d->c_in + nr));
    p->yco = ridge_malloc(sizeof(ptrdiff_t) * (size_t)(d->c_out + nr));
    p->iota = ridge_malloc(sizeof(ptrdiff_t) * (size_t)iota_n);
    p->rtap = ridge_malloc(sizeof(int64_t) * (size_t)R);
    p->stap = ridge_malloc(sizeof(int64_t) * (size_t)S);
    p->rph = ridge_malloc(sizeof(int) * (size_t)(sh + 1));
    p->sph = ridge_malloc(sizeof(int) * (size_t)(sw + 1));
    p->roff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)R);
    p->soff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)S);
    p->wph = ridge_malloc(sizeof(size_t) * (size_t)(sh * sw));
    p->segph = ridge_malloc(sizeof(int) * (size_t)(sw + 1));
    p->dw_roff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)oh);
    p->dw_soff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)ow);
    if (!p->xco || !p->yco || !p->iota || !p->rtap || !p->stap || !p->rph || !p->sph ||
        !p->roff || !p->soff || !p->wph || !p->segph || !p->dw_roff || !p->dw_soff) {
        st = ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory for tables");
        goto err_free_plan;
    }
    conv_view_chan_table(&p->xv, d->c_in, p->xco);
    conv_view_chan_table(&p->yv, d->c_out, p->yco);
    for (int i = 0; i < nr; i++) { /* padding entries, never stored through */
        p->xco[d->c_in + i] = p->xco[d->c_in - 1];
        p->yco[d->c_out + i] = p->yco[d->c_out - 1];
    }
    for (int64_t i = 0; i < iota_n; i++) p->iota[i] = i;
    p->dx_yfast = conv_yfast_table(p->xco, d->groups, p->cig, nr, p->k->vlen);
    if (!p->dx_yfast) {
        st = ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory for tables");
        goto err_free_plan;
    }
    build_phases(R, sh, d->dil_h, p->yv.sh, p->rtap, p->rph, p->roff);
    build_phases(S, sw, d->dil_w, p->yv.sw, p->stap, p->sph, p->soff);
    size_t off = 0;
    for (int64_t a = 0; a < sh; a++)
        for (int64_t b = 0; b < sw; b++) {
            p->wph[a * sw + b] = off;
            off += (size_t)(p->rph[a + 1] - p->rph[a]) * (size_t)(p->sph[b + 1] - p->sph[b]);
        }
    int64_t nseg = build_segments(p, NULL, NULL);
    p->seg = ridge_malloc(sizeof(bwd_seg) * (size_t)RIDGE_MAX(nseg, 1));
    p->nruns = build_runs(p, NULL);
    p->runs = ridge_malloc(sizeof(bwd_run) * (size_t)p->nruns);
    if (!p->seg || !p->runs) {
        st = ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory for segments");
        goto err_free_plan;
    }
    build_segments(p, p->seg, p->segph);
    build_runs(p, p->runs);
    for (int64_t i = 0; i < oh; i++) p->dw_roff[i] = i * sh * p->xv.sh;
    for (int64_t j = 0; j < ow; j++) p->dw_soff[j] = j * sw * p->xv.sw;

    /* workspace: dx packs the weights; dw packs dy and keeps a blocked dw (Winograd's dx and
     * the stride-1 depthwise dx: the forward plan's, below) */
    const int64_t cp = (d->c_out + nr - 1) / nr * nr;
    if (da == RIDGE_CONV_DIRECT)
        p->ws_data = round_bytes((size_t)(d->groups * p->ncib * R * S * p->cog * nr));
    else if (da == RIDGE_CONV_DEPTHWISE && !dx_depthwise_flipped(p))
        p->ws_data = round_bytes((size_t)(R * S * cp + cp));
    else if (da == RIDGE_CONV_IM2COL)
        p->ws_data = round_bytes((size_t)(im2col_images(p) * oh * ow * d->c_in * R * S)) +
                     round_bytes((size_t)(d->c_out * p->cig * R * S));
    if (wa == RIDGE_CONV_IM2COL)
        p->ws_weights = round_bytes((size_t)(im2col_images(p) * oh * ow * d->c_in * R * S)) +
                        round_bytes((size_t)(d->c_out * p->cig * R * S));
    if (wa == RIDGE_CONV_DIRECT) {
        size_t blocks = (size_t)(d->groups * p->ncob);
        p->dw_nhwc = d->layout == RIDGE_NHWC;
        p->ws_weights = round_bytes(blocks * (size_t)(d->n * oh * ow * nr)) +
                        round_bytes(blocks * (size_t)(R * S * p->cig * nr));
    }
    if (wa == RIDGE_CONV_DIRECT && dw_taps_applies(d, nr)) {
        const int64_t T = p->cig * R * S, wp = d->w + d->pad_left + d->pad_right;
        p->dw_toff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)T);
        if (!p->dw_toff) {
            st = ridge_error(RIDGE_ENOMEM, "conv2d_bwd_plan_create: out of memory for tables");
            goto err_free_plan;
        }
        for (int64_t ci = 0; ci < p->cig; ci++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t c = 0; c < S; c++)
                    p->dw_toff[(ci * R + r) * S + c] =
                        (r * d->dil_h * wp + c * d->dil_w) * p->cig + ci;
        p->dw_chunks = RIDGE_MIN(d->n, 32);
        p->ws_weights = dw_taps_ws(p, ridge_ctx_threads(ctx));
    }
    p->threads = ridge_ctx_threads(ctx);
    if (wa == RIDGE_CONV_WINOGRAD_4X3) p->ws_weights = wdw_ws(p);
    if (da == RIDGE_CONV_WINOGRAD_2X3 || da == RIDGE_CONV_WINOGRAD_4X3 ||
        dx_depthwise_flipped(p)) {
        if ((st = dx_fwd_plan(ctx, p))) goto err_free_plan;
        p->ws_data = round_bytes(p->dx_fwd->wp_elems) +
                     ridge_conv2d_workspace_size(p->dx_fwd, p->threads);
    }
    p->dx_dw_rows = dx_depthwise_rows(p);
    *out = p;
    return RIDGE_OK;

err_free_plan:
    ridge_conv2d_bwd_plan_destroy(p);
    return st;
}

ridge_conv_algo ridge_conv2d_bwd_plan_data_algo(const ridge_conv2d_bwd_plan *p)
{
    return p ? p->data_algo : RIDGE_CONV_AUTO;
}

ridge_conv_algo ridge_conv2d_bwd_plan_weights_algo(const ridge_conv2d_bwd_plan *p)
{
    return p ? p->weights_algo : RIDGE_CONV_AUTO;
}

size_t ridge_conv2d_bwd_data_workspace_size(const ridge_conv2d_bwd_plan *p)
{
    return p ? p->ws_data : 0;
}

size_t ridge_conv2d_bwd_weights_workspace_size(const ridge_conv2d_bwd_plan *p)
{
    return p ? p->ws_weights : 0;
}

/* The workspaces with per-thread areas (Winograd's passes; depthwise dx where the flipped
 * forward reads dy through its ring, dw_ring) are sized for the plan's thread count: a caller's
 * workspace is refused on a ctx with more threads; NULL takes `bytes` (sized for the ctx's
 * threads) from the ctx's arena. */
static ridge_status areas_ws(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, const char *fn,
                            size_t bytes, void **ws)
{
    const int threads = ridge_ctx_threads(ctx);
    if (*ws && threads > p->threads)
        return ridge_error(RIDGE_EINVAL, "%s: the workspace is sized for the plan's %d threads, "
                           "the ctx has %d", fn, p->threads, threads);
    return *ws ? RIDGE_OK : ridge_ctx_scratch(ctx, bytes, ws);
}

/* ---- dx -------------------------------------------------------------------------------------- */

typedef struct bwd {
    const ridge_conv2d_bwd_plan *p;
    float *out;         /* dx, or the blocked dw */
    const float *x, *dy, *w;
    float *pack;        /* packed weights (dx) or dy (dw) */
    float *db;
} bwd;

/* Packs OIHW weights into [g][cib][phase pair][kr][ks][co][NR] for items [b, e) of
 * (g * ncib + cib). */
static void pack_dx_weights(void *arg, size_t b, size_t e, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, R = d->r, S = d->s, cog = p->cog, cig = p->cig;
    (void)ith;
    for (size_t it = b; it < e; it++) {
        int64_t g = (int64_t)it / p->ncib, cib = (int64_t)it % p->ncib;
        float *blk = f->pack + (size_t)it * (size_t)(R * S * cog * nr);
        for (int64_t a = 0; a < d->stride_h; a++)
            for (int64_t bb = 0; bb < d->stride_w; bb++) {
                int na = p->rph[a + 1] - p->rph[a], nb = p->sph[bb + 1] - p->sph[bb];
                float *ph = blk + p->wph[a * d->stride_w + bb] * (size_t)(cog * nr);
                for (int kr = 0; kr < na; kr++)
                    for (int ks = 0; ks < nb; ks++) {
                        int64_t r = p->rtap[p->rph[a] + kr], s = p->stap[p->sph[bb] + ks];
                        float *t = ph + (size_t)((kr * nb + ks) * cog * nr);
                        for (int64_t co = 0; co < cog; co++)
                            for (int64_t j = 0; j < nr; j++) {
                                int64_t ci = cib * nr + j;
                                t[co * nr + j] = ci < cig ? f->w[(((g * cog + co) * cig + ci) * R +
                                                                 r) * S + s]
                                                          : 0.0f;
                            }
                    }
            }
    }
}

static void dx_direct_range(void *arg, size_t b0, size_t e0, size_t b1, size_t e1, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int nr = p->k->nr;
    const int64_t sh = d->stride_h, sw = d->stride_w, blk = d->r * d->s * p->cog * nr;
    (void)ith;
    conv_row_args a = {0};
    a.xb = f->dy;
    a.xps = p->yv.sw;
    a.kc = p->cog;
    a.y = f->out;
    a.yps = sw * p->xv.sw;
    a.bias = zeros;
    a.res = NULL;
    a.act = 0;
    for (size_t row = b0; row < e0; row++) {
        int64_t n = (int64_t)row / d->h, ih = (int64_t)row % d->h;
        int64_t ph = (ih + d->pad_top) % sh;
        int na = p->rph[ph + 1] - p->rph[ph];
        int64_t oh0;
        phase_range(ih, d->pad_top, sh, d->dil_h, p->rtap + p->rph[ph], na, p->oh, &oh0, &a.r0,
                    &a.r1);
        a.roff = p->roff + p->rph[ph];
        for (size_t cb = b1; cb < e1; cb++) {
            int64_t g = (int64_t)cb / p->ncib, cib = (int64_t)cb % p->ncib;
            a.coff = p->yco + g * p->cog;
            a.yco = p->xco + g * p->cig + cib * nr;
            a.nco = (int)RIDGE_MIN(nr, p->cig - cib * nr);
            a.yfast = p->dx_yfast[cb];
            for (int64_t b = 0; b < sw; b++) {
                int nb = p->sph[b + 1] - p->sph[b];
                a.S = nb;
                a.soff = p->soff + p->sph[b];
                a.w = f->pack + (size_t)cb * (size_t)blk +
                      p->wph[ph * sw + b] * (size_t)(p->cog * nr);
                for (int si = p->segph[b]; si < p->segph[b + 1]; si++) {
                    const bwd_seg *sg = &p->seg[si];
                    a.s0 = sg->s0, a.s1 = sg->s1;
                    a.xo = n * p->yv.sn + oh0 * p->yv.sh + sg->ow0 * p->yv.sw;
                    a.yo = n * p->xv.sn + ih * p->xv.sh + sg->iw * p->xv.sw;
                    a.npix = sg->npix;
                    p->k->row(&a);
                }
            }
        }
    }
}

static void dx_depthwise_range(void *arg, size_t b0, size_t e0, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t sh = d->stride_h, sw = d->stride_w, C = d->c_out;
    const int64_t cp = (C + p->k->nr - 1) / p->k->nr * p->k->nr;
    (void)ith;
    conv_dw_args a;
    a.xb = f->dy;
    a.xps = p->yv.sw;
    a.xco = p->yco;
    a.c = C, a.cp = cp;
    a.y = f->out;
    a.yps = sw * p->xv.sw;
    a.yco = p->xco;
    a.bias = f->pack + d->r * d->s * cp; /* zeros */
    a.res = NULL;
    a.act = 0;
    a.edge_l = a.edge_r = 0, a.nt = 0, a.pf = 0, a.iw = a.padl = 0;
    a.nrows = 1, a.xrs = a.yrs = 0, a.cwide = 0;
    /* dx_dw_rows: a phase's column taps, one dy column apart left to right (soff[1] too for
     * a single tap: the blocks step by it) */
    ptrdiff_t up[8];
    for (int k = 0; k < 8; k++) up[k] = k * p->yv.sw;
    for (size_t row = b0; row < e0; row++) {
        int64_t n = (int64_t)row / d->h, ih = (int64_t)row % d->h;
        int64_t ph = (ih + d->pad_top) % sh;
        int na = p->rph[ph + 1] - p->rph[ph];
        int64_t oh0;
        phase_range(ih, d->pad_top, sh, d->dil_h, p->rtap + p->rph[ph], na, p->oh, &oh0, &a.r0,
                    &a.r1);
        a.roff = p->roff + p->rph[ph];
        if (p->dx_dw_rows) {
            /* column phase b: the dx columns iw = iw0, iw0 + sw, ... with (iw + pad) % sw
             * == b; pixel q's leftmost dy column is l0 + q (its phase's last tap) */
            a.soff = up;
            for (int64_t b = 0; b < sw; b++) {
                const int64_t iw0 = ((b - d->pad_left) % sw + sw) % sw;
                if (iw0 >= d->w) continue;
                const int64_t l0 = (iw0 + d->pad_left - p->stap[p->sph[b + 1] - 1]) / sw;
                a.S = p->sph[b + 1] - p->sph[b];
                a.s0 = 0, a.s1 = a.S;
                a.w = f->pack + p->wph[ph * sw + b] * (size_t)cp;
                a.iw = p->ow, a.padl = -l0;
                a.xo = n * p->yv.sn + oh0 * p->yv.sh + l0 * p->yv.sw;
                a.yo = n * p->xv.sn + ih * p->xv.sh + iw0 * p->xv.sw;
                a.npix = (d->w - iw0 + sw - 1) / sw;
                p->k->dw_row(&a);
            }
            continue;
        }
        for (int64_t b = 0; b < sw; b++) {
            a.S = p->sph[b + 1] - p->sph[b];
            a.soff = p->soff + p->sph[b];
            a.w = f->pack + p->wph[ph * sw + b] * (size_t)cp;
            for (int si = p->segph[b]; si < p->segph[b + 1]; si++) {
                const bwd_seg *sg = &p->seg[si];
                a.s0 = sg->s0, a.s1 = sg->s1;
                a.xo = n * p->yv.sn + oh0 * p->yv.sh + sg->ow0 * p->yv.sw;
                a.yo = n * p->xv.sn + ih * p->xv.sh + sg->iw * p->xv.sw;
                a.npix = sg->npix;
                p->k->dw_row(&a);
            }
        }
    }
}

/* col2im as a gather, per dx row [b, e) of the chunk: every (output pixel, tap) of the
 * lowered gradient that lands on the row, added in a fixed order (taps r, then output columns,
 * then taps s), so the result does not depend on how rows are split over threads. */
typedef struct col2im_args {
    const ridge_conv2d_bwd_plan *p;
    const float *col;
    float *dx;
    int64_t n0, P;
} col2im_args;

static void col2im_range(void *arg, size_t b, size_t e, int ith)
{
    const col2im_args *a = arg;
    const ridge_conv2d_bwd_plan *p = a->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t cig = p->cig, K = cig * d->r * d->s;
    (void)ith;
    for (size_t row = b; row < e; row++) {
        const int64_t ni = (int64_t)row / d->h, ih = (int64_t)row % d->h;
        float *dxr = a->dx + (a->n0 + ni) * p->xv.sn + ih * p->xv.sh;
        memset(dxr, 0, (size_t)(d->w * d->c_in) * sizeof(float));
        for (int64_t r = 0; r < d->r; r++) {
            const int64_t t = ih + d->pad_top - r * d->dil_h; /* = oh * stride_h */
            if (t < 0 || t % d->stride_h || t / d->stride_h >= p->oh) continue;
            const int64_t oh = t / d->stride_h;
            for (int64_t ow = 0; ow < p->ow; ow++) {
                const int64_t q = (ni * p->oh + oh) * p->ow + ow;
                for (int64_t s = 0; s < d->s; s++) {
                    const int64_t iw = ow * d->stride_w - d->pad_left + s * d->dil_w;
                    if (iw < 0 || iw >= d->w) continue;
                    for (int64_t g = 0; g < d->groups; g++) {
                        const float *c = a->col + (g * a->P + q) * K + (r * d->s + s) * cig;
                        float *o = dxr + iw * p->xv.sw + g * cig;
                        for (int64_t ci = 0; ci < cig; ci++) o[ci] += c[ci];
                    }
                }
            }
        }
    }
}

/* dx via SGEMM + col2im (NHWC): per chunk of images and group, the lowered gradient
 * dcol_g (P x K) = dy_g (P x cog) W_g (cog x K), K = (r, s, ci), then the gather above. */
static ridge_status dx_im2col(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, float *dx,
                              const float *dy, const float *w, void *ws)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t RS = d->r * d->s, K = p->cig * RS, hw = p->oh * p->ow, imgs = im2col_images(p);
    float *col = ws;
    float *wk = (float *)((char *)ws + round_bytes((size_t)(imgs * hw * d->c_in * RS)));
    for (int64_t co = 0; co < d->c_out; co++) /* OIHW -> [co][(r, s, ci)] */
        for (int64_t ci = 0; ci < p->cig; ci++)
            for (int64_t t = 0; t < RS; t++)
                wk[co * K + t * p->cig + ci] = w[(co * p->cig + ci) * RS + t];
    for (int64_t n0 = 0; n0 < d->n; n0 += imgs) {
        const int64_t ni = RIDGE_MIN(imgs, d->n - n0), P = ni * hw;
        for (int64_t g = 0; g < d->groups; g++) {
            ridge_status st = ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, (size_t)P,
                                          (size_t)K, (size_t)p->cog, 1.0f,
                                          dy + n0 * p->yv.sn + g * p->cog, (size_t)d->c_out,
                                          wk + g * p->cog * K, (size_t)K, 0.0f,
                                          col + g * P * K, (size_t)K);
            if (st) return st;
        }
        col2im_args a = {p, col, dx, n0, P};
        ridge_parallel_for(ctx, (size_t)(ni * d->h), 1, col2im_range, &a);
    }
    return RIDGE_OK;
}

/* dx by Winograd (3x3, stride 1): the full convolution of dy with the kernel rotated by 180
 * degrees and its channel axes swapped, i.e. a forward convolution with padding 2 - pad, on
 * the forward's Winograd plan (made once, with the plan). Its input gather zero-fills tiles at
 * the borders, so dy is not copied. Per call only the weights are transformed, rotated on the
 * fly, into the workspace: U, then the forward's own workspace. */
typedef struct wino_tf {
    const ridge_conv2d_plan *fp;
    const float *w;
    float *U;
} wino_tf;

static void wino_transform_range(void *arg, size_t b, size_t e, int ith)
{
    const wino_tf *t = arg;
    (void)ith;
    conv_wino_transform(t->fp, t->w, 1, (int64_t)b, (int64_t)e, t->U);
}

/* dx through p->dx_fwd: w into its format (Winograd's transform of the turned window, or the
 * depthwise kernel's [R][S][cp] turned), then its forward pass on dy. */
static ridge_status dx_transposed(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, float *dx,
                                  const float *dy, const float *w, void *ws)
{
    const ridge_conv2d_plan *fp = p->dx_fwd;
    float *U = ws;
    if (p->data_algo == RIDGE_CONV_DEPTHWISE) {
        const int64_t RS = p->d.r * p->d.s, C = p->d.c_out, cp = (int64_t)fp->wp_elems / RS;
        for (int64_t t = 0; t < RS; t++) {
            float *u = U + (RS - 1 - t) * cp; /* tap (r, s) at (R - 1 - r, S - 1 - s) */
            for (int64_t c = 0; c < C; c++) u[c] = w[c * RS + t];
            memset(u + C, 0, (size_t)(cp - C) * sizeof(float));
        }
    } else {
        wino_tf t = {fp, w, U};
        ridge_parallel_for(ctx, (size_t)(fp->d.groups * fp->ncob), 1, wino_transform_range, &t);
    }
    return conv_forward_with(ctx, fp, U, dy, dx, (char *)ws + round_bytes(fp->wp_elems));
}

ridge_status ridge_conv2d_backward_data(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p,
                                        float *dx, const float *dy, const float *w, void *ws)
{
    if (!ctx || !p || !dx || !dy || !w)
        return ridge_error(RIDGE_EINVAL, "conv2d_backward_data: ctx, plan, dx, dy or w is NULL");
    const ridge_conv2d_desc *d = &p->d;
    if (p->data_algo == RIDGE_CONV_REF) return conv_backward_data_ref(d, p->oh, p->ow, dx, dy, w);
    if (p->dx_fwd) {
        const size_t bytes = round_bytes(p->dx_fwd->wp_elems) +
                             ridge_conv2d_workspace_size(p->dx_fwd, ridge_ctx_threads(ctx));
        /* the depthwise forward has per-thread areas only for its ring: else any thread count
         * fits */
        ridge_status st = p->data_algo != RIDGE_CONV_DEPTHWISE || p->dx_fwd->ws_per_thread
                              ? areas_ws(ctx, p, "conv2d_backward_data", bytes, &ws)
                          : ws ? RIDGE_OK
                               : ridge_ctx_scratch(ctx, bytes, &ws);
        return st ? st : dx_transposed(ctx, p, dx, dy, w, ws);
    }
    if (p->data_algo == RIDGE_CONV_IM2COL) {
        /* SGEMM uses the ctx's scratch arena: without a caller's workspace, allocate one */
        void *own = NULL;
        if (!ws && !(ws = own = ridge_malloc(p->ws_data)))
            return ridge_error(RIDGE_ENOMEM, "conv2d_backward_data: out of memory for %zu "
                               "bytes of workspace", p->ws_data);
        ridge_status st = dx_im2col(ctx, p, dx, dy, w, ws);
        ridge_free(own);
        return st;
    }
    if (!ws) {
        ridge_status st = ridge_ctx_scratch(ctx, p->ws_data, &ws);
        if (st) return st;
    }
    bwd f = {p, dx, NULL, dy, w, ws, NULL};
    if (p->data_algo == RIDGE_CONV_DEPTHWISE) {
        const int64_t nr = p->k->nr, cp = (d->c_out + nr - 1) / nr * nr, RS = d->r * d->s;
        memset(f.pack, 0, (size_t)(RS * cp + cp) * sizeof(float));
        for (int64_t a = 0; a < d->stride_h; a++)
            for (int64_t b = 0; b < d->stride_w; b++) {
                int na = p->rph[a + 1] - p->rph[a], nb = p->sph[b + 1] - p->sph[b];
                float *ph = f.pack + p->wph[a * d->stride_w + b] * (size_t)cp;
                for (int kr = 0; kr < na; kr++)
                    for (int ks = 0; ks < nb; ks++) {
                        int64_t r = p->rtap[p->rph[a] + kr], s = p->stap[p->sph[b] + ks];
                        const int at = p->dx_dw_rows ? nb - 1 - ks : ks; /* last to first */
                        for (int64_t c = 0; c < d->c_out; c++)
                            ph[(kr * nb + at) * cp + c] = w[(c * d->r + r) * d->s + s];
                    }
            }
        ridge_parallel_for(ctx, (size_t)(d->n * d->h), 1, dx_depthwise_range, &f);
    } else {
        const size_t ncb = (size_t)(d->groups * p->ncib);
        ridge_parallel_for(ctx, ncb, 1, pack_dx_weights, &f);
        ridge_parallel_for_2d(ctx, (size_t)(d->n * d->h), ncb, 1, 1, dx_direct_range, &f);
    }
    conv_zero_channel_padding(dx, d->layout, d->n, d->c_in, d->h, d->w);
    return RIDGE_OK;
}

/* ---- dw -------------------------------------------------------------------------------------- */

/* Packs dy into [g][cob][n][oh*ow][NR] (zeros past the group's channels) and sums db per block,
 * for items [b, e) of (g * ncob + cob). */
static void pack_dy(void *arg, size_t b, size_t e, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, hw = p->oh * p->ow;
    (void)ith;
    for (size_t it = b; it < e; it++) {
        int64_t g = (int64_t)it / p->ncob, cob = (int64_t)it % p->ncob;
        int64_t nco = RIDGE_MIN(nr, p->cog - cob * nr);
        const ptrdiff_t *yco = p->yco + g * p->cog + cob * nr;
        double sum[64] = {0};
        for (int64_t n = 0; n < d->n; n++) {
            float *t = f->pack + ((size_t)it * (size_t)d->n + (size_t)n) * (size_t)(hw * nr);
            for (int64_t q = 0; q < hw; q++) {
                const float *y = f->dy + n * p->yv.sn + (q / p->ow) * p->yv.sh +
                                 (q % p->ow) * p->yv.sw;
                for (int64_t j = 0; j < nr; j++) {
                    float v = j < nco ? y[yco[j]] : 0.0f;
                    t[q * nr + j] = v;
                    sum[j] += v;
                }
            }
        }
        if (f->db)
            for (int64_t j = 0; j < nco; j++) f->db[g * p->cog + cob * nr + j] = (float)sum[j];
    }
}

#define DW_CHUNK_FLOATS 4096 /* dy floats per reduction chunk: 16 KiB, half of L1 */

static void dw_direct_range(void *arg, size_t b0, size_t e0, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int nr = p->k->nr;
    const int64_t RS = d->r * d->s, hw = p->oh * p->ow;
    const int64_t rows = RIDGE_MAX(1, DW_CHUNK_FLOATS / (p->ow * nr));
    (void)ith;
    conv_row_args a = {0};
    a.xb = f->x;
    a.roff = p->dw_roff, a.soff = p->dw_soff;
    a.coff = p->iota, a.cunit = 1; /* kc = 1: offset 0 */
    a.kc = 1;
    a.S = (int)p->ow;
    a.y = f->out;
    a.yps = nr;
    a.yco = p->iota;
    a.nco = nr;
    a.yfast = 1;
    a.bias = zeros;
    a.act = 0;
    for (size_t it = b0; it < e0; it++) {
        int64_t blk = (int64_t)it / RS, t = (int64_t)it % RS, r = t / d->s, s = t % d->s;
        int64_t g = blk / p->ncob;
        int oh0, oh1, ow0, ow1; /* output pixels whose tap (r, s) is inside x */
        tap_range(r * d->dil_h - d->pad_top, d->h, d->stride_h, p->oh, &oh0, &oh1);
        tap_range(s * d->dil_w - d->pad_left, d->w, d->stride_w, p->ow, &ow0, &ow1);
        a.s0 = ow0, a.s1 = ow1;
        float *out = f->out + (size_t)(blk * RS + t) * (size_t)(p->cig * nr);
        int first = 1;
        for (int64_t n = 0; n < d->n; n++) {
            a.w = f->pack + (size_t)(blk * d->n + n) * (size_t)(hw * nr);
            for (int64_t c0 = oh0; c0 < oh1 || (first && c0 == oh0); c0 += rows) {
                a.r0 = (int)c0, a.r1 = (int)RIDGE_MIN(c0 + rows, oh1);
                if (a.r1 < a.r0) a.r1 = a.r0;
                a.res = first ? NULL : f->out; /* accumulate onto the previous chunk */
                for (int64_t ri = 0; ri < p->nruns; ri++) {
                    const bwd_run *ru = &p->runs[ri];
                    if (ru->g != g) continue;
                    a.xps = ru->stride;
                    a.xo = n * p->xv.sn + p->xco[g * p->cig + ru->ci0] +
                           (r * d->dil_h - d->pad_top) * p->xv.sh +
                           (s * d->dil_w - d->pad_left) * p->xv.sw;
                    a.yo = (out - f->out) + ru->ci0 * nr;
                    a.npix = ru->len;
                    p->k->row(&a);
                }
                first = 0;
            }
        }
    }
}

/* dw direct on NHWC: output rows per chunk, so that a chunk's dy and the x rows its taps read
 * stay in L2 (512 KiB) while every item of the thread runs over them: a whole image when its x
 * and dy fit in 448 KiB (the longest reduction per tile), else 64 KiB of dy. */
static int64_t dw_chunk_rows(const ridge_conv2d_bwd_plan *p)
{
    const ridge_conv2d_desc *d = &p->d;
    if (d->h * d->w * d->c_in + p->oh * p->ow * d->c_out <= 114688) return p->oh;
    return RIDGE_MAX(1, RIDGE_MIN(p->oh, 16384 / (p->ow * d->c_out)));
}

/* Items [b0, e0) of (g * ncob + cob) * RS + tap: the blocked dw [item][ci][NR], each the dwt
 * tile over the tap's valid output pixels, chunk by chunk (images, then row chunks, in order:
 * the sums do not depend on the thread count). */
static void dw_nhwc_range(void *arg, size_t b0, size_t e0, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int nr = p->k->nr, mr = p->k->mr;
    const int64_t RS = d->r * d->s, rows = dw_chunk_rows(p), cig = p->cig;
    (void)ith;
    memset(f->out + b0 * (size_t)(cig * nr), 0, (e0 - b0) * (size_t)(cig * nr) * sizeof(float));
    conv_dwt_args a;
    a.xrs = d->stride_h * p->xv.sh, a.xps = d->stride_w * p->xv.sw;
    a.yrs = p->ow * nr, a.yps = nr;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t c0 = 0; c0 < p->oh; c0 += rows)
            for (size_t it = b0; it < e0; it++) {
                const int64_t blk = (int64_t)it / RS, t = (int64_t)it % RS, r = t / d->s,
                              s = t % d->s, g = blk / p->ncob;
                int oh0, oh1, ow0, ow1; /* output pixels whose tap (r, s) is inside x */
                tap_range(r * d->dil_h - d->pad_top, d->h, d->stride_h, p->oh, &oh0, &oh1);
                tap_range(s * d->dil_w - d->pad_left, d->w, d->stride_w, p->ow, &ow0, &ow1);
                const int64_t q0 = RIDGE_MAX(oh0, c0), q1 = RIDGE_MIN(oh1, c0 + rows);
                if (q0 >= q1 || ow0 >= ow1) continue;
                a.nrow = q1 - q0, a.ncol = ow1 - ow0;
                a.dy = f->pack + ((blk * d->n + n) * p->oh * p->ow + q0 * p->ow + ow0) * nr;
                const float *x = f->x + n * p->xv.sn +
                                 (q0 * d->stride_h - d->pad_top + r * d->dil_h) * p->xv.sh +
                                 (ow0 * d->stride_w - d->pad_left + s * d->dil_w) * p->xv.sw +
                                 g * cig;
                float *out = f->out + it * (size_t)(cig * nr);
                for (int64_t ci = 0; ci < cig; ci += mr) {
                    a.x = x + ci, a.mr = (int)RIDGE_MIN(mr, cig - ci), a.out = out + ci * nr;
                    p->k->dwt(&a);
                }
            }
}

/* db[c0, c1) for the depthwise blocks the dwgrad kernel does not take: fp64 sums */
static void db_depthwise(const bwd *f, int64_t c0, int64_t c1)
{
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    for (int64_t c = c0; c < c1; c++) {
        double s = 0;
        for (int64_t n = 0; n < d->n; n++)
            for (int64_t i = 0; i < p->oh; i++)
                for (int64_t j = 0; j < p->ow; j++)
                    s += f->dy[n * p->yv.sn + i * p->yv.sh + j * p->yv.sw + p->yco[c]];
        f->db[c] = (float)s;
    }
}

/* Depthwise dW for 16-channel blocks [b0, e0): each block's taps from the ISA's dwgrad kernel
 * (one vector of channels at a time) where the window fits it and the block is whole in x
 * (NHWC's last block may be short: its loads would run past the tensor), else tap by tap
 * in scalar loops. */
static void dw_depthwise_range(void *arg, size_t b0, size_t e0, int ith)
{
    const bwd *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t RS = d->r * d->s, C = d->c_out, vl = p->k->vlen;
    (void)ith;
    int ow0[DWG_S_MAX], ow1[DWG_S_MAX];
    for (int64_t s = 0; s < RIDGE_MIN(d->s, DWG_S_MAX); s++)
        tap_range(s * d->dil_w - d->pad_left, d->w, d->stride_w, p->ow, &ow0[s], &ow1[s]);
    for (size_t it = b0; it < e0; it++) {
        const int64_t c0 = (int64_t)it * 16, cl = RIDGE_MIN(16, C - c0);
        if (d->r <= DWG_S_MAX && d->s <= DWG_S_MAX && (cl == 16 || d->layout == RIDGE_NCHW16C)) {
            float out[DWG_S_MAX * DWG_S_MAX * 16], db[16];
            for (int64_t v = 0; v < cl; v += vl) {
                const conv_dwg_args a = {
                    f->x + p->xco[c0 + v], f->dy + p->yco[c0 + v], p->xv.sn, p->xv.sh, p->xv.sw,
                    p->yv.sn, p->yv.sh, p->yv.sw, d->n, d->h, p->oh, p->ow, (int)d->r,
                    (int)d->s, (int)d->stride_h, (int)d->stride_w, (int)d->dil_h,
                    (int)d->dil_w, (int)d->pad_top, (int)d->pad_left, ow0, ow1, out,
                    f->db ? db : NULL};
                p->k->dwgrad(&a);
                for (int64_t c = v; c < RIDGE_MIN(v + vl, cl); c++) {
                    for (int64_t t = 0; t < RS; t++)
                        f->out[(c0 + c) * RS + t] = out[t * vl + c - v];
                    if (f->db) f->db[c0 + c] = db[c - v];
                }
            }
            continue;
        }
        for (int64_t t = 0; t < RS; t++) {
            const int64_t r = t / d->s, s = t % d->s;
            int oh0, oh1, sw0, sw1;
            tap_range(r * d->dil_h - d->pad_top, d->h, d->stride_h, p->oh, &oh0, &oh1);
            tap_range(s * d->dil_w - d->pad_left, d->w, d->stride_w, p->ow, &sw0, &sw1);
            float acc[16] = {0};
            for (int64_t n = 0; n < d->n; n++)
                for (int64_t i = oh0; i < oh1; i++) {
                    int64_t ih = i * d->stride_h - d->pad_top + r * d->dil_h;
                    for (int64_t j = sw0; j < sw1; j++) {
                        int64_t iw = j * d->stride_w - d->pad_left + s * d->dil_w;
                        const float *y =
                            f->dy + n * p->yv.sn + i * p->yv.sh + j * p->yv.sw + p->yco[c0];
                        const float *x =
                            f->x + n * p->xv.sn + ih * p->xv.sh + iw * p->xv.sw + p->xco[c0];
                        for (int64_t c = 0; c < cl; c++) acc[c] += y[c] * x[c];
                    }
                }
            for (int64_t c = 0; c < cl; c++) f->out[(c0 + c) * RS + t] = acc[c];
        }
        if (f->db) db_depthwise(f, c0, c0 + cl);
    }
}

/* db on NHWC: float sums over 64 pixels, added in double. */
static void db_nhwc(const ridge_conv2d_bwd_plan *p, const float *dy, float *db)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t rows = d->n * p->oh * p->ow;
    double acc[256];
    for (int64_t c0 = 0; c0 < d->c_out; c0 += 256) {
        const int64_t cn = RIDGE_MIN(256, d->c_out - c0);
        for (int64_t j = 0; j < cn; j++) acc[j] = 0;
        for (int64_t q0 = 0; q0 < rows; q0 += 64) {
            float f[256] = {0};
            for (int64_t q = q0; q < RIDGE_MIN(q0 + 64, rows); q++)
                for (int64_t j = 0; j < cn; j++) f[j] += dy[q * d->c_out + c0 + j];
            for (int64_t j = 0; j < cn; j++) acc[j] += f[j];
        }
        for (int64_t j = 0; j < cn; j++) db[c0 + j] = (float)acc[j];
    }
}

/* Lowers pixel rows [b, e) (of image n0 + row / oh) into the groups' column blocks:
 * col[g][q][(r*S + s)*cig + ci], zero where the tap falls in the padding. */
typedef struct lower_args {
    const ridge_conv2d_bwd_plan *p;
    const float *x;
    float *col;
    int64_t n0, P;
} lower_args;

static void lower_range(void *arg, size_t b, size_t e, int ith)
{
    const lower_args *l = arg;
    const ridge_conv2d_bwd_plan *p = l->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t cig = p->cig, K = cig * d->r * d->s;
    (void)ith;
    for (size_t row = b; row < e; row++) {
        int64_t n = l->n0 + (int64_t)row / p->oh, oh = (int64_t)row % p->oh;
        for (int64_t ow = 0; ow < p->ow; ow++) {
            int64_t q = (int64_t)row * p->ow + ow;
            int64_t ih0 = oh * d->stride_h - d->pad_top, iw0 = ow * d->stride_w - d->pad_left;
            for (int64_t g = 0; g < d->groups; g++) {
                float *c = l->col + (g * l->P + q) * K;
                const float *xg = l->x + n * p->xv.sn + p->xco[g * cig];
                for (int64_t r = 0; r < d->r; r++) {
                    int64_t ih = ih0 + r * d->dil_h;
                    for (int64_t s = 0; s < d->s; s++, c += cig) {
                        int64_t iw = iw0 + s * d->dil_w;
                        const int in = ih >= 0 && ih < d->h && iw >= 0 && iw < d->w;
                        const float *src = xg + (in ? ih * p->xv.sh + iw * p->xv.sw : 0);
                        if (cig < 8) /* a call per tap would cost more than the copy */
                            for (int64_t ci = 0; ci < cig; ci++) c[ci] = in ? src[ci] : 0.0f;
                        else if (in) memcpy(c, src, (size_t)cig * sizeof(float));
                        else memset(c, 0, (size_t)cig * sizeof(float));
                    }
                }
            }
        }
    }
}

/* dw of a thin layer by the dwtaps tile (NHWC, groups 1, 1-2 input channels: dw_taps_applies).
 * Each image is copied into a zero-padded buffer of the thread's (a few KiB: the taps then
 * need no border logic), and every output pixel reads its dy channels once for all taps
 * (im2col + SGEMM lowered x 9-fold and ran a GEMM of 9 x c_out tiles; the dwt tile, one
 * input channel per row, read dy once per tap). Fixed chunks of images each keep their
 * partial sums, added in order after: the result does not depend on the thread count. */
typedef struct taps_job {
    const ridge_conv2d_bwd_plan *p;
    const float *x, *dy;
    float *pad, *part; /* the threads' padded images (img floats apart); partial sums */
    size_t img;
} taps_job;

static void dw_taps_range(void *arg, size_t b, size_t e, int ith)
{
    const taps_job *j = arg;
    const ridge_conv2d_bwd_plan *p = j->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, T = p->cig * d->r * d->s, tmax = p->k->dwtaps_max;
    const int64_t wp = d->w + d->pad_left + d->pad_right, row = d->w * p->cig;
    float *pad = j->pad + (size_t)ith * j->img;
    int64_t cur = -1; /* the image in pad */
    for (size_t it = b; it < e; it++) {
        const int64_t ch = (int64_t)it / p->ncob, cob = (int64_t)it % p->ncob;
        size_t n0, n1;
        ridge_partition((size_t)d->n, 1, (int)ch, (int)p->dw_chunks, &n0, &n1);
        float *out = j->part + it * (size_t)((T + 1) * nr);
        memset(out, 0, (size_t)((T + 1) * nr) * sizeof(float));
        for (int64_t n = (int64_t)n0; n < (int64_t)n1; n++) {
            if (n != cur) {
                memset(pad, 0, j->img * sizeof(float));
                for (int64_t ih = 0; ih < d->h; ih++)
                    memcpy(pad + ((ih + d->pad_top) * wp + d->pad_left) * p->cig,
                           j->x + n * p->xv.sn + ih * p->xv.sh, (size_t)row * sizeof(float));
                cur = n;
            }
            conv_dwtaps_args a;
            a.x = pad, a.dy = j->dy + n * p->yv.sn + cob * nr;
            a.xrs = d->stride_h * wp * p->cig, a.xps = d->stride_w * p->cig;
            a.yrs = p->yv.sh, a.yps = p->yv.sw;
            a.nrow = p->oh, a.ncol = p->ow;
            for (int64_t t0 = 0; t0 < T; t0 += tmax) {
                a.toff = p->dw_toff + t0, a.T = (int)RIDGE_MIN(tmax, T - t0);
                a.out = out + t0 * nr, a.db = t0 == 0 ? out + T * nr : NULL;
                p->k->dwtaps(&a);
            }
        }
    }
}

static void dw_taps(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, float *dw, float *db,
                    const float *x, const float *dy, void *ws)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t nr = p->k->nr, T = p->cig * d->r * d->s, threads = ridge_ctx_threads(ctx);
    const size_t img = dw_taps_img(p);
    taps_job j = {p, x, dy, ws, (float *)((char *)ws + (size_t)threads * round_bytes(img)), 0};
    j.img = round_bytes(img) / sizeof(float);
    ridge_parallel_for(ctx, (size_t)(p->dw_chunks * p->ncob), 1, dw_taps_range, &j);
    for (int64_t co = 0; co < d->c_out; co++) {
        const int64_t cob = co / nr, jj = co % nr;
        for (int64_t t = 0; t <= T; t++) {
            if (t == T && !db) break;
            double s = 0;
            for (int64_t ch = 0; ch < p->dw_chunks; ch++)
                s += j.part[(size_t)(ch * p->ncob + cob) * (size_t)((T + 1) * nr) +
                            (size_t)(t * nr + jj)];
            if (t < T) dw[co * T + t] = (float)s;
            else db[co] = (float)s;
        }
    }
}

/* dw via lowering + SGEMM (NHWC): per chunk of images, per group,
 *   dW_g (cog x K) += dy_g^T (cog x P) col_g (P x K),  K = (r, s, ci),
 * (or its transpose when K < cog, so the GEMM's n is the longer side), then a permutation to
 * OIHW. dy is read in place (rows of c_out floats). SGEMM's bits do not
 * depend on the thread count, and the chunks are added in order. */
static ridge_status dw_im2col(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, float *dw,
                              float *db, const float *x, const float *dy, void *ws)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t RS = d->r * d->s, K = p->cig * RS, hw = p->oh * p->ow, imgs = im2col_images(p);
    const int tr = K < p->cog;
    float *col = ws;
    float *blk = (float *)((char *)ws + round_bytes((size_t)(imgs * hw * d->c_in * RS)));
    ridge_status st = RIDGE_OK;
    for (int64_t n0 = 0; n0 < d->n && !st; n0 += imgs) {
        const int64_t ni = RIDGE_MIN(imgs, d->n - n0), P = ni * hw;
        lower_args l = {p, x, col, n0, P};
        ridge_parallel_for(ctx, (size_t)(ni * p->oh), 1, lower_range, &l);
        for (int64_t g = 0; g < d->groups && !st; g++) {
            const float *a = dy + n0 * p->yv.sn + g * p->cog, *c = col + g * P * K;
            if (tr) /* dW_g^T (K x cog) = col_g^T dy_g: the long side as the GEMM's n */
                st = ridge_sgemm(ctx, RIDGE_TRANS, RIDGE_NO_TRANS, (size_t)K, (size_t)p->cog,
                                 (size_t)P, 1.0f, c, (size_t)K, a, (size_t)d->c_out,
                                 n0 ? 1.0f : 0.0f, blk + g * p->cog * K, (size_t)p->cog);
            else
                st = ridge_sgemm(ctx, RIDGE_TRANS, RIDGE_NO_TRANS, (size_t)p->cog, (size_t)K,
                                 (size_t)P, 1.0f, a, (size_t)d->c_out, c, (size_t)K,
                                 n0 ? 1.0f : 0.0f, blk + g * p->cog * K, (size_t)K);
        }
    }
    if (st) return st;
    for (int64_t co = 0; co < d->c_out; co++) {
        const int64_t g = co / p->cog, cl = co % p->cog;
        const float *bg = blk + g * p->cog * K;
        for (int64_t ci = 0; ci < p->cig; ci++)
            for (int64_t t = 0; t < RS; t++)
                dw[(co * p->cig + ci) * RS + t] =
                    tr ? bg[(t * p->cig + ci) * p->cog + cl] : bg[cl * K + t * p->cig + ci];
    }
    if (db) db_nhwc(p, dy, db);
    return RIDGE_OK;
}

/* dw by Winograd F(4x4, 3x3) (NHWC, groups 1). The forward's F(4,3) is
 *   y = A^T [(G g G^T) . (B^T d B)] A   per 4x4 output tile (d: its 6x6 input patch),
 * so the gradient of the kernel g given the tile's dy is
 *   dg = G^T [(A dy A^T) . (B^T d B)] G,
 * and summed over tiles and channels: per transform point xi (36 of them) a GEMM
 *   M[xi] (c_in x c_out) += V[xi]^T (c_in x tiles) Q[xi] (tiles x c_out),
 * V = B^T d B (the forward's input transform, zero-filled patches at the borders), Q = A dy A^T
 * (dy zero past the image), then dW = G^T M G per channel pair. 4x fewer multiplies than the
 * direct sum; error as the forward's F(4,3). The chunks of tiles go in pairs, one to each of
 * two parts (wdw_parts), each with its own V, Q and partial M; per chunk, the transforms, then
 * the GEMMs on the dwt tile, each item (part, xi, output-channel block) owning its block of its
 * part's M; at the end M = M0 + M1. On 1 thread, and on 2 for a pair, a part's chunk runs on
 * one thread, its transforms and GEMMs back to back, so on 2 threads each thread's GEMMs read
 * the V and Q it wrote itself; else the threads split the chunks' tiles, then their GEMM
 * items. With one V and Q, whose tiles the threads split one way and whose transform points
 * the other, each chunk's V and Q crossed between the cores, and on Zen 5 2 threads ran no
 * faster than 1 (3x3 64 -> 64 56 x 56 batch 8 1.04x, 32 -> 64 14 x 14 batch 64 0.80x; now
 * 1.47x and 1.8x the old 2-thread time). The sums depend on the chunks only, not on the
 * thread count. */
typedef struct wdw {
    const ridge_conv2d_bwd_plan *p;
    const float *x, *dy;
    float *V[2], *Q[2], *M[2], *dw;
    int64_t t0[2], nt[2], TB;
} wdw;

static void wdw_transform_range(void *arg, size_t b, size_t e, int ith)
{
    const wdw *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const int64_t cig = p->cig, cog = p->cog, nr = p->k->nr, cogp = p->ncob * nr;
    const int64_t tw = (p->ow + 3) / 4, tpi = (p->oh + 3) / 4 * tw;
    (void)ith;
    for (size_t it = b; it < e; it++) { /* part 0's tiles, then part 1's */
        const int part = (int64_t)it >= f->nt[0];
        const int64_t t = (int64_t)it - (part ? f->nt[0] : 0);
        const int64_t tt = f->t0[part] + t, n = tt / tpi, ty = tt % tpi / tw, tx = tt % tw;
        /* V[xi][t][ci]: the 6x6 patch of x (zeros outside), the forward's input transform */
        conv_patch pt;
        conv_patch_at(&pt, f->x, n * p->xv.sn, p->xv.sh, p->xv.sw, ty * 4 - d->pad_top,
                      tx * 4 - d->pad_left, d->h, d->w, 6);
        p->k->wino_in(4, &pt, cig, f->V[part] + t * cig, f->TB * cig);
        /* Q[xi][t][co] = (A dy A^T)[xi] (zeros past the image and past cog) */
        const int mh = (int)RIDGE_MIN(4, p->oh - ty * 4), mw = (int)RIDGE_MIN(4, p->ow - tx * 4);
        float *q = f->Q[part] + t * cogp;
        p->k->wino_dy(f->dy + n * p->yv.sn + ty * 4 * p->yv.sh + tx * 4 * p->yv.sw, p->yv.sh,
                      p->yv.sw, mh, mw, cog, q, f->TB * cogp);
        if (cogp > cog)
            for (int xi = 0; xi < 36; xi++)
                memset(q + xi * f->TB * cogp + cog, 0, (size_t)(cogp - cog) * sizeof(float));
    }
}

/* M[xi][cob][ci][nr] += V[xi]^T Q[xi] for items of ((part * 36 + xi) * ncob + cob) */
static void wdw_gemm_range(void *arg, size_t b, size_t e, int ith)
{
    const wdw *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const int nr = p->k->nr, mr = p->k->mr;
    const int64_t cig = p->cig, cogp = p->ncob * nr;
    (void)ith;
    conv_dwt_args a;
    a.xrs = 0, a.xps = cig, a.yrs = 0, a.yps = cogp;
    a.nrow = 1;
    for (size_t it = b; it < e; it++) {
        const int part = (int64_t)it >= 36 * p->ncob;
        const int64_t j = (int64_t)it - (part ? 36 * p->ncob : 0);
        const int64_t xi = j / p->ncob, cob = j % p->ncob;
        a.ncol = f->nt[part];
        a.dy = f->Q[part] + xi * f->TB * cogp + cob * nr;
        float *out = f->M[part] + (xi * p->ncob + cob) * cig * nr;
        for (int64_t ci = 0; ci < cig; ci += mr) {
            a.x = f->V[part] + xi * f->TB * cig + ci;
            a.mr = (int)RIDGE_MIN(mr, cig - ci), a.out = out + ci * nr;
            p->k->dwt(&a);
        }
    }
}

/* dW[co][ci] = G^T M G for items of (cob * cig + ci), the block's nr output channels as the
 * vectorized inner loop */
static void wdw_out_range(void *arg, size_t b, size_t e, int ith)
{
    const wdw *f = arg;
    const ridge_conv2d_bwd_plan *p = f->p;
    const int64_t nr = p->k->nr, cig = p->cig, cog = p->cog;
    const ptrdiff_t xs = p->ncob * cig * nr; /* between transform points in M */
    const float *g = conv_wino_mats_get(4)->g; /* G: 6 x 3 */
    (void)ith;
    for (size_t it = b; it < e; it++) {
        const int64_t cob = (int64_t)it / cig, ci = (int64_t)it % cig;
        const int64_t nco = RIDGE_MIN(nr, cog - cob * nr);
        const float *m = f->M[0] + (cob * cig + ci) * nr;
        float t[6][3][64], o[9][64];
        for (int i = 0; i < 6; i++) /* t = M G */
            for (int s = 0; s < 3; s++) {
                const float g0 = g[s], g1 = g[3 + s], g2 = g[6 + s], g3 = g[9 + s],
                            g4 = g[12 + s], g5 = g[15 + s];
                const float *mi = m + i * 6 * xs;
                for (int64_t j = 0; j < nr; j++)
                    t[i][s][j] = g0 * mi[j] + g1 * mi[xs + j] + g2 * mi[2 * xs + j] +
                                 g3 * mi[3 * xs + j] + g4 * mi[4 * xs + j] + g5 * mi[5 * xs + j];
            }
        for (int r = 0; r < 3; r++) /* o = G^T t */
            for (int s = 0; s < 3; s++)
                for (int64_t j = 0; j < nr; j++)
                    o[r * 3 + s][j] = g[r] * t[0][s][j] + g[3 + r] * t[1][s][j] +
                                      g[6 + r] * t[2][s][j] + g[9 + r] * t[3][s][j] +
                                      g[12 + r] * t[4][s][j] + g[15 + r] * t[5][s][j];
        for (int64_t j = 0; j < nco; j++)
            for (int k = 0; k < 9; k++) f->dw[((cob * nr + j) * cig + ci) * 9 + k] = o[k][j];
    }
}

/* Part q's chunk alone, on thread ith: its transforms, then its GEMMs */
static void wdw_part(wdw *f, int q, int ith)
{
    const size_t items = (size_t)(36 * f->p->ncob);
    if (!f->nt[q]) return;
    wdw_transform_range(f, q ? (size_t)f->nt[0] : 0, (size_t)(f->nt[0] + (q ? f->nt[1] : 0)),
                        ith);
    wdw_gemm_range(f, (size_t)q * items, (size_t)(q + 1) * items, ith);
}

/* The pair's parts over nth (1 or 2) threads: on 2, thread q runs part q */
static void wdw_part_task(void *arg, int ith, int nth)
{
    for (int q = ith; q < 2; q += nth) wdw_part(arg, q, ith);
}

/* M0 += M1 over [b, e) */
static void wdw_sum_range(void *arg, size_t b, size_t e, int ith)
{
    const wdw *f = arg;
    (void)ith;
    for (size_t i = b; i < e; i++) f->M[0][i] += f->M[1][i];
}

static void dw_winograd(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p, float *dw, float *db,
                        const float *x, const float *dy, void *ws)
{
    const int64_t TB = wdw_tiles_per_chunk(p), nr = p->k->nr, cogp = p->ncob * nr;
    const int64_t T = p->d.n * ((p->oh + 3) / 4) * ((p->ow + 3) / 4);
    const size_t m_elems = (size_t)(36 * p->ncob * p->cig * nr);
    const int parts = wdw_parts(p), threads = ridge_ctx_threads(ctx);
    wdw f = {.p = p, .x = x, .dy = dy, .dw = dw, .TB = TB};
    for (int q = 0; q < parts; q++) {
        char *w = (char *)ws + (size_t)q * wdw_part_stride(p);
        f.V[q] = (float *)w;
        f.Q[q] = (float *)(w += round_bytes((size_t)(36 * TB * p->cig)));
        f.M[q] = (float *)(w + round_bytes((size_t)(36 * TB * cogp)));
        memset(f.M[q], 0, m_elems * sizeof(float));
    }
    for (int64_t t0 = 0; t0 < T; t0 += parts * TB) {
        for (int q = 0; q < parts; q++) {
            f.t0[q] = t0 + q * TB;
            f.nt[q] = RIDGE_MAX(0, RIDGE_MIN(TB, T - f.t0[q]));
        }
        if (threads == 1 || (threads == 2 && f.nt[1])) {
            ridge_parallel_run(ctx, threads, wdw_part_task, &f);
        } else {
            ridge_parallel_for(ctx, (size_t)(f.nt[0] + f.nt[1]), 1, wdw_transform_range, &f);
            ridge_parallel_for(ctx, (size_t)((f.nt[1] ? 2 : 1) * 36 * p->ncob), 1,
                               wdw_gemm_range, &f);
        }
    }
    if (parts == 2) ridge_parallel_for(ctx, m_elems, 4096, wdw_sum_range, &f);
    ridge_parallel_for(ctx, (size_t)(p->ncob * p->cig), 1, wdw_out_range, &f);
    if (db) db_nhwc(p, dy, db);
}

ridge_status ridge_conv2d_backward_weights(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *p,
                                           float *dw, float *db, const float *x, const float *dy,
                                           void *ws)
{
    if (!ctx || !p || !dw || !x || !dy)
        return ridge_error(RIDGE_EINVAL, "conv2d_backward_weights: ctx, plan, dw, x or dy is NULL");
    const ridge_conv2d_desc *d = &p->d;
    if (p->weights_algo == RIDGE_CONV_REF)
        return conv_backward_weights_ref(d, p->oh, p->ow, dw, db, x, dy);
    const int64_t RS = d->r * d->s;
    if (p->weights_algo == RIDGE_CONV_DEPTHWISE) {
        bwd f = {p, dw, x, dy, NULL, NULL, db};
        ridge_parallel_for(ctx, (size_t)((d->c_out + 15) / 16), 1, dw_depthwise_range, &f);
        return RIDGE_OK;
    }
    if (p->weights_algo == RIDGE_CONV_WINOGRAD_4X3) {
        ridge_status st = areas_ws(ctx, p, "conv2d_backward_weights", wdw_ws(p), &ws);
        if (!st) dw_winograd(ctx, p, dw, db, x, dy, ws);
        return st;
    }
    if (p->dw_toff) {
        ridge_status st = areas_ws(ctx, p, "conv2d_backward_weights",
                                  dw_taps_ws(p, ridge_ctx_threads(ctx)), &ws);
        if (!st) dw_taps(ctx, p, dw, db, x, dy, ws);
        return st;
    }
    if (p->weights_algo == RIDGE_CONV_IM2COL) {
        /* SGEMM uses the ctx's scratch arena: without a caller's workspace, allocate one */
        void *own = NULL;
        if (!ws && !(ws = own = ridge_malloc(p->ws_weights)))
            return ridge_error(RIDGE_ENOMEM, "conv2d_backward_weights: out of memory for %zu "
                               "bytes of workspace", p->ws_weights);
        ridge_status st = dw_im2col(ctx, p, dw, db, x, dy, ws);
        ridge_free(own);
        return st;
    }
    if (!ws) {
        ridge_status st = ridge_ctx_scratch(ctx, p->ws_weights, &ws);
        if (st) return st;
    }
    const int64_t nr = p->k->nr, nblk = d->groups * p->ncob;
    float *pack = ws;
    float *blocked =
        (float *)((char *)ws + round_bytes((size_t)(nblk * d->n * p->oh * p->ow * nr)));
    bwd f = {p, blocked, x, dy, NULL, pack, db};
    ridge_parallel_for(ctx, (size_t)nblk, 1, pack_dy, &f);
    ridge_parallel_for(ctx, (size_t)(nblk * RS), 1, p->dw_nhwc ? dw_nhwc_range : dw_direct_range,
                       &f);
    /* blocked [g][cob][t][ci][NR] -> OIHW */
    for (int64_t co = 0; co < d->c_out; co++) {
        int64_t g = co / p->cog, cl = co % p->cog, cob = cl / nr, j = cl % nr;
        const float *src = blocked + (size_t)((g * p->ncob + cob) * RS) * (size_t)(p->cig * nr);
        for (int64_t ci = 0; ci < p->cig; ci++)
            for (int64_t t = 0; t < RS; t++)
                dw[(co * p->cig + ci) * RS + t] = src[(t * p->cig + ci) * nr + j];
    }
    return RIDGE_OK;
}

/* ---- references ------------------------------------------------------------------------------ */

ridge_status ridge_conv2d_backward_data_ref(const ridge_conv2d_desc *d, float *dx,
                                            const float *dy, const float *w)
{
    int64_t oh, ow;
    ridge_status st = ridge_conv2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!dx || !dy || !w) return ridge_error(RIDGE_EINVAL, "conv2d_backward_data_ref: NULL tensor");
    return conv_backward_data_ref(d, oh, ow, dx, dy, w);
}

ridge_status ridge_conv2d_backward_weights_ref(const ridge_conv2d_desc *d, float *dw, float *db,
                                               const float *x, const float *dy)
{
    int64_t oh, ow;
    ridge_status st = ridge_conv2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!dw || !x || !dy)
        return ridge_error(RIDGE_EINVAL, "conv2d_backward_weights_ref: NULL tensor");
    return conv_backward_weights_ref(d, oh, ow, dw, db, x, dy);
}
