/* The batch-norm loops (bn-kernels.h), one build per ISA, picked by batchnorm.c. */
#ifndef RIDGE_NN_BN_INTERNAL_H
#define RIDGE_NN_BN_INTERNAL_H

#include <stddef.h>

/* rows per block: a block of x (64 rows x C floats, 8 KiB at C = 32) is read from memory once
 * and stays in L1 for the block's second look */
#define BN_BLOCK 64

#define BN_DECLARE(isa)                                                                       \
    void ridge_f32_bn_stats__##isa(const float *restrict x, size_t C, size_t r0, size_t r1,    \
                                   double *restrict mean, double *restrict m2);               \
    void ridge_f32_bn_grad_sums__##isa(float *restrict dy, const float *restrict y,            \
                                       const float *restrict x, size_t C, size_t r0,           \
                                       size_t r1, const float *restrict mean,                  \
                                       const float *restrict rstd, double *restrict s0,        \
                                       double *restrict s1);                                   \
    void ridge_f32_bn_apply__##isa(const float *restrict x, float *restrict y, size_t C,       \
                                   size_t r0, size_t r1, const float *restrict sc,             \
                                   const float *restrict sh, int relu);                        \
    void ridge_f32_bn_dx__##isa(const float *dy, const float *restrict x, float *dx, size_t C,  \
                                size_t r0, size_t r1, const float *restrict k,                 \
                                const float *restrict u, const float *restrict v);
BN_DECLARE(ref)
BN_DECLARE(avx2)
BN_DECLARE(avx512)
#undef BN_DECLARE

#endif /* RIDGE_NN_BN_INTERNAL_H */
