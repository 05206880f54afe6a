/* Convolution backward (issue 8): dx and dw/db of every backward algorithm x layout x ISA
 * present x 1 and 2 threads, against the fp64 reference over the forward tests' edge shapes
 * (stride, dilation, asymmetric padding, groups, depthwise, 1x1 .. 7x7, windows larger than
 * the image); the references against central finite differences of an independent fp64
 * forward written here; bit-identical results for 1 and 2 threads; bad arguments refused.
 *
 * Error measure, as in test-conv.c: |got - ref| / (the same gradient of |inputs|), in units of
 * FLT_EPSILON, within K + 4 where K is the number of terms each output sums:
 * c_out/groups * r * s for dx, n * oh * ow for dw and db. */
#include <float.h>
#include <math.h>

#include "test.h"

typedef struct shape {
    const char *name;
    int64_t n, ci, h, w, co, r, s, sh, sw, dh, dw, pt, pb, pl, pr, g;
} shape;

static const shape shapes[] = {
    /* name             n  ci  h   w   co  r  s  sh sw dh dw pt pb pl pr g */
    {"1x1",             1, 5,  7,  3,  19, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"1x1-c33",         2, 33, 5,  4,  35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"1x1-stride2",     1, 8,  9,  7,  10, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},
    {"3x3-pad1",        1, 16, 9,  11, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-c40",         2, 40, 8,  7,  36, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-nopad",       1, 6,  8,  9,  20, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1},
    {"3x3-asym",        1, 7,  8,  6,  9,  3, 3, 1, 1, 1, 1, 0, 2, 1, 0, 1},
    {"3x3-batch3",      3, 3,  5,  7,  24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-stride2",     1, 9,  11, 10, 13, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-stride3",     1, 4,  10, 11, 6,  3, 3, 3, 3, 1, 1, 1, 0, 2, 1, 1},
    {"3x3-dil2",        1, 8,  10, 10, 8,  3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1},
    {"3x3-s2-dil2",     1, 5,  12, 11, 7,  3, 3, 2, 2, 2, 2, 2, 1, 2, 2, 1},
    {"4x4-s2-dil3",     1, 3,  13, 14, 5,  4, 4, 2, 2, 3, 3, 1, 3, 0, 2, 1},
    {"5x5-stride2",     1, 3,  13, 12, 8,  5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1},
    {"5x5-on-3x3",      1, 4,  3,  3,  5,  5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
    {"3x3-on-1x1",      1, 6,  1,  1,  7,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-on-2x3",      2, 5,  2,  3,  9,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"7x7-first",       1, 3,  17, 19, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},
    {"3x3-groups2",     1, 8,  7,  7,  12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"3x3-groups4",     1, 12, 6,  5,  8,  3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {"dw-c19",          1, 19, 11, 5,  19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19},
    {"dw-c32-stride2",  1, 32, 9,  9,  32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 32},
    /* depthwise dx by phases, each (row, column phase) one blocked call: 5x5 stride 2 over 17
     * pixels a phase with a channel tail, 7x7 stride 2 over 30, stride 3 (one tap a phase),
     * an even window with uneven padding, and 1x1 stride 2 (a phase without taps: segments) */
    {"dw-5x5-s2-w33",   1, 20, 9,  33, 20, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 20},
    {"dw-7x7-s2-w60",   2, 16, 8,  60, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 16},
    {"dw-3x3-s3-w40",   1, 16, 10, 40, 16, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 16},
    {"dw-4x4-s2-asym",  1, 32, 9,  31, 32, 4, 4, 2, 2, 1, 1, 1, 2, 2, 1, 32},
    {"dw-1x1-s2",       1, 16, 6,  7,  16, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 16},
    {"dw-5x5-batch3",   3, 20, 7,  8,  20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 20},
    {"dw-mult2",        1, 6,  6,  6,  12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},
    /* depthwise dx at stride 1 by the forward kernel on the turned window (padding R - 1 - pad):
     * uneven padding, none (2 each side), a causal 1 x 4, a window larger than the image, and
     * the phase path's (padding past the window, dilation) */
    {"dw-7x7-asym",     2, 24, 12, 15, 24, 7, 7, 1, 1, 1, 1, 3, 2, 1, 3, 24},
    {"dw-3x3-nopad",    1, 33, 6,  9,  33, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 33},
    /* dx by the flipped forward reading dy through the depthwise ring (pixels 4 KiB apart; a
     * 7x7 window over channels 1 KiB apart) */
    {"dw-c1024-ring",   2, 1024, 5, 7, 1024, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1024},
    {"dw-7x7-c256-ring", 1, 256, 6, 7, 256, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 256},
    {"dw-1x4-causal",   1, 16, 1,  40, 16, 1, 4, 1, 1, 1, 1, 0, 0, 3, 0, 16},
    {"dw-5x5-on-2x3",   1, 20, 2,  3,  20, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 20},
    {"dw-3x2-pad3",     1, 17, 5,  6,  17, 3, 2, 1, 1, 1, 1, 3, 3, 2, 2, 17},
    {"dw-3x3-dil2",     1, 16, 9,  9,  16, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 16},
    {"prime-13x7",      1, 11, 13, 7,  23, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* whole output-channel blocks per group, strides, groups with 5 channels (dwt tiles) */
    {"3x3-co32-s2",     2, 13, 9,  8,  32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
    {"3x3-g2-co64",     1, 10, 7,  6,  64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
    {"5x5-dil2-co16",   1, 7,  11, 10, 16, 5, 5, 1, 1, 2, 2, 3, 2, 4, 3, 1},
    /* Winograd dw over two chunks of tiles (100 tiles; at most 82 per chunk for NR 16) */
    {"3x3-wino-chunks", 4, 40, 17, 18, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* ... and over three (150 tiles, 50 per chunk for NR 32): a pair, then a chunk alone */
    {"3x3-wino-chunks3", 6, 40, 17, 18, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* thin layers, output channels in blocks of 32 (dw direct: the dwtaps tile on a padded
     * copy): one and two input channels, strides, dilation, uneven padding, 7 x 7 (49 taps:
     * several passes of 12 or 5), more images than the 32 chunks */
    {"thin-c1-co32",    3, 1,  9,  8,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {"thin-c2-s2-dil2", 2, 2,  11, 10, 64, 3, 3, 2, 2, 2, 2, 2, 1, 0, 2, 1},
    {"thin-7x7-s2",     1, 1,  12, 13, 32, 7, 7, 2, 2, 1, 1, 3, 2, 3, 1, 1},
    {"thin-batch35",    35, 1, 5,  4,  32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = frand(&seed);
}

static ridge_conv2d_desc desc_of(const shape *s, ridge_layout l)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = s->n, d.c_in = s->ci, d.h = s->h, d.w = s->w, d.c_out = s->co, d.r = s->r, d.s = s->s;
    d.stride_h = s->sh, d.stride_w = s->sw, d.dil_h = s->dh, d.dil_w = s->dw;
    d.pad_top = s->pt, d.pad_bottom = s->pb, d.pad_left = s->pl, d.pad_right = s->pr;
    d.groups = s->g, d.layout = l;
    return d;
}

static float *fabs_copy(const float *a, size_t n)
{
    float *b = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) b[i] = fabsf(a[i]);
    return b;
}

/* max |got - ref| / mag in units of eps; NaN counts as infinite */
static double err_eps(const float *got, const float *ref, const float *mag, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]) / ((double)mag[i] + 1e-30) / FLT_EPSILON;
        if (!(e <= worst)) worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

static double worst_dx, worst_dw, worst_wino, worst_wdw;

static void test_shape(const shape *s, ridge_layout l, ridge_ctx *const *ctxs, int nctx)
{
    ridge_conv2d_desc d = desc_of(s, l);
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    size_t xn = ridge_tensor_elems(l, d.n, d.c_in, d.h, d.w);
    size_t yn = ridge_tensor_elems(l, d.n, d.c_out, oh, ow);
    size_t wn = (size_t)(d.c_out * (d.c_in / d.groups) * d.r * d.s), bn = (size_t)d.c_out;
    size_t xn0 = (size_t)(d.n * d.c_in * d.h * d.w), yn0 = (size_t)(d.n * d.c_out * oh * ow);
    float *x0 = malloc(xn0 * 4), *dy0 = malloc(yn0 * 4), *x = malloc(xn * 4), *dy = malloc(yn * 4);
    float *w = malloc(wn * 4), *dxr = malloc(xn * 4), *dxm = malloc(xn * 4);
    float *dwr = malloc((wn + bn) * 4), *dwm = malloc((wn + bn) * 4);
    float *dx[2], *dw[2];
    for (int t = 0; t < 2; t++) dx[t] = malloc(xn * 4), dw[t] = malloc((wn + bn) * 4);
    fill(x0, xn0, 11), fill(dy0, yn0, 12), fill(w, wn, 13);
    CHECK_OK(ridge_layout_reorder(ctxs[0], x, l, x0, RIDGE_NCHW, d.n, d.c_in, d.h, d.w));
    CHECK_OK(ridge_layout_reorder(ctxs[0], dy, l, dy0, RIDGE_NCHW, d.n, d.c_out, oh, ow));
    float *xa = fabs_copy(x, xn), *dya = fabs_copy(dy, yn), *wa = fabs_copy(w, wn);
    CHECK_OK(ridge_conv2d_backward_data_ref(&d, dxr, dy, w));
    CHECK_OK(ridge_conv2d_backward_data_ref(&d, dxm, dya, wa));
    CHECK_OK(ridge_conv2d_backward_weights_ref(&d, dwr, dwr + wn, x, dy));
    CHECK_OK(ridge_conv2d_backward_weights_ref(&d, dwm, dwm + wn, xa, dya));
    const double kdx = (double)(d.c_out / d.groups * d.r * d.s) + 4,
                 kdw = (double)(d.n * oh * ow) + 4;
    const int dwise = d.groups == d.c_in && d.groups == d.c_out && l != RIDGE_NCHW;
    /* (data, weights) algorithm pairs */
    const ridge_conv_algo algos[6][2] = {{RIDGE_CONV_DIRECT, RIDGE_CONV_DIRECT},
                                         {RIDGE_CONV_DEPTHWISE, RIDGE_CONV_DEPTHWISE},
                                         {RIDGE_CONV_IM2COL, RIDGE_CONV_IM2COL},
                                         {RIDGE_CONV_WINOGRAD_2X3, RIDGE_CONV_DIRECT},
                                         {RIDGE_CONV_WINOGRAD_4X3, RIDGE_CONV_DIRECT},
                                         {RIDGE_CONV_WINOGRAD_4X3, RIDGE_CONV_WINOGRAD_4X3}};
    const int wino = d.r == 3 && d.s == 3 && d.stride_h == 1 && d.stride_w == 1 &&
                     d.dil_h == 1 && d.dil_w == 1;

    for (int ai = 0; ai < 6; ai++) {
        if (algos[ai][0] == RIDGE_CONV_DEPTHWISE && !dwise) continue;
        if (algos[ai][0] == RIDGE_CONV_IM2COL && l != RIDGE_NHWC) continue;
        if (ai >= 3 && !wino) continue;
        if (ai == 5 && (l != RIDGE_NHWC || d.groups != 1)) continue; /* Winograd dw */
        /* Winograd's transforms grow the error (test-conv.c's tolerances) */
        const double kx = kdx * (ai == 3 ? 16 : ai >= 4 ? 128 : 1);
        const double kw = kdw * (ai == 5 ? 128 : 1);
        for (int ci = 0; ci < nctx; ci++) {
            for (int t = 0; t < 2; t++) {
                ridge_ctx *ctx = ctxs[ci * 2 + t];
                ridge_conv2d_bwd_options o = {algos[ai][0], algos[ai][1]};
                ridge_conv2d_bwd_plan *p = NULL;
                CHECK_OK(ridge_conv2d_bwd_plan_create(ctx, &d, &o, &p));
                if (!p) continue;
                for (size_t i = 0; i < xn; i++) dx[t][i] = NAN;
                for (size_t i = 0; i < wn + bn; i++) dw[t][i] = NAN;
                CHECK_OK(ridge_conv2d_backward_data(ctx, p, dx[t], dy, w, NULL));
                CHECK_OK(ridge_conv2d_backward_weights(ctx, p, dw[t], dw[t] + wn, x, dy, NULL));
                double ex = err_eps(dx[t], dxr, dxm, xn), ew = err_eps(dw[t], dwr, dwm, wn + bn);
                if (ai < 3 && ex > worst_dx) worst_dx = ex;
                if (ai >= 3 && ex > worst_wino) worst_wino = ex;
                if (ai < 5 && ew > worst_dw) worst_dw = ew;
                if (ai == 5 && ew > worst_wdw) worst_wdw = ew;
                CHECKF(ex <= kx, "%s %s %s %s threads %d: dx error %.1f eps > %.0f", s->name,
                       ridge_layout_name(l), ridge_conv_algo_name(algos[ai][0]),
                       ridge_isa_name(ridge_ctx_isa(ctx)), t + 1, ex, kx);
                CHECKF(ew <= kw, "%s %s %s %s threads %d: dw error %.1f eps > %.0f", s->name,
                       ridge_layout_name(l), ridge_conv_algo_name(algos[ai][1]),
                       ridge_isa_name(ridge_ctx_isa(ctx)), t + 1, ew, kw);
                ridge_conv2d_bwd_plan_destroy(p);
            }
            CHECKF(!memcmp(dx[0], dx[1], xn * 4) && !memcmp(dw[0], dw[1], (wn + bn) * 4),
                   "%s %s %s: 1 and 2 threads differ", s->name, ridge_layout_name(l),
                   ridge_conv_algo_name(algos[ai][0]));
        }
    }
    free(x0), free(dy0), free(x), free(dy), free(w), free(dxr), free(dxm), free(dwr), free(dwm);
    free(xa), free(dya), free(wa);
    for (int t = 0; t < 2; t++) free(dx[t]), free(dw[t]);
}

/* ---- finite differences against an independent fp64 forward (NCHW) --------------------------- */

static double loss64(const ridge_conv2d_desc *d, int64_t oh, int64_t ow, const double *x,
                     const double *w, const double *b, const double *g)
{
    const int64_t cig = d->c_in / d->groups, cog = d->c_out / d->groups;
    double L = 0;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t co = 0; co < d->c_out; co++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++) {
                    double y = b[co];
                    for (int64_t c = 0; c < cig; c++)
                        for (int64_t r = 0; r < d->r; r++)
                            for (int64_t s = 0; s < d->s; s++) {
                                int64_t ih = i * d->stride_h - d->pad_top + r * d->dil_h;
                                int64_t iw = j * d->stride_w - d->pad_left + s * d->dil_w;
                                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) continue;
                                int64_t xc = co / cog * cig + c;
                                y += x[((n * d->c_in + xc) * d->h + ih) * d->w + iw] *
                                     w[((co * cig + c) * d->r + r) * d->s + s];
                            }
                    L += y * g[((n * d->c_out + co) * oh + i) * ow + j];
                }
    return L;
}

/* dL/dv by central differences for every element of v (n of them), L = sum(g * conv). */
static void fd(const ridge_conv2d_desc *d, int64_t oh, int64_t ow, double *x, double *w,
               double *b, const double *g, double *v, size_t n, double *out)
{
    const double h = 1e-3;
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + h;
        double lp = loss64(d, oh, ow, x, w, b, g);
        v[i] = keep - h;
        double lm = loss64(d, oh, ow, x, w, b, g);
        v[i] = keep;
        out[i] = (lp - lm) / (2 * h);
    }
}

static void test_fd(const shape *s, ridge_ctx *ctx)
{
    ridge_conv2d_desc d = desc_of(s, RIDGE_NCHW);
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    size_t xn = (size_t)(d.n * d.c_in * d.h * d.w), yn = (size_t)(d.n * d.c_out * oh * ow);
    size_t wn = (size_t)(d.c_out * (d.c_in / d.groups) * d.r * d.s), bn = (size_t)d.c_out;
    float *x = malloc(xn * 4), *w = malloc(wn * 4), *g = malloc(yn * 4);
    float *dx = malloc(xn * 4), *dw = malloc((wn + bn) * 4);
    double *x64 = malloc(xn * 8), *w64 = malloc(wn * 8), *b64 = calloc(bn, 8),
           *g64 = malloc(yn * 8);
    double *fx = malloc(xn * 8), *fw = malloc((wn + bn) * 8);
    fill(x, xn, 21), fill(w, wn, 22), fill(g, yn, 23);
    for (size_t i = 0; i < xn; i++) x64[i] = x[i];
    for (size_t i = 0; i < wn; i++) w64[i] = w[i];
    for (size_t i = 0; i < yn; i++) g64[i] = g[i];
    fd(&d, oh, ow, x64, w64, b64, g64, x64, xn, fx);
    fd(&d, oh, ow, x64, w64, b64, g64, w64, wn, fw);
    fd(&d, oh, ow, x64, w64, b64, g64, b64, bn, fw + wn);
    /* the reference and the fast paths, each against the finite differences: AUTO on NCHW,
     * AUTO on NHWC, direct dw on NHWC (the in-place tile), Winograd dx and dw on NHWC (where
     * they apply) */
    float *xh = malloc(xn * 4), *gh = malloc(yn * 4), *dxh = malloc(xn * 4);
    CHECK_OK(ridge_layout_reorder(ctx, xh, RIDGE_NHWC, x, RIDGE_NCHW, d.n, d.c_in, d.h, d.w));
    CHECK_OK(ridge_layout_reorder(ctx, gh, RIDGE_NHWC, g, RIDGE_NCHW, d.n, d.c_out, oh, ow));
    for (int fast = 0; fast < 5; fast++) {
        double tx = 1e-5, tw = 1e-5; /* Winograd: float rounding grown by its transforms */
        if (fast) {
            ridge_conv2d_desc dl = d;
            ridge_conv2d_bwd_options o;
            ridge_conv2d_bwd_options_init(&o);
            if (fast > 1) dl.layout = RIDGE_NHWC;
            if (fast == 3) o.weights_algo = RIDGE_CONV_DIRECT;
            if (fast == 4) o.data_algo = o.weights_algo = RIDGE_CONV_WINOGRAD_4X3;
            ridge_conv2d_bwd_plan *p = NULL;
            ridge_status st = ridge_conv2d_bwd_plan_create(ctx, &dl, &o, &p);
            if (fast == 4 && st == RIDGE_EUNSUPPORTED) continue;
            CHECK_OK(st);
            if (!p) continue;
            if (ridge_conv2d_bwd_plan_data_algo(p) == RIDGE_CONV_WINOGRAD_4X3) tx = 1e-4;
            if (ridge_conv2d_bwd_plan_weights_algo(p) == RIDGE_CONV_WINOGRAD_4X3) tw = 1e-4;
            const float *xi = fast > 1 ? xh : x, *gi = fast > 1 ? gh : g;
            CHECK_OK(ridge_conv2d_backward_data(ctx, p, fast > 1 ? dxh : dx, gi, w, NULL));
            CHECK_OK(ridge_conv2d_backward_weights(ctx, p, dw, dw + wn, xi, gi, NULL));
            if (fast > 1)
                CHECK_OK(ridge_layout_reorder(ctx, dx, RIDGE_NCHW, dxh, RIDGE_NHWC, d.n, d.c_in,
                                              d.h, d.w));
            ridge_conv2d_bwd_plan_destroy(p);
        } else {
            CHECK_OK(ridge_conv2d_backward_data_ref(&d, dx, g, w));
            CHECK_OK(ridge_conv2d_backward_weights_ref(&d, dw, dw + wn, x, g));
        }
        double ex = 0, ew = 0;
        for (size_t i = 0; i < xn; i++) ex = fmax(ex, fabs(dx[i] - fx[i]) / (1 + fabs(fx[i])));
        for (size_t i = 0; i < wn + bn; i++)
            ew = fmax(ew, fabs(dw[i] - fw[i]) / (1 + fabs(fw[i])));
        CHECKF(ex < tx && ew < tw, "%s finite differences (%s): dx %.2e, dw %.2e", s->name,
               fast == 0   ? "ref"
               : fast == 1 ? "nchw auto"
               : fast == 2 ? "nhwc auto"
               : fast == 3 ? "nhwc direct dw"
                           : "nhwc winograd", ex, ew);
    }
    free(xh), free(gh), free(dxh);
    free(x), free(w), free(g), free(dx), free(dw), free(x64), free(w64), free(b64), free(g64);
    free(fx), free(fw);
}

/* Winograd dx: one plan, a caller's workspace (query-then-provide), called with two different
 * weight tensors (each call transforms its own), then refused on a ctx with more threads than
 * the workspace was sized for unless the workspace is the ctx's. */
static void test_wino_reuse(ridge_ctx *c1, ridge_ctx *c2)
{
    const shape sh = {"wino-reuse", 2, 24, 9, 10, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    ridge_conv2d_desc d = desc_of(&sh, RIDGE_NHWC);
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    const size_t xn = (size_t)(d.n * d.c_in * d.h * d.w), yn = (size_t)(d.n * d.c_out * oh * ow);
    const size_t wn = (size_t)(d.c_out * d.c_in * 9);
    float *dy = malloc(yn * 4), *w = malloc(2 * wn * 4), *dx = malloc(xn * 4);
    float *ref = malloc(xn * 4), *mag = malloc(xn * 4);
    fill(dy, yn, 21), fill(w, 2 * wn, 22);
    float *dya = fabs_copy(dy, yn), *wa = fabs_copy(w, 2 * wn);
    ridge_conv2d_bwd_options o = {RIDGE_CONV_WINOGRAD_4X3, RIDGE_CONV_WINOGRAD_4X3};
    ridge_conv2d_bwd_plan *p = NULL;
    CHECK_OK(ridge_conv2d_bwd_plan_create(c1, &d, &o, &p));
    { /* dw through a caller's workspace too */
        float *x = malloc(xn * 4), *dwg = malloc((wn + 20) * 4), *dwr = malloc((wn + 20) * 4);
        float *dwm = malloc((wn + 20) * 4);
        fill(x, xn, 23);
        float *xa = fabs_copy(x, xn);
        size_t wb = ridge_conv2d_bwd_weights_workspace_size(p);
        void *wws = aligned_alloc(64, (wb + 63) / 64 * 64);
        CHECK_OK(ridge_conv2d_backward_weights(c1, p, dwg, dwg + wn, x, dy, wws));
        CHECK_OK(ridge_conv2d_backward_weights_ref(&d, dwr, dwr + wn, x, dy));
        CHECK_OK(ridge_conv2d_backward_weights_ref(&d, dwm, dwm + wn, xa, dya));
        double e = err_eps(dwg, dwr, dwm, wn + 20);
        CHECKF(e <= 128.0 * (2 * 9 * 10 + 4), "winograd dw, caller's workspace: error %.1f eps", e);
        if (c2) CHECK(ridge_conv2d_backward_weights(c2, p, dwg, NULL, x, dy, wws) == RIDGE_EINVAL);
        free(wws), free(x), free(xa), free(dwg), free(dwr), free(dwm);
    }
    size_t bytes = ridge_conv2d_bwd_data_workspace_size(p);
    CHECK(bytes > 0);
    void *ws = aligned_alloc(64, (bytes + 63) / 64 * 64);
    for (int k = 0; k < 2; k++) {
        CHECK_OK(ridge_conv2d_backward_data_ref(&d, ref, dy, w + k * wn));
        CHECK_OK(ridge_conv2d_backward_data_ref(&d, mag, dya, wa + k * wn));
        for (size_t i = 0; i < xn; i++) dx[i] = NAN;
        CHECK_OK(ridge_conv2d_backward_data(c1, p, dx, dy, w + k * wn, ws));
        double e = err_eps(dx, ref, mag, xn);
        CHECKF(e <= 128.0 * (20 * 9 + 4), "winograd dx with weights %d: error %.1f eps", k, e);
    }
    if (c2) {
        CHECK(ridge_conv2d_backward_data(c2, p, dx, dy, w, ws) == RIDGE_EINVAL);
        CHECK(strstr(ridge_last_error(), "threads") != NULL);
        CHECK_OK(ridge_conv2d_backward_data(c2, p, dx, dy, w, NULL));
        CHECK_OK(ridge_conv2d_backward_data_ref(&d, ref, dy, w));
        CHECK_OK(ridge_conv2d_backward_data_ref(&d, mag, dya, wa));
        CHECK(err_eps(dx, ref, mag, xn) <= 128.0 * (20 * 9 + 4));
    }
    ridge_conv2d_bwd_plan_destroy(p);
    free(ws), free(dy), free(w), free(dx), free(ref), free(mag), free(dya), free(wa);
}

/* Depthwise dx at C 1024: the flipped forward reads dy through its per-thread ring, so a
 * caller's workspace is sized for the plan's threads, as Winograd's: refused on a ctx with more
 * threads, NULL taking the ctx's. */
static void test_dw_ring_ws(ridge_ctx *c1, ridge_ctx *c2)
{
    const shape sh = {"dw-ring-ws", 1, 1024, 4, 5, 1024, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1024};
    ridge_conv2d_desc d = desc_of(&sh, RIDGE_NHWC);
    const size_t xn = (size_t)(d.c_in * d.h * d.w), wn = (size_t)(d.c_out * 9);
    float *dy = malloc(xn * 4), *w = malloc(wn * 4), *dx = malloc(xn * 4), *ref = malloc(xn * 4);
    fill(dy, xn, 31), fill(w, wn, 32);
    float *dya = fabs_copy(dy, xn), *wa = fabs_copy(w, wn), *mag = malloc(xn * 4);
    CHECK_OK(ridge_conv2d_backward_data_ref(&d, ref, dy, w));
    CHECK_OK(ridge_conv2d_backward_data_ref(&d, mag, dya, wa));
    ridge_conv2d_bwd_options o = {RIDGE_CONV_DEPTHWISE, RIDGE_CONV_AUTO};
    ridge_conv2d_bwd_plan *p = NULL;
    CHECK_OK(ridge_conv2d_bwd_plan_create(c1, &d, &o, &p));
    size_t bytes = ridge_conv2d_bwd_data_workspace_size(p);
    void *ws = aligned_alloc(64, (bytes + 63) / 64 * 64);
    CHECK_OK(ridge_conv2d_backward_data(c1, p, dx, dy, w, ws));
    CHECKF(err_eps(dx, ref, mag, xn) <= 64.0 * 13, "depthwise ring dx: error %.1f eps",
           err_eps(dx, ref, mag, xn));
    if (c2 && ridge_ctx_threads(c2) > ridge_ctx_threads(c1)) {
        CHECK(ridge_conv2d_backward_data(c2, p, dx, dy, w, ws) == RIDGE_EINVAL);
        CHECK(strstr(ridge_last_error(), "threads") != NULL);
        for (size_t i = 0; i < xn; i++) dx[i] = NAN;
        CHECK_OK(ridge_conv2d_backward_data(c2, p, dx, dy, w, NULL));
        CHECK(err_eps(dx, ref, mag, xn) <= 64.0 * 13);
    }
    ridge_conv2d_bwd_plan_destroy(p);
    free(ws), free(dy), free(w), free(dx), free(ref), free(mag), free(dya), free(wa);
}

static void test_errors(ridge_ctx *ctx)
{
    ridge_conv2d_desc d = desc_of(&shapes[3], RIDGE_NHWC);
    ridge_conv2d_bwd_plan *p = (ridge_conv2d_bwd_plan *)1;
    ridge_conv2d_bwd_options o = {RIDGE_CONV_AUTO, RIDGE_CONV_WINOGRAD_2X3};
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d, &o, &p) == RIDGE_EUNSUPPORTED && p == NULL);
    CHECK(strstr(ridge_last_error(), "winograd") != NULL); /* no Winograd weights gradient */
    ridge_conv2d_desc d2 = desc_of(&shapes[8], RIDGE_NHWC); /* 3x3 stride 2 */
    o.data_algo = RIDGE_CONV_WINOGRAD_4X3, o.weights_algo = RIDGE_CONV_AUTO;
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d2, &o, &p) == RIDGE_EUNSUPPORTED);
    CHECK(strstr(ridge_last_error(), "stride 1") != NULL);
    o.data_algo = RIDGE_CONV_DEPTHWISE;
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d, &o, &p) == RIDGE_EUNSUPPORTED);
    CHECK(strstr(ridge_last_error(), "groups") != NULL);
    o.data_algo = RIDGE_CONV_AUTO, o.weights_algo = RIDGE_CONV_IM2COL;
    d.layout = RIDGE_NCHW;
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d, &o, &p) == RIDGE_EUNSUPPORTED);
    CHECK(strstr(ridge_last_error(), "nhwc") != NULL);
    d.layout = RIDGE_NHWC, o.weights_algo = RIDGE_CONV_AUTO;
    o.data_algo = (ridge_conv_algo)99;
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d, &o, &p) == RIDGE_EINVAL);
    d.groups = 3;
    CHECK(ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &p) == RIDGE_EINVAL);
    d.groups = 1;
    CHECK_OK(ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &p)); /* 9 Winograd tiles: direct */
    CHECK(ridge_conv2d_bwd_plan_data_algo(p) == RIDGE_CONV_DIRECT);
    CHECK(ridge_conv2d_bwd_plan_weights_algo(p) == RIDGE_CONV_DIRECT);
    ridge_conv2d_bwd_plan_destroy(p);
    d.n = 4; /* 36 tiles */
    CHECK_OK(ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &p));
    CHECK(ridge_conv2d_bwd_plan_data_algo(p) == RIDGE_CONV_WINOGRAD_4X3);
    CHECK(ridge_conv2d_bwd_plan_weights_algo(p) == RIDGE_CONV_WINOGRAD_4X3);
    ridge_conv2d_bwd_plan_destroy(p);
    d.c_in = 2; /* AUTO dw and dx on NHWC with 2 input channels: im2col */
    CHECK_OK(ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &p));
    CHECK(ridge_conv2d_bwd_plan_weights_algo(p) == RIDGE_CONV_IM2COL);
    CHECK(ridge_conv2d_bwd_plan_data_algo(p) == RIDGE_CONV_IM2COL);
    ridge_conv2d_bwd_plan_destroy(p);
    d.c_in = 16, d.r = d.s = 1, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0;
    CHECK_OK(ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &p)); /* 1x1: im2col */
    CHECK(ridge_conv2d_bwd_plan_weights_algo(p) == RIDGE_CONV_IM2COL);
    d.r = d.s = 3, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    float v = 0;
    CHECK(ridge_conv2d_backward_data(ctx, p, NULL, &v, &v, NULL) == RIDGE_EINVAL);
    CHECK(ridge_conv2d_backward_weights(ctx, p, &v, NULL, NULL, &v, NULL) == RIDGE_EINVAL);
    ridge_conv2d_bwd_plan_destroy(p);
    ridge_conv2d_bwd_plan_destroy(NULL);
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && !strcmp(argv[1], "-v");
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    ridge_ctx *ctxs[6];
    int nctx = 0;
    for (int i = 0; i < 3; i++) {
        ridge_ctx *c1 = test_ctx(1, isas[i]);
        if (!c1) continue;
        ctxs[nctx * 2] = c1;
        ctxs[nctx * 2 + 1] = test_ctx(2, isas[i]);
        nctx++;
    }
    test_errors(ctxs[0]);
    test_wino_reuse(ctxs[nctx * 2 - 2], ctxs[nctx * 2 - 1]);
    test_dw_ring_ws(ctxs[nctx * 2 - 2], ctxs[nctx * 2 - 1]);
    const ridge_layout layouts[] = {RIDGE_NCHW, RIDGE_NHWC, RIDGE_NCHW16C};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int l = 0; l < 3; l++) test_shape(&shapes[i], layouts[l], ctxs, nctx);
    static const shape fds[] = {
        {"fd-3x3", 2, 3, 5, 4, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {"fd-s2-dil2", 1, 4, 7, 6, 3, 3, 3, 2, 2, 2, 2, 1, 2, 2, 0, 1},
        {"fd-groups2", 1, 4, 4, 5, 6, 3, 2, 1, 2, 1, 1, 1, 1, 0, 1, 2},
        {"fd-5x5", 1, 2, 6, 6, 2, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},
        {"fd-3x3-c8", 1, 8, 5, 6, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    };
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++) test_fd(&fds[i], ctxs[nctx * 2 - 2]);
    if (verbose)
        printf("worst error: dx %.1f eps, dw %.1f eps, winograd dx %.1f eps, winograd dw %.1f "
               "eps\n", worst_dx, worst_dw, worst_wino, worst_wdw);
    for (int i = 0; i < nctx * 2; i++) ridge_ctx_destroy(ctxs[i]);
    return test_finish("test-conv-backward");
}
