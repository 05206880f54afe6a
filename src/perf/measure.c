/* Measures a roofline profile: runs each probe (probe-<isa>.c) on t = 1, 2, ... threads of the
 * context's pool at once and keeps the best of several trials, because a peak is a maximum
 * and a shared machine only ever subtracts from it.
 *
 * A trial pins its t threads to t different CPUs, starts them at a spin barrier (so pool
 * wake-up is not timed) and ends when the last finishes; its rate is the sum of the threads'
 * work over that span. Trials are short, 2 ms (quick: 1 ms), many (40; quick 8), and run
 * round-robin over a phase's probes (measure_phase): on a shared machine the scheduler hands
 * out slices of a few ms, so a short trial has a fair chance of running whole on an otherwise
 * idle core, and a burst of load costs one trial of each probe rather than all trials of one.
 * 2 ms still dwarfs the timer and barrier (~1 us).
 * The DRAM probes need at least one pass over arrays several times the LLC (10-30 ms here),
 * so they get half the trials (quick: 3; with a quarter, the 2-thread DRAM read and triad came
 * out 15-20% under the independent probe's best of 40). A cache-level read trial first reads its
 * array three times, untimed, since the other probes' trials in between evicted it and left
 * the caches full of lines the copy and triad probes wrote (in one run the 1-thread L3 read 51
 * GB/s after one pass, against the independent probe's 67-73, and 70 after three). The default run
 * takes about 5 s on 2 threads and stays under 30 s up to a few dozen thread counts.
 *
 * Sizes, per thread unless said: L1 read l1d/2; L2 read l2/2; L3 read 4 x l2, at most
 * l3_usable/2 shared among the threads, at least 2 x l2; DRAM read, copy and triad 4 x
 * l3_usable (at least 64 MiB) per array, shared. The L3 array is a few L2s, not half the L3:
 * the L3 is shared with other cores (and, on a VM, other tenants), and half of it read here
 * at DRAM-like rates (16 MiB: 22 GB/s, against 89 GB/s for 8 MiB per thread on 2 threads);
 * a roof is what the level gives when the data is in it.
 * The cache-level arrays lie after the DRAM arrays, never inside them: a DRAM trial that runs
 * right after an L3 trial over its own first bytes found them still in the L3 (DRAM read 19%
 * and triad 13% above the independent probe's). Memory probes use the widest vector ISA the
 * CPU has. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/internal.h"
#include "perf/probe.h"
#include "ridge/perf.h"

enum { K_COMPUTE, K_READ, K_COPY, K_TRIAD };
/* the probes' phases, in order: compute, the cache levels' reads (L1, L2, L3), DRAM */
enum { PHASE_COMPUTE, PHASE_CACHE, PHASE_DRAM = PHASE_CACHE + RIDGE_LEVEL_DRAM, PHASE_COUNT };
enum { WARM_PASSES = 3 }; /* untimed passes of a cache-level read before its trial */

typedef struct probe_job {
    int kind;
    int warm;            /* untimed passes before the barrier: WARM_PASSES reads (cache levels),
                          * one pass (copy, triad) */
    size_t base;         /* floats from the start of a, b and c to this probe's arrays */
    size_t window;       /* cache levels: which copy of the per-thread arrays to read */
    ridge_probe_compute_fn compute;
    ridge_probe_read_fn read;
    ridge_probe_copy_fn copy;
    ridge_probe_triad_fn triad;
    uint64_t work;       /* iterations (compute) or passes over the arrays (memory) */
    size_t n;            /* floats per thread (memory) */
    float *a, *b, *c;    /* thread ith works on n floats at base + (window * nth + ith) * n */
    atomic_int arrived, go;
    uint64_t t0;         /* set by the last thread to reach the barrier */
    struct probe_out {
        uint64_t end;    /* finish time */
        double ops;      /* work done */
        float sink;      /* stored so the compiler keeps the work */
    } *out;              /* [threads] */
} probe_job;

/* Pins the calling thread to the ith CPU the process may use (for the length of one trial) and
 * returns its previous mask in *old; 0 if it could not. A probe measures what n threads on n
 * cores do: left to the scheduler, a pool worker woken from the calling thread while the other
 * CPU was busy was seen sharing the caller's CPU for whole trials (every 2-thread rate equal
 * to the 1-thread one, docs/PERFORMANCE.md), which no number of trials repairs. */
static int pin_to_cpu(int ith, cpu_set_t *old)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed)) return 0;
    int k = -1;
    for (int c = 0; c < CPU_SETSIZE && k < ith; c++)
        if (CPU_ISSET(c, &allowed) && ++k == ith) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            if (pthread_getaffinity_np(pthread_self(), sizeof *old, old)) return 0;
            return pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0;
        }
    return 0;
}

/* `passes` passes of a memory probe over this thread's arrays (offset off) */
static ridge_probe_result memory_passes(const probe_job *j, size_t off, uint64_t passes)
{
    if (j->kind == K_READ) return j->read(j->a + off, j->n, passes);
    ridge_probe_result r = {0, 0};
    for (uint64_t k = 0; k < passes; k++) {
        ridge_probe_result x = j->kind == K_COPY
                                   ? j->copy(j->c + off, j->a + off, j->n)
                                   : j->triad(j->a + off, j->b + off, j->c + off, j->n);
        r.ops += x.ops, r.sink += x.sink;
    }
    return r;
}

static void probe_task(void *arg, int ith, int nth)
{
    probe_job *j = arg;
    cpu_set_t old;
    int pinned = nth > 1 && pin_to_cpu(ith, &old);
    size_t off = j->base + (j->window * (size_t)nth + (size_t)ith) * j->n;
    /* Untimed first: a cache-level read brings its array into the cache (the trials of other
     * probes in between, round-robin, have evicted it); copy and triad make one pass, since the
     * probe before them left the L3 full of its own lines, dirty after a copy or triad, and
     * writing those back is not this probe's traffic (the triad after a copy measured 15-20%
     * under the independent probe, whose trials of one probe run back to back). */
    ridge_probe_result warm = {0, 0};
    if (j->warm) warm = memory_passes(j, off, j->kind == K_READ ? WARM_PASSES : 1);
    /* the barrier; bounded, so a pool that runs the threads one after another cannot hang */
    if (atomic_fetch_add(&j->arrived, 1) + 1 == nth) {
        j->t0 = ridge_time_ns();
        atomic_store(&j->go, 1);
    } else {
        uint64_t give_up = ridge_time_ns() + 1000000000u;
        for (unsigned spin = 0; !atomic_load(&j->go); spin++)
            if ((spin & 1023) == 0 && ridge_time_ns() > give_up) break;
    }
    ridge_probe_result r =
        j->kind == K_COMPUTE ? j->compute(j->work) : memory_passes(j, off, j->work);
    r.sink += warm.sink;
    j->out[ith].end = ridge_time_ns();
    j->out[ith].ops = r.ops;
    j->out[ith].sink = r.sink;
    if (pinned) pthread_setaffinity_np(pthread_self(), sizeof old, &old);
}

/* One trial on nth threads: returns the seconds taken and sets *ops to the work done. */
static double trial(ridge_ctx *ctx, probe_job *j, int nth, double *ops)
{
    atomic_store(&j->arrived, 0);
    atomic_store(&j->go, 0);
    ridge_parallel_run(ctx, nth, probe_task, j);
    uint64_t end = 0;
    *ops = 0;
    for (int i = 0; i < nth; i++) {
        if (j->out[i].end > end) end = j->out[i].end;
        *ops += j->out[i].ops;
    }
    return end > j->t0 ? (double)(end - j->t0) * 1e-9 : 1e-9;
}

typedef struct plan {
    double target;   /* seconds per trial */
    int trials;      /* per probe */
    int dram_trials; /* per DRAM probe (one pass already takes longer than target) */
    int verbose;
} plan;

/* One probe to run at a thread count: what the job needs, and where its result goes. */
typedef struct probe_spec {
    const char *name;
    int kind;
    ridge_probe_compute_fn compute;
    size_t n;          /* floats per thread (memory probes) */
    size_t base;       /* where its arrays start, in floats */
    int warm;          /* untimed pass(es) before each trial (probe_job.warm) */
    size_t windows;    /* cycle the trials over this many different arrays (cache levels) */
    int phase;         /* its trials' turn (measure_phase): PHASE_COMPUTE, PHASE_CACHE + the
                        * level, or PHASE_DRAM (DRAM-sized arrays: p->dram_trials) */
    uint64_t work;     /* calibrated work per trial */
    double *result;    /* best rate, 1e9 units per second */
} probe_spec;

static void load_spec(probe_job *j, const probe_spec *s)
{
    j->kind = s->kind;
    j->warm = s->warm;
    j->base = s->base;
    j->window = 0;
    j->compute = s->compute;
    j->n = s->n;
    j->work = s->work;
}

/* Sets s->work so a trial lasts about p->target seconds; returns the rate of the last run. */
static double calibrate(ridge_ctx *ctx, probe_job *j, int nth, const plan *p, probe_spec *s)
{
    double ops, sec;
    s->work = s->kind == K_COMPUTE ? 1024 : 1;
    for (;;) {
        load_spec(j, s);
        sec = trial(ctx, j, nth, &ops);
        if (sec >= p->target * 0.5) return ops / sec * 1e-9;
        double scale = fmin(64, fmax(1.5, p->target / sec));
        s->work = (uint64_t)ceil((double)s->work * scale);
    }
}

static size_t floats_for(size_t bytes)
{
    size_t n = bytes / sizeof(float) / RIDGE_PROBE_BLOCK * RIDGE_PROBE_BLOCK;
    return n ? n : RIDGE_PROBE_BLOCK;
}

static void note(const plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(const plan *p, const char *fmt, ...)
{
    if (!p->verbose) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("roofline: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* Per-thread floats of the L3 read probe (see the top of this file). */
static size_t l3_bytes_each(const ridge_roofline *r, int nth)
{
    return RIDGE_MAX(RIDGE_MIN(r->l3_usable / 2 / (size_t)nth, 4 * r->l2), 2 * r->l2);
}

/* The probes for one thread count: the compute peaks the CPU has, then the memory levels.
 * DRAM arrays start at float 0; the L3 level's at cache_base, with room for l3_floats; the L1
 * and L2 levels' after those, with room for small_floats. Apart, so that the L3 trials do not
 * find lines the L2 trials left in the L2: where they shared their first window, the 1-thread
 * L3 read measured 33-34.5 GB/s against 30 for arrays of 4-96 MiB (Intel Xeon VM, session 24). */
static int make_specs(const ridge_cpu *cpu, const ridge_roofline *r, int nth, size_t dram_floats,
                      size_t cache_base, size_t l3_floats, size_t small_floats,
                      ridge_roofline_point *pt, probe_spec *specs)
{
    int has_avx512 = ridge_cpu_supports(cpu, RIDGE_ISA_AVX512);
    const ridge_probe_compute_fn compute[RIDGE_PEAK_COUNT] = {
        ridge_probe_fma__scalar,
        ridge_cpu_supports(cpu, RIDGE_ISA_AVX2) ? ridge_probe_fma__avx2 : NULL,
        has_avx512 ? ridge_probe_fma__avx512 : NULL,
        has_avx512 && cpu->avx512_vnni ? ridge_probe_dot_i8__vnni : NULL,
        has_avx512 && cpu->avx512_bf16 ? ridge_probe_dot_bf16__bf16 : NULL,
    };
    int n = 0;
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
        if (compute[k]) /* else the peak stays 0: n/a */
            specs[n++] = (probe_spec){.name = ridge_roofline_peak_name(k), .kind = K_COMPUTE,
                                      .compute = compute[k], .phase = PHASE_COMPUTE,
                                      .result = &pt->peak[k]};
    const size_t level_floats[RIDGE_LEVEL_COUNT] = {
        floats_for(r->l1d / 2), floats_for(r->l2 / 2), floats_for(l3_bytes_each(r, nth)),
        floats_for(dram_floats / (size_t)nth * sizeof(float))};
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
        int dram = l == RIDGE_LEVEL_DRAM;
        const int l3 = l == RIDGE_LEVEL_L3;
        size_t windows = (l3 ? l3_floats : small_floats) / (level_floats[l] * (size_t)nth);
        specs[n++] = (probe_spec){.name = ridge_roofline_level_name(l), .kind = K_READ,
                                  .n = level_floats[l],
                                  .base = dram ? 0 : l3 ? cache_base : cache_base + l3_floats,
                                  .warm = !dram,
                                  .windows = dram ? 1 : RIDGE_MAX(1, RIDGE_MIN(8, windows)),
                                  .phase = PHASE_CACHE + l, /* DRAM: PHASE_DRAM */
                                  .result = &pt->read[l]};
    }
    size_t dram = level_floats[RIDGE_LEVEL_DRAM];
    specs[n++] = (probe_spec){.name = "copy", .kind = K_COPY, .n = dram, .warm = 1, .windows = 1,
                              .phase = PHASE_DRAM, .result = &pt->copy};
    specs[n++] = (probe_spec){.name = "triad", .kind = K_TRIAD, .n = dram, .warm = 1,
                              .windows = 1, .phase = PHASE_DRAM, .result = &pt->triad};
    return n;
}

/* Measures one phase of one point: calibrates its probes, then runs their trials round-robin
 * (probe 1, probe 2, ..., probe 1, ...) and keeps each probe's best. The phases: the compute
 * probes; each cache level's read alone, L1 to L3; the DRAM probes (enum above). Every point's
 * phase runs before any point's next one (ridge_roofline_measure). The cache levels take turns
 * no more: after the L3 trial had streamed its 8 MiB, an Intel Xeon VM's L2 read of 1 MiB ran
 * at 159-167 GB/s after the 3 warm passes, against 178-183 with only L2 trials (the L2 keeps
 * the streamed lines for a while and gives the new ones their ways only as they are read
 * again), and the roof's L2 was 158-163 against the independent probe's 176-186
 * (docs/PERFORMANCE.md, session 24). The DRAM phase comes last: copy and triad leave the L3
 * full of dirty lines, and every L2 victim entering the L3 then evicts one to DRAM (a
 * standalone test: 2 MiB read from L3 at 65-76 GB/s, 48-60 right after a 128 MiB triad, back
 * to 76 only after 60 warm passes). Interleaved with the DRAM probes, the L3 read ran 20-35%
 * under the independent probe; after the 1-thread point's DRAM phase, the 2-thread L3 read ran
 * 93-120 GB/s against 134-139 without it (session 4). Successive trials of a cache level read
 * different arrays (windows): here the L1 read rate differed by up to 1.6x between processes
 * (200 vs 125 GB/s) yet stayed put within one, which points at the array's address (Zen's L1
 * way predictor tags lines by linear address); one fixed array could then report a low roof
 * every time. */
static void measure_phase(ridge_ctx *ctx, probe_job *j, int nth, const plan *p,
                          probe_spec *specs, int nspecs, int phase)
{
    for (int i = 0; i < nspecs; i++)
        if (specs[i].phase == phase) *specs[i].result = calibrate(ctx, j, nth, p, &specs[i]);
    for (int t = 1; t < (phase == PHASE_DRAM ? p->dram_trials : p->trials); t++)
        for (int i = 0; i < nspecs; i++) {
            if (specs[i].phase != phase) continue;
            double ops;
            load_spec(j, &specs[i]);
            j->window = specs[i].windows > 1 ? (size_t)t % specs[i].windows : 0;
            double sec = trial(ctx, j, nth, &ops);
            *specs[i].result = fmax(*specs[i].result, ops / sec * 1e-9);
        }
    for (int i = 0; i < nspecs; i++)
        if (specs[i].phase == phase)
            note(p, "%d thread%s: %-10s %8.1f %s", nth, nth > 1 ? "s" : "", specs[i].name,
                 *specs[i].result, specs[i].kind == K_COMPUTE ? "G/s" : "GB/s");
}

ridge_status ridge_roofline_measure(ridge_ctx *ctx, int flags, ridge_roofline *out)
{
    if (!ctx || !out) return ridge_error(RIDGE_EINVAL, "roofline_measure: NULL argument");
    uint64_t start = ridge_time_ns();
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    int threads = ridge_ctx_threads(ctx);
    int has_avx2 = ridge_cpu_supports(cpu, RIDGE_ISA_AVX2);
    int has_avx512 = ridge_cpu_supports(cpu, RIDGE_ISA_AVX512);
    ridge_roofline r;
    memset(&r, 0, sizeof r);
    r.version = RIDGE_ROOFLINE_VERSION;
    snprintf(r.cpu, sizeof r.cpu, "%s", cpu->brand);
    r.threads = threads;
    r.l1d = cpu->l1d;
    r.l2 = cpu->l2;
    r.l3_usable = cpu->l3_usable;
    r.quick = (flags & RIDGE_ROOFLINE_QUICK) != 0;

    /* the thread counts: every count up to 8, then powers of two, then all */
    int counts[RIDGE_ROOFLINE_MAX_POINTS], ncounts = 0;
    for (int t = 1; t <= threads && ncounts < RIDGE_ROOFLINE_MAX_POINTS - 1; t = t < 8 ? t + 1 : 2 * t)
        if (t < threads) counts[ncounts++] = t;
    counts[ncounts++] = threads;

    plan p = {0.002, 40, 20, (flags & RIDGE_ROOFLINE_VERBOSE) != 0};
    if (r.quick) p.target = 0.001, p.trials = 8, p.dram_trials = 3;

    /* the arrays: the DRAM-sized ones, then 8 windows of the largest L3 array (the one of one
     * thread) for every thread, then 8 of the L2 array for every thread (the L1 ones too) */
    size_t dram_bytes = RIDGE_MAX(4 * r.l3_usable, (size_t)64 << 20);
    size_t dram_floats = floats_for(dram_bytes) + (size_t)threads * RIDGE_PROBE_BLOCK;
    size_t l3_floats = 8 * floats_for(l3_bytes_each(&r, 1)) * (size_t)threads;
    size_t small_floats = 8 * floats_for(r.l2 / 2) * (size_t)threads;
    size_t nfloats = dram_floats + l3_floats + small_floats;
    ridge_status st = RIDGE_OK;
    probe_job *j = ridge_calloc(1, sizeof *j);
    float *a = ridge_malloc(nfloats * sizeof(float)), *b = ridge_malloc(nfloats * sizeof(float)),
          *c = ridge_malloc(nfloats * sizeof(float));
    struct probe_out *pout = ridge_calloc((size_t)threads, sizeof *pout);
    if (!j || !a || !b || !c || !pout) {
        st = ridge_error(RIDGE_ENOMEM, "roofline_measure: cannot allocate 3 x %zu MiB",
                         nfloats * sizeof(float) >> 20);
        goto out_free;
    }
    for (size_t i = 0; i < nfloats; i++) a[i] = 1.0f, b[i] = 2.0f, c[i] = 0.5f;
    j->a = a, j->b = b, j->c = c, j->out = pout;

    j->read = has_avx512 ? ridge_probe_read__avx512
            : has_avx2   ? ridge_probe_read__avx2
                         : ridge_probe_read__scalar;
    j->copy = has_avx512 ? ridge_probe_copy__avx512
            : has_avx2   ? ridge_probe_copy__avx2
                         : ridge_probe_copy__scalar;
    j->triad = has_avx512 ? ridge_probe_triad__avx512
             : has_avx2   ? ridge_probe_triad__avx2
                          : ridge_probe_triad__scalar;
    probe_spec specs[RIDGE_ROOFLINE_MAX_POINTS][RIDGE_PEAK_COUNT + 6];
    int nspecs[RIDGE_ROOFLINE_MAX_POINTS];
    for (int i = 0; i < ncounts; i++) {
        memset(&r.points[i], 0, sizeof r.points[i]);
        r.points[i].threads = counts[i];
        nspecs[i] = make_specs(cpu, &r, counts[i], floats_for(dram_bytes), dram_floats,
                               l3_floats, small_floats, &r.points[i], specs[i]);
    }
    r.npoints = ncounts;
    for (int phase = 0; phase < PHASE_COUNT; phase++) /* every point's phase, then the next */
        for (int i = 0; i < ncounts; i++)
            measure_phase(ctx, j, counts[i], &p, specs[i], nspecs[i], phase);

    r.seconds = (double)(ridge_time_ns() - start) * 1e-9;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(r.measured_at, sizeof r.measured_at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    *out = r;
out_free:
    ridge_free(pout);
    ridge_free(c);
    ridge_free(b);
    ridge_free(a);
    ridge_free(j);
    return st;
}
