/* Max and average pooling in every layout, padding-free like the convolutions: each output
 * pixel's valid window comes from tap_range-style index arithmetic. Pure bandwidth, so one
 * portable loop: channels innermost where they are contiguous (NHWC, NCHW16c blocks) so it
 * vectorizes; NCHW walks one channel at a time. Parallel over (image, output row). */
#include <float.h>
#include <string.h>

#include "conv/conv.h"

ridge_status ridge_pool2d_desc_check(const ridge_pool2d_desc *d, int64_t *oh, int64_t *ow)
{
    if (!d) return ridge_error(RIDGE_EINVAL, "pool2d: descriptor is NULL");
    if (d->kind != RIDGE_POOL_MAX && d->kind != RIDGE_POOL_AVG)
        return ridge_error(RIDGE_EINVAL, "pool2d: kind = %d is not a ridge_pool_kind",
                           (int)d->kind);
    if (d->c < 1)
        return ridge_error(RIDGE_EINVAL, "pool2d: c = %lld, must be >= 1", (long long)d->c);
    if (d->pad_top >= d->r || d->pad_bottom >= d->r || d->pad_left >= d->s ||
        d->pad_right >= d->s)
        return ridge_error(RIDGE_EINVAL, "pool2d: padding (t%lld b%lld l%lld r%lld) must be "
                           "smaller than the %lldx%lld window",
                           (long long)d->pad_top, (long long)d->pad_bottom,
                           (long long)d->pad_left, (long long)d->pad_right, (long long)d->r,
                           (long long)d->s);
    /* the rest is a convolution's geometry with c_out = c */
    ridge_conv2d_desc c;
    ridge_conv2d_desc_init(&c);
    c.n = d->n, c.c_in = c.c_out = d->c, c.h = d->h, c.w = d->w, c.r = d->r, c.s = d->s;
    c.stride_h = d->stride_h, c.stride_w = d->stride_w;
    c.pad_top = d->pad_top, c.pad_bottom = d->pad_bottom;
    c.pad_left = d->pad_left, c.pad_right = d->pad_right;
    c.layout = d->layout;
    ridge_status st = ridge_conv2d_desc_check(&c, oh, ow);
    if (st) return ridge_error(st, "pool2d: %s", ridge_last_error() + strlen("conv2d: "));
    return RIDGE_OK;
}

typedef struct pool_args {
    const ridge_pool2d_desc *d;
    const float *x;
    float *y;
    int64_t oh, ow;
    conv_view xv, yv;
} pool_args;

/* Valid taps [*k0, *k1) of a window starting at `start` over an input of n. */
static void valid(int64_t start, int64_t n, int64_t K, int64_t *k0, int64_t *k1)
{
    *k0 = start >= 0 ? 0 : -start;
    *k1 = n - start < K ? n - start : K;
}

static void pool_rows(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *a = arg;
    const ridge_pool2d_desc *d = a->d;
    const int64_t cblk = a->xv.cblk, nblk = (d->c + cblk - 1) / cblk;
    const int is_max = d->kind == RIDGE_POOL_MAX;
    for (size_t row = b; row < e; row++) {
        int64_t n = (int64_t)row / a->oh, oh = (int64_t)row % a->oh;
        int64_t ih0 = oh * d->stride_h - d->pad_top, r0, r1;
        valid(ih0, d->h, d->r, &r0, &r1);
        for (int64_t ow = 0; ow < a->ow; ow++) {
            int64_t iw0 = ow * d->stride_w - d->pad_left, s0, s1;
            valid(iw0, d->w, d->s, &s0, &s1);
            float scale = 1.0f / (float)(d->count_pad ? d->r * d->s : (r1 - r0) * (s1 - s0));
            for (int64_t cb = 0; cb < nblk; cb++) {
                int64_t nc = d->c - cb * cblk < cblk ? d->c - cb * cblk : cblk;
                /* the window origin may lie in the padding: only valid taps are addressed */
                const ptrdiff_t xo =
                    n * a->xv.sn + cb * a->xv.scb + ih0 * a->xv.sh + iw0 * a->xv.sw;
                float *yp = a->y + n * a->yv.sn + cb * a->yv.scb + oh * a->yv.sh + ow * a->yv.sw;
                float acc[64]; /* cblk <= 16 except NHWC: chunks of 64 channels */
                for (int64_t c0 = 0; c0 < nc; c0 += 64) {
                    int64_t m = nc - c0 < 64 ? nc - c0 : 64;
                    for (int64_t c = 0; c < m; c++) acc[c] = is_max ? -FLT_MAX : 0.0f;
                    for (int64_t r = r0; r < r1; r++)
                        for (int64_t s = s0; s < s1; s++) {
                            const float *t =
                                a->x + (xo + r * a->xv.sh + s * a->xv.sw + c0 * a->xv.sc);
                            if (is_max)
                                for (int64_t c = 0; c < m; c++)
                                    acc[c] = t[c * a->xv.sc] > acc[c] ? t[c * a->xv.sc] : acc[c];
                            else
                                for (int64_t c = 0; c < m; c++) acc[c] += t[c * a->xv.sc];
                        }
                    for (int64_t c = 0; c < m; c++)
                        yp[(c0 + c) * a->yv.sc] = is_max ? acc[c] : acc[c] * scale;
                }
            }
        }
    }
}

ridge_status ridge_pool2d_forward(ridge_ctx *ctx, const ridge_pool2d_desc *d, const float *x,
                                  float *y)
{
    int64_t oh, ow;
    ridge_status st = ridge_pool2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!ctx || !x || !y) return ridge_error(RIDGE_EINVAL, "pool2d_forward: NULL argument");
    pool_args a = {d, x, y, oh, ow, conv_view_make(d->layout, d->c, d->h, d->w),
                   conv_view_make(d->layout, d->c, oh, ow)};
    ridge_parallel_for(ctx, (size_t)(d->n * oh), 1, pool_rows, &a);
    conv_zero_channel_padding(y, d->layout, d->n, d->c, oh, ow);
    return RIDGE_OK;
}
