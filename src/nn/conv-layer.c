/* The convolution layer: a forward plan per call (the cost model picks the algorithm; packing
 * the weights is O(weights), small next to the convolution) with bias and ReLU fused into its
 * last pass, and the backward on the conv family's backward plan: ReLU's derivative applied to
 * dy in place, then dw/db and dx. */
#include "core/internal.h"
#include "ridge/nn-conv.h"
#include "ridge/nn.h"

/* Compulsory bytes of a convolution: x and w read, y written (plus 4 for bias and a second
 * pass over y are ignored: counted once). For the profiler; 0 for a bad descriptor. */
static double conv_bytes(const ridge_conv2d_desc *d)
{
    int64_t oh, ow;
    if (!d || ridge_conv2d_desc_check(d, &oh, &ow)) return 0;
    double x = (double)d->n * d->c_in * d->h * d->w, y = (double)d->n * d->c_out * oh * ow;
    double w = (double)d->c_out * (d->c_in / d->groups) * d->r * d->s;
    return 4.0 * (x + y + w);
}

/* The profiler's record of a layer call that made `passes` passes the size of the forward
 * (the backward: one for dw and db, one more for dx). */
static void conv_prof_end(ridge_ctx *ctx, uint64_t t0, const char *op,
                          const ridge_conv2d_desc *d, int passes)
{
    const double flops = d ? passes * ridge_conv2d_flops(d) : 0, bytes = passes * conv_bytes(d);
    RIDGE_PROF_END(ctx, t0, op, "", flops, bytes, bytes, "%lldx%lldx%lldx%lld k%lldx%lld->%lld",
                   (long long)(d ? d->n : 0), (long long)(d ? d->h : 0),
                   (long long)(d ? d->w : 0), (long long)(d ? d->c_in : 0),
                   (long long)(d ? d->r : 0), (long long)(d ? d->s : 0),
                   (long long)(d ? d->c_out : 0));
}

static ridge_status check_act(const char *fn, ridge_epi_act act)
{
    if (act != RIDGE_EPI_NONE && act != RIDGE_EPI_RELU)
        return ridge_error(RIDGE_EINVAL, "%s: activation %s not supported (none, relu)", fn,
                           ridge_nn_act_name(act));
    return RIDGE_OK;
}

static ridge_status ridge_conv_layer_forward_untimed(ridge_ctx *ctx, float *y, const float *x, const float *w,
                                      const float *b, const ridge_conv2d_desc *d,
                                      ridge_epi_act act)
{
    ridge_status st = check_act("conv_layer_forward", act);
    if (st) return st;
    if (!ctx || !y || !x || !w || !d)
        return ridge_error(RIDGE_EINVAL, "conv_layer_forward: NULL argument");
    ridge_conv2d_plan *p;
    if ((st = ridge_conv2d_plan_create(ctx, d, w, NULL, &p))) return st;
    ridge_conv2d_epilogue ep = {act == RIDGE_EPI_RELU ? RIDGE_CONV_ACT_RELU : RIDGE_CONV_ACT_NONE,
                                NULL};
    st = ridge_conv2d_forward(ctx, p, x, y, b, &ep, NULL);
    ridge_conv2d_plan_destroy(p);
    return st;
}

/* ridge_conv_layer_forward, recorded by the profiler as "conv.fwd". */
ridge_status ridge_conv_layer_forward(ridge_ctx *ctx, float *y, const float *x, const float *w,
                                      const float *b, const ridge_conv2d_desc *d,
                                      ridge_epi_act act)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_conv_layer_forward_untimed(ctx, y, x, w, b, d, act);
    conv_prof_end(ctx, t0, "conv.fwd", d, 1);
    return st;
}

static ridge_status ridge_conv_layer_backward_untimed(ridge_ctx *ctx, float *dx, float *dw, float *db,
                                       float *dy, const float *x, const float *w, const float *y,
                                       const ridge_conv2d_desc *d, ridge_epi_act act)
{
    ridge_status st = check_act("conv_layer_backward", act);
    if (st) return st;
    if (!ctx || !dw || !dy || !x || !w || !y || !d)
        return ridge_error(RIDGE_EINVAL, "conv_layer_backward: NULL argument");
    int64_t oh, ow;
    if ((st = ridge_conv2d_desc_check(d, &oh, &ow))) return st;
    if (act != RIDGE_EPI_NONE &&
        (st = ridge_nn_act_backward(ctx, dy, dy, y,
                                    ridge_tensor_elems(d->layout, d->n, d->c_out, oh, ow), act)))
        return st;
    ridge_conv2d_bwd_plan *p;
    if ((st = ridge_conv2d_bwd_plan_create(ctx, d, NULL, &p))) return st;
    st = ridge_conv2d_backward_weights(ctx, p, dw, db, x, dy, NULL);
    if (!st && dx) st = ridge_conv2d_backward_data(ctx, p, dx, dy, w, NULL);
    ridge_conv2d_bwd_plan_destroy(p);
    return st;
}

/* ridge_conv_layer_backward, recorded by the profiler as "conv.bwd". */
ridge_status ridge_conv_layer_backward(ridge_ctx *ctx, float *dx, float *dw, float *db,
                                       float *dy, const float *x, const float *w, const float *y,
                                       const ridge_conv2d_desc *d, ridge_epi_act act)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_conv_layer_backward_untimed(ctx, dx, dw, db, dy, x, w, y, d, act);
    conv_prof_end(ctx, t0, "conv.bwd", d, dx ? 2 : 1); /* dw and db, then dx if asked */
    return st;
}
