/* Inverted dropout with a counter-based mask: element i is kept when
 * hash(seed ^ hash(offset + i)) >= p * 2^64, so the forward and backward compute the same mask
 * without storing it, and any split across threads gives the same result. */
#include <math.h>

#include "core/internal.h"
#include "ridge/nn.h"

typedef struct drop_args {
    float *out;
    const float *in;
    uint64_t seed, offset, threshold;
    float scale;
} drop_args;

static inline int kept(const drop_args *a, size_t i)
{
    return ridge_hash64(a->seed ^ ridge_hash64(a->offset + i)) >= a->threshold;
}

static void drop_range(void *arg, size_t begin, size_t end, int ith)
{
    const drop_args *a = arg;
    for (size_t i = begin; i < end; i++) a->out[i] = kept(a, i) ? a->in[i] * a->scale : 0.0f;
}

static ridge_status dropout(ridge_ctx *ctx, float *out, const float *in, size_t n, float p,
                            uint64_t seed, uint64_t offset)
{
    if (!ctx || (n && (!out || !in))) return ridge_error(RIDGE_EINVAL, "dropout: NULL argument");
    if (!(p >= 0 && p < 1)) return ridge_error(RIDGE_EINVAL, "dropout: p %g not in [0, 1)", p);
    drop_args a = {out, in, seed, offset, (uint64_t)ldexp((double)p, 64), 1.0f / (1.0f - p)};
    if (p == 0) a.threshold = 0;
    if (n < 65536) drop_range(&a, 0, n, 0);
    else ridge_parallel_for(ctx, n, 4096, drop_range, &a);
    return RIDGE_OK;
}

ridge_status ridge_dropout_forward(ridge_ctx *ctx, float *y, const float *x, size_t n, float p,
                                   uint64_t seed, uint64_t offset)
{
    return dropout(ctx, y, x, n, p, seed, offset);
}

ridge_status ridge_dropout_backward(ridge_ctx *ctx, float *dx, const float *dy, size_t n,
                                    float p, uint64_t seed, uint64_t offset)
{
    return dropout(ctx, dx, dy, n, p, seed, offset);
}
