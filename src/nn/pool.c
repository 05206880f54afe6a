/* Max and average pooling, NHWC: per output pixel, a loop over the window's valid cells with
 * the channel loop innermost (contiguous, so it vectorizes). Padding is never materialized:
 * the valid window rows and columns come from clamping. Max pooling records the winner's
 * offset within the image; its backward scatters dy there, one image per work item, so the
 * sums into cells shared by overlapping windows happen in a fixed order. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/nn-conv.h"

ridge_status ridge_pool2d_desc_check(const ridge_pool2d_desc *d, int64_t *oh, int64_t *ow)
{
    if (!d) return ridge_error(RIDGE_EINVAL, "pool2d: descriptor is NULL");
    if (d->n < 1 || d->h < 1 || d->w < 1 || d->c < 1)
        return ridge_error(RIDGE_EINVAL, "pool2d: sizes n %lld, h %lld, w %lld, c %lld must be "
                           ">= 1", (long long)d->n, (long long)d->h, (long long)d->w,
                           (long long)d->c);
    if (d->k < 1 || d->stride < 1 || d->pad < 0 || d->pad >= d->k)
        return ridge_error(RIDGE_EINVAL, "pool2d: window %lld, stride %lld, pad %lld (need k, "
                           "stride >= 1, 0 <= pad < k)", (long long)d->k, (long long)d->stride,
                           (long long)d->pad);
    if (d->kind != RIDGE_POOL_MAX && d->kind != RIDGE_POOL_AVG)
        return ridge_error(RIDGE_EINVAL, "pool2d: kind %d is not a ridge_pool_kind", (int)d->kind);
    if (d->h + 2 * d->pad < d->k || d->w + 2 * d->pad < d->k)
        return ridge_error(RIDGE_EINVAL, "pool2d: window %lld larger than the padded input "
                           "%lldx%lld", (long long)d->k, (long long)(d->h + 2 * d->pad),
                           (long long)(d->w + 2 * d->pad));
    if (d->h * d->w * d->c > INT32_MAX || d->n > INT32_MAX / 2)
        return ridge_error(RIDGE_EOVERFLOW, "pool2d: image of %lld elements (max 2^31-1)",
                           (long long)(d->h * d->w * d->c));
    int64_t h = (d->h + 2 * d->pad - d->k) / d->stride + 1;
    int64_t w = (d->w + 2 * d->pad - d->k) / d->stride + 1;
    if (oh) *oh = h;
    if (ow) *ow = w;
    return RIDGE_OK;
}

typedef struct pool_args {
    const ridge_pool2d_desc *d;
    int64_t oh, ow;
    float *out;
    const float *in;
    int32_t *argmax;
    const int32_t *cargmax;
} pool_args;

/* window rows [*a, *b) for output row i */
static void window(int64_t i, int64_t stride, int64_t pad, int64_t k, int64_t n, int64_t *a,
                   int64_t *b)
{
    int64_t s = i * stride - pad;
    *a = RIDGE_MAX(s, 0);
    *b = RIDGE_MIN(s + k, n);
}

static void forward_range(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *p = arg;
    const ridge_pool2d_desc *d = p->d;
    const int64_t C = d->c;
    (void)ith;
    for (size_t it = b; it < e; it++) { /* one output row */
        int64_t n = (int64_t)it / p->oh, i = (int64_t)it % p->oh, h0, h1;
        window(i, d->stride, d->pad, d->k, d->h, &h0, &h1);
        const float *x = p->in + n * d->h * d->w * C;
        for (int64_t j = 0; j < p->ow; j++) {
            int64_t w0, w1;
            window(j, d->stride, d->pad, d->k, d->w, &w0, &w1);
            float *y = p->out + ((n * p->oh + i) * p->ow + j) * C;
            if (d->kind == RIDGE_POOL_AVG) {
                for (int64_t c = 0; c < C; c++) y[c] = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        const float *xp = x + (ih * d->w + iw) * C;
                        for (int64_t c = 0; c < C; c++) y[c] += xp[c];
                    }
                const float inv = 1.0f / (float)((h1 - h0) * (w1 - w0));
                for (int64_t c = 0; c < C; c++) y[c] *= inv;
                continue;
            }
            int32_t *am = p->argmax ? p->argmax + ((n * p->oh + i) * p->ow + j) * C : NULL;
            const int32_t first = (int32_t)((h0 * d->w + w0) * C);
            memcpy(y, x + first, (size_t)C * sizeof(float));
            if (am)
                for (int64_t c = 0; c < C; c++) am[c] = first + (int32_t)c;
            for (int64_t ih = h0; ih < h1; ih++)
                for (int64_t iw = w0; iw < w1; iw++) {
                    if (ih == h0 && iw == w0) continue;
                    const int32_t o = (int32_t)((ih * d->w + iw) * C);
                    const float *xp = x + o;
                    if (am) /* branch-free selects, so the channel loop vectorizes */
                        for (int64_t c = 0; c < C; c++) {
                            const int take = (xp[c] > y[c]) | ((xp[c] != xp[c]) & (y[c] == y[c]));
                            y[c] = take ? xp[c] : y[c];
                            am[c] = take ? o + (int32_t)c : am[c];
                        }
                    else
                        for (int64_t c = 0; c < C; c++) {
                            const int take = (xp[c] > y[c]) | ((xp[c] != xp[c]) & (y[c] == y[c]));
                            y[c] = take ? xp[c] : y[c];
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
            window(i, d->stride, d->pad, d->k, d->h, &h0, &h1);
            for (int64_t j = 0; j < p->ow; j++) {
                int64_t w0, w1;
                window(j, d->stride, d->pad, d->k, d->w, &w0, &w1);
                const float inv = 1.0f / (float)((h1 - h0) * (w1 - w0));
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

ridge_status ridge_pool2d_forward(ridge_ctx *ctx, float *y, int32_t *argmax, const float *x,
                                  const ridge_pool2d_desc *d)
{
    int64_t oh, ow;
    ridge_status st = ridge_pool2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!ctx || !y || !x) return ridge_error(RIDGE_EINVAL, "pool2d_forward: NULL argument");
    pool_args p = {d, oh, ow, y, x, argmax, NULL};
    ridge_parallel_for(ctx, (size_t)(d->n * oh), 1, forward_range, &p);
    return RIDGE_OK;
}

ridge_status ridge_pool2d_backward(ridge_ctx *ctx, float *dx, const float *dy,
                                   const int32_t *argmax, const ridge_pool2d_desc *d)
{
    int64_t oh, ow;
    ridge_status st = ridge_pool2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!ctx || !dx || !dy) return ridge_error(RIDGE_EINVAL, "pool2d_backward: NULL argument");
    if (d->kind == RIDGE_POOL_MAX && !argmax)
        return ridge_error(RIDGE_EINVAL, "pool2d_backward: max pooling needs the argmax");
    pool_args p = {d, oh, ow, dx, dy, NULL, argmax};
    ridge_parallel_for(ctx, (size_t)d->n, 1, backward_range, &p);
    return RIDGE_OK;
}
