/* ridge/dist.h: data-parallel training over MPI (library ridge_dist, built only with the CMake
 * option RIDGE_WITH_MPI=ON; libridge itself never depends on MPI).
 *
 *     int rank, size;
 *     ridge_dist_init(&rank, &size);          // MPI_Init when started by mpirun, else 1 rank
 *     ... forward/backward on this rank's share of the global batch ...
 *     ridge_dist_allreduce_mean(grads, n);    // every rank now holds the average
 *     ... optimizer step, identical on every rank ...
 *     ridge_dist_finalize();
 *
 * Errors: MPI's errors return (MPI_ERRORS_RETURN on MPI_COMM_WORLD) and come back as
 * RIDGE_EIO with MPI's message in ridge_last_error(). A rank that cannot go on while the others
 * may be waiting in a collective calls ridge_dist_abort(), which ends every rank of the job.
 */
#ifndef RIDGE_DIST_H
#define RIDGE_DIST_H

#include <stddef.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Initializes MPI if the process was started by an MPI launcher (Open MPI's, or one setting
 * PMI_SIZE/PMIX_RANK); otherwise the world is this process alone (rank 0 of 1) and MPI is not
 * touched. Either rank/size may be NULL. A second call only reports them again. */
ridge_status ridge_dist_init(int *rank, int *size);
/* MPI_Finalize if ridge_dist_init initialized MPI. */
void ridge_dist_finalize(void);
int ridge_dist_rank(void); /* 0 before init */
int ridge_dist_size(void); /* 1 before init */
/* Sums x (n floats) over all ranks in place, then divides by the number of ranks. */
ridge_status ridge_dist_allreduce_mean(float *x, size_t n);
/* Sums x (n doubles, n < 2^31) over all ranks in place (the CNN's synchronized batch norm). */
ridge_status ridge_dist_allreduce_sum_f64(double *x, size_t n);
/* ZeRO-1 (optimizer state sharded over the ranks): rank r owns the slice [lo, hi) of an n-float
 * buffer, lo = r*ceil(n/size) (clamped to n). reduce_scatter_mean leaves the ranks' average of
 * x[lo..hi) there (one MPI_Reduce_scatter; the rest of x is undefined afterwards); allgather
 * sends every rank's x[lo..hi) to all (one MPI_Allgatherv). The two move as many bytes as one
 * allreduce. n must be < 2^31 (RIDGE_EOVERFLOW). */
void ridge_dist_shard(size_t n, size_t *lo, size_t *hi);
ridge_status ridge_dist_reduce_scatter_mean(float *x, size_t n);
ridge_status ridge_dist_allgather(float *x, size_t n);
/* Rank 0 receives every rank's slice of an n-float buffer: rank r sends `mine` (its hi - lo
 * floats, ridge_dist_shard) and rank 0's `all` (n floats) gets them at their offsets (other
 * ranks' `all` is not used, may be NULL). ZeRO-1's checkpoint: the sharded moments in one
 * place, on the rank that writes. One MPI_Gatherv; n < 2^31. */
ridge_status ridge_dist_gather(const float *mine, float *all, size_t n);
/* Gradient averaging overlapped with the backward pass. For an n-float buffer `buf`: hand
 * ridge_dist_overlap_add (usable as ridge_gpt2_set_grads_ready's hook, arg = the overlap) the
 * ranges of buf as they become final; ranges adjacent to pending ones join them, and once about
 * `bucket_bytes` are pending they are started with MPI_Iallreduce (in place, in pieces of at
 * most max(bucket_bytes, 1 MiB)); each add also
 * lets MPI progress the started ones (MPI_Testall). ridge_dist_overlap_finish starts the rest,
 * waits (MPI_Waitall), checks that the ranges covered all of buf exactly once, and divides buf
 * by the number of ranks: the same average as ridge_dist_allreduce_mean (bit for bit with 2
 * ranks; with more, MPI may sum in another order for other message sizes). Then the next step
 * may add again. With one rank add and finish do nothing. wait_seconds: the total time spent
 * in MPI_Waitall so far. Not thread-safe; destroy(NULL) is a no-op. */
typedef struct ridge_dist_overlap ridge_dist_overlap;
ridge_status ridge_dist_overlap_create(float *buf, size_t n, size_t bucket_bytes,
                                       ridge_dist_overlap **out);
ridge_status ridge_dist_overlap_add(void *overlap, float *const *ptr, const size_t *len,
                                    int count);
ridge_status ridge_dist_overlap_finish(ridge_dist_overlap *o);
double ridge_dist_overlap_wait_seconds(const ridge_dist_overlap *o);
void ridge_dist_overlap_destroy(ridge_dist_overlap *o);
/* Prints "ridge: rank R of N: <why>; aborting the job" on stderr and calls MPI_Abort, which
 * ends every rank; returns only if MPI is not initialized. */
void ridge_dist_abort(int code, const char *why);

#ifdef __cplusplus
}
#endif
#endif
