/* Shared by the quantized models (qmlp.c, qcnn.c). */
#ifndef RIDGE_QUANT_INTERNAL_H
#define RIDGE_QUANT_INTERNAL_H

#include "core/internal.h"
#include "ridge/quant.h"

/* Symmetric int8 per output row: scale[o] = max |w[o][:]| / 127 (1 for a zero row) and
 * q = round(w / scale) in [-127, 127], for rows x cols weights. */
void quant_weights_per_row(const float *w, size_t rows, size_t cols, int8_t *q, float *scale);

/* u8 (scale, zero point) covering [lo, hi] widened to contain 0. */
void quant_range_u8(double lo, double hi, float *scale, int32_t *zp);

/* b / s rounded and saturated to int32: a bias at the accumulator's scale. */
int32_t quant_bias(double b, double s);

/* Over B rows of logits (B, C): adds the cross-entropy of each row's label to *loss_sum and the
 * correct argmaxes to *right; RIDGE_EINVAL for a label >= C (first is the first row's index,
 * for the message). */
ridge_status quant_score(const float *logits, const uint8_t *labels, size_t B, size_t C,
                         size_t first, double *loss_sum, size_t *right);

#endif /* RIDGE_QUANT_INTERNAL_H */
