/* ridge/cnn.h: a small convolutional classifier (a stack of layers described by a string),
 * its training loop and its checkpoints. The same shape as ridge/mlp.h:
 *
 *   ridge_cnn_config c;
 *   ridge_cnn_config_init(&c);          // 28x28x1 input, Fashion-MNIST normalization
 *   ridge_cnn_arch_parse(RIDGE_CNN_DEFAULT_ARCH, &c);
 *   ridge_optim_config o;  ridge_optim_config_init(&o);
 *   ridge_cnn *m;  ridge_cnn_create(&c, &o, 64, seed, &m);
 *   for (epoch...) ridge_cnn_train_epoch(ctx, m, images, labels, n, NULL, NULL, &loss);
 *   ridge_cnn_evaluate(ctx, m, test_images, test_labels, n_test, &loss, &correct, NULL);
 *   ridge_cnn_save(m, "model.ridge");
 *
 * Architecture strings: comma-separated layers, activations in NHWC throughout:
 *   convKxK-C      K x K convolution to C channels, stride 1, "same" padding K/2 (odd K)
 *   convKxKsS-C    the same with stride S
 *   bn             batch normalization over the channels (running statistics for inference)
 *   relu           ReLU, fused into the conv, bn or dense layer before it
 *   maxpoolK, avgpoolK, maxpoolKsS, avgpoolKsS    K x K pooling, stride K (or S)
 *   dense-N        fully connected to N units (flattens what comes in, NHWC order)
 * The last layer must be a dense layer without activation; its N is the number of classes.
 * In evaluation a conv followed by bn runs as one convolution with the batch norm folded
 * into its weights (ridge_conv2d_fold_bn), the bn's ReLU fused into its epilogue.
 *
 * Parameters, gradients and optimizer state are one allocation each, with views; batch-norm
 * running statistics are a fourth block (saved in checkpoints, no gradient). Training is
 * deterministic for a given seed, batch size and thread count, across save and resume. */
#ifndef RIDGE_CNN_H
#define RIDGE_CNN_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/nn-conv.h"
#include "ridge/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIDGE_CNN_MAX_LAYERS 32
#define RIDGE_CNN_ARCH_MAX 240 /* bytes of an architecture string, with its NUL */
#define RIDGE_CNN_DEFAULT_ARCH                                                                 \
    "conv3x3-32,bn,relu,maxpool2,conv3x3-64,bn,relu,maxpool2,dense-128,relu,dense-10"

typedef enum ridge_cnn_kind {
    RIDGE_CNN_CONV = 0,
    RIDGE_CNN_BN = 1,
    RIDGE_CNN_MAXPOOL = 2,
    RIDGE_CNN_AVGPOOL = 3,
    RIDGE_CNN_DENSE = 4,
} ridge_cnn_kind;

typedef struct ridge_cnn_layer {
    ridge_cnn_kind kind;
    int64_t k, stride; /* conv and pooling window and stride */
    int64_t out;       /* conv: output channels; dense: units */
    ridge_epi_act act; /* conv, bn, dense: NONE or RELU */
} ridge_cnn_layer;

typedef struct ridge_cnn_config {
    int nlayers;
    ridge_cnn_layer layers[RIDGE_CNN_MAX_LAYERS];
    int64_t in_h, in_w, in_c;  /* input image, NHWC */
    float in_mean, in_std;     /* inputs are (u8 / 255 - mean) / std */
    float bn_eps, bn_momentum; /* PyTorch's defaults: 1e-5, 0.1 */
} ridge_cnn_config;

/* 28x28x1 input, Fashion-MNIST's mean 0.2860 and std 0.3530, bn 1e-5 / 0.1, no layers. */
void ridge_cnn_config_init(ridge_cnn_config *c);
/* Replaces c's layers by those the string describes; RIDGE_EINVAL naming the bad token. */
ridge_status ridge_cnn_arch_parse(const char *arch, ridge_cnn_config *c);
/* The canonical string of c's layers (what parse reads back) into buf. */
ridge_status ridge_cnn_arch_format(const ridge_cnn_config *c, char *buf, size_t len);
/* Checks the layers against the input: sizes that stay >= 1, a dense last layer without
 * activation, activations only where supported. */
ridge_status ridge_cnn_config_check(const ridge_cnn_config *c);

typedef struct ridge_cnn {
    ridge_cnn_config cfg;
    ridge_optim_config opt;
    size_t batch;
    uint64_t seed;
    uint64_t step;
    uint32_t epoch;
    size_t classes;
    size_t nparams, nstate, nbuffers; /* floats */
    float *params, *grads, *state, *buffers;
    /* per layer: w/b (conv OIHW + bias, bn gamma/beta, dense (out, in) + bias), running stats */
    float *w[RIDGE_CNN_MAX_LAYERS], *b[RIDGE_CNN_MAX_LAYERS];
    float *dw[RIDGE_CNN_MAX_LAYERS], *db[RIDGE_CNN_MAX_LAYERS];
    float *run_mean[RIDGE_CNN_MAX_LAYERS], *run_var[RIDGE_CNN_MAX_LAYERS];
    int64_t h[RIDGE_CNN_MAX_LAYERS + 1], wd[RIDGE_CNN_MAX_LAYERS + 1], c[RIDGE_CNN_MAX_LAYERS + 1];
    /* work buffers for up to `cap` images (internal) */
    size_t cap;
    void *work;
    float *act[RIDGE_CNN_MAX_LAYERS + 1]; /* act[l + 1]: layer l's output */
    float *g[2];
    int32_t *argmax[RIDGE_CNN_MAX_LAYERS];
    float *bn_mean[RIDGE_CNN_MAX_LAYERS], *bn_rstd[RIDGE_CNN_MAX_LAYERS];
    float *fold_w, *fold_b;
    /* mpi: data parallelism, set by the caller (all zero: one process; see nn.h); the batch
     * norms then use the whole batch's statistics (sum_f64), so N ranks train as one process */
    ridge_data_parallel dp;
} ridge_cnn;

/* Allocates and initializes from seed (PyTorch's defaults: conv and dense weights and biases
 * uniform in +-1/sqrt(fan_in); bn gamma 1, beta 0, running mean 0, variance 1). */
ridge_status ridge_cnn_create(const ridge_cnn_config *cfg, const ridge_optim_config *opt,
                              size_t batch, uint64_t seed, ridge_cnn **out);
void ridge_cnn_destroy(ridge_cnn *m); /* NULL is a no-op */

/* Inference logits (B, classes) for B normalized NHWC images; *logits points into the model
 * until its next call. Batch norms use their running statistics, folded into the convs. */
ridge_status ridge_cnn_forward(ridge_ctx *ctx, ridge_cnn *m, const float *x, size_t B,
                               const float **logits);

/* Forward (batch statistics), backward into m->grads, one optimizer step. *loss is the batch's
 * mean loss; a non-finite one fails with RIDGE_EINVAL before the step. */
ridge_status ridge_cnn_train_step(ridge_ctx *ctx, ridge_cnn *m, const float *x,
                                  const int32_t *y, size_t B, float *loss);

/* Only the forward and backward of a training step (no update): the loss and m->grads. */
ridge_status ridge_cnn_gradients(ridge_ctx *ctx, ridge_cnn *m, const float *x,
                                 const int32_t *y, size_t B, float *loss);

typedef int (*ridge_cnn_progress_fn)(void *arg, size_t step, size_t steps, double mean_loss,
                                     size_t samples);

/* One epoch over n u8 images (n, in_h * in_w * in_c) shuffled by (seed, epoch); see mlp.h. */
ridge_status ridge_cnn_train_epoch(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images,
                                   const uint8_t *labels, size_t n, ridge_cnn_progress_fn fn,
                                   void *arg, double *mean_loss);

ridge_status ridge_cnn_evaluate(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images,
                                const uint8_t *labels, size_t n, double *loss, size_t *correct,
                                uint64_t *confusion);

/* Checkpoints (docs/FORMATS.md): 512-byte header (magic "RIDGECNN", version, input, the
 * architecture string, normalization, optimizer, seed, step, epoch, batch, counts), then
 * parameters, running statistics, optimizer state, CRC-32 of everything before it. Written to
 * a temporary file, synced and renamed; loading validates every field, the length and CRC. */
ridge_status ridge_cnn_save(const ridge_cnn *m, const char *path);
ridge_status ridge_cnn_load(const char *path, ridge_cnn **out);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_CNN_H */
