/* The inner loops of GPT-2's non-GEMM layers, one table per ISA (internal).
 *
 * gpt2-layers.c holds the reference table (plain C with libm, the definition of correct) and
 * splits the work over threads; gpt2-kernels-template.h is written once against the vec
 * family's SIMD mapping (vec/simd-avx2.h, vec/simd-avx512.h) and its vector math, and is
 * expanded by gpt2-kernels-avx2.c and gpt2-kernels-avx512.c, which differ only in the mapping
 * they include. Each entry works on one row / one head / one range and is called from a
 * thread's share of the work.
 */
#ifndef RIDGE_MODELS_GPT2_KERNELS_H
#define RIDGE_MODELS_GPT2_KERNELS_H

#include <stddef.h>

#include "ridge/core.h"

typedef struct gpt2_adamw_args {
    float lr, b1, b2, eps, wd;
    float c1, c2; /* bias corrections 1 - beta^t */
} gpt2_adamw_args;

typedef struct gpt2_kernels {
    /* x (n) := softmax(x), in place */
    void (*softmax)(float *x, size_t n);
    /* AdamW over n parameters */
    void (*adamw)(float *p, const float *g, float *m, float *v, size_t n,
                  const gpt2_adamw_args *a);
    /* One (b, h), fused causal attention: qkv points at the head's q columns of row 0 (rows
     * 3C apart), out at its output columns (rows C apart), lse (T) gets each row's
     * log-sum-exp. */
    void (*att_fwd)(float *out, float *lse, const float *qkv, size_t T, size_t C, size_t hs);
    /* dqkv like qkv (written), dout and out like out. */
    void (*att_bwd)(float *dqkv, const float *dout, const float *qkv, const float *out,
                    const float *lse, size_t T, size_t C, size_t hs);
} gpt2_kernels;

extern const gpt2_kernels ridge_gpt2_kernels__ref;
extern const gpt2_kernels ridge_gpt2_kernels__avx2;
extern const gpt2_kernels ridge_gpt2_kernels__avx512;

#endif /* RIDGE_MODELS_GPT2_KERNELS_H */
