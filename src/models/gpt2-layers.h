/* GPT-2's layers, forward and backward (internal to the library and its tests).
 *
 * The math is llm.c's (train_gpt2.c), and so is the argument order: outputs, inputs, weights,
 * sizes. N = B*T rows. Every backward ACCUMULATES into parameter gradients (+=), so gradients
 * of several batches can be summed; what each does with its input gradient is stated (most
 * write it, layernorm adds to it because the residual stream also carries a gradient).
 * Work is split over the context's pool in contiguous blocks, and every reduction runs in a
 * fixed order, so results do not depend on the thread count.
 */
#ifndef RIDGE_MODELS_GPT2_LAYERS_H
#define RIDGE_MODELS_GPT2_LAYERS_H

#include <stddef.h>

#include "ridge/core.h"

/* out[n] = wte[inp[n]] + wpe[n % T] */
void ridge_gpt2_encoder_forward(ridge_ctx *ctx, float *out /* (B,T,C) */,
                                const int *inp /* (B,T) */, const float *wte /* (V,C) */,
                                const float *wpe /* (maxT,C) */, size_t B, size_t T, size_t C);
/* dwte[inp[n]] += dout[n], dwpe[t] += dout[n] */
void ridge_gpt2_encoder_backward(ridge_ctx *ctx, float *dwte, float *dwpe,
                                 const float *dout /* (B,T,C) */, const int *inp, size_t B,
                                 size_t T, size_t C);

/* out = (x - mean) * rstd * w + b per row, eps 1e-5, biased variance; mean, rstd (N) kept. */
void ridge_gpt2_layernorm_forward(ridge_ctx *ctx, float *out /* (N,C) */, float *mean,
                                  float *rstd, const float *inp /* (N,C) */, const float *w,
                                  const float *b, size_t N, size_t C);
/* dinp += ..., dw += ..., db += ... */
void ridge_gpt2_layernorm_backward(ridge_ctx *ctx, float *dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w,
                                   const float *mean, const float *rstd, size_t N, size_t C);

/* out (N,OC) = inp (N,C) W^T (W stored (OC,C)) + bias (OC or NULL) [+ residual (N,OC)] */
ridge_status ridge_gpt2_matmul_forward(ridge_ctx *ctx, float *out, const float *inp,
                                       const float *w, const float *bias,
                                       const float *residual, size_t N, size_t C, size_t OC);
/* dinp (N,C) = dout W (written; skipped if dinp is NULL), dw += dout^T inp, dbias += colsum */
ridge_status ridge_gpt2_matmul_backward(ridge_ctx *ctx, float *dinp, float *dw, float *dbias,
                                        const float *dout /* (N,OC) */, const float *inp,
                                        const float *w, size_t N, size_t C, size_t OC);

/* Causal multi-head attention, fused (online softmax over key blocks). qkv (B,T,3C) holds q, k,
 * v; head h owns columns [h hs,(h+1)hs) of each. out (B,T,C); lse (B,NH,T) gets each query's
 * log-sum-exp of its scaled scores, all that backward needs besides qkv and out. */
void ridge_gpt2_attention_forward(ridge_ctx *ctx, float *out, float *lse, const float *qkv,
                                  size_t B, size_t T, size_t C, size_t NH);
/* dqkv (B,T,3C) written, recomputing the attention weights from lse. */
void ridge_gpt2_attention_backward(ridge_ctx *ctx, float *dqkv, const float *dout,
                                   const float *qkv, const float *out, const float *lse,
                                   size_t B, size_t T, size_t C, size_t NH);

/* GELU, tanh approximation. Backward: dinp = dout * gelu'(inp), written (may alias dout). */
ridge_status ridge_gpt2_gelu_forward(ridge_ctx *ctx, float *out, const float *inp, size_t n);
ridge_status ridge_gpt2_gelu_backward(ridge_ctx *ctx, float *dinp, const float *inp,
                                      const float *dout, size_t n);

/* In place over logits (N,Vp): probabilities over the first V entries (the rest 0), and
 * losses[n] = -log probs[n][targets[n]] when targets is non-NULL. */
void ridge_gpt2_softmax_crossentropy_forward(ridge_ctx *ctx, float *probs_logits,
                                             float *losses, const int *targets, size_t N,
                                             size_t V, size_t Vp);
/* In place over probs: dlogits = (probs - onehot(target)) * dloss for the first V entries,
 * 0 for the padding. */
void ridge_gpt2_softmax_crossentropy_backward(ridge_ctx *ctx, float *dlogits_probs,
                                              const int *targets, float dloss, size_t N,
                                              size_t V, size_t Vp);

/* AdamW over n parameters, step t >= 1 (llm.c's update, equivalent to torch.optim.AdamW). */
void ridge_gpt2_adamw(ridge_ctx *ctx, float *params, const float *grads, float *m, float *v,
                      size_t n, int t, float lr, float beta1, float beta2, float eps,
                      float weight_decay);

#endif /* RIDGE_MODELS_GPT2_LAYERS_H */
