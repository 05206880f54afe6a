/* Shared by the quantized models (qmlp.c, qcnn.c): a weighted layer's int8 parameters and
 * quantization, how they are made from fp32, serialized, validated, and requantize. */
#ifndef RIDGE_QUANT_INTERNAL_H
#define RIDGE_QUANT_INTERNAL_H

#include "core/internal.h"
#include "ridge/quant.h"

/* A conv or dense layer: rows output channels of cols weights each. */
typedef struct quant_layer {
    size_t rows, cols;
    int8_t *wq;             /* (rows, cols) */
    float *w_scale;         /* (rows): symmetric per output channel */
    int32_t *bias;          /* (rows): at the accumulator's scale in_scale * w_scale[o] */
    float *rq_scale;        /* (rows): in_scale w_scale[o] / out_scale (last: no out_scale) */
    float in_scale, out_scale;
    int32_t in_zp, out_zp;  /* u8: real = scale * (q - zp); out_* unused by the last layer */
} quant_layer;

ridge_status quant_layer_alloc(quant_layer *L, size_t rows, size_t cols); /* zeroed */
void quant_layer_free(quant_layer *L);

/* From fp32 weights w (rows, cols) and bias b, with L->in_scale set: symmetric int8 per row
 * (scale max |w| / 127), and int32 biases of b[o] + shift * sum_i w[o][i] (shift: a constant
 * the input carries, folded in). */
void quant_layer_quantize(quant_layer *L, const float *w, const float *b, double shift);

/* The requantization scales (after quantizing or loading; last: fp32 output); RIDGE_EOVERFLOW
 * when one is not a positive finite float. */
ridge_status quant_layer_finish(quant_layer *L, int last);

/* The epilogue: u8 output with its zero point (ReLU fused), or fp32 logits for the last. */
ridge_requant quant_layer_requant(const quant_layer *L, int last, int relu);

/* u8 (scale, zero point) covering [lo, hi] widened to contain 0. */
void quant_range_u8(double lo, double hi, float *scale, int32_t *zp);

/* The serialized layer: f32 in_scale, u32 in_zp, f32 out_scale, u32 out_zp, f32 w_scale[rows],
 * i32 bias[rows], i8 wq[rows][cols]. put returns the end; get fills L (allocated) and returns
 * the end, or NULL if a scale is not finite and > 0 or a zero point is outside [0, 255]. */
uint64_t quant_layer_bytes(uint64_t rows, uint64_t cols);
unsigned char *quant_layer_put(const quant_layer *L, unsigned char *p);
const unsigned char *quant_layer_get(quant_layer *L, const unsigned char *p, int last);

/* Over B rows of logits (B, C): adds the cross-entropy of each row's label to *loss_sum and the
 * correct argmaxes to *right; RIDGE_EINVAL for a label >= C (first is the first row's index,
 * for the message). */
ridge_status quant_score(const float *logits, const uint8_t *labels, size_t B, size_t C,
                         size_t first, double *loss_sum, size_t *right);

#endif /* RIDGE_QUANT_INTERNAL_H */
