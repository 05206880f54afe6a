/* The optimizer micro-kernels (optim-kernels.h) and their per-step constants. */
#ifndef RIDGE_NN_OPTIM_INTERNAL_H
#define RIDGE_NN_OPTIM_INTERNAL_H

#include <math.h>
#include <stddef.h>

typedef struct optim_consts {
    float lr, momentum, weight_decay;           /* SGD */
    float lr_bc1, decay, beta1, beta2, eps;     /* AdamW: lr / (1 - beta1^t), 1 - lr wd */
    float inv_sqrt_bc2;                         /* 1 / sqrt(1 - beta2^t) */
} optim_consts;

#define OPTIM_DECLARE(isa)                                                                    \
    void ridge_f32_adamw_ukernel__##isa(float *restrict p, const float *restrict g,            \
                                        float *restrict m, float *restrict v, size_t n,        \
                                        const optim_consts *k);                                \
    void ridge_f32_sgd_ukernel__##isa(float *restrict p, const float *restrict g,              \
                                      float *restrict m, size_t n, const optim_consts *k);
OPTIM_DECLARE(ref)
OPTIM_DECLARE(avx2)
OPTIM_DECLARE(avx512)
#undef OPTIM_DECLARE

#endif /* RIDGE_NN_OPTIM_INTERNAL_H */
