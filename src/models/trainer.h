/* The training step, epoch and evaluation loops that the MLP and the CNN share: a model
 * describes itself (its forward, its gradients, its parameter block, its input) in a
 * model_trainer, and these do the rest, including the data-parallel share of each batch and the
 * gradient average between the backward pass and the optimizer step (ridge_data_parallel). */
#ifndef RIDGE_MODELS_TRAINER_H
#define RIDGE_MODELS_TRAINER_H

#include "ridge/nn.h"

typedef struct model_trainer {
    const char *name; /* "mlp", "cnn": prefixes messages ("mlp_train_epoch: ...") */
    void *model;
    /* Forward and backward of B normalized rows x (B, D): the batch's mean loss, and the
     * gradients in `grads`. */
    ridge_status (*gradients)(ridge_ctx *ctx, void *model, const float *x, const int32_t *y,
                              size_t B, float *loss);
    /* Inference logits (B, classes), valid until the model's next call. */
    ridge_status (*forward)(ridge_ctx *ctx, void *model, const float *x, size_t B,
                            const float **logits);
    const ridge_optim_config *opt;
    float *params, *grads, *state;
    size_t nparams;
    uint64_t *step;   /* optimizer steps taken */
    uint32_t *epoch;  /* epochs completed */
    uint64_t seed;    /* epoch e is shuffled by hash(seed) ^ e */
    size_t batch;     /* training batch (the global one with data parallelism) */
    size_t eval_batch;
    size_t D, classes; /* u8 values per image; outputs */
    float in_mean, in_std;
    const ridge_data_parallel *dp;
} model_trainer;

/* gradients, the data-parallel average (dp->grad_mean, when nranks > 1), one optimizer step. */
ridge_status model_train_step(ridge_ctx *ctx, const model_trainer *t, const float *x,
                              const int32_t *y, size_t B, float *loss);

/* One epoch (see ridge_mlp_train_epoch); with dp->nranks > 1 this rank trains its equal
 * contiguous share of the rows of every batch, and *mean_loss is this rank's mean. */
ridge_status model_train_epoch(ridge_ctx *ctx, const model_trainer *t, const uint8_t *images,
                               const uint8_t *labels, size_t n,
                               int (*fn)(void *, size_t, size_t, double, size_t), void *arg,
                               double *mean_loss);

/* Mean loss, correct count and the confusion matrix (see ridge_mlp_evaluate). */
ridge_status model_evaluate(ridge_ctx *ctx, const model_trainer *t, const uint8_t *images,
                            const uint8_t *labels, size_t n, double *loss, size_t *correct,
                            uint64_t *confusion);

#endif /* RIDGE_MODELS_TRAINER_H */
