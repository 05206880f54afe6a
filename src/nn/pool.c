/* Pooling for training, NHWC, on conv.h's descriptor (ridge_pool2d_forward is the inference
 * pass, every layout): a forward that also records max pooling's winners, and the backward.
 * The loops are in pool-kernels.h, compiled per ISA: per output pixel, a loop over the
 * window's valid cells (clamped: padding never exists) with the channel loop innermost. The
 * backward scatters dy to the winners (max) or spreads it over the window (avg), one image per
 * work item, so sums into cells shared by overlapping windows happen in a fixed order; when
 * max pooling's windows tile the image (2 x 2, stride 2) it writes each cell of dx once
 * instead. */
#include <string.h>

#include "core/internal.h"
#include "nn/pool-internal.h"
#include "ridge/nn-conv.h"

/* The loops for this context's ISA: the forward's (output rows) or the backward's (images). */
static ridge_range_fn pool_pick(const ridge_ctx *ctx, int backward)
{
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512:
        return backward ? ridge_nn_pool_bwd_range__avx512 : ridge_nn_pool_fwd_range__avx512;
    case RIDGE_ISA_AVX2:
        return backward ? ridge_nn_pool_bwd_range__avx2 : ridge_nn_pool_fwd_range__avx2;
    default: return backward ? ridge_nn_pool_bwd_range__ref : ridge_nn_pool_fwd_range__ref;
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
    ridge_parallel_for(ctx, (size_t)(d->n * oh), 1, pool_pick(ctx, 0), &p);
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
    ridge_parallel_for(ctx, (size_t)d->n, 1, pool_pick(ctx, 1), &p);
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
