/* ridge/nn-conv.h: the layers of a convolutional network (issue 8), forward and backward:
 * convolution, max/average pooling, batch normalization. Flatten is free in NHWC (an
 * (n, h, w, c) tensor is already the (n, h*w*c) matrix a dense layer takes).
 *
 * Conventions as in nn.h: outputs first, backward calls overwrite their gradients (they do
 * not accumulate), activations are given as ridge_epi_act (NONE or RELU here) and their
 * backward works from the layer's output. The pooling backward takes NHWC tensors, batch
 * normalization any (rows, C) matrix (NHWC activations, or a dense layer's). Every result is
 * deterministic and independent of the thread count. */
#ifndef RIDGE_NN_CONV_H
#define RIDGE_NN_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/conv-backward.h"
#include "ridge/conv.h"
#include "ridge/gemm.h"
#include "ridge/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- convolution ----------------------------------------------------------------------------- */

/* y = act(conv(x, w) + b), d's layout for x and y, w OIHW, b (c_out) or NULL. Plans a forward
 * convolution (the cost model's choice) for this call; act NONE or RELU. */
ridge_status ridge_conv_layer_forward(ridge_ctx *ctx, float *y, const float *x, const float *w,
                                      const float *b, const ridge_conv2d_desc *d,
                                      ridge_epi_act act);

/* Backward of ridge_conv_layer_forward: dy (in: dL/dy) is overwritten with dL/d(pre-act);
 * dx (NULL: not needed, e.g. the first layer), dw and db (NULL: no bias) are overwritten. */
ridge_status ridge_conv_layer_backward(ridge_ctx *ctx, float *dx, float *dw, float *db,
                                       float *dy, const float *x, const float *w, const float *y,
                                       const ridge_conv2d_desc *d, ridge_epi_act act);

/* ---- pooling (NHWC): the backward of conv.h's ridge_pool2d_forward ----------------------- */

/* Max or average pooling as ridge_pool2d_forward (same descriptor, d->layout must be NHWC),
 * and for max pooling the winner of each output in argmax (same shape as y): its offset
 * (ih*w + iw)*c + ch within x's image, the first maximum in window order, NaN winning. */
ridge_status ridge_pool2d_forward_argmax(ridge_ctx *ctx, const ridge_pool2d_desc *d,
                                         const float *x, float *y, int32_t *argmax);

/* dx (n, h, w, c) overwritten from dy (n, oh, ow, c), NHWC: max pooling adds dy at its
 * argmax (from ridge_pool2d_forward_argmax), average pooling spreads it evenly over the
 * window's valid cells (or over r*s with count_pad). One image per work item, so cells
 * shared by overlapping windows are summed in a fixed order. */
ridge_status ridge_pool2d_backward(ridge_ctx *ctx, const ridge_pool2d_desc *d, float *dx,
                                   const float *dy, const int32_t *argmax);

/* ---- batch normalization --------------------------------------------------------------------- */

/* Training: per channel of x (rows, C) (rows = n*h*w in NHWC), mean and biased variance over
 * the rows; y = act(gamma (x - mean) rstd + beta), rstd = 1/sqrt(var + eps). mean and rstd (C)
 * are saved for the backward. run_mean/run_var (C, may be NULL) are updated as PyTorch does:
 * run = (1 - momentum) run + momentum stat, with the unbiased variance. Statistics are summed
 * in double over fixed row chunks, so they do not depend on the thread count. y must not
 * overlap x (the backward needs x). */
ridge_status ridge_batchnorm_forward_train(ridge_ctx *ctx, float *y, float *mean, float *rstd,
                                           float *run_mean, float *run_var, const float *x,
                                           const float *gamma, const float *beta, size_t rows,
                                           size_t C, float eps, float momentum,
                                           ridge_epi_act act);

/* Inference with the running statistics: y = act(gamma (x - run_mean) / sqrt(run_var + eps)
 * + beta). (A batch norm after a convolution is better folded into it: ridge_conv2d_fold_bn.) */
ridge_status ridge_batchnorm_forward_infer(ridge_ctx *ctx, float *y, const float *x,
                                           const float *gamma, const float *beta,
                                           const float *run_mean, const float *run_var,
                                           size_t rows, size_t C, float eps, ridge_epi_act act);

/* Backward of the training forward: dy (in: dL/dy) is overwritten with dL/d(pre-act); dx
 * (rows, C) (may equal dy), dgamma, dbeta (C) are overwritten. y is the forward's output. */
ridge_status ridge_batchnorm_backward(ridge_ctx *ctx, float *dx, float *dgamma, float *dbeta,
                                      float *dy, const float *x, const float *y,
                                      const float *mean, const float *rstd, const float *gamma,
                                      size_t rows, size_t C, ridge_epi_act act);

/* Synchronized batch norm for data parallelism (PyTorch's SyncBatchNorm): the same calls, but
 * the per-channel sums (and the row count) are summed over the replicas with `sum` (NULL: this
 * process alone), so mean and variance are those of the whole batch, and the backward's dx
 * uses the whole batch's sums of dy and dy xhat. dgamma and dbeta stay this replica's own
 * sums: averaging them over the replicas (as every gradient is) gives the whole batch's
 * gradient when each replica's loss is the mean over its own rows. */
ridge_status ridge_batchnorm_forward_train_sync(ridge_ctx *ctx, float *y, float *mean,
                                                float *rstd, float *run_mean, float *run_var,
                                                const float *x, const float *gamma,
                                                const float *beta, size_t rows, size_t C,
                                                float eps, float momentum, ridge_epi_act act,
                                                ridge_sum_f64_fn sum);
ridge_status ridge_batchnorm_backward_sync(ridge_ctx *ctx, float *dx, float *dgamma,
                                           float *dbeta, float *dy, const float *x,
                                           const float *y, const float *mean, const float *rstd,
                                           const float *gamma, size_t rows, size_t C,
                                           ridge_epi_act act, ridge_sum_f64_fn sum);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_NN_CONV_H */
