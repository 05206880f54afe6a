/* Max and average pooling in every layout, padding-free like the convolutions: each output
 * pixel's valid window comes from tap_range-style index arithmetic. The loops are in
 * pool-kernels.h, built once per ISA: channels innermost where they are contiguous (NHWC,
 * NCHW16c blocks), 16 at a time in vector registers; NCHW runs along each channel's output row,
 * several pixels at a time. */
#include <string.h>

#include "conv/pool-internal.h"

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

ridge_status ridge_pool2d_forward(ridge_ctx *ctx, const ridge_pool2d_desc *d, const float *x,
                                  float *y)
{
    int64_t oh, ow;
    ridge_status st = ridge_pool2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!ctx || !x || !y) return ridge_error(RIDGE_EINVAL, "pool2d_forward: NULL argument");
    pool_args a = {d, x, y, oh, ow, conv_view_make(d->layout, d->c, d->h, d->w),
                   conv_view_make(d->layout, d->c, oh, ow)};
    ridge_range_fn rows, nchw_rows;
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512:
        rows = ridge_conv_pool_rows__avx512, nchw_rows = ridge_conv_pool_nchw_rows__avx512;
        break;
    case RIDGE_ISA_AVX2:
        rows = ridge_conv_pool_rows__avx2, nchw_rows = ridge_conv_pool_nchw_rows__avx2;
        break;
    default: rows = ridge_conv_pool_rows__ref, nchw_rows = ridge_conv_pool_nchw_rows__ref;
    }
    if (d->layout == RIDGE_NCHW)
        ridge_parallel_for(ctx, (size_t)(d->n * d->c * oh), 1, nchw_rows, &a);
    else ridge_parallel_for(ctx, (size_t)(d->n * oh), 1, rows, &a);
    conv_zero_channel_padding(y, d->layout, d->n, d->c, oh, ow);
    return RIDGE_OK;
}
