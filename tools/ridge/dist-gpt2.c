/* ZeRO-1 for `ridge gpt2 train --zero 1` (tools/ridge/dist-cli.h): the AdamW moments are
 * sharded over the ranks. A step reduce-scatters the gradients (each rank gets the average of
 * its slice), runs llm.c's AdamW on its slice with its slice of the moments, and all-gathers
 * the parameters, so every rank again holds them all. The AdamW arithmetic is element-wise,
 * so the result is plain data parallelism's, with 1/N of the optimizer memory.
 *
 * Training state: the state file is the plain run's (llm.c's layout, whole moments), so that a
 * run resumes bit for bit with or without --zero and on any number of ranks. Saving gathers
 * the slices to rank 0, which writes; resuming reads the whole moments on every rank and keeps
 * its slice. Both hold the whole moments for a moment (2 x 4 B x nparams, on rank 0 only when
 * saving): the memory ZeRO-1 saves during training, not at those two points. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist-cli.h"
#include "models/gpt2-layers.h"

#ifdef RIDGE_HAVE_MPI
/* This rank's slice of n moments, zeroed. */
static ridge_status zero1_alloc(cli_zero1 *z, size_t n)
{
    ridge_dist_shard(n, &z->lo, &z->hi);
    size_t k = z->hi - z->lo ? z->hi - z->lo : 1;
    z->m = calloc(k, sizeof *z->m);
    z->v = calloc(k, sizeof *z->v);
    if (!z->m || !z->v) {
        cli_zero1_free(z);
        fprintf(stderr, "ridge gpt2 train: --zero 1: no memory for %zu AdamW moments\n", k);
        return RIDGE_ENOMEM;
    }
    return RIDGE_OK;
}

ridge_status cli_zero1_step(cli_zero1 *z, ridge_ctx *ctx, ridge_gpt2 *model,
                            const ridge_gpt2_adamw_opts *o, int step)
{
    size_t n;
    float *params = ridge_gpt2_params(model, &n), *grads = ridge_gpt2_grads(model);
    ridge_status st;
    if (!z->m && (st = zero1_alloc(z, n))) return st;
    if ((st = ridge_dist_reduce_scatter_mean(grads, n))) return st;
    ridge_gpt2_adamw(ctx, params + z->lo, grads + z->lo, z->m, z->v, z->hi - z->lo, step, o->lr,
                     o->beta1, o->beta2, o->eps, o->weight_decay);
    return ridge_dist_allgather(params, n);
}

ridge_status cli_zero1_load(cli_zero1 *z, size_t n, const float *m, const float *v)
{
    ridge_status st;
    if (!z->m && (st = zero1_alloc(z, n))) return st;
    memcpy(z->m, m + z->lo, (z->hi - z->lo) * sizeof *z->m);
    memcpy(z->v, v + z->lo, (z->hi - z->lo) * sizeof *z->v);
    return RIDGE_OK;
}

ridge_status cli_zero1_gather(cli_zero1 *z, size_t n, float *m, float *v)
{
    ridge_status st;
    if (!z->m && (st = zero1_alloc(z, n))) return st; /* no step yet: zero moments */
    if ((st = ridge_dist_gather(z->m, m, n))) return st;
    return ridge_dist_gather(z->v, v, n);
}
#else
/* Without MPI there is one rank, and the trainer runs plain AdamW instead of these. */
ridge_status cli_zero1_step(cli_zero1 *z, ridge_ctx *ctx, ridge_gpt2 *model,
                            const ridge_gpt2_adamw_opts *o, int step)
{
    (void)z, (void)ctx;
    return ridge_gpt2_update(model, o, step);
}

ridge_status cli_zero1_load(cli_zero1 *z, size_t n, const float *m, const float *v)
{
    (void)z, (void)n, (void)m, (void)v;
    return RIDGE_EUNSUPPORTED;
}

ridge_status cli_zero1_gather(cli_zero1 *z, size_t n, float *m, float *v)
{
    (void)z, (void)n, (void)m, (void)v;
    return RIDGE_EUNSUPPORTED;
}
#endif

void cli_zero1_free(cli_zero1 *z)
{
    free(z->m);
    free(z->v);
    z->m = z->v = NULL;
}
