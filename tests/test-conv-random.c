/* Convolution on random descriptors: the combinations the edge-shape grids of test-conv.c and
 * test-conv-backward.c do not enumerate. Each descriptor (layout, batch, channels, groups or
 * depthwise, image, window up to 11 x 11, stride, dilation, asymmetric padding) is run by
 * every forward algorithm that accepts it and AUTO, each with a random ISA, thread count,
 * store mode (opts.stream), epilogue (bias, ReLU, a residual apart or in y itself), workspace
 * (the arena or the caller's) and y misaligned by 0-15 floats; and by every backward data and
 * weights algorithm. Results against the fp64 references; guards around y, dx, dw and db.
 *
 * Error measure: |got - ref| against the same result computed from |inputs| (so cancellation
 * does not hide an error): within 2e-5 of it per element, or 5e-4 / 3e-3 (F(2,3) / F(4,3))
 * and 1e-3 (FFT) of its largest element, whose errors spread over a tile or the whole image.
 *
 *   test-conv-random [DESCRIPTORS [SEED]]   (default 200 descriptors, seed 1) */
#include <math.h>

#include "test.h"

static unsigned long long rng = 1;

static unsigned next_u32(void) /* xorshift64 */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static int pick(int lo, int hi) /* uniform in [lo, hi] */
{
    return lo + (int)(next_u32() % (unsigned)(hi - lo + 1));
}

static void fill(float *p, size_t n)
{
    for (size_t i = 0; i < n; i++) p[i] = (float)(pick(0, 2000) - 1000) / 1000.0f;
}

static float *absolute(const float *p, size_t n)
{
    float *a = malloc((n ? n : 1) * sizeof(float));
    if (a)
        for (size_t i = 0; i < n; i++) a[i] = fabsf(p[i]);
    return a;
}

#define GUARD 16
#define GUARD_VALUE 777.0f

/* got (with GUARD floats after it) against ref, scale the |inputs| result; a message names
 * the first element out of bounds. tol_global: the bound is relative to scale's largest. */
static int close_enough(const float *got, const float *ref, const float *scale, size_t n,
                        double tol, int global, char *why, size_t why_len)
{
    double top = 0;
    for (size_t i = 0; i < n; i++) top = fmax(top, scale[i]);
    for (size_t i = 0; i < n; i++) {
        const double bound = tol * (global ? top : scale[i]) + 1e-6;
        if (!(fabs((double)got[i] - ref[i]) <= bound)) {
            snprintf(why, why_len, "element %zu: %g, reference %g (bound %.3g)", i, got[i],
                     ref[i], bound);
            return 0;
        }
    }
    for (size_t i = n; i < n + GUARD; i++)
        if (got[i] != GUARD_VALUE) {
            snprintf(why, why_len, "wrote past the end (element %zu)", i);
            return 0;
        }
    return 1;
}

static double tolerance(ridge_conv_algo a)
{
    return a == RIDGE_CONV_WINOGRAD_4X3 ? 3e-3
           : a == RIDGE_CONV_WINOGRAD_2X3 ? 5e-4
           : a == RIDGE_CONV_FFT          ? 1e-3
                                          : 2e-5;
}

static int spread_error(ridge_conv_algo a) /* errors spread over a tile or the image */
{
    return a == RIDGE_CONV_WINOGRAD_4X3 || a == RIDGE_CONV_WINOGRAD_2X3 || a == RIDGE_CONV_FFT;
}

/* A random valid descriptor: depthwise, grouped or dense; mostly 3 x 3, sometimes up to 11. */
static ridge_conv2d_desc random_desc(void)
{
    for (;;) {
        ridge_conv2d_desc d;
        ridge_conv2d_desc_init(&d);
        d.layout = (ridge_layout)pick(0, 2);
        d.n = pick(1, 3);
        const int kind = pick(0, 9);
        if (kind < 3) {
            d.c_in = d.c_out = d.groups = pick(0, 2) ? pick(1, 70) : 16 * pick(1, 4);
        } else if (kind < 5) {
            d.groups = pick(2, 4);
            d.c_in = d.groups * pick(1, 12), d.c_out = d.groups * pick(1, 12);
        } else {
            d.c_in = pick(1, 40), d.c_out = pick(0, 2) ? pick(1, 70) : 16 * pick(1, 5);
        }
        d.h = pick(1, 30), d.w = pick(1, 30);
        if (pick(0, 4) == 0) {
            d.r = pick(1, 11), d.s = pick(1, 11);
        } else {
            d.r = pick(0, 3) ? 3 : pick(1, 7);
            d.s = pick(0, 3) ? d.r : pick(1, 7);
        }
        d.stride_h = pick(0, 2) ? 1 : pick(1, 3);
        d.stride_w = pick(0, 2) ? d.stride_h : pick(1, 3);
        d.dil_h = pick(0, 4) ? 1 : 2;
        d.dil_w = pick(0, 4) ? d.dil_h : pick(1, 2);
        d.pad_top = pick(0, 3), d.pad_bottom = pick(0, 3);
        d.pad_left = pick(0, 3), d.pad_right = pick(0, 3);
        if (pick(0, 2)) d.pad_bottom = d.pad_left = d.pad_right = d.pad_top;
        if (ridge_conv2d_desc_check(&d, NULL, NULL) == RIDGE_OK) return d;
    }
}

static void describe(const ridge_conv2d_desc *d, char *s, size_t len)
{
    snprintf(s, len,
             "n%lld %lld->%lld g%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld "
             "p%lld,%lld,%lld,%lld %s",
             (long long)d->n, (long long)d->c_in, (long long)d->c_out, (long long)d->groups,
             (long long)d->h, (long long)d->w, (long long)d->r, (long long)d->s,
             (long long)d->stride_h, (long long)d->stride_w, (long long)d->dil_h,
             (long long)d->dil_w, (long long)d->pad_top, (long long)d->pad_bottom,
             (long long)d->pad_left, (long long)d->pad_right, ridge_layout_name(d->layout));
}

typedef struct ctxs {
    ridge_ctx *c[3][2]; /* [isa][threads - 1], NULL where the CPU lacks the ISA */
} ctxs;

static ridge_ctx *random_ctx(const ctxs *cs, char *label, size_t len)
{
    for (;;) {
        const int isa = pick(0, 2), t = pick(0, 1);
        if (!cs->c[isa][t]) continue;
        snprintf(label, len, "%s, %d thread%s", ridge_isa_name((ridge_isa)isa), t + 1,
                 t ? "s" : "");
        return cs->c[isa][t];
    }
}

static void forward_case(const ctxs *cs, const ridge_conv2d_desc *d, const char *shape)
{
    int64_t oh, ow;
    ridge_conv2d_desc_check(d, &oh, &ow);
    const size_t xn = ridge_tensor_elems(d->layout, d->n, d->c_in, d->h, d->w);
    const size_t yn = ridge_tensor_elems(d->layout, d->n, d->c_out, oh, ow);
    const size_t wn = (size_t)(d->c_out * (d->c_in / d->groups) * d->r * d->s);
    float *x = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float));
    float *bias = malloc((size_t)d->c_out * sizeof(float)), *res = malloc(yn * sizeof(float));
    float *ref = malloc(yn * sizeof(float)), *scale = malloc(yn * sizeof(float));
    float *ybuf = malloc((yn + 16 + GUARD) * sizeof(float));
    CHECK(x && w && bias && res && ref && scale && ybuf);
    if (!x || !w || !bias || !res || !ref || !scale || !ybuf) goto out;
    fill(x, xn), fill(w, wn), fill(bias, (size_t)d->c_out), fill(res, yn);
    const int use_bias = pick(0, 1), relu = pick(0, 1), residual = pick(0, 2); /* 2: in y */
    const ridge_conv2d_epilogue ep = {relu ? RIDGE_CONV_ACT_RELU : RIDGE_CONV_ACT_NONE,
                                      residual ? res : NULL};
    float *ax = absolute(x, xn), *aw = absolute(w, wn), *ab = absolute(bias, (size_t)d->c_out),
          *ares = absolute(res, yn);
    const ridge_conv2d_epilogue aep = {RIDGE_CONV_ACT_NONE, residual ? ares : NULL};
    const int refs_ok = ax && aw && ab && ares &&
                        ridge_conv2d_forward_ref(d, x, w, ref, use_bias ? bias : NULL, &ep) ==
                            RIDGE_OK &&
                        ridge_conv2d_forward_ref(d, ax, aw, scale, use_bias ? ab : NULL, &aep) ==
                            RIDGE_OK;
    free(ax), free(aw), free(ab), free(ares);
    CHECKF(refs_ok, "forward reference on %s: %s", shape, ridge_last_error());
    if (!refs_ok) goto out;
    for (int a = RIDGE_CONV_AUTO; a < RIDGE_CONV_ALGO_COUNT; a++) {
        if (a == RIDGE_CONV_REF) continue;
        char where[64];
        ridge_ctx *ctx = random_ctx(cs, where, sizeof where);
        ridge_conv2d_plan_options po;
        ridge_conv2d_plan_options_init(&po);
        po.algo = (ridge_conv_algo)a, po.stream = pick(-1, 1);
        ridge_conv2d_plan *p = NULL;
        if (ridge_conv2d_plan_create(ctx, d, w, &po, &p) != RIDGE_OK) {
            CHECKF(a != RIDGE_CONV_AUTO, "AUTO plan for %s: %s", shape, ridge_last_error());
            continue;
        }
        const ridge_conv_algo got = ridge_conv2d_plan_algo(p);
        const int off = pick(0, 3) ? 0 : pick(1, 15);
        float *y = ybuf + off;
        for (size_t i = 0; i < yn + 16 + GUARD; i++) ybuf[i] = NAN;
        for (size_t i = yn; i < yn + GUARD; i++) y[i] = GUARD_VALUE;
        ridge_conv2d_epilogue e = ep;
        if (residual == 2) memcpy(y, res, yn * sizeof(float)), e.residual = y;
        void *ws = NULL;
        if (pick(0, 1)) ws = malloc(ridge_conv2d_workspace_size(p, ridge_ctx_threads(ctx)) + 1);
        const ridge_status st =
            ridge_conv2d_forward(ctx, p, x, y, use_bias ? bias : NULL, &e, ws);
        char why[160] = "";
        CHECKF(st == RIDGE_OK && close_enough(y, ref, scale, yn, tolerance(got),
                                              spread_error(got), why, sizeof why),
               "forward %s (asked %s) on %s, %s, stream %d, bias %d relu %d residual %d, y "
               "offset %d, %s workspace: %s%s",
               ridge_conv_algo_name(got), ridge_conv_algo_name((ridge_conv_algo)a), shape, where,
               po.stream, use_bias, relu, residual, off, ws ? "caller's" : "arena",
               st ? ridge_last_error() : "", why);
        free(ws);
        ridge_conv2d_plan_destroy(p);
    }
out:
    free(x), free(w), free(bias), free(res), free(ref), free(scale), free(ybuf);
}

static void backward_case(const ctxs *cs, const ridge_conv2d_desc *d, const char *shape)
{
    int64_t oh, ow;
    ridge_conv2d_desc_check(d, &oh, &ow);
    const size_t xn = ridge_tensor_elems(d->layout, d->n, d->c_in, d->h, d->w);
    const size_t yn = ridge_tensor_elems(d->layout, d->n, d->c_out, oh, ow);
    const size_t wn = (size_t)(d->c_out * (d->c_in / d->groups) * d->r * d->s);
    const size_t bn = (size_t)d->c_out;
    float *x = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float));
    float *dy = malloc(yn * sizeof(float));
    float *rdx = malloc(xn * sizeof(float)), *sdx = malloc(xn * sizeof(float));
    float *rdw = malloc(wn * sizeof(float)), *sdw = malloc(wn * sizeof(float));
    float *rdb = malloc(bn * sizeof(float)), *sdb = malloc(bn * sizeof(float));
    float *dx = malloc((xn + GUARD) * sizeof(float)), *dw = malloc((wn + GUARD) * sizeof(float));
    float *db = malloc((bn + GUARD) * sizeof(float));
    float *ax = NULL, *aw = NULL, *ady = NULL;
    const int alloc_ok = x && w && dy && rdx && sdx && rdw && sdw && rdb && sdb && dx && dw && db;
    CHECK(alloc_ok);
    if (!alloc_ok) goto out;
    fill(x, xn), fill(w, wn), fill(dy, yn);
    ax = absolute(x, xn), aw = absolute(w, wn), ady = absolute(dy, yn);
    const int refs_ok = ax && aw && ady &&
                        ridge_conv2d_backward_data_ref(d, rdx, dy, w) == RIDGE_OK &&
                        ridge_conv2d_backward_data_ref(d, sdx, ady, aw) == RIDGE_OK &&
                        ridge_conv2d_backward_weights_ref(d, rdw, rdb, x, dy) == RIDGE_OK &&
                        ridge_conv2d_backward_weights_ref(d, sdw, sdb, ax, ady) == RIDGE_OK;
    CHECKF(refs_ok, "backward references on %s: %s", shape, ridge_last_error());
    if (!refs_ok) goto out;
    static const ridge_conv_algo algos[] = {RIDGE_CONV_AUTO,         RIDGE_CONV_DIRECT,
                                            RIDGE_CONV_IM2COL,       RIDGE_CONV_DEPTHWISE,
                                            RIDGE_CONV_WINOGRAD_2X3, RIDGE_CONV_WINOGRAD_4X3};
    for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++)
        for (int weights = 0; weights < 2; weights++) {
            if (weights && algos[k] == RIDGE_CONV_WINOGRAD_2X3) continue; /* data only */
            char where[64];
            ridge_ctx *ctx = random_ctx(cs, where, sizeof where);
            ridge_conv2d_bwd_options o;
            ridge_conv2d_bwd_options_init(&o);
            if (weights) o.weights_algo = algos[k];
            else o.data_algo = algos[k];
            ridge_conv2d_bwd_plan *p = NULL;
            if (ridge_conv2d_bwd_plan_create(ctx, d, &o, &p) != RIDGE_OK) {
                CHECKF(algos[k] != RIDGE_CONV_AUTO, "AUTO backward plan for %s: %s", shape,
                       ridge_last_error());
                continue;
            }
            const int own_ws = pick(0, 1);
            const size_t wsb = weights ? ridge_conv2d_bwd_weights_workspace_size(p)
                                       : ridge_conv2d_bwd_data_workspace_size(p);
            void *ws = own_ws ? aligned_alloc(64, (wsb + 64) / 64 * 64) : NULL;
            char why[160] = "";
            ridge_status st;
            int ok;
            if (!weights) {
                const ridge_conv_algo got = ridge_conv2d_bwd_plan_data_algo(p);
                for (size_t i = 0; i < xn + GUARD; i++) dx[i] = i < xn ? NAN : GUARD_VALUE;
                st = ridge_conv2d_backward_data(ctx, p, dx, dy, w, ws);
                ok = st == RIDGE_OK && close_enough(dx, rdx, sdx, xn, tolerance(got),
                                                    spread_error(got), why, sizeof why);
                CHECKF(ok, "dx %s on %s, %s, %s workspace: %s%s", ridge_conv_algo_name(got),
                       shape, where, own_ws ? "caller's" : "arena", st ? ridge_last_error() : "",
                       why);
            } else {
                const ridge_conv_algo got = ridge_conv2d_bwd_plan_weights_algo(p);
                const int with_db = pick(0, 1);
                for (size_t i = 0; i < wn + GUARD; i++) dw[i] = i < wn ? NAN : GUARD_VALUE;
                for (size_t i = 0; i < bn + GUARD; i++) db[i] = i < bn ? NAN : GUARD_VALUE;
                st = ridge_conv2d_backward_weights(ctx, p, dw, with_db ? db : NULL, x, dy, ws);
                ok = st == RIDGE_OK &&
                     close_enough(dw, rdw, sdw, wn, tolerance(got), spread_error(got), why,
                                  sizeof why) &&
                     (!with_db || close_enough(db, rdb, sdb, bn, 2e-5, 0, why, sizeof why));
                CHECKF(ok, "dw %s (db %d) on %s, %s, %s workspace: %s%s",
                       ridge_conv_algo_name(got), with_db, shape, where,
                       own_ws ? "caller's" : "arena", st ? ridge_last_error() : "", why);
            }
            free(ws);
            ridge_conv2d_bwd_plan_destroy(p);
        }
out:
    free(x), free(w), free(dy), free(rdx), free(sdx), free(rdw), free(sdw), free(rdb), free(sdb);
    free(dx), free(dw), free(db), free(ax), free(aw), free(ady);
}

int main(int argc, char **argv)
{
    const int count = argc > 1 ? atoi(argv[1]) : 200;
    rng = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
    if (count < 1 || rng == 0) {
        fprintf(stderr, "usage: test-conv-random [DESCRIPTORS >= 1 [SEED >= 1]]\n");
        return 2;
    }
    ctxs cs;
    int any = 0;
    for (int isa = 0; isa < 3; isa++)
        for (int t = 0; t < 2; t++) any |= (cs.c[isa][t] = test_ctx(t + 1, (ridge_isa)isa)) != NULL;
    if (!any) return test_finish("test-conv-random");
    for (int i = 0; i < count; i++) {
        const ridge_conv2d_desc d = random_desc();
        char shape[160];
        describe(&d, shape, sizeof shape);
        forward_case(&cs, &d, shape);
        backward_case(&cs, &d, shape);
    }
    for (int isa = 0; isa < 3; isa++)
        for (int t = 0; t < 2; t++) ridge_ctx_destroy(cs.c[isa][t]);
    return test_finish("test-conv-random");
}
