/* The optimizer update loops, one template for every ISA: optim-ref.c, optim-avx2.c and
 * optim-avx512.c each define OPTIM_ISA and include this file, and differ only in the flags
 * they are compiled with (src/nn/sources.cmake), so the compiler vectorizes the same C code
 * at each width. Compiled with -fno-math-errno so sqrtf becomes the vector square root; the
 * build is ISO C (no FMA contraction) and every operation is an IEEE-exact elementwise op,
 * so all three give the same bits. */
#include "nn/optim-internal.h"

#define OPTIM_CAT2(a, b) a##__##b
#define OPTIM_CAT(a, b) OPTIM_CAT2(a, b)

void OPTIM_CAT(ridge_f32_adamw_ukernel, OPTIM_ISA)(float *restrict p, const float *restrict g,
                                                   float *restrict m, float *restrict v,
                                                   size_t n, const optim_consts *k)
{
    const float lr = k->lr_bc1, decay = k->decay, b1 = k->beta1, b2 = k->beta2;
    const float c1 = 1.0f - b1, c2 = 1.0f - b2, isb2 = k->inv_sqrt_bc2, eps = k->eps;
    for (size_t i = 0; i < n; i++) {
        float mi = b1 * m[i] + c1 * g[i];
        float vi = b2 * v[i] + c2 * (g[i] * g[i]);
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] * decay - lr * mi / (sqrtf(vi) * isb2 + eps);
    }
}

void OPTIM_CAT(ridge_f32_sgd_ukernel, OPTIM_ISA)(float *restrict p, const float *restrict g,
                                                 float *restrict m, size_t n,
                                                 const optim_consts *k)
{
    const float lr = k->lr, mu = k->momentum, wd = k->weight_decay;
    if (m)
        for (size_t i = 0; i < n; i++) {
            float mi = mu * m[i] + (g[i] + wd * p[i]);
            m[i] = mi;
            p[i] -= lr * mi;
        }
    else
        for (size_t i = 0; i < n; i++) p[i] -= lr * (g[i] + wd * p[i]);
}
