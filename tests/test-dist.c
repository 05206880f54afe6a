/* ridge_dist (built with -DRIDGE_WITH_MPI=ON), run both as one process and under
 * `mpiexec -np 2` (tests/dist.cmake):
 * - init reports the world (rank 0 of 1 without a launcher), allreduce_mean averages buffers of
 *   edge sizes against a double reference of what every rank contributed, and refuses NULL;
 *   ZeRO-1's shard / reduce_scatter_mean / allgather / gather likewise;
 * - overlapped averaging (ridge_dist_overlap_*) of slices in buckets of every size equals
 *   allreduce_mean bit for bit;
 * - synchronized batch norm: each rank's share of the rows through the _sync forward and
 *   backward gives the full batch's statistics, outputs, dx rows and (summed) dgamma/dbeta;
 * - the rank-strided llm.c loader: rank r of N with batch B reads rows r*B..r*B+B-1 of the batch
 *   one process with batch N*B reads, step after step, shuffled and sequential. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ridge/dist.h"
#include "ridge/nn-conv.h"
#include "test.h"

/* What rank r puts at x[i]. */
static float contribution(int r, size_t i)
{
    return (float)((int)(i % 97) - 48) * 0.25f + (float)r * 3.0f;
}

static void test_allreduce(int rank, int size)
{
    const size_t sizes[] = {0, 1, 7, 1000003};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        float *x = malloc((n ? n : 1) * sizeof *x);
        for (size_t i = 0; i < n; i++) x[i] = contribution(rank, i);
        CHECK_OK(ridge_dist_allreduce_mean(x, n));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < size; r++) want += contribution(r, i);
            want /= size;
            if (x[i] != (float)want) bad++; /* exact: small multiples of 1/4, sums of 2 */
        }
        CHECKF(bad == 0, "n = %zu: %zu of the averages differ", n, bad);
        free(x);
    }
    CHECK(ridge_dist_allreduce_mean(NULL, 3) == RIDGE_EINVAL);
}

/* ZeRO-1's pieces: the shards tile [0, n) in rank order; reduce_scatter_mean leaves the
 * average in this rank's shard; allgather gives every rank every shard. */
static void test_zero(int rank, int size)
{
    const size_t sizes[] = {1, 2, 7, 1000003};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k], lo, hi;
        ridge_dist_shard(n, &lo, &hi);
        size_t per = (n + (size_t)size - 1) / (size_t)size, a = per * (size_t)rank;
        CHECKF(lo == (a < n ? a : n) && hi == (lo + per < n ? lo + per : n),
               "n = %zu: shard [%zu, %zu)", n, lo, hi);
        float *x = malloc(n * sizeof *x);
        for (size_t i = 0; i < n; i++) x[i] = contribution(rank, i);
        CHECK_OK(ridge_dist_reduce_scatter_mean(x, n));
        size_t bad = 0;
        for (size_t i = lo; i < hi; i++) {
            double want = 0;
            for (int r = 0; r < size; r++) want += contribution(r, i);
            bad += x[i] != (float)(want / size);
        }
        CHECKF(bad == 0, "reduce_scatter n = %zu: %zu of the averages differ", n, bad);
        for (size_t i = 0; i < n; i++) x[i] = i >= lo && i < hi ? (float)i : -1.0f;
        CHECK_OK(ridge_dist_allgather(x, n));
        bad = 0;
        for (size_t i = 0; i < n; i++) bad += x[i] != (float)i;
        CHECKF(bad == 0, "allgather n = %zu: %zu values missing", n, bad);
        /* gather: rank 0 receives every rank's slice (sent from a buffer of the slice alone) */
        float *mine = malloc((hi - lo + 1) * sizeof *mine);
        for (size_t i = lo; i < hi; i++) mine[i - lo] = (float)i + 0.5f;
        for (size_t i = 0; i < n; i++) x[i] = -1.0f;
        CHECK_OK(ridge_dist_gather(mine, rank == 0 ? x : NULL, n));
        bad = 0;
        for (size_t i = 0; rank == 0 && i < n; i++) bad += x[i] != (float)i + 0.5f;
        CHECKF(bad == 0, "gather n = %zu: %zu values missing on rank 0", n, bad);
        free(mine);
        free(x);
    }
}

/* Overlapped averaging: a buffer handed over as llm.c-style layer slices (tensor k of L layers
 * is (L, len_k); slices arrive per layer, last layer first, then two whole tensors), with
 * buckets from 1 byte (every add starts reductions) to larger than the buffer (all at finish),
 * twice (the next step reuses the overlap), must equal ridge_dist_allreduce_mean bit for bit. */
static void test_overlap(int rank, int size)
{
    enum { L = 5, K = 4 };
    const size_t len[K] = {7, 1000, 3, 100000}, head = 333, tail = 300001; /* > 1 MiB: pieces */
    size_t n = head + tail;
    for (int k = 0; k < K; k++) n += L * len[k];
    float *x = malloc(n * sizeof *x), *want = malloc(n * sizeof *want);
    const size_t buckets[] = {1, 4096, 100000, (size_t)1 << 30};
    for (size_t b = 0; b < sizeof buckets / sizeof buckets[0]; b++) {
        ridge_dist_overlap *o = NULL;
        CHECK_OK(ridge_dist_overlap_create(x, n, buckets[b], &o));
        for (int rep = 0; rep < 2 && o; rep++) {
            for (size_t i = 0; i < n; i++)
                want[i] = x[i] = contribution(rank, i) * (1.0f + 0.001f * (float)(i % 13)) + 0.1f * (float)rep;
            CHECK_OK(ridge_dist_allreduce_mean(want, n));
            float *p[K];
            size_t l[K];
            float *h[2] = {x, x + n - tail};
            size_t hl[2] = {head, tail};
            CHECK_OK(ridge_dist_overlap_add(o, h + 1, hl + 1, 1)); /* tail first, as lnf */
            for (int layer = L - 1; layer >= 0; layer--) {
                float *t = x + head;
                for (int k = 0; k < K; k++) {
                    p[k] = t + (size_t)layer * len[k], l[k] = len[k];
                    t += L * len[k];
                }
                CHECK_OK(ridge_dist_overlap_add(o, p, l, K));
            }
            CHECK_OK(ridge_dist_overlap_add(o, h, hl, 1));
            CHECK_OK(ridge_dist_overlap_finish(o));
            CHECKF(memcmp(x, want, n * sizeof *x) == 0,
                   "overlap, bucket %zu B, step %d: not the blocking average", buckets[b], rep);
        }
        if (size > 1) { /* a range missing is caught */
            float *h[1] = {x};
            size_t hl[1] = {head};
            CHECK_OK(ridge_dist_overlap_add(o, h, hl, 1));
            CHECK(ridge_dist_overlap_finish(o) == RIDGE_EINVAL);
        }
        ridge_dist_overlap_destroy(o);
    }
    free(x), free(want);
}

static int close_to(double a, double b, double tol)
{
    return fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1);
}

/* Synchronized batch norm: rank r of N takes rows [r*M/N, (r+1)*M/N) of one (M, C) batch; its
 * forward and backward with ridge_dist_allreduce_sum_f64 must give what one process computes
 * on all M rows (up to the order of the double sums), ReLU included. */
static void test_sync_bn(int rank, int size)
{
    enum { M = 4 * 97, C = 13 };
    const size_t mine = M / (size_t)size, lo = (size_t)rank * mine;
    ridge_ctx *ctx = NULL;
    CHECK_OK(ridge_ctx_create(NULL, &ctx));
    float *x = malloc(M * C * sizeof *x), *dy = malloc(M * C * sizeof *dy);
    float *y1 = malloc(M * C * sizeof *y1), *dx1 = malloc(M * C * sizeof *dx1);
    float *y2 = malloc(mine * C * sizeof *y2), *dx2 = malloc(mine * C * sizeof *dx2);
    float *dy2 = malloc(mine * C * sizeof *dy2);
    float g[C], b[C], mean1[C], rstd1[C], mean2[C], rstd2[C], rm1[C], rv1[C], rm2[C], rv2[C];
    float dg1[C], db1[C];
    double dgb[2 * C];
    for (size_t i = 0; i < (size_t)M * C; i++) {
        x[i] = (float)((int)((i * 37 + i / 7) % 101) - 40) * 0.03f + (float)(i % C) * 0.5f;
        dy[i] = (float)((int)((i * 11 + 5) % 53) - 26) * 0.01f;
    }
    for (int c = 0; c < C; c++) {
        g[c] = 1.0f + 0.1f * (float)c, b[c] = 0.05f * (float)c;
        rm1[c] = rm2[c] = 0.1f, rv1[c] = rv2[c] = 1.0f;
    }
    CHECK_OK(ridge_batchnorm_forward_train(ctx, y1, mean1, rstd1, rm1, rv1, x, g, b, M, C, 1e-5f,
                                           0.1f, RIDGE_EPI_RELU));
    CHECK_OK(ridge_batchnorm_forward_train_sync(ctx, y2, mean2, rstd2, rm2, rv2, x + lo * C, g, b,
                                                mine, C, 1e-5f, 0.1f, RIDGE_EPI_RELU,
                                                ridge_dist_allreduce_sum_f64));
    memcpy(dy2, dy + lo * C, mine * C * sizeof *dy2);
    CHECK_OK(ridge_batchnorm_backward(ctx, dx1, dg1, db1, dy, x, y1, mean1, rstd1, g, M, C,
                                      RIDGE_EPI_RELU));
    float dg2[C], db2[C];
    CHECK_OK(ridge_batchnorm_backward_sync(ctx, dx2, dg2, db2, dy2, x + lo * C, y2, mean2, rstd2,
                                           g, mine, C, RIDGE_EPI_RELU,
                                           ridge_dist_allreduce_sum_f64));
    for (int c = 0; c < C; c++) dgb[c] = dg2[c], dgb[C + c] = db2[c];
    CHECK_OK(ridge_dist_allreduce_sum_f64(dgb, 2 * C)); /* the ranks' shares add up */
    size_t bad = 0;
    for (int c = 0; c < C; c++)
        bad += !close_to(mean2[c], mean1[c], 1e-6) || !close_to(rstd2[c], rstd1[c], 1e-6) ||
               !close_to(rm2[c], rm1[c], 1e-6) || !close_to(rv2[c], rv1[c], 1e-6) ||
               !close_to(dgb[c], dg1[c], 1e-5) || !close_to(dgb[C + c], db1[c], 1e-5);
    CHECKF(bad == 0, "sync bn: %zu channel statistics or dgamma/dbeta differ", bad);
    bad = 0;
    for (size_t i = 0; i < mine * C; i++)
        bad += !close_to(y2[i], y1[lo * C + i], 1e-5) || !close_to(dx2[i], dx1[lo * C + i], 1e-5);
    CHECKF(bad == 0, "sync bn: %zu of this rank's outputs or dx differ from one process's", bad);
    free(x), free(dy), free(y1), free(dx1), free(y2), free(dx2), free(dy2);
    ridge_ctx_destroy(ctx);
}

/* The batches of rank r of N (batch B) against rows r*B.. of one process's (batch N*B). */
static void test_loader(int rank, int size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/ridge-test-dist-%d-%d.bin", (int)getpid(), rank);
    enum { NTOK = 5000, V = 50, B = 2, T = 8, N = 3 };
    uint16_t *tok = malloc(NTOK * sizeof *tok);
    for (int i = 0; i < NTOK; i++) tok[i] = (uint16_t)((i * 7 + i / 13) % V);
    CHECK_OK(ridge_llmc_tokens_write(path, tok, NTOK));
    for (int shuffle = 0; shuffle <= 1; shuffle++) {
        ridge_llmc_loader *one = NULL, *part[N] = {0};
        CHECK_OK(ridge_llmc_loader_create(path, N * B, T, V, shuffle, &one));
        for (int r = 0; r < N; r++)
            CHECK_OK(ridge_llmc_loader_create_rank(path, B, T, V, shuffle, r, N, &part[r]));
        size_t bad = 0;
        for (int step = 0; one && step < 150; step++) { /* past the 104 samples: a new epoch */
            const int *in1, *tg1, *in, *tg;
            if (ridge_llmc_loader_next(one, &in1, &tg1)) {
                bad++;
                break;
            }
            for (int r = 0; r < N; r++) {
                if (!part[r] || ridge_llmc_loader_next(part[r], &in, &tg)) {
                    bad++;
                    continue;
                }
                bad += memcmp(in, in1 + r * B * T, B * T * sizeof *in) != 0;
                bad += memcmp(tg, tg1 + r * B * T, B * T * sizeof *tg) != 0;
            }
        }
        CHECKF(bad == 0, "shuffle %d: %zu rank batches differ from the one-process batch",
               shuffle, bad);
        ridge_llmc_loader_destroy(one);
        for (int r = 0; r < N; r++) ridge_llmc_loader_destroy(part[r]);
    }
    ridge_llmc_loader *ld = NULL;
    CHECK(ridge_llmc_loader_create_rank(path, B, T, V, 1, 3, 3, &ld) == RIDGE_EINVAL && !ld);
    CHECK(ridge_llmc_loader_create_rank(path, B, T, V, 1, 0, 0, &ld) == RIDGE_EINVAL && !ld);
    /* too few tokens for one global batch of 400 ranks: refused, naming the shard */
    CHECK(ridge_llmc_loader_create_rank(path, B, T, V, 1, 0, 400, &ld) == RIDGE_EFORMAT && !ld);
    CHECK(strstr(ridge_last_error(), "over 400 rank(s)") != NULL);
    remove(path);
    free(tok);
    (void)size;
}

int main(void)
{
    CHECK(ridge_dist_rank() == 0 && ridge_dist_size() == 1); /* before init */
    int rank = -1, size = -1;
    CHECK_OK(ridge_dist_init(&rank, &size));
    const char *launcher = getenv("OMPI_COMM_WORLD_SIZE");
    CHECKF(size == (launcher ? atoi(launcher) : 1), "size %d", size);
    CHECK(rank >= 0 && rank < size && rank == ridge_dist_rank() && size == ridge_dist_size());
    test_allreduce(rank, size);
    test_zero(rank, size);
    test_sync_bn(rank, size);
    test_overlap(rank, size);
    test_loader(rank, size);
    char name[32];
    snprintf(name, sizeof name, "test-dist (rank %d of %d)", rank, size);
    int rc = test_finish(name);
    ridge_dist_finalize();
    return rc;
}
