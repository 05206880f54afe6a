/* ridge/quant.h: post-training int8 quantization of an MLP or CNN classifier, and its
 * inference.
 *
 *   ridge_mlp *m;   ridge_mlp_load("mlp.ridge", &m);
 *   ridge_qmlp *q;  ridge_qmlp_quantize(ctx, m, train_images, 1000, &q);  // calibrate on 1000
 *   ridge_qmlp_evaluate(ctx, q, test_images, test_labels, n, &loss, &correct);
 *   ridge_qmlp_save(q, "mlp-int8.ridge");
 *
 * The scheme (docs/ARCHITECTURE.md, lowp):
 * - weights: symmetric int8 per output channel, s_w[o] = max |W[o][:]| / 127;
 * - the first layer reads the raw u8 pixels (zero point 0, scale 1 / (255 std)); the input
 *   normalization's mean is folded into the bias (b' = b - mean / std * sum_i W[o][i]), so the
 *   input is not quantized again at all;
 * - hidden activations: u8 with a per-tensor scale and zero point from their range over the
 *   calibration images (after ReLU the range starts at 0, so the zero point is 0);
 * - biases: int32 at the accumulator's scale (s_in s_w[o]), added before requantization;
 * - every hidden layer is one int8 GEMM with the requantizing epilogue (ReLU fused); the last
 *   one dequantizes straight to fp32 logits.
 * Hidden activation must be ReLU or none (tanh and sigmoid: RIDGE_EUNSUPPORTED).
 * A ridge_qmlp is used by one thread at a time (it holds the activation buffers).
 */
#ifndef RIDGE_QUANT_H
#define RIDGE_QUANT_H

#include "ridge/cnn.h"
#include "ridge/lowp.h"
#include "ridge/mlp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ridge_qmlp ridge_qmlp; /* opaque */

/* Quantizes m, calibrating the activation ranges on n u8 images (n, sizes[0]) (n >= 1).
 * The int8 GEMM plans use ctx's kernels. Free with ridge_qmlp_destroy. RIDGE_EOVERFLOW if a
 * requantization scale (input scale x weight scale / output scale) is not a positive finite
 * float (extreme weights). */
ridge_status ridge_qmlp_quantize(ridge_ctx *ctx, const ridge_mlp *m, const uint8_t *images,
                                 size_t n, ridge_qmlp **out);
void ridge_qmlp_destroy(ridge_qmlp *q); /* NULL is a no-op */

/* The architecture (sizes, activation, normalization) of the fp32 model it came from. */
const ridge_mlp_config *ridge_qmlp_config(const ridge_qmlp *q);

/* Logits (B, classes) for B u8 images (B, sizes[0]). *logits points into q and stays valid
 * until q's next call. */
ridge_status ridge_qmlp_forward(ridge_ctx *ctx, ridge_qmlp *q, const uint8_t *images, size_t B,
                                const float **logits);

/* Mean cross-entropy and the number of correct predictions over n images with labels. */
ridge_status ridge_qmlp_evaluate(ridge_ctx *ctx, ridge_qmlp *q, const uint8_t *images,
                                 const uint8_t *labels, size_t n, double *loss, size_t *correct);

/* The int8 checkpoint (docs/FORMATS.md, "int8 MLP"): magic "RIDGEQ8M", version, sizes,
 * activation, normalization, then per layer the input and output quantization, the weight
 * scales, int32 biases and int8 weights, and a CRC-32 of all that. Saved through a temporary
 * file and a rename; loading validates every field, the length (before allocating), the CRC
 * and the requantization scales the fields imply (RIDGE_EFORMAT), and builds the GEMM plans
 * for ctx. */
ridge_status ridge_qmlp_save(const ridge_qmlp *q, const char *path);
ridge_status ridge_qmlp_load(ridge_ctx *ctx, const char *path, ridge_qmlp **out);

/* ---- CNN ---------------------------------------------------------------------------------
 *
 *   ridge_cnn *m;   ridge_cnn_load("cnn.ridge", &m);
 *   ridge_qcnn *q;  ridge_qcnn_quantize(ctx, m, train_images, 1000, &q);
 *   ridge_qcnn_evaluate(ctx, q, test_images, test_labels, n, &loss, &correct);
 *   ridge_qcnn_save(q, "cnn-int8.ridge");
 *
 * The scheme: every batch norm is folded into the conv or dense layer before it (which must
 * have no activation of its own; the norm's ReLU is fused into the layer's epilogue, a batch
 * norm anywhere else is RIDGE_EUNSUPPORTED); then, as for the MLP, symmetric int8 weights per
 * output channel, int32 biases at the accumulator's scale, u8 activations per tensor from their
 * range over the calibration images (the fp32 model's inference with its folded batch norms).
 * The input is the raw pixels with scale 1 / (255 std) and zero point round(255 mean), so
 * that a convolution's zero-point padding is the fp32 model's zero padding; the remainder of
 * the mean is folded into the first layer's bias. Convolutions run on ridge_qconv2d (direct),
 * dense layers on the int8 GEMM, max and average pooling on the u8 values (the max is exact,
 * the average rounds half up), and the last layer dequantizes to fp32 logits. */
typedef struct ridge_qcnn ridge_qcnn; /* opaque; one thread at a time */

/* Quantizes m, calibrating on n u8 images (n, in_h * in_w * in_c) (n >= 1). m is not changed
 * except for its work buffers (it runs its inference). */
ridge_status ridge_qcnn_quantize(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images, size_t n,
                                 ridge_qcnn **out);
void ridge_qcnn_destroy(ridge_qcnn *q); /* NULL is a no-op */

/* The fp32 model's configuration (input, normalization, layers with their batch norms). */
const ridge_cnn_config *ridge_qcnn_config(const ridge_qcnn *q);

/* Logits (B, classes) for 1 <= B <= 128 u8 images; valid until q's next call. */
ridge_status ridge_qcnn_forward(ridge_ctx *ctx, ridge_qcnn *q, const uint8_t *images, size_t B,
                                const float **logits);

/* Mean cross-entropy and the number of correct predictions over n images with labels. */
ridge_status ridge_qcnn_evaluate(ridge_ctx *ctx, ridge_qcnn *q, const uint8_t *images,
                                 const uint8_t *labels, size_t n, double *loss, size_t *correct);

/* The int8 CNN checkpoint (docs/FORMATS.md, "int8 CNN"): the shared frame with magic
 * "RIDGEQ8C", the input, normalization and architecture string in a 512-byte header, then per
 * conv and dense layer its quantization, weight scales, int32 biases and int8 weights, and a
 * CRC-32. Saved atomically; loading validates every field, the length and the CRC, and builds
 * the plans for ctx. */
ridge_status ridge_qcnn_save(const ridge_qcnn *q, const char *path);
ridge_status ridge_qcnn_load(ridge_ctx *ctx, const char *path, ridge_qcnn **out);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_QUANT_H */
