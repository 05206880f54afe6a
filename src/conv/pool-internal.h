/* The pooling loops (pool-kernels.h), one build per ISA, picked by pool.c. */
#ifndef RIDGE_CONV_POOL_INTERNAL_H
#define RIDGE_CONV_POOL_INTERNAL_H

#include "conv/conv.h"

typedef struct pool_args { /* one ridge_pool2d_forward call */
    const ridge_pool2d_desc *d;
    const float *x;
    float *y;
    int64_t oh, ow;
    conv_view xv, yv;
} pool_args;

/* NHWC and NCHW16c: items are (image, output row); NCHW: (image, channel, output row) */
#define POOL_DECLARE(isa)                                                                     \
    void ridge_conv_pool_rows__##isa(void *arg, size_t b, size_t e, int ith);                   \
    void ridge_conv_pool_nchw_rows__##isa(void *arg, size_t b, size_t e, int ith);
POOL_DECLARE(ref)
POOL_DECLARE(avx2)
POOL_DECLARE(avx512)
#undef POOL_DECLARE

#endif /* RIDGE_CONV_POOL_INTERNAL_H */
