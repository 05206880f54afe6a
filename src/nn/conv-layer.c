/* The convolution layer: a forward plan per call (the cost model picks the algorithm; packing
 * the weights is O(weights), small next to the convolution) with bias and ReLU fused into its
 * last pass, and the backward on the conv family's backward plan: ReLU's derivative applied to
 * dy in place, then dw/db and dx. */
#include "core/internal.h"
#include "ridge/nn-conv.h"
#include "ridge/nn.h"

static ridge_status check_act(const char *fn, ridge_epi_act act)
{
    if (act != RIDGE_EPI_NONE && act != RIDGE_EPI_RELU)
        return ridge_error(RIDGE_EINVAL, "%s: activation %s not supported (none, relu)", fn,
                           ridge_nn_act_name(act));
    return RIDGE_OK;
}

ridge_status ridge_conv_layer_forward(ridge_ctx *ctx, float *y, const float *x, const float *w,
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

ridge_status ridge_conv_layer_backward(ridge_ctx *ctx, float *dx, float *dw, float *db,
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
