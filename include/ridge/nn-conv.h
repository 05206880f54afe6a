/* ridge/nn-conv.h: the layers of a convolutional network (issue 8), forward and backward:
 * convolution, max/average pooling, batch normalization. Flatten is free in NHWC (an
 * (n, h, w, c) tensor is already the (n, h*w*c) matrix a dense layer takes).
 *
 * Conventions as in nn.h: outputs first, backward calls overwrite their gradients (they do
 * not accumulate), activations are given as ridge_epi_act (NONE or RELU here) and their
 * backward works from the layer's output. Pooling and batch normalization take NHWC tensors
 * (batch normalization: any (rows, C) matrix, so it also serves dense layers). Every result is
 * deterministic and independent of the thread count. */
#ifndef RIDGE_NN_CONV_H
#define RIDGE_NN_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/conv-backward.h"
#include "ridge/conv.h"
#include "ridge/gemm.h"

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

/* ---- pooling (NHWC) -------------------------------------------------------------------------- */

typedef enum ridge_pool_kind { RIDGE_POOL_MAX = 0, RIDGE_POOL_AVG = 1 } ridge_pool_kind;

typedef struct ridge_pool2d_desc {
    int64_t n, h, w, c;   /* input, NHWC */
    int64_t k, stride;    /* square window, stride >= 1 */
    int64_t pad;          /* on every side, < k; padded cells never win a max and are not
                           * counted in an average (PyTorch's count_include_pad=False) */
    ridge_pool_kind kind;
} ridge_pool2d_desc;

/* Validates and gives the output size floor((h + 2 pad - k) / stride) + 1 (likewise w). */
ridge_status ridge_pool2d_desc_check(const ridge_pool2d_desc *d, int64_t *oh, int64_t *ow);

/* y (n, oh, ow, c). Max pooling writes into argmax (same shape as y, may be NULL when no
 * backward follows) the offset within x's image (ih*w + iw)*c + ch of the winner (the first
 * maximum; NaN wins); average pooling ignores argmax. */
ridge_status ridge_pool2d_forward(ridge_ctx *ctx, float *y, int32_t *argmax, const float *x,
                                  const ridge_pool2d_desc *d);
/* dx (n, h, w, c) overwritten from dy (n, oh, ow, c); max pooling needs the forward's argmax. */
ridge_status ridge_pool2d_backward(ridge_ctx *ctx, float *dx, const float *dy,
                                   const int32_t *argmax, const ridge_pool2d_desc *d);

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

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_NN_CONV_H */
