/* ridge/gpt2.h: GPT-2 training and inference on llm.c's files (ridge/llmc.h).
 *
 *   ridge_gpt2 *m;
 *   ridge_gpt2_load(ctx, "gpt2_124M.bin", &m);
 *   ridge_gpt2_adamw_opts o;
 *   ridge_gpt2_adamw_defaults(&o);
 *   for (int step = 1; ...; step++) {
 *       float loss;
 *       ridge_gpt2_forward(m, inputs, targets, B, T, &loss);   // (B,T) token ids
 *       ridge_gpt2_zero_grad(m);
 *       ridge_gpt2_backward(m);
 *       ridge_gpt2_update(m, &o, step);
 *   }
 *   ridge_gpt2_save(m, "out.bin");
 *   ridge_gpt2_destroy(m);
 *
 * The model is llm.c's: token + position embedding, L pre-LN blocks (layer norm, causal
 * self-attention, residual, layer norm, MLP with tanh-GELU, residual), final layer norm, the
 * output projection tied to the token embedding, softmax cross-entropy. Parameters, gradients,
 * AdamW moments and activations each live in one allocation with views, in llm.c's layout;
 * gradients, moments and activations are allocated on first use. A model keeps the context it
 * was created with; like the context, it must not be used by two threads at once. Results are
 * deterministic for a given ISA and thread count.
 */
#ifndef RIDGE_GPT2_H
#define RIDGE_GPT2_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"
#include "ridge/llmc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ridge_gpt2 ridge_gpt2; /* opaque */

/* A model of the given shape with every parameter 0. */
ridge_status ridge_gpt2_create(ridge_ctx *ctx, const ridge_gpt2_config *cfg, ridge_gpt2 **out);
/* A model read from an llm.c checkpoint (ridge_llmc_model_read). */
ridge_status ridge_gpt2_load(ridge_ctx *ctx, const char *path, ridge_gpt2 **out);
/* Writes the parameters as an llm.c checkpoint. */
ridge_status ridge_gpt2_save(const ridge_gpt2 *m, const char *path);
void ridge_gpt2_destroy(ridge_gpt2 *m); /* NULL is a no-op */

/* GPT-2's initialization (llm.c's train_gpt2.py / `-e dN`): weights N(0, 0.02), the residual
 * projections attprojw and fcprojw N(0, 0.02/sqrt(2L)), biases 0, layer-norm weights 1, the
 * padding rows of wte 0, from an MT19937 seeded `seed`. */
void ridge_gpt2_init_random(ridge_gpt2 *m, uint32_t seed);

const ridge_gpt2_config *ridge_gpt2_get_config(const ridge_gpt2 *m);
/* All parameters (llm.c's order) and their count. */
float *ridge_gpt2_params(ridge_gpt2 *m, size_t *count);
/* Parameter tensor i (0..15) and its element count. */
float *ridge_gpt2_param_tensor(ridge_gpt2 *m, int i, size_t *count);
/* The gradients, same layout as the parameters; NULL before the first zero_grad/backward. */
float *ridge_gpt2_grads(ridge_gpt2 *m);

/* Forward pass over a (B,T) batch of token ids (each < V; 1 <= T <= maxT). With targets (B,T)
 * it computes the mean cross-entropy into *loss (loss may be NULL) and prepares backward;
 * with targets NULL only the probabilities. The model keeps no pointer to inputs/targets. */
ridge_status ridge_gpt2_forward(ridge_gpt2 *m, const int *inputs, const int *targets, int B,
                                int T, float *loss);
/* The (B,T,Vp) next-token probabilities of the last forward (entries >= V are 0); valid until
 * the next forward or backward. */
const float *ridge_gpt2_probs(const ridge_gpt2 *m);

/* Sets the gradients to 0 (allocating them on first use). */
ridge_status ridge_gpt2_zero_grad(ridge_gpt2 *m);
/* Adds the gradient of the last forward's mean loss to the gradients (forward with targets
 * first). Consumes the probabilities. */
ridge_status ridge_gpt2_backward(ridge_gpt2 *m);

/* Gradients as soon as ridge_gpt2_backward has finished them, for overlapping their
 * reduction across data-parallel ranks with the rest of the pass: called with n ranges
 * (ptr[i], len[i] floats) of the gradient buffer that this pass writes no more. In order: the
 * final layer norm's 2 ranges (right after the LM head), then per layer, from the last (L-1)
 * down to 0, the layer's slice of each of the 12 per-layer tensors (the slice of layer l of a
 * tensor sits just before that of layer l+1, so consecutive layers' slices join into one
 * contiguous range per tensor), and last the embeddings (wte, which the LM head and the
 * encoder both write, and wpe). A non-zero return stops the pass with that status.
 * fn NULL: no hook (the default). */
typedef ridge_status (*ridge_gpt2_grads_ready_fn)(void *arg, float *const *ptr,
                                                  const size_t *len, int n);
void ridge_gpt2_set_grads_ready(ridge_gpt2 *m, ridge_gpt2_grads_ready_fn fn, void *arg);

typedef struct ridge_gpt2_adamw_opts {
    float lr;           /* learning rate (1e-4, llm.c's train_gpt2.c) */
    float beta1, beta2; /* 0.9, 0.999 */
    float eps;          /* 1e-8 */
    float weight_decay; /* 0 (applied to every parameter, as llm.c does) */
} ridge_gpt2_adamw_opts;

void ridge_gpt2_adamw_defaults(ridge_gpt2_adamw_opts *o);
/* One AdamW step; step counts from 1 (bias correction). */
ridge_status ridge_gpt2_update(ridge_gpt2 *m, const ridge_gpt2_adamw_opts *o, int step);

/* ---- profile ---------------------------------------------------------------------------- */

/* The parts of a training step a profile times, forward and backward separately. */
typedef enum ridge_gpt2_part {
    RIDGE_GPT2_ENCODER, RIDGE_GPT2_LAYERNORM, RIDGE_GPT2_QKV, RIDGE_GPT2_ATTENTION,
    RIDGE_GPT2_ATTPROJ, RIDGE_GPT2_FC, RIDGE_GPT2_GELU, RIDGE_GPT2_FCPROJ, RIDGE_GPT2_LMHEAD,
    RIDGE_GPT2_SOFTMAX_XENT, RIDGE_GPT2_ADAMW, RIDGE_GPT2_NUM_PARTS
} ridge_gpt2_part;

const char *ridge_gpt2_part_name(int part); /* "encoder", "layernorm", "matmul qkv", ... */
/* Starts (on = 1: zeroes the counters) or stops timing the parts of each pass. */
void ridge_gpt2_profile_enable(ridge_gpt2 *m, int on);
/* Seconds spent in each part since enabled (forward, backward; AdamW counts as backward). */
void ridge_gpt2_profile_get(const ridge_gpt2 *m, double fwd[RIDGE_GPT2_NUM_PARTS],
                            double bwd[RIDGE_GPT2_NUM_PARTS]);
/* Floating-point operations of one forward pass of a part at (B,T) (backward: twice that for
 * the matrix products and attention); 0 for the parts that are not products. */
double ridge_gpt2_part_flops(const ridge_gpt2_config *cfg, int part, int B, int T);

/* The AdamW moments m and v (nparams each, parameter layout), allocated (zeroed) on first
 * use: what a training state file saves and restores (ridge_llmc_state_write/read). */
ridge_status ridge_gpt2_adamw_moments(ridge_gpt2 *m, float **mom1, float **mom2);

/* The inner loops the context's ISA selects for GPT-2's non-GEMM layers (`ridge info`). */
const char *ridge_gpt2_describe(const ridge_ctx *ctx);

/* Floating-point operations of one training step (forward + backward) at (B,T): 6 N B T for
 * the matrix products (N = weights used in products, the tied wte counted once) plus the
 * attention products. */
double ridge_gpt2_train_flops(const ridge_gpt2_config *cfg, int B, int T);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_GPT2_H */
