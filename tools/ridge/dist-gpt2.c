/* ZeRO-1 for `ridge gpt2 train --zero 1` (tools/ridge/dist-cli.h): the AdamW moments are
 * sharded over the ranks. A step reduce-scatters the gradients (each rank gets the average of
 * its slice), runs llm.c's AdamW on its slice with its slice of the moments, and all-gathers
 * the parameters, so every rank again holds them all. The AdamW arithmetic is element-wise,
 * so the result is plain data parallelism's, with 1/N of the optimizer memory. */
#include <stdio.h>
#include <stdlib.h>

#include "dist-cli.h"
#include "models/gpt2-layers.h"

#ifdef RIDGE_HAVE_MPI
ridge_status cli_zero1_step(cli_zero1 *z, ridge_ctx *ctx, ridge_gpt2 *model,
                            const ridge_gpt2_adamw_opts *o, int step)
{
    size_t n;
    float *params = ridge_gpt2_params(model, &n), *grads = ridge_gpt2_grads(model);
    if (!z->m) {
        ridge_dist_shard(n, &z->lo, &z->hi);
        size_t k = z->hi - z->lo ? z->hi - z->lo : 1;
        z->m = calloc(k, sizeof *z->m);
        z->v = calloc(k, sizeof *z->v);
        if (!z->m || !z->v) {
            fprintf(stderr, "ridge gpt2 train: --zero 1: no memory for %zu AdamW moments\n", k);
            return RIDGE_ENOMEM;
        }
    }
    ridge_status st = ridge_dist_reduce_scatter_mean(grads, n);
    if (st) return st;
    ridge_gpt2_adamw(ctx, params + z->lo, grads + z->lo, z->m, z->v, z->hi - z->lo, step, o->lr,
                     o->beta1, o->beta2, o->eps, o->weight_decay);
    return ridge_dist_allgather(params, n);
}
#else
ridge_status cli_zero1_step(cli_zero1 *z, ridge_ctx *ctx, ridge_gpt2 *model,
                            const ridge_gpt2_adamw_opts *o, int step)
{
    (void)z, (void)ctx;
    return ridge_gpt2_update(model, o, step); /* one rank: plain AdamW */
}
#endif

void cli_zero1_free(cli_zero1 *z)
{
    free(z->m);
    free(z->v);
    z->m = z->v = NULL;
}
