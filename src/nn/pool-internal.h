/* The training pooling loops (pool-kernels.h), one build per ISA, picked by pool.c. */
#ifndef RIDGE_NN_POOL_INTERNAL_H
#define RIDGE_NN_POOL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/conv.h"

typedef struct pool_args {
    const ridge_pool2d_desc *d;
    int64_t oh, ow;
    float *out;
    const float *in;
    int32_t *argmax;
    const int32_t *cargmax;
} pool_args;

/* ridge_range_fn bodies: forward over output rows (n * oh), backward over images (n) */
#define POOL_DECLARE(isa)                                                                     \
    void ridge_nn_pool_fwd_range__##isa(void *arg, size_t b, size_t e, int ith);              \
    void ridge_nn_pool_bwd_range__##isa(void *arg, size_t b, size_t e, int ith);
POOL_DECLARE(ref)
POOL_DECLARE(avx2)
POOL_DECLARE(avx512)
#undef POOL_DECLARE

#endif /* RIDGE_NN_POOL_INTERNAL_H */
