/* Pooling for training, NHWC, on conv.h's descriptor (ridge_pool2d_forward is the inference
 * pass, every layout): a forward that also records max pooling's winners, and the backward.
 * Per output pixel, a loop over the window's valid cells (clamped: padding never exists) with
 * the channel loop innermost (contiguous; branch-free selects, so it vectorizes). The backward
 * scatters dy to the winners (max) or spreads it over the window (avg), one image per work
 * item, so sums into cells shared by overlapping windows happen in a fixed order. */
#include <string.h>

#include "core/internal.h"
#include "ridge/nn-conv.h"

typedef struct pool_args {
    const ridge_pool2d_desc *d;
    int64_t oh, ow;
    float *out;
    const float *in;
    int32_t *argmax;
    const int32_t *cargmax;
} pool_args;

/* window rows [*a, *b) of output row i (likewise columns) */
static void window(int64_t i, int64_t stride, int64_t pad, int64_t k, int64_t n, int64_t *a,
                   int64_t *b)
{
    int64_t s = i * stride - pad;
    *a = RIDGE_MAX(s, 0);
    *b = RIDGE_MIN(s + k, n);
}

static float avg_scale(const ridge_pool2d_desc *d, int64_t h0, int64_t h1, int64_t w0,
                       int64_t w1)
{
    return 1.0f / (float)(d->count_pad ? d->r * d->s : (h1 - h0) * (w1 - w0));
}

static void forward_range(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *p = arg;
    const ridge_pool2d_desc *d = p->d;
    const int64_t C = d->c;
    (void)ith;
    for (size_t it = b; it < e; it++) { /* one output row */
        int64_t n = (int64_t)it / p->oh, i = (int64_t)it % p->oh, h0, h1;
        window(i, d->stride_h, d->pad_top, d->r, d->h, &h0, &h1);
        const float *x = p->in + n * d->h * d->w * C;
        for (int64_t j = 0; j < p->ow; j++) {
            int64_t w0, w1;
            window(j, d->stride_w, d->pad_left, d->s, d->w, &w0, &w1);
            float *y = p->out + ((n * p->oh + i) * p->ow + j) * C;
            if (d->kind == RIDGE_POOL_AVG) {
                for (int64_t c = 0; c < C; c++) y[c] = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        const float *xp = x + (ih * d->w + iw) * C;
                        for (int64_t c = 0; c < C; c++) y[c] += xp[c];
                    }
                const float inv = avg_scale(d, h0, h1, w0, w1);
                for (int64_t c = 0; c < C; c++) y[c] *= inv;
                continue;
            }
            int32_t *am = p->argmax + ((n * p->oh + i) * p->ow + j) * C;
            const int32_t first = (int32_t)((h0 * d->w + w0) * C);
            memcpy(y, x + first, (size_t)C * sizeof(float));
            for (int64_t c = 0; c < C; c++) am[c] = first + (int32_t)c;
            for (int64_t ih = h0; ih < h1; ih++)
                for (int64_t iw = w0; iw < w1; iw++) {
                    if (ih == h0 && iw == w0) continue;
                    const int32_t o = (int32_t)((ih * d->w + iw) * C);
                    const float *xp = x + o;
                    for (int64_t c = 0; c < C; c++) {
                        const int take = (xp[c] > y[c]) | ((xp[c] != xp[c]) & (y[c] == y[c]));
                        y[c] = take ? xp[c] : y[c];
                        am[c] = take ? o + (int32_t)c : am[c];
                    }
                }
        }
    }
}

static void backward_range(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *p = arg;
    const ridge_pool2d_desc *d = p->d;
    const int64_t C = d->c, img = d->h * d->w * C, out = p->oh * p->ow * C;
    (void)ith;
    for (size_t n = b; n < e; n++) {
        float *dx = p->out + (int64_t)n * img;
        const float *dy = p->in + (int64_t)n * out;
        memset(dx, 0, (size_t)img * sizeof(float));
        if (d->kind == RIDGE_POOL_MAX) {
            const int32_t *am = p->cargmax + (int64_t)n * out;
            for (int64_t q = 0; q < out; q++) dx[am[q]] += dy[q];
            continue;
        }
        for (int64_t i = 0; i < p->oh; i++) {
            int64_t h0, h1;
            window(i, d->stride_h, d->pad_top, d->r, d->h, &h0, &h1);
            for (int64_t j = 0; j < p->ow; j++) {
                int64_t w0, w1;
                window(j, d->stride_w, d->pad_left, d->s, d->w, &w0, &w1);
                const float inv = avg_scale(d, h0, h1, w0, w1);
                const float *g = dy + (i * p->ow + j) * C;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        float *xp = dx + (ih * d->w + iw) * C;
                        for (int64_t c = 0; c < C; c++) xp[c] += g[c] * inv;
                    }
            }
        }
    }
}

/* ridge_pool2d_desc_check plus what the training pair needs: NHWC, offsets in int32 */
static ridge_status check(const char *fn, const ridge_pool2d_desc *d, int64_t *oh, int64_t *ow)
{
    ridge_status st = ridge_pool2d_desc_check(d, oh, ow);
    if (st) return st;
    if (d->layout != RIDGE_NHWC)
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: layout %s (NHWC only)", fn,
                           ridge_layout_name(d->layout));
    if (d->h * d->w * d->c > INT32_MAX)
        return ridge_error(RIDGE_EOVERFLOW, "%s: an image of %lld elements (argmax offsets are "
                           "int32)", fn, (long long)(d->h * d->w * d->c));
    return RIDGE_OK;
}

/* Bytes a pooling pass moves: x once, y (and its argmax) once. For the profiler. */
static double pool_bytes(const ridge_pool2d_desc *d)
{
    int64_t oh, ow;
    if (!d || ridge_pool2d_desc_check(d, &oh, &ow)) return 0;
    return 4.0 * (double)d->n * d->c * ((double)d->h * d->w + 2.0 * oh * ow);
}

static ridge_status ridge_pool2d_forward_argmax_untimed(ridge_ctx *ctx, const ridge_pool2d_desc *d,
                                         const float *x, float *y, int32_t *argmax)
{
    int64_t oh, ow;
    ridge_status st = check("pool2d_forward_argmax", d, &oh, &ow);
    if (st) return st;
    if (!ctx || !y || !x || (d->kind == RIDGE_POOL_MAX && !argmax))
        return ridge_error(RIDGE_EINVAL, "pool2d_forward_argmax: NULL argument");
    pool_args p = {d, oh, ow, y, x, argmax, NULL};
    ridge_parallel_for(ctx, (size_t)(d->n * oh), 1, forward_range, &p);
    return RIDGE_OK;
}

/* ridge_pool2d_forward_argmax, recorded by the profiler as "pool2d.fwd". */
ridge_status ridge_pool2d_forward_argmax(ridge_ctx *ctx, const ridge_pool2d_desc *d,
                                         const float *x, float *y, int32_t *argmax)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_pool2d_forward_argmax_untimed(ctx, d, x, y, argmax);
    RIDGE_PROF_END(ctx, t0, "pool2d.fwd", "", 0, pool_bytes(d), pool_bytes(d), "%lldx%lldx%lldx%lld", (long long)(d ? d->n : 0), (long long)(d ? d->h : 0), (long long)(d ? d->w : 0), (long long)(d ? d->c : 0));
    return st;
}

static ridge_status ridge_pool2d_backward_untimed(ridge_ctx *ctx, const ridge_pool2d_desc *d, float *dx,
                                   const float *dy, const int32_t *argmax)
{
    int64_t oh, ow;
    ridge_status st = check("pool2d_backward", d, &oh, &ow);
    if (st) return st;
    if (!ctx || !dx || !dy) return ridge_error(RIDGE_EINVAL, "pool2d_backward: NULL argument");
    if (d->kind == RIDGE_POOL_MAX && !argmax)
        return ridge_error(RIDGE_EINVAL, "pool2d_backward: max pooling needs the argmax");
    pool_args p = {d, oh, ow, dx, dy, NULL, argmax};
    ridge_parallel_for(ctx, (size_t)d->n, 1, backward_range, &p);
    return RIDGE_OK;
}

/* ridge_pool2d_backward, recorded by the profiler as "pool2d.bwd". */
ridge_status ridge_pool2d_backward(ridge_ctx *ctx, const ridge_pool2d_desc *d, float *dx,
                                   const float *dy, const int32_t *argmax)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_pool2d_backward_untimed(ctx, d, dx, dy, argmax);
    RIDGE_PROF_END(ctx, t0, "pool2d.bwd", "", 0, pool_bytes(d), pool_bytes(d), "%lldx%lldx%lldx%lld", (long long)(d ? d->n : 0), (long long)(d ? d->h : 0), (long long)(d ? d->w : 0), (long long)(d ? d->c : 0));
    return st;
}
