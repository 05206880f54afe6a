/* ridge bench pool: the fork-join round trip of an empty task, the synchronization floor that
 * every parallel layer pays once per call (it dominates batch-1 latency).
 *
 * Four ways to run the same empty task on n threads, measured in the same process and
 * interleaved batch by batch so machine noise hits them alike:
 *   ridge-spin   ridge's pool, workers spinning between jobs (the default, RIDGE_SPIN_US)
 *   ridge-sleep  ridge's pool with spin 0: every job wakes sleeping workers through a futex
 *   create-join  pthread_create + pthread_join per call, the naive way
 *   openmp       an OpenMP `parallel` region (gcc's libgomp, its default wait policy)
 * Each call is timed on its own; the table gives median, p99 and best in microseconds. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char ridge_bench_pool_summary[] =
    "fork-join round trip of the thread pool vs create/join and OpenMP";

#ifdef RIDGE_HAVE_OPENMP
#include <omp.h>
#endif

enum { M_SPIN, M_SLEEP, M_CREATE, M_OMP, M_COUNT };
static const char *const method_name[M_COUNT] = {"ridge-spin", "ridge-sleep", "create-join",
                                                 "openmp"};

static _Atomic int sink;

static void empty_task(void *arg, int ith, int nth)
{
    (void)arg;
    atomic_fetch_add_explicit(&sink, ith + nth, memory_order_relaxed);
}

static void *empty_thread(void *arg)
{
    empty_task(arg, 1, 2);
    return NULL;
}

/* One create/join fork-join: n-1 new threads plus the caller. */
static int create_join(int n)
{
    pthread_t th[64];
    int started = 0;
    for (int i = 1; i < n && i < 64; i++, started++)
        if (pthread_create(&th[i - 1], NULL, empty_thread, NULL) != 0) break;
    empty_task(NULL, 0, n);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    return started == n - 1 ? 0 : -1;
}

#ifdef RIDGE_HAVE_OPENMP
static void omp_region(int n)
{
#pragma omp parallel num_threads(n)
    empty_task(NULL, omp_get_thread_num(), omp_get_num_threads());
}
#endif

/* Times `calls` round trips of one method; returns 0 on success. */
static int run_batch(int method, int n, ridge_ctx *spin, ridge_ctx *sleep, int calls,
                     double *out)
{
    for (int i = 0; i < calls; i++) {
        uint64_t t0 = ridge_time_ns();
        switch (method) {
        case M_SPIN: ridge_parallel_run(spin, n, empty_task, NULL); break;
        case M_SLEEP: ridge_parallel_run(sleep, n, empty_task, NULL); break;
        case M_CREATE:
            if (create_join(n)) return -1;
            break;
#ifdef RIDGE_HAVE_OPENMP
        case M_OMP: omp_region(n); break;
#endif
        }
        out[i] = (double)(ridge_time_ns() - t0) * 1e-3; /* microseconds */
    }
    return 0;
}

static int bench_threads(const ridge_bench_opts *o, bench_table *t, int n)
{
    ridge_ctx_options co;
    ridge_ctx_options_init(&co);
    co.threads = n;
    co.isa = o->isa;
    ridge_ctx *spin = NULL, *sleep = NULL;
    if (ridge_ctx_create(&co, &spin)) goto err_ctx;
    co.spin_us = 0;
    if (ridge_ctx_create(&co, &sleep)) goto err_ctx;

    int rounds = o->quick ? 5 : 20, per_batch = o->quick ? 200 : 500;
    size_t total = (size_t)rounds * per_batch;
    double *samples[M_COUNT];
    for (int m = 0; m < M_COUNT; m++) samples[m] = malloc(total * sizeof(double));
    int have[M_COUNT] = {1, 1, 1, 0};
#ifdef RIDGE_HAVE_OPENMP
    have[M_OMP] = 1;
#endif
    int rc = 0;
    for (int m = 0; m < M_COUNT; m++)
        if (!samples[m]) rc = -1;

    /* warm up each method (thread creation, page faults, libgomp's team) */
    double warm[64];
    for (int m = 0; m < M_COUNT && !rc; m++)
        if (have[m]) rc |= run_batch(m, n, spin, sleep, 64, warm);

    for (int r = 0; r < rounds && !rc; r++) {
        for (int m = 0; m < M_COUNT && !rc; m++) {
            if (!have[m]) continue;
            /* let the other methods' spinning threads fall asleep first */
            bench_quiesce(3000);
            rc |= run_batch(m, n, spin, sleep, per_batch, samples[m] + (size_t)r * per_batch);
        }
    }
    if (rc) {
        fprintf(stderr, "bench pool: a method failed at %d threads\n", n);
    } else {
        bench_stats st[M_COUNT];
        for (int m = 0; m < M_COUNT; m++)
            if (have[m]) st[m] = bench_summarize(samples[m], total);
        for (int m = 0; m < M_COUNT; m++) {
            if (!have[m]) continue;
            bench_val row[] = {{method_name[m], 0},
                               {NULL, n},
                               {NULL, st[m].median},
                               {NULL, st[m].p99},
                               {NULL, st[m].best},
                               {NULL, (double)total},
                               {NULL, st[m].median / st[M_SPIN].median}};
            bench_table_row(t, row);
        }
    }
    for (int m = 0; m < M_COUNT; m++) free(samples[m]);
    ridge_ctx_destroy(spin);
    ridge_ctx_destroy(sleep);
    return rc;

err_ctx:
    fprintf(stderr, "bench pool: %s\n", ridge_last_error());
    ridge_ctx_destroy(spin);
    return -1;
}

int ridge_bench_pool(const ridge_bench_opts *o, int argc, char **argv)
{
    int own = bench_no_options(argc, argv, "pool", ridge_bench_pool_summary);
    if (own) return own > 0 ? 0 : BENCH_USAGE;
    static const bench_col cols[] = {
        {"method", BENCH_STR}, {"threads", BENCH_INT}, {"median_us", BENCH_F2},
        {"p99_us", BENCH_F2},  {"best_us", BENCH_F2},  {"calls", BENCH_INT},
        {"x_ridge_spin", BENCH_F2},
    };
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    bench_table t;
    bench_table_begin(&t, o, "pool: fork-join round trip of an empty task (microseconds)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
#ifndef RIDGE_HAVE_OPENMP
    bench_note(o, "bench pool: built without OpenMP; the openmp row is left out");
#endif
    int rc = 0;
    int counts[2] = {1, max_threads};
    for (int i = 0; i < (max_threads > 1 ? 2 : 1) && !rc; i++) {
        bench_note(o, "bench pool: %d thread%s...", counts[i], counts[i] > 1 ? "s" : "");
        rc = bench_threads(o, &t, counts[i]);
    }
    bench_table_end(&t);
    return rc;
}
