/* The thread pool: persistent workers, fork-join, spin-then-sleep.
 *
 * A job is published by bumping `gen` (a futex word). Idle workers watch `gen`: they spin for
 * spin_us (a pause loop, checking the clock every few dozen iterations), then sleep in
 * futex_wait until the next bump. The task indices 1..nth-1 are claimed from `ticket` (one
 * 64-bit word: generation, nth and the next index, so a claim can only succeed for the job in
 * flight) by whichever thread gets there: the workers, and the caller once it has run ith = 0.
 * So a worker that is slow to wake (a descheduled vCPU can take milliseconds) costs at most
 * the caller's running its share too, never a wait; normally each worker claims one index at
 * once. The caller then waits for `done` (indices finished) to reach nth - 1, with the same
 * spin-then-sleep policy (spinning longer after a long share of its own: fork_join).
 * Wake-ups are skipped when nobody sleeps: the sleeper announces itself (seq_cst) before it
 * re-reads the word it sleeps on, and the waker changes the word (seq_cst) before it reads
 * the sleeper count, so one of the two always sees the other.
 *
 * A worker that wakes on the CPU the caller published from moves itself off it
 * (move_off_caller).
 *
 * One job at a time: `busy` is taken with a compare-and-swap; a nested call from inside a task,
 * or a second thread calling in meanwhile, finds it taken and runs the job serially instead.
 * Splitting is static (ridge_partition: index ith always gets the same block, whichever thread
 * runs it), so results do not depend on timing. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

struct ridge_pool {
    int threads;           /* total, caller included */
    uint64_t spin_ns;
    int yield;             /* more threads than CPUs: spin with sched_yield, not pause */
    int nudge;             /* a worker that wakes on the caller's CPU moves off it */
    _Atomic int workers_seen; /* workers started so far: each one's first `turn` */
    pthread_t *workers;    /* threads - 1 of them */
    int started;           /* how many workers were created */

    _Alignas(64) _Atomic uint32_t gen;      /* job generation: workers wait on it */
    _Atomic int sleeping_workers;
    _Alignas(64) _Atomic uint64_t ticket;   /* TICKET(gen, nth, next index to claim) */
    _Alignas(64) _Atomic uint32_t done;     /* indices 1..nth-1 finished */
    _Atomic int caller_sleeping;
    _Atomic int caller_cpu;                 /* where the caller published the job */
    /* the last move_off_caller: the CPU the worker woke on and the CPU it moved to (-1: none),
     * for test-pool (ridge_pool_last_move_for_tests); a line of their own, which only the
     * workers write */
    _Alignas(64) _Atomic int woke_on, moved_to;
    _Alignas(64) _Atomic int busy;          /* a job is in flight */
    _Atomic int stop;
    /* the current job: written by the caller before `ticket` is published */
    ridge_task_fn fn;
    void *arg;
    /* profiling: each index's task span for the current job, appended after the join */
    ridge_profile *prof;
    uint64_t *span;        /* 2 * threads: start, end per index */
};

#define TICKET(gen, nth, next) ((uint64_t)(gen) << 32 | (uint64_t)(nth) << 16 | (uint64_t)(next))
#define TICKET_NTH(t) ((int)((t) >> 16 & 0xffff))
#define TICKET_NEXT(t) ((int)((t) & 0xffff))

_Thread_local int ridge_task_depth;

/* Runs one thread's share of a job, marked as inside a task. */
static void run_task(ridge_task_fn fn, void *arg, int ith, int nth)
{
    ridge_task_depth++;
    fn(arg, ith, nth);
    ridge_task_depth--;
}

static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int count)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* Spins until *word != old or spin_ns passes; returns 1 if it changed while spinning.
 * With more threads than CPUs a spinner would hold the CPU the thread it waits for needs,
 * so it yields instead of pausing. */
static int spin_until_changed(const ridge_pool *pool, _Atomic uint32_t *word, uint32_t old,
                              uint64_t spin_ns)
{
    if (spin_ns == 0) return atomic_load_explicit(word, memory_order_acquire) != old;
    uint64_t deadline = ridge_time_ns() + spin_ns;
    for (;;) {
        for (int i = 0; i < 32; i++) {
            if (atomic_load_explicit(word, memory_order_acquire) != old) return 1;
            if (pool->yield) sched_yield();
            else cpu_relax();
        }
        if (ridge_time_ns() >= deadline) return 0;
    }
}

/* Runs task index ith of the job in flight and counts it done (waking the caller when it was
 * the last one and the caller sleeps). */
static void run_claimed(ridge_pool *pool, int ith, int nth)
{
    if (pool->prof) pool->span[2 * ith] = ridge_time_ns();
    run_task(pool->fn, pool->arg, ith, nth);
    if (pool->prof) pool->span[2 * ith + 1] = ridge_time_ns();
    if (atomic_fetch_add(&pool->done, 1) + 1 == (uint32_t)nth - 1 &&
        atomic_load(&pool->caller_sleeping))
        futex_wake(&pool->done, 1);
}

/* Claims and runs indices of the job in flight until none is left. A claim is a CAS on the
 * whole ticket, so it fails if the job changed since the ticket was read: a successful one
 * proves the job still waits for that index, and so that fn and arg are still its own. */
static void claim_and_run(ridge_pool *pool)
{
    uint64_t t = atomic_load_explicit(&pool->ticket, memory_order_acquire);
    while (TICKET_NEXT(t) < TICKET_NTH(t)) {
        if (!atomic_compare_exchange_weak_explicit(&pool->ticket, &t, t + 1,
                                                   memory_order_acq_rel, memory_order_acquire))
            continue; /* t now holds the current ticket */
        run_claimed(pool, TICKET_NEXT(t), TICKET_NTH(t));
        t = atomic_load_explicit(&pool->ticket, memory_order_acquire);
    }
}

/* A worker running on the CPU the caller published the job from shares that CPU with it:
 * Linux often wakes a sleeping thread on its waker's CPU, and then the two take turns there,
 * the caller running every index itself, until the load balancer moves one of them (on the
 * Zen 4 VM whole 5 ms stretches of 2-thread calls ran at the 1-thread rate). Such a worker
 * moves itself: it narrows its affinity to another CPU it may use (the kernel migrates it at
 * once), then restores its mask, so it stays where it went but nothing stays pinned. Workers
 * take the other CPUs in turn, from different starts (`turn`). Costs a sched_getcpu (vDSO)
 * per job; the system calls only when it moves. A worker that finds the next job while still
 * in its claiming loop runs that job's index without looking (nobody woke it anywhere new); it
 * looks on its way round the loop after. woke_on and moved_to record the last look, for
 * test-pool. */
static void move_off_caller(ridge_pool *pool, unsigned *turn)
{
    const int here = sched_getcpu();
    atomic_store_explicit(&pool->woke_on, here, memory_order_relaxed);
    if (here < 0 || here != atomic_load_explicit(&pool->caller_cpu, memory_order_relaxed))
        return;
    cpu_set_t allowed, one;
    if (pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed)) return;
    const int n = CPU_COUNT(&allowed);
    if (n < 2 || !CPU_ISSET(here, &allowed)) return;
    /* the k-th allowed CPU other than this one */
    int k = (int)((*turn)++ % (unsigned)(n - 1)), to = -1;
    for (int c = 0; c < CPU_SETSIZE && to < 0; c++)
        if (c != here && CPU_ISSET(c, &allowed) && k-- == 0) to = c;
    CPU_ZERO(&one);
    CPU_SET(to, &one);
    if (pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0) {
        atomic_store_explicit(&pool->moved_to, sched_getcpu(), memory_order_relaxed);
        pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
    }
}

void ridge_pool_last_move_for_tests(ridge_ctx *ctx, int *woke_on, int *moved_to)
{
    *woke_on = atomic_exchange(&ctx->pool->woke_on, -1);
    *moved_to = atomic_exchange(&ctx->pool->moved_to, -1);
}

static void *worker_main(void *p)
{
    ridge_pool *pool = p;
    uint32_t seen = 0;
    unsigned turn = (unsigned)atomic_fetch_add(&pool->workers_seen, 1);
    for (;;) {
        if (!spin_until_changed(pool, &pool->gen, seen, pool->spin_ns)) {
            atomic_fetch_add(&pool->sleeping_workers, 1);
            while (atomic_load(&pool->gen) == seen) futex_wait(&pool->gen, seen);
            atomic_fetch_sub(&pool->sleeping_workers, 1);
        }
        seen = atomic_load_explicit(&pool->gen, memory_order_acquire);
        if (atomic_load(&pool->stop)) break;
        if (pool->nudge) move_off_caller(pool, &turn);
        claim_and_run(pool);
    }
    return NULL;
}

/* Publishes the job, runs index 0 and whatever no worker has claimed yet, and waits until
 * every index has finished. */
static void fork_join(ridge_pool *pool, int nth)
{
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    uint32_t g = atomic_load_explicit(&pool->gen, memory_order_relaxed) + 1;
    if (pool->nudge)
        atomic_store_explicit(&pool->caller_cpu, sched_getcpu(), memory_order_relaxed);
    atomic_store(&pool->ticket, TICKET(g, nth, 1)); /* seq_cst: publishes fn/arg and done */
    atomic_store(&pool->gen, g);
    if (atomic_load(&pool->sleeping_workers) > 0) futex_wake(&pool->gen, nth - 1);

    const uint64_t t0 = ridge_time_ns();
    run_task(pool->fn, pool->arg, 0, nth);
    const uint64_t t1 = ridge_time_ns();
    claim_and_run(pool);

    /* The caller waits for the others spinning for spin_ns, or for a quarter of the time its
     * own share took if that is longer: a worker that runs its equal share a little slower
     * (a vCPU's slow spell) would otherwise find the caller asleep, and waking it cost this
     * VM 30-40 us, 3% of a 1 ms convolution (docs/PERFORMANCE.md, session 10). Spinning
     * longer burns at most that quarter more of one CPU. */
    const uint64_t wait_ns = pool->spin_ns ? RIDGE_MAX(pool->spin_ns, (t1 - t0) / 4) : 0;
    uint32_t finished;
    while ((finished = atomic_load_explicit(&pool->done, memory_order_acquire)) !=
           (uint32_t)nth - 1) {
        if (spin_until_changed(pool, &pool->done, finished, wait_ns)) continue;
        atomic_store(&pool->caller_sleeping, 1);
        finished = atomic_load(&pool->done);
        if (finished != (uint32_t)nth - 1) futex_wait(&pool->done, finished);
        atomic_store(&pool->caller_sleeping, 0);
    }
    if (pool->prof) {
        uint64_t t2 = ridge_time_ns();
        ridge_profile_add(pool->prof, "pool.task", "", 0, 0, 0, t0, t1, 0, "%d threads", nth);
        for (int i = 1; i < nth; i++)
            ridge_profile_add(pool->prof, "pool.task", "", 0, 0, 0, pool->span[2 * i],
                              pool->span[2 * i + 1], i, "%d threads", nth);
        ridge_profile_add(pool->prof, "pool.wait", "", 0, 0, 0, t1, t2, 0, "%d threads", nth);
    }
}

void ridge_pool_set_profile(ridge_pool *pool, ridge_profile *prof)
{
    pool->prof = pool->span ? prof : NULL;
}

ridge_status ridge_pool_create(int threads, int spin_us, ridge_pool **out)
{
    *out = NULL;
    if (threads < 1 || threads > 1024)
        return ridge_error(RIDGE_EINVAL, "pool: threads = %d, expected 1..1024", threads);
    if (spin_us < 0)
        return ridge_error(RIDGE_EINVAL, "pool: spin_us = %d, expected >= 0", spin_us);
    ridge_pool *pool = ridge_calloc(1, sizeof *pool);
    if (!pool) return ridge_error(RIDGE_ENOMEM, "pool: out of memory");
    pool->threads = threads;
    pool->spin_ns = (uint64_t)spin_us * 1000u;
    pool->yield = threads > ridge_cpu_get()->logical_cpus;
    pool->nudge = !pool->yield;
    atomic_init(&pool->woke_on, -1);
    atomic_init(&pool->moved_to, -1);
    pool->span = calloc(2 * (size_t)threads, sizeof *pool->span);
    if (!pool->span) goto err_free_pool;
    if (threads > 1) {
        pool->workers = calloc((size_t)threads - 1, sizeof *pool->workers);
        if (!pool->workers) goto err_free_pool;
    }
    for (int i = 1; i < threads; i++) {
        if (pthread_create(&pool->workers[i - 1], NULL, worker_main, pool) != 0) {
            ridge_pool_destroy(pool);
            return ridge_error(RIDGE_ENOMEM, "pool: could not start worker thread %d of %d",
                               i, threads - 1);
        }
        pool->started = i;
    }
    *out = pool;
    return RIDGE_OK;

err_free_pool:
    free(pool->span);
    ridge_free(pool);
    return ridge_error(RIDGE_ENOMEM, "pool: out of memory");
}

void ridge_pool_destroy(ridge_pool *pool)
{
    if (!pool) return;
    atomic_store(&pool->stop, 1);
    atomic_fetch_add(&pool->gen, 1);
    futex_wake(&pool->gen, INT_MAX);
    for (int i = 0; i < pool->started; i++) pthread_join(pool->workers[i], NULL);
    free(pool->workers);
    free(pool->span);
    ridge_free(pool);
}

void ridge_pool_run(ridge_pool *pool, int nth, ridge_task_fn fn, void *arg)
{
    if (nth > pool->threads) nth = pool->threads;
    if (nth < 1) nth = 1;
    int expected = 0;
    if (nth == 1 || pool->started == 0 ||
        !atomic_compare_exchange_strong(&pool->busy, &expected, 1)) {
        /* serial: one thread, or nested/concurrent use of a busy pool */
        for (int i = 0; i < nth; i++) run_task(fn, arg, i, nth);
        return;
    }
    pool->fn = fn;
    pool->arg = arg;
    fork_join(pool, nth);
    atomic_store_explicit(&pool->busy, 0, memory_order_release);
}

/* ---- partitioning ------------------------------------------------------------------------ */

void ridge_partition(size_t n, size_t grain, int ith, int nth, size_t *begin, size_t *end)
{
    if (grain == 0) grain = 1;
    size_t units = (n + grain - 1) / grain; /* grain-sized pieces, the last maybe short */
    size_t t = (size_t)nth, i = (size_t)ith;
    size_t base = units / t, extra = units % t;
    size_t u0 = i * base + RIDGE_MIN(i, extra);
    size_t u1 = u0 + base + (i < extra ? 1 : 0);
    *begin = RIDGE_MIN(u0 * grain, n);
    *end = RIDGE_MIN(u1 * grain, n);
}

typedef struct range_job {
    size_t n, grain;
    ridge_range_fn fn;
    void *arg;
} range_job;

static void range_task(void *p, int ith, int nth)
{
    range_job *j = p;
    size_t b, e;
    ridge_partition(j->n, j->grain, ith, nth, &b, &e);
    if (b < e) j->fn(j->arg, b, e, ith);
}

static int useful_threads(const ridge_ctx *ctx, size_t units)
{
    size_t t = (size_t)ctx->threads;
    return (int)(units < t ? (units ? units : 1) : t);
}

void ridge_parallel_run(ridge_ctx *ctx, int nth, ridge_task_fn fn, void *arg)
{
    ridge_pool_run(ctx->pool, nth, fn, arg);
}

void ridge_parallel_for(ridge_ctx *ctx, size_t n, size_t grain, ridge_range_fn fn, void *arg)
{
    if (n == 0) return;
    if (grain == 0) grain = 1;
    range_job j = {n, grain, fn, arg};
    ridge_pool_run(ctx->pool, useful_threads(ctx, (n + grain - 1) / grain), range_task, &j);
}

typedef struct range2d_job {
    size_t n0, n1, g0, g1;
    int p0, p1;
    ridge_range2d_fn fn;
    void *arg;
} range2d_job;

static void range2d_task(void *p, int ith, int nth)
{
    range2d_job *j = p;
    size_t b0, e0, b1, e1;
    ridge_partition(j->n0, j->g0, ith / j->p1, j->p0, &b0, &e0);
    ridge_partition(j->n1, j->g1, ith % j->p1, j->p1, &b1, &e1);
    if (b0 < e0 && b1 < e1) j->fn(j->arg, b0, e0, b1, e1, ith);
}

/* The p0 x p1 grid of ridge_parallel_for_2d, for threads threads */
static void grid_2d(int threads, size_t u0, size_t u1, int *p0_out, int *p1_out)
{
    /* Pick the factorization p0 x p1 <= threads that uses the most threads, then keeps the
     * blocks closest to square (in grain units). */
    int best0 = 1, best1 = 1;
    double best_score = -1;
    for (int p0 = 1; p0 <= threads; p0++) {
        int p1 = threads / p0;
        if ((size_t)p0 > u0) break;
        if ((size_t)p1 > u1) p1 = (int)u1;
        double a = (double)u0 / p0, b = (double)u1 / p1;
        double shape = a < b ? a / b : b / a;
        double score = p0 * p1 + shape; /* thread count dominates, squareness breaks ties */
        if (score > best_score) best_score = score, best0 = p0, best1 = p1;
    }
    *p0_out = best0, *p1_out = best1;
}

/* Runs fn on the p0 x p1 grid's blocks, one per thread */
static void grid_run(ridge_ctx *ctx, size_t n0, size_t n1, size_t grain0, size_t grain1, int p0,
                     int p1, ridge_range2d_fn fn, void *arg)
{
    range2d_job j = {n0, n1, grain0, grain1, p0, p1, fn, arg};
    ridge_pool_run(ctx->pool, p0 * p1, range2d_task, &j);
}

void ridge_parallel_for_2d(ridge_ctx *ctx, size_t n0, size_t n1, size_t grain0, size_t grain1,
                           ridge_range2d_fn fn, void *arg)
{
    if (n0 == 0 || n1 == 0) return;
    if (grain0 == 0) grain0 = 1;
    if (grain1 == 0) grain1 = 1;
    int p0, p1;
    grid_2d(ctx->threads, (n0 + grain0 - 1) / grain0, (n1 + grain1 - 1) / grain1, &p0, &p1);
    grid_run(ctx, n0, n1, grain0, grain1, p0, p1, fn, arg);
}

typedef struct guided_job {
    size_t n0, n1, grain0, units;
    ridge_range2d_fn fn;
    void *arg;
    _Atomic size_t next; /* the first unit of grain0 rows not yet taken */
} guided_job;

/* Guided self-scheduling: each grab takes 1/(2 nth) of the units left (at least one), so the
 * first chunks are long and contiguous and the last ones short enough to even out the end. */
static void guided_task(void *p, int ith, int nth)
{
    guided_job *j = p;
    size_t b = atomic_load_explicit(&j->next, memory_order_relaxed);
    while (b < j->units) {
        size_t take = RIDGE_MAX((j->units - b) / (2 * (size_t)nth), 1);
        if (!atomic_compare_exchange_weak_explicit(&j->next, &b, b + take, memory_order_relaxed,
                                                   memory_order_relaxed))
            continue; /* b now holds the current value */
        j->fn(j->arg, b * j->grain0, RIDGE_MIN((b + take) * j->grain0, j->n0), 0, j->n1, ith);
        b = atomic_load_explicit(&j->next, memory_order_relaxed);
    }
}

void ridge_parallel_for_2d_dynamic(ridge_ctx *ctx, size_t n0, size_t n1, size_t grain0,
                                   size_t grain1, ridge_range2d_fn fn, void *arg)
{
    if (n0 == 0 || n1 == 0) return;
    if (grain0 == 0) grain0 = 1;
    if (grain1 == 0) grain1 = 1;
    const size_t u0 = (n0 + grain0 - 1) / grain0;
    int p0, p1;
    grid_2d(ctx->threads, u0, (n1 + grain1 - 1) / grain1, &p0, &p1);
    if (p1 > 1 || p0 == 1) { /* one thread, or fewer row units than threads: static */
        grid_run(ctx, n0, n1, grain0, grain1, p0, p1, fn, arg);
        return;
    }
    guided_job j = {n0, n1, grain0, u0, fn, arg, 0};
    ridge_pool_run(ctx->pool, p0, guided_task, &j);
}
