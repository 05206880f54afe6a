/* The trainers' view of data parallelism: ridge_dist (include/ridge/dist.h) when the CLI is
 * built with -DRIDGE_WITH_MPI=ON, else a world of one rank, so that the trainers call these
 * without #ifdefs. */
#ifndef RIDGE_DIST_CLI_H
#define RIDGE_DIST_CLI_H

#include <stdio.h>

#include "ridge/core.h"
#include "ridge/gpt2.h"
#include "ridge/nn.h"
#ifdef RIDGE_HAVE_MPI
#include "ridge/dist.h"
#endif

/* Joins the job (MPI_Init under mpirun); ranks other than 0 print nothing on stdout. */
static inline ridge_status cli_dist_init(int *rank, int *size)
{
    *rank = 0, *size = 1;
#ifdef RIDGE_HAVE_MPI
    ridge_status st = ridge_dist_init(rank, size);
    if (st) return st;
    if (*rank != 0 && !freopen("/dev/null", "w", stdout)) {
        fprintf(stderr, "ridge: rank %d: cannot redirect stdout to /dev/null\n", *rank);
        return RIDGE_EIO;
    }
#endif
    return RIDGE_OK;
}

/* Averages x (n floats) over the ranks in place. */
static inline ridge_status cli_dist_mean(float *x, size_t n)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_allreduce_mean(x, n);
#else
    (void)x, (void)n;
    return RIDGE_OK;
#endif
}

/* Sums x (n doubles) over the ranks in place. */
static inline ridge_status cli_dist_sum_f64(double *x, size_t n)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_allreduce_sum_f64(x, n);
#else
    (void)x, (void)n;
    return RIDGE_OK;
#endif
}

/* A model's place in the job (ridge_data_parallel, ridge/nn.h): all zero with one rank. */
static inline ridge_data_parallel cli_dist_dp(int rank, int nranks)
{
    ridge_data_parallel dp = {0};
    if (nranks > 1)
        dp = (ridge_data_parallel){rank, nranks, cli_dist_mean, cli_dist_sum_f64};
    return dp;
}

/* Gradient averaging overlapped with the backward pass (ridge_dist_overlap_*, ridge/dist.h);
 * never created with one rank, so without MPI these only keep the trainers free of #ifdefs. */
#ifdef RIDGE_HAVE_MPI
typedef ridge_dist_overlap cli_overlap;
#else
typedef struct cli_overlap cli_overlap;
#endif
static inline ridge_status cli_overlap_create(float *buf, size_t n, size_t bucket_bytes,
                                              cli_overlap **out)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_overlap_create(buf, n, bucket_bytes, out);
#else
    (void)buf, (void)n, (void)bucket_bytes, *out = NULL;
    return RIDGE_EUNSUPPORTED;
#endif
}
static inline ridge_status cli_overlap_add(void *o, float *const *ptr, const size_t *len, int n)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_overlap_add(o, ptr, len, n);
#else
    (void)o, (void)ptr, (void)len, (void)n;
    return RIDGE_OK;
#endif
}
static inline ridge_status cli_overlap_finish(cli_overlap *o)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_overlap_finish(o);
#else
    (void)o;
    return RIDGE_OK;
#endif
}
static inline double cli_overlap_wait_seconds(const cli_overlap *o)
{
#ifdef RIDGE_HAVE_MPI
    return ridge_dist_overlap_wait_seconds(o);
#else
    (void)o;
    return 0;
#endif
}
static inline void cli_overlap_destroy(cli_overlap *o)
{
#ifdef RIDGE_HAVE_MPI
    ridge_dist_overlap_destroy(o);
#else
    (void)o;
#endif
}

/* Ends the job. rc != 0 with several ranks: the others may be waiting in a collective, so this
 * rank aborts all of them (MPI_Abort) after saying why; this never returns then. */
static inline void cli_dist_end(int rc, const char *why)
{
#ifdef RIDGE_HAVE_MPI
    if (rc != 0 && ridge_dist_size() > 1) ridge_dist_abort(rc, why);
    ridge_dist_finalize();
#else
    (void)rc, (void)why;
#endif
}

/* ZeRO-1 for GPT-2 (dist-gpt2.c): this rank's slice [lo, hi) of the AdamW moments. One step
 * (instead of averaging the gradients and ridge_gpt2_update): reduce-scatter the gradients,
 * AdamW on the slice, all-gather the parameters. Without MPI: ridge_gpt2_update. */
typedef struct cli_zero1 {
    float *m, *v; /* (hi - lo) each, allocated at the first step */
    size_t lo, hi;
} cli_zero1;
ridge_status cli_zero1_step(cli_zero1 *z, ridge_ctx *ctx, ridge_gpt2 *model,
                            const ridge_gpt2_adamw_opts *o, int step);
/* The training state (whole moments, n each, as plain AdamW keeps them): load keeps this
 * rank's slice of m and v (every rank, on --resume); gather puts every rank's slice into rank
 * 0's m and v (a collective: every rank calls it; other ranks' m, v are unused). */
ridge_status cli_zero1_load(cli_zero1 *z, size_t n, const float *m, const float *v);
ridge_status cli_zero1_gather(cli_zero1 *z, size_t n, float *m, float *v);
void cli_zero1_free(cli_zero1 *z);

#endif
