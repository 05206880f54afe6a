/* ridge/nn.h: layers (dense, activations, softmax cross-entropy, dropout), parameter
 * tables, optimizers (SGD with momentum, AdamW) and learning-rate schedules, a seeded RNG,
 * and mini-batch helpers.
 *
 * Conventions: row-major tensors, shapes in the comments, outputs first. Dense weights are
 * (out, in) like PyTorch's Linear, so y = x W^T + b. Backward calls overwrite their gradient
 * outputs (they do not accumulate). Everything is deterministic for a given thread count;
 * the elementwise ops and the dropout mask do not depend on the thread count at all.
 */
#ifndef RIDGE_NN_H
#define RIDGE_NN_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"
#include "ridge/gemm.h"
#include "ridge/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- activations --------------------------------------------------------------------------- */

/* Layers name their activation with the SGEMM epilogue's enum (ridge_epi_act, gemm.h), so the
 * dense forward fuses it. Supported here: NONE, RELU, TANH, SIGMOID, whose derivatives follow
 * from the activation's OUTPUT, so a layer keeps only y (vec.h's ridge_act_backward_f32 takes
 * the input). GELU_TANH's derivative needs the input: RIDGE_EUNSUPPORTED here. */
const char *ridge_nn_act_name(ridge_epi_act act); /* "none", "relu", "gelu", "sigmoid", "tanh" */
ridge_status ridge_nn_act_parse(const char *name, ridge_epi_act *out); /* EINVAL if unknown */

/* dx = dy * act'(.) from the forward's output y; dx may equal dy. */
ridge_status ridge_nn_act_backward(ridge_ctx *ctx, float *dx, const float *dy, const float *y,
                                   size_t n, ridge_epi_act act);

/* ---- dense ----------------------------------------------------------------------------------- */

/* y = act(x w^T + b). Batch 1 takes the matrix-vector path, larger batches SGEMM, each with
 * the bias and activation fused into the pass that writes y. b may be NULL (no bias).
 * y must not alias x or w. */
ridge_status ridge_dense_forward(ridge_ctx *ctx,
                                 float *y,        /* (B, OC) */
                                 const float *x,  /* (B, IC) */
                                 const float *w,  /* (OC, IC) */
                                 const float *b,  /* (OC) or NULL */
                                 size_t B, size_t IC, size_t OC, ridge_epi_act act);

/* Backward of ridge_dense_forward. dy is overwritten with dL/d(pre-activation). dx (may be
 * NULL: not needed for the first layer), dw and db (may be NULL) are overwritten. */
ridge_status ridge_dense_backward(ridge_ctx *ctx,
                                  float *dx,       /* (B, IC) or NULL */
                                  float *dw,       /* (OC, IC) */
                                  float *db,       /* (OC) or NULL */
                                  float *dy,       /* (B, OC), in: dL/dy, out: dL/dz */
                                  const float *x,  /* (B, IC) */
                                  const float *w,  /* (OC, IC) */
                                  const float *y,  /* (B, OC), the forward's output */
                                  size_t B, size_t IC, size_t OC, ridge_epi_act act);

/* ---- softmax cross-entropy ------------------------------------------------------------------- */

/* Fused, stable (max-subtracted) softmax + cross-entropy over rows of logits. *loss is the
 * mean over the B rows (summed in double). If dlogits is non-NULL it gets
 * (softmax - onehot(label)) / B; it may equal logits. If correct is non-NULL it gets the
 * number of rows whose argmax (first maximum) equals the label. Labels must be in [0, V). */
ridge_status ridge_softmax_xent(ridge_ctx *ctx, float *loss, float *dlogits, size_t *correct,
                                const float *logits,   /* (B, V) */
                                const int32_t *labels, /* (B) */
                                size_t B, size_t V);

/* ---- dropout --------------------------------------------------------------------------------- */

/* Inverted dropout: y_i = x_i / (1 - p) if kept, else 0, element i kept when a hash of
 * (seed, offset + i) is at or above p. The mask is never stored: the backward recomputes it
 * from the same (seed, offset), so it is independent of threads. p in [0, 1); y may equal x. */
ridge_status ridge_dropout_forward(ridge_ctx *ctx, float *y, const float *x, size_t n, float p,
                                   uint64_t seed, uint64_t offset);
ridge_status ridge_dropout_backward(ridge_ctx *ctx, float *dx, const float *dy, size_t n,
                                    float p, uint64_t seed, uint64_t offset);

/* ---- random numbers -------------------------------------------------------------------------- */

/* xoshiro256** seeded through splitmix64: fast, good, and the same stream on every machine. */
typedef struct ridge_rng {
    uint64_t s[4];
} ridge_rng;

void ridge_rng_seed(ridge_rng *r, uint64_t seed);
uint64_t ridge_rng_next(ridge_rng *r);
float ridge_rng_uniform(ridge_rng *r);                  /* [0, 1) with 24 random bits */
uint32_t ridge_rng_below(ridge_rng *r, uint32_t n);     /* uniform in [0, n), unbiased; n > 0 */
/* A random permutation of 0..n-1 (Fisher-Yates). */
void ridge_rng_permutation(ridge_rng *r, uint32_t *perm, uint32_t n);
/* splitmix64 of x: a stateless hash, used for counter-based randomness. */
uint64_t ridge_hash64(uint64_t x);

/* ---- parameter tables ------------------------------------------------------------------------ */

/* Many tensors in one allocation, llm.c style: `count` views of sizes[i] floats, each view
 * starting on a 64-byte boundary. ridge_params_layout fills offsets[i] (in floats) and returns
 * the total floats in *total; RIDGE_EOVERFLOW if it does not fit. */
ridge_status ridge_params_layout(const size_t *sizes, size_t count, size_t *offsets,
                                 size_t *total);

/* ---- optimizers and schedules ---------------------------------------------------------------- */

typedef enum ridge_optim_kind { RIDGE_OPTIM_SGD = 0, RIDGE_OPTIM_ADAMW = 1 } ridge_optim_kind;
typedef enum ridge_lr_kind { RIDGE_LR_CONSTANT = 0, RIDGE_LR_COSINE = 1 } ridge_lr_kind;

typedef struct ridge_optim_config {
    ridge_optim_kind kind;
    float lr;             /* peak learning rate */
    float momentum;       /* SGD: momentum (0: plain SGD) */
    float beta1, beta2;   /* AdamW */
    float eps;            /* AdamW */
    float weight_decay;   /* decoupled: p -= lr * wd * p (AdamW); added to the gradient (SGD) */
    ridge_lr_kind schedule;
    uint64_t warmup;      /* linear warm-up steps from lr/warmup to lr (cosine only) */
    uint64_t total;       /* cosine: steps to decay over, down to lr * min_lr_frac */
    float min_lr_frac;
} ridge_optim_config;

/* Defaults: AdamW, lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01 (PyTorch's),
 * momentum 0.9 for SGD, constant schedule, min_lr_frac 0. */
void ridge_optim_config_init(ridge_optim_config *c);
ridge_status ridge_optim_config_check(const ridge_optim_config *c);

const char *ridge_optim_name(ridge_optim_kind k);                 /* "sgd", "adamw" */
ridge_status ridge_optim_parse(const char *name, ridge_optim_kind *out);
const char *ridge_lr_name(ridge_lr_kind k);                        /* "constant", "cosine" */
ridge_status ridge_lr_parse(const char *name, ridge_lr_kind *out);

/* The learning rate at step `step` (0-based). */
float ridge_lr_at(const ridge_optim_config *c, uint64_t step);

/* Floats of optimizer state per parameter: 1 (SGD with momentum), 2 (AdamW), 0 (plain SGD). */
size_t ridge_optim_state_per_param(const ridge_optim_config *c);

/* One update of n parameters. `state` holds state_per_param * n floats (zero at step 0);
 * `step` is the 0-based step count (AdamW's bias correction uses step + 1). */
ridge_status ridge_optim_step(ridge_ctx *ctx, const ridge_optim_config *c, float *params,
                              const float *grads, float *state, size_t n, uint64_t step);

/* ---- data parallelism ------------------------------------------------------------------------ */

/* Sums n doubles over the replicas of a data-parallel job, in place. */
typedef ridge_status (*ridge_sum_f64_fn)(double *x, size_t n);

/* A model's place in a data-parallel job (all zero: it trains alone). With nranks > 1 the MLP
 * and CNN epochs give rank `rank` an equal contiguous share of the rows of every batch (each
 * batch must split evenly); a training step calls grad_mean(grads, nparams), which must average
 * the gradients over the ranks, between the backward pass and the optimizer step; the CNN's
 * batch norms call sum_f64 to take their statistics over the whole batch (synchronized batch
 * norm), so N ranks compute what one process does. ridge_dist (ridge/dist.h) provides both. */
typedef struct ridge_data_parallel {
    int rank, nranks;
    ridge_status (*grad_mean)(float *x, size_t n);
    ridge_sum_f64_fn sum_f64;
} ridge_data_parallel;

/* ---- mini-batches ---------------------------------------------------------------------------- */

/* Gathers rows perm[start..start+B) of u8 data (N, D) into floats, scaled
 * out = (in / 255 - mean) / std, and their labels (as int32). perm may be NULL (identity). */
void ridge_batch_u8(float *x,            /* (B, D) */
                    int32_t *y,          /* (B) or NULL */
                    const uint8_t *data, /* (N, D) */
                    const uint8_t *labels,
                    const uint32_t *perm, size_t start, size_t B, size_t D, float mean,
                    float std);

/* ---- checksums ------------------------------------------------------------------------------- */

/* CRC-32 (IEEE 802.3, zlib's crc32) of n bytes, continuing from crc (start with 0). */
uint32_t ridge_crc32(uint32_t crc, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_NN_H */
