/* Data-parallel training over MPI (include/ridge/dist.h).
 *
 * The gradients of one step are one contiguous float buffer on every rank; they are averaged
 * with a single in-place MPI_Allreduce (sum) and a scale by 1/size. One call for the whole
 * buffer is what the alpha-beta model in docs/PERFORMANCE.md (## mpi) assumes: the latency
 * term is paid once and the MPI library picks its large-message algorithm (ring / Rabenseifner
 * in Open MPI's tuned component). ZeRO-1 splits the same traffic into MPI_Reduce_scatter and
 * MPI_Allgatherv over equal contiguous slices. MPI_COMM_WORLD's error handler is MPI_ERRORS_RETURN, so an
 * MPI failure comes back here as a status instead of killing the process mid-message.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/dist.h"

static int g_rank = 0, g_size = 1, g_mpi = 0; /* g_mpi: we called MPI_Init */

static ridge_status mpi_fail(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len] = 0;
    return ridge_error(RIDGE_EIO, "MPI: %s failed on rank %d of %d: %s", what, g_rank, g_size,
                       len ? msg : "unknown error");
}

/* Whether an MPI launcher started this process (Open MPI, PMI, PMIx). */
static int launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

ridge_status ridge_dist_init(int *rank, int *size)
{
    if (!g_mpi && launched_by_mpi()) {
        int rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS) return ridge_error(RIDGE_EIO, "MPI: MPI_Init failed (%d)", rc);
        g_mpi = 1;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    }
    if (rank) *rank = g_rank;
    if (size) *size = g_size;
    return RIDGE_OK;
}

void ridge_dist_finalize(void)
{
    if (!g_mpi) return;
    MPI_Finalize();
    g_mpi = 0, g_rank = 0, g_size = 1;
}

int ridge_dist_rank(void)
{
    return g_rank;
}

int ridge_dist_size(void)
{
    return g_size;
}

ridge_status ridge_dist_allreduce_mean(float *x, size_t n)
{
    if (!x && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_allreduce_mean: x is NULL");
    if (g_size == 1) return RIDGE_OK;
    /* MPI counts are int: reduce in pieces of at most 2^30 floats */
    for (size_t off = 0; off < n;) {
        size_t k = n - off < ((size_t)1 << 30) ? n - off : (size_t)1 << 30;
        int rc = MPI_Allreduce(MPI_IN_PLACE, x + off, (int)k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Allreduce");
        off += k;
    }
    float s = 1.0f / (float)g_size;
    for (size_t i = 0; i < n; i++) x[i] *= s;
    return RIDGE_OK;
}

ridge_status ridge_dist_allreduce_sum_f64(double *x, size_t n)
{
    if (!x && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_allreduce_sum_f64: x is NULL");
    if (g_size == 1) return RIDGE_OK;
    if (n > INT32_MAX)
        return ridge_error(RIDGE_EOVERFLOW, "MPI: %zu doubles to sum (max 2^31-1)", n);
    int rc = MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? RIDGE_OK : mpi_fail(rc, "MPI_Allreduce");
}

/* Rank r's slice of n: [r*ceil(n/size), (r+1)*ceil(n/size)) clamped to n. */
static void shard_of(size_t n, int r, size_t *lo, size_t *hi)
{
    size_t per = (n + (size_t)g_size - 1) / (size_t)g_size, a = per * (size_t)r;
    *lo = a < n ? a : n;
    *hi = a + per < n ? a + per : n;
}

void ridge_dist_shard(size_t n, size_t *lo, size_t *hi)
{
    shard_of(n, g_rank, lo, hi);
}

/* Every rank's slice as MPI counts and displacements (freed by the caller). */
static ridge_status slices(size_t n, int **counts, int **displs)
{
    if (n > INT32_MAX) /* MPI's counts and displacements are int */
        return ridge_error(RIDGE_EOVERFLOW, "MPI: %zu floats to shard (max 2^31-1)", n);
    *counts = malloc((size_t)g_size * sizeof **counts);
    *displs = malloc((size_t)g_size * sizeof **displs);
    if (!*counts || !*displs) {
        free(*counts), free(*displs);
        return ridge_error(RIDGE_ENOMEM, "MPI: out of memory");
    }
    for (int r = 0; r < g_size; r++) {
        size_t lo, hi;
        shard_of(n, r, &lo, &hi);
        (*counts)[r] = (int)(hi - lo), (*displs)[r] = (int)lo;
    }
    return RIDGE_OK;
}

ridge_status ridge_dist_reduce_scatter_mean(float *x, size_t n)
{
    if (!x && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_reduce_scatter_mean: x is NULL");
    if (g_size == 1) return RIDGE_OK;
    int *counts, *displs;
    ridge_status st = slices(n, &counts, &displs);
    if (st) return st;
    /* in place: the result lands at the start of x; move it to this rank's slice */
    int rc = MPI_Reduce_scatter(MPI_IN_PLACE, x, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS) {
        size_t k = (size_t)counts[g_rank], lo = (size_t)displs[g_rank];
        memmove(x + lo, x, k * sizeof *x);
        float s = 1.0f / (float)g_size;
        for (size_t i = lo; i < lo + k; i++) x[i] *= s;
    }
    free(counts), free(displs);
    return rc == MPI_SUCCESS ? RIDGE_OK : mpi_fail(rc, "MPI_Reduce_scatter");
}

ridge_status ridge_dist_allgather(float *x, size_t n)
{
    if (!x && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_allgather: x is NULL");
    if (g_size == 1) return RIDGE_OK;
    int *counts, *displs;
    ridge_status st = slices(n, &counts, &displs);
    if (st) return st;
    int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, x, counts, displs, MPI_FLOAT,
                            MPI_COMM_WORLD);
    free(counts), free(displs);
    return rc == MPI_SUCCESS ? RIDGE_OK : mpi_fail(rc, "MPI_Allgatherv");
}

ridge_status ridge_dist_gather(const float *mine, float *all, size_t n)
{
    if (!mine && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_gather: mine is NULL");
    if (g_rank == 0 && !all && n) return ridge_error(RIDGE_EINVAL, "ridge_dist_gather: all is NULL");
    int *counts, *displs;
    ridge_status st = slices(n, &counts, &displs);
    if (st) return st;
    int rc = MPI_SUCCESS;
    if (g_size == 1)
        memmove(all, mine, n * sizeof *all);
    else
        rc = MPI_Gatherv(mine, counts[g_rank], MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0,
                         MPI_COMM_WORLD);
    free(counts), free(displs);
    return rc == MPI_SUCCESS ? RIDGE_OK : mpi_fail(rc, "MPI_Gatherv");
}

/* ---- overlapped, bucketed averaging ----------------------------------------------------------
 * Ranges arrive as the backward pass finishes them. A range adjacent to a pending one joins it
 * (a tensor's slices of consecutive layers are adjacent), so a bucket is a few long ranges, not
 * one per tensor per layer; once `bucket` bytes are pending, each pending range is started
 * with MPI_Iallreduce in place. Open MPI progresses a non-blocking collective only inside MPI
 * calls (no progress thread by default), so every add also tests the started ones. finish
 * starts the rest, waits for all and scales the whole buffer by 1/size, the blocking path's
 * loop, so with 2 ranks (one addition per element, commutative) the bits are the same. */
#define OVERLAP_MAX_PENDING 64

struct ridge_dist_overlap {
    float *buf;
    size_t n, bucket, pending_bytes, covered;
    int npending;
    float *pend[OVERLAP_MAX_PENDING];
    size_t pend_len[OVERLAP_MAX_PENDING];
    MPI_Request *req;
    int nreq, cap;
    uint64_t wait_ns;
};

ridge_status ridge_dist_overlap_create(float *buf, size_t n, size_t bucket_bytes,
                                       ridge_dist_overlap **out)
{
    if (!out || (!buf && n))
        return ridge_error(RIDGE_EINVAL, "ridge_dist_overlap_create: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return ridge_error(RIDGE_ENOMEM, "MPI: out of memory");
    (*out)->buf = buf, (*out)->n = n, (*out)->bucket = bucket_bytes;
    return RIDGE_OK;
}

/* Requests still in flight exist only after a failure, when the job is about to be aborted:
 * waiting for them could hang, so they are left alone. */
void ridge_dist_overlap_destroy(ridge_dist_overlap *o)
{
    if (!o) return;
    free(o->req);
    free(o);
}

/* Starts every pending range, in pieces of at most a bucket (at least 1 MiB: a piece per
 * few floats would flood MPI with requests; at most 2^30 floats, MPI's int count). */
static ridge_status overlap_flush(ridge_dist_overlap *o)
{
    size_t piece = (o->bucket > ((size_t)1 << 20) ? o->bucket : (size_t)1 << 20) / sizeof(float);
    if (piece > (size_t)1 << 30) piece = (size_t)1 << 30;
    for (int i = 0; i < o->npending; i++)
        for (size_t off = 0; off < o->pend_len[i];) {
            size_t k = o->pend_len[i] - off;
            if (k > piece) k = piece;
            if (o->nreq == o->cap) {
                int cap = o->cap ? 2 * o->cap : 64;
                MPI_Request *r = realloc(o->req, (size_t)cap * sizeof *r);
                if (!r) return ridge_error(RIDGE_ENOMEM, "MPI: out of memory");
                o->req = r, o->cap = cap;
            }
            int rc = MPI_Iallreduce(MPI_IN_PLACE, o->pend[i] + off, (int)k, MPI_FLOAT, MPI_SUM,
                                    MPI_COMM_WORLD, &o->req[o->nreq]);
            if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Iallreduce");
            o->nreq++;
            off += k;
        }
    o->npending = 0, o->pending_bytes = 0;
    return RIDGE_OK;
}

ridge_status ridge_dist_overlap_add(void *arg, float *const *ptr, const size_t *len, int count)
{
    ridge_dist_overlap *o = arg;
    if (g_size == 1) return RIDGE_OK;
    ridge_status st;
    for (int i = 0; i < count; i++) {
        float *p = ptr[i];
        size_t k = len[i];
        if (!k) continue;
        if (p < o->buf || p + k > o->buf + o->n)
            return ridge_error(RIDGE_EINVAL, "ridge_dist_overlap_add: a range outside the buffer");
        o->covered += k, o->pending_bytes += k * sizeof *p;
        int j = 0;
        while (j < o->npending && o->pend[j] != p + k && o->pend[j] + o->pend_len[j] != p) j++;
        if (j < o->npending) { /* joins a pending range, before or after it */
            if (o->pend[j] == p + k) o->pend[j] = p;
            o->pend_len[j] += k;
            continue;
        }
        if (o->npending == OVERLAP_MAX_PENDING && (st = overlap_flush(o))) return st;
        o->pend[o->npending] = p, o->pend_len[o->npending++] = k;
    }
    if (o->pending_bytes >= o->bucket && (st = overlap_flush(o))) return st;
    int flag; /* drive the started reductions */
    if (o->nreq) {
        int rc = MPI_Testall(o->nreq, o->req, &flag, MPI_STATUSES_IGNORE);
        if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Testall");
    }
    return RIDGE_OK;
}

ridge_status ridge_dist_overlap_finish(ridge_dist_overlap *o)
{
    if (g_size == 1) return RIDGE_OK;
    ridge_status st = overlap_flush(o);
    if (st) return st;
    uint64_t t0 = ridge_time_ns();
    int rc = o->nreq ? MPI_Waitall(o->nreq, o->req, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
    o->wait_ns += ridge_time_ns() - t0;
    o->nreq = 0;
    if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Waitall");
    if (o->covered != o->n)
        return ridge_error(RIDGE_EINVAL, "ridge_dist_overlap_finish: the ranges added cover %zu "
                           "of the %zu floats", o->covered, o->n);
    o->covered = 0;
    float s = 1.0f / (float)g_size;
    for (size_t i = 0; i < o->n; i++) o->buf[i] *= s;
    return RIDGE_OK;
}

double ridge_dist_overlap_wait_seconds(const ridge_dist_overlap *o)
{
    return o ? (double)o->wait_ns * 1e-9 : 0;
}

void ridge_dist_abort(int code, const char *why)
{
    if (!g_mpi) return;
    fprintf(stderr, "ridge: rank %d of %d: %s; aborting the job\n", g_rank, g_size,
            why ? why : "failed");
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
}
