/* ridge/mlp.h: a multilayer perceptron classifier, its training loop and its checkpoints.
 *
 *   ridge_mlp_config c = {.nlayers = 2, .sizes = {784, 128, 10}, .act = RIDGE_EPI_RELU,
 *                         .in_mean = 0.2860f, .in_std = 0.3530f};
 *   ridge_optim_config o;  ridge_optim_config_init(&o);         // AdamW, lr 1e-3
 *   ridge_mlp *m;  ridge_mlp_create(&c, &o, 64, seed, &m);      // batch 64
 *   for (epoch...) ridge_mlp_train_epoch(ctx, m, images, labels, n, NULL, NULL, &loss);
 *   ridge_mlp_evaluate(ctx, m, test_images, test_labels, n_test, &loss, &correct, NULL);
 *   ridge_mlp_save(m, "model.ridge");
 *
 * Parameters, gradients and optimizer state are each one allocation with a table of views
 * (w[l], b[l] into params; dw[l], db[l] into grads). Training is deterministic: the same
 * seed, batch size and thread count give the same losses, bit for bit, also across a save and
 * a resume at an epoch boundary (the shuffle of epoch e and the dropout masks of step s are
 * functions of (seed, e) and (seed, s), not of a stream that would need saving).
 */
#ifndef RIDGE_MLP_H
#define RIDGE_MLP_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RIDGE_MLP_MAX_LAYERS 16      /* dense layers */
#define RIDGE_MLP_MAX_WIDTH (1 << 20) /* units in one layer */

typedef struct ridge_mlp_config {
    int nlayers;                            /* dense layers, 1..RIDGE_MLP_MAX_LAYERS */
    size_t sizes[RIDGE_MLP_MAX_LAYERS + 1]; /* sizes[0] inputs ... sizes[nlayers] classes */
    ridge_epi_act act;                          /* hidden layers' activation (relu, tanh, sigmoid,
                                               none); the output layer has none (the loss
                                               applies the softmax) */
    float dropout;                          /* after each hidden activation, training only */
    float in_mean, in_std;                  /* inputs are (u8 / 255 - mean) / std */
} ridge_mlp_config;

ridge_status ridge_mlp_config_check(const ridge_mlp_config *c);

typedef struct ridge_mlp {
    ridge_mlp_config cfg;
    ridge_optim_config opt;
    size_t batch;      /* the training batch size */
    uint64_t seed;
    uint64_t step;     /* optimizer steps taken */
    uint32_t epoch;    /* epochs completed */
    size_t nparams;    /* floats in params (and grads), views 64-byte aligned */
    size_t nstate;     /* floats of optimizer state */
    float *params, *grads, *state;
    float *w[RIDGE_MLP_MAX_LAYERS], *b[RIDGE_MLP_MAX_LAYERS];   /* w (out, in), b (out) */
    float *dw[RIDGE_MLP_MAX_LAYERS], *db[RIDGE_MLP_MAX_LAYERS];
    /* activation buffers for up to `cap` rows (internal) */
    size_t cap;
    float *acts;
    float *h[RIDGE_MLP_MAX_LAYERS + 1];  /* h[l] (cap, sizes[l]), l >= 1: layer outputs */
    float *hd[RIDGE_MLP_MAX_LAYERS];     /* after dropout (training with dropout only) */
    float *g[2];                         /* (cap, max width): gradients, ping-pong */
    /* mpi: data parallelism, set by the caller (all zero: one process; see nn.h). Exact
     * agreement with one process holds without dropout (masks are drawn per local row). */
    ridge_data_parallel dp;
} ridge_mlp;

/* Allocates a model and initializes it from `seed` (PyTorch's Linear default: w and b
 * uniform in +-1/sqrt(fan_in)). Free with ridge_mlp_destroy. */
ridge_status ridge_mlp_create(const ridge_mlp_config *cfg, const ridge_optim_config *opt,
                              size_t batch, uint64_t seed, ridge_mlp **out);
void ridge_mlp_destroy(ridge_mlp *m); /* NULL is a no-op */

/* Logits (B, classes) for B normalized inputs (B, sizes[0]), no dropout. *logits points into
 * the model and stays valid until the model's next call. */
ridge_status ridge_mlp_forward(ridge_ctx *ctx, ridge_mlp *m, const float *x, size_t B,
                               const float **logits);

/* Forward, backward (into m->grads) and one optimizer step on a batch of B rows, B <= any.
 * *loss is the batch's mean loss. A non-finite loss fails with RIDGE_EINVAL before the step. */
ridge_status ridge_mlp_train_step(ridge_ctx *ctx, ridge_mlp *m, const float *x,
                                  const int32_t *y, size_t B, float *loss);

/* Called after each step with the step within the epoch, the steps in the epoch, the
 * running mean loss, and the samples done. Returns non-zero to stop the epoch early. */
typedef int (*ridge_mlp_progress_fn)(void *arg, size_t step, size_t steps, double mean_loss,
                                     size_t samples);

/* One epoch over n u8 images (n, sizes[0]) and labels, shuffled by (seed, epoch), in batches
 * of m->batch (the last one smaller). Increments m->epoch when it completes. */
ridge_status ridge_mlp_train_epoch(ridge_ctx *ctx, ridge_mlp *m, const uint8_t *images,
                                   const uint8_t *labels, size_t n, ridge_mlp_progress_fn fn,
                                   void *arg, double *mean_loss);

/* Mean loss, correct count and (optionally) the confusion matrix (classes x classes,
 * row = true label, column = prediction; overwritten) over n u8 images. */
ridge_status ridge_mlp_evaluate(ridge_ctx *ctx, ridge_mlp *m, const uint8_t *images,
                                const uint8_t *labels, size_t n, double *loss, size_t *correct,
                                uint64_t *confusion);

/* ---- checkpoints ----------------------------------------------------------------------------
 * ridge's own format (docs/FORMATS.md): a 256-byte little-endian header (magic "RIDGEMLP",
 * version, architecture, normalization, optimizer, seed, step, epoch, batch, sizes), the
 * parameters, the optimizer state, and a CRC-32 of all that. Saving writes a temporary file in
 * the same directory, syncs it and renames it over `path`, so a crash leaves either the old
 * file or the new one. Loading validates every field before allocating, the file's length,
 * and the CRC. */
ridge_status ridge_mlp_save(const ridge_mlp *m, const char *path);
ridge_status ridge_mlp_load(const char *path, ridge_mlp **out);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_MLP_H */
