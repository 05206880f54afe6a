/* An independent check of `ridge roofline` (label full): the same quantities measured by a
 * second, separately written probe in the same run, compared within 10% (the rows that stream
 * from DRAM: within ridge's own run-to-run spread, see tolerance()), plus a repeatability
 * check (two ridge measurements' peaks within 5%).
 *
 * How this probe differs from src/perf, on purpose:
 *   - compute loops are inline assembly (not intrinsics), with zeroed registers;
 *   - memory loops are GCC vector extensions under target attributes;
 *   - threads are plain pthreads behind a pthread barrier (not ridge's pool), created per
 *     trial and pinned to distinct CPUs when there are several;
 *   - each thread runs for a fixed time (2 ms, checking the clock) instead of a calibrated
 *     amount of work; the rate is the work of all threads over the first start to last end.
 * What it shares: the definitions (FLOP per instruction, bytes counted once per array, array
 * sizes L1d/2, L2/2, 4 x L2 for L3 (at most L3usable/2 shared, at least 2 x L2), 4 x L3usable
 * shared for DRAM, cache-level arrays placed after the DRAM ones), which it takes from the
 * profile's cache sizes.
 *
 * The machine is shared, and noise only ever lowers a rate; both sides estimate a maximum.
 * So when a comparison fails, both sides are measured again (up to 3 attempts) and each side
 * keeps its best value over the attempts; each attempt's table is printed. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "test.h"

#define TRIAL_S 0.002
#define TRIALS 40
#define MAX_T 64

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- compute loops: n iterations, returning the operations done ---------------------------- */

#define R12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define R14(X) R12(X) X(12) X(13)
#define XCLOB "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", \
              "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"

#define ZERO_Y(j) "vxorps %%ymm" #j ", %%ymm" #j ", %%ymm" #j "\n\t"
#define ZERO16_Y R14(ZERO_Y) ZERO_Y(14) ZERO_Y(15)
/* 14 chains of multiply then add, all multiplies first: a chain's mul + add take 6 cycles
 * (3 + 3) on Zen 3, so 12 chains would exactly fill its 2 mul + 2 add pipes with no slack
 * (and measured ~10% under); 14 leave room for imperfect scheduling. The legacy-SSE loop
 * starts after vzeroupper: with the upper halves left dirty by the VEX zeroing, an Intel
 * Xeon VM ran it at 10.0-11.1 GFLOP/s against ridge's 11.4-11.9 (session 24). */
#define MUL_S(j) "mulss %%xmm14, %%xmm" #j "\n\t"
#define ADD_S(j) "addss %%xmm15, %%xmm" #j "\n\t"
static double ops_scalar(uint64_t n)
{
    __asm__ volatile(ZERO16_Y "vzeroupper\n\t1:\n\t" R14(MUL_S) R14(ADD_S) "dec %0\n\tjnz 1b"
                     : "+r"(n) : : XCLOB, "cc");
    return 14.0 * 2;
}

#define FMA_Y(j) "vfmadd231ps %%ymm12, %%ymm13, %%ymm" #j "\n\t"
static double ops_avx2(uint64_t n)
{
    __asm__ volatile(R14(ZERO_Y) "1:\n\t" R12(FMA_Y) "dec %0\n\tjnz 1b\n\tvzeroupper"
                     : "+r"(n) : : XCLOB, "cc");
    return 12.0 * 8 * 2;
}

#define ZERO_Z(j) "vpxord %%zmm" #j ", %%zmm" #j ", %%zmm" #j "\n\t"
#define FMA_Z(j) "vfmadd231ps %%zmm14, %%zmm15, %%zmm" #j "\n\t"
#define ZERO16_Z R14(ZERO_Z) ZERO_Z(14) ZERO_Z(15)
static double ops_avx512(uint64_t n)
{
    __asm__ volatile(ZERO16_Z "1:\n\t" R14(FMA_Z) "dec %0\n\tjnz 1b\n\tvzeroupper"
                     : "+r"(n) : : XCLOB, "cc");
    return 14.0 * 16 * 2;
}

#define DPBUSD_Z(j) "vpdpbusd %%zmm14, %%zmm15, %%zmm" #j "\n\t"
static double ops_vnni(uint64_t n)
{
    __asm__ volatile(ZERO16_Z "1:\n\t" R14(DPBUSD_Z) "dec %0\n\tjnz 1b\n\tvzeroupper"
                     : "+r"(n) : : XCLOB, "cc");
    return 14.0 * 16 * 4 * 2;
}

#define DPBF16_Z(j) "vdpbf16ps %%zmm14, %%zmm15, %%zmm" #j "\n\t"
static double ops_bf16(uint64_t n)
{
    __asm__ volatile(ZERO16_Z "1:\n\t" R14(DPBF16_Z) "dec %0\n\tjnz 1b\n\tvzeroupper"
                     : "+r"(n) : : XCLOB, "cc");
    return 14.0 * 16 * 2 * 2;
}

/* ---- memory loops: `passes` passes, returning the bytes counted ---------------------------- */

typedef float v8 __attribute__((vector_size(32), aligned(32)));
typedef float v16 __attribute__((vector_size(64), aligned(64)));
static volatile float sink;

/* read keeps its 8 accumulators over all the passes: folding them and returning after every
 * pass (64 iterations for the 16 KiB L1 array) cost it 12-22% of the L1 and L2 rates */
#define MEM_LOOPS(V, W, TGT)                                                                  \
    __attribute__((target(TGT))) static double read_##V(float *a, float *b, float *c, size_t n, \
                                                        size_t passes)                       \
    {                                                                                         \
        (void)b, (void)c;                                                                     \
        V s[8] = {0};                                                                         \
        for (size_t p = 0; p < passes; p++)                                                   \
            for (size_t i = 0; i < n; i += 8 * W)                                             \
                for (int j = 0; j < 8; j++) s[j] += *(const V *)(a + i + j * W);               \
        V t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));              \
        sink = t[0];                                                                          \
        return 4.0 * (double)n * (double)passes;                                              \
    }                                                                                         \
    __attribute__((target(TGT))) static double copy_##V(float *a, float *b, float *c, size_t n, \
                                                        size_t passes)                       \
    {                                                                                         \
        (void)b;                                                                              \
        for (size_t p = 0; p < passes; p++)                                                   \
            for (size_t i = 0; i < n; i += W) *(V *)(c + i) = *(const V *)(a + i);           \
        return 8.0 * (double)n * (double)passes;                                              \
    }                                                                                         \
    __attribute__((target(TGT))) static double triad_##V(float *a, float *b, float *c, size_t n, \
                                                         size_t passes)                      \
    {                                                                                         \
        for (size_t p = 0; p < passes; p++)                                                   \
            for (size_t i = 0; i < n; i += W)                                                 \
                *(V *)(a + i) = *(const V *)(b + i) + 3.0f * *(const V *)(c + i);           \
        return 12.0 * (double)n * (double)passes;                                             \
    }
MEM_LOOPS(v8, 8, "avx2,fma")
MEM_LOOPS(v16, 16, "avx512f")

/* ---- threads --------------------------------------------------------------------------------- */

typedef struct run {
    double (*compute)(uint64_t); /* or NULL for memory */
    double (*mem)(float *, float *, float *, size_t, size_t);
    float *a, *b, *c;
    size_t n;       /* floats per thread */
    int windows;    /* cache levels: trial t reads copy t % windows of the arrays */
    size_t cache0;  /* where the cache levels' arrays start, in floats (after the DRAM ones) */
    size_t base;    /* this trial's copy, in floats */
    int nth;        /* threads in this trial */
    pthread_barrier_t barrier;
    double start[MAX_T], end[MAX_T], ops[MAX_T];
} run;

typedef struct worker {
    run *r;
    int ith;
} worker;

/* Pins the calling thread to the ith CPU this process may use (multi-thread trials only: left
 * to the scheduler, two fresh threads were seen sharing one CPU for a whole trial). */
static void pin(int ith, cpu_set_t *old)
{
    cpu_set_t allowed, one;
    if (sched_getaffinity(0, sizeof allowed, &allowed)) return;
    pthread_getaffinity_np(pthread_self(), sizeof *old, old);
    for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed) && k++ == ith) {
            CPU_ZERO(&one);
            CPU_SET(c, &one);
            pthread_setaffinity_np(pthread_self(), sizeof one, &one);
            return;
        }
}

static void *work(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    cpu_set_t old;
    CPU_ZERO(&old);
    if (r->nth > 1) pin(w->ith, &old);
    size_t off = r->base + (size_t)w->ith * r->n;
    /* a cache level's array is read once before the clock starts: the trial must measure the
     * level, not the first pass's misses to the level below */
    if (r->mem && r->windows > 1) r->mem(r->a + off, r->b + off, r->c + off, r->n, 1);
    pthread_barrier_wait(&r->barrier);
    /* between clock reads: 4096 iterations, or passes over at least 1 MiB (reading the clock
     * after every 16 KiB pass would cost a third of the L1 rate) */
    size_t passes = r->compute || r->n * 4 >= (1 << 20) ? 1 : (1 << 20) / (r->n * 4);
    double t0 = now(), t, ops = 0;
    do {
        if (r->compute) ops += r->compute(4096) * 4096;
        else ops += r->mem(r->a + off, r->b + off, r->c + off, r->n, passes);
        t = now();
    } while (t - t0 < TRIAL_S);
    r->start[w->ith] = t0, r->end[w->ith] = t, r->ops[w->ith] = ops;
    if (r->nth > 1 && w->ith == 0) pthread_setaffinity_np(pthread_self(), sizeof old, &old);
    return NULL;
}

/* Best of TRIALS trials on nth threads, in 1e9 per second. A trial's rate is all threads'
 * work over the span from the first start to the last end: the threads must really have run
 * at the same time to score n times one thread. */
static double measure(run *r, int nth)
{
    double best = 0;
    for (int trial = 0; trial < TRIALS; trial++) {
        pthread_t th[MAX_T];
        worker w[MAX_T];
        r->base = r->windows > 1 ? r->cache0 + (size_t)(trial % r->windows) * (size_t)nth * r->n : 0;
        r->nth = nth;
        pthread_barrier_init(&r->barrier, NULL, (unsigned)nth);
        for (int i = 0; i < nth; i++) {
            w[i] = (worker){r, i};
            if (i) pthread_create(&th[i], NULL, work, &w[i]);
        }
        work(&w[0]);
        for (int i = 1; i < nth; i++) pthread_join(th[i], NULL);
        pthread_barrier_destroy(&r->barrier);
        double t0 = r->start[0], t1 = r->end[0], ops = 0;
        for (int i = 0; i < nth; i++) {
            t0 = fmin(t0, r->start[i]);
            t1 = fmax(t1, r->end[i]);
            ops += r->ops[i];
        }
        best = fmax(best, ops / (t1 - t0));
    }
    return best * 1e-9;
}

static size_t floats_of(size_t bytes)
{
    size_t n = bytes / 4 / 256 * 256;
    return n ? n : 256;
}

static size_t dram_floats(size_t l3) { return floats_of(fmax(4.0 * l3, 64 << 20)); }
static size_t l3_floats(size_t l2, size_t l3, int nth)
{
    return floats_of(fmax(fmin(l3 / 2 / (size_t)nth, 4.0 * l2), 2.0 * l2));
}

/* Each side's best so far, by point and row, and the lowest of ridge's own values (the rows
 * that stream from DRAM are compared within ridge's own run-to-run spread: below). */
#define MAX_ROWS (RIDGE_PEAK_COUNT + 6)
static double best_ridge[RIDGE_ROOFLINE_MAX_POINTS][MAX_ROWS];
static double best_mine[RIDGE_ROOFLINE_MAX_POINTS][MAX_ROWS];
static double low_ridge[RIDGE_ROOFLINE_MAX_POINTS][MAX_ROWS];
static double low_mine[RIDGE_ROOFLINE_MAX_POINTS][MAX_ROWS];

/* The tolerance of a row. 10%, except for the rows that stream from DRAM (DRAM read, copy,
 * triad): the memory is shared with the host's other tenants, and ridge's own 1-thread DRAM
 * read was measured at 15.9, 17.3, 17.8 and 22.1 GB/s in four runs within minutes of each
 * other (2026-12-01, Zen 4 VM), this probe's 2-thread copy at 31.0, 31.8 and 40.9 in three
 * attempts, so the two cannot be held to agree within 10%. Those rows get the larger of the
 * two sides' own spreads (best over lowest value, over the attempts so far) plus 5 points, at
 * most 50%: still well below the factor of 2 or more that measuring the wrong level (an array
 * left in the L3, the zero page) gives. */
static double tolerance(int dram_row, const double low[2], const double best[2])
{
    if (!dram_row) return 0.10;
    double spread = fmax(best[0] / low[0], best[1] / low[1]) - 1;
    return fmin(0.50, fmax(0.10, spread + 0.05));
}

/* One attempt: measures with ridge, then independently, folds both into the best values and
 * prints the table; returns the number of disagreements. *roof gets ridge's profile. */
static int attempt(ridge_ctx *ctx, float *a, float *b, float *c, size_t cache0, ridge_roofline *roof)
{
    if (ridge_roofline_measure(ctx, 0, roof)) {
        fprintf(stderr, "measure: %s\n", ridge_last_error());
        return 99;
    }
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    int avx512 = ridge_cpu_supports(cpu, RIDGE_ISA_AVX512);
    double (*const compute[RIDGE_PEAK_COUNT])(uint64_t) = {
        ops_scalar, ridge_cpu_supports(cpu, RIDGE_ISA_AVX2) ? ops_avx2 : NULL,
        avx512 ? ops_avx512 : NULL, avx512 && cpu->avx512_vnni ? ops_vnni : NULL,
        avx512 && cpu->avx512_bf16 ? ops_bf16 : NULL};
    int bad = 0;
    printf("%-8s %7s %10s %12s %7s\n", "metric", "threads", "ridge", "independent", "diff");
    for (int i = 0; i < roof->npoints; i++) {
        const ridge_roofline_point *p = &roof->points[i];
        int nth = p->threads;
        if (nth > MAX_T) break;
        run r = {0};
        r.a = a, r.b = b, r.c = c, r.cache0 = cache0;
        struct {
            const char *name;
            double ridge, mine;
        } rows[MAX_ROWS];
        int nrows = 0;
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++) {
            if (!compute[k]) {
                CHECKF(p->peak[k] == 0, "%s reported on a CPU without it", ridge_roofline_peak_name(k));
                printf("SKIP: %s not supported by this CPU\n", ridge_roofline_peak_name(k));
                continue;
            }
            r.compute = compute[k];
            rows[nrows].name = ridge_roofline_peak_name(k);
            rows[nrows].ridge = p->peak[k];
            rows[nrows++].mine = measure(&r, nth);
        }
        r.compute = NULL;
        double (*rd)(float *, float *, float *, size_t, size_t) = avx512 ? read_v16 : read_v8;
        const size_t sizes[RIDGE_LEVEL_COUNT] = {
            floats_of(roof->l1d / 2), floats_of(roof->l2 / 2),
            l3_floats(roof->l2, roof->l3_usable, nth), dram_floats(roof->l3_usable) / nth};
        for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) {
            r.mem = rd;
            r.n = sizes[l];
            r.windows = l == RIDGE_LEVEL_DRAM ? 1 : 4; /* a peak over array addresses too */
            rows[nrows].name = ridge_roofline_level_name(l);
            rows[nrows].ridge = p->read[l];
            rows[nrows++].mine = measure(&r, nth);
        }
        r.n = sizes[RIDGE_LEVEL_DRAM];
        r.windows = 1;
        r.mem = avx512 ? copy_v16 : copy_v8;
        rows[nrows].name = "copy";
        rows[nrows].ridge = p->copy;
        rows[nrows++].mine = measure(&r, nth);
        r.mem = avx512 ? triad_v16 : triad_v8;
        rows[nrows].name = "triad";
        rows[nrows].ridge = p->triad;
        rows[nrows++].mine = measure(&r, nth);
        for (int j = 0; j < nrows; j++) {
            const int dram_row = j >= nrows - 3; /* DRAM read, copy, triad */
            low_ridge[i][j] = low_ridge[i][j] > 0 ? fmin(low_ridge[i][j], rows[j].ridge)
                                                  : rows[j].ridge;
            low_mine[i][j] = low_mine[i][j] > 0 ? fmin(low_mine[i][j], rows[j].mine)
                                                : rows[j].mine;
            rows[j].ridge = best_ridge[i][j] = fmax(best_ridge[i][j], rows[j].ridge);
            rows[j].mine = best_mine[i][j] = fmax(best_mine[i][j], rows[j].mine);
            double diff = rows[j].ridge / rows[j].mine - 1;
            const double low[2] = {low_ridge[i][j], low_mine[i][j]},
                         best[2] = {best_ridge[i][j], best_mine[i][j]};
            double tol = tolerance(dram_row, low, best);
            int ok = fabs(diff) <= tol;
            bad += !ok;
            printf("%-8s %7d %10.1f %12.1f %+6.1f%%  within %.0f%%%s\n", rows[j].name, nth,
                   rows[j].ridge, rows[j].mine, 100 * diff, 100 * tol, ok ? "" : "  <- over");
        }
    }
    return bad;
}

int main(void)
{
    ridge_ctx *ctx = test_ctx(0, RIDGE_ISA_AUTO);
    if (!ctx) return test_finish("test-roofline-probe");
    if (!ridge_cpu_supports(ridge_ctx_cpu(ctx), RIDGE_ISA_AVX2)) {
        SKIP("the independent probe needs AVX2");
        ridge_ctx_destroy(ctx);
        return test_finish("test-roofline-probe");
    }
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    size_t cache0 = dram_floats(cpu->l3_usable) + 256 * (size_t)ridge_ctx_threads(ctx);
    size_t nf = cache0 + 4 * l3_floats(cpu->l2, cpu->l3_usable, 1) * (size_t)ridge_ctx_threads(ctx);
    float *a = ridge_malloc(nf * 4), *b = ridge_malloc(nf * 4), *c = ridge_malloc(nf * 4);
    if (!a || !b || !c) {
        CHECKF(0, "cannot allocate 3 x %zu MiB", nf * 4 >> 20);
        return test_finish("test-roofline-probe");
    }
    for (size_t i = 0; i < nf; i++) a[i] = 1, b[i] = 2, c[i] = 0.5f;

    ridge_roofline prev, again;
    int bad = 1;
    for (int n = 1; n <= 3 && bad; n++) {
        printf("attempt %d: ridge roofline vs the independent probe (best so far of each)\n", n);
        bad = attempt(ctx, a, b, c, cache0, &prev);
    }
    CHECKF(bad == 0, "%d quantities differ by more than their tolerance in every attempt", bad);

    /* repeatability: the next ridge measurement's peaks within 5% of the previous one's */
    int worse = 1;
    for (int n = 1; n <= 3 && worse; n++) {
        CHECK_OK(ridge_roofline_measure(ctx, 0, &again));
        worse = 0;
        printf("repeat %d: peaks, previous run vs this run\n", n);
        for (int i = 0; i < prev.npoints; i++)
            for (int k = 0; k < RIDGE_PEAK_COUNT; k++) {
                double x = prev.points[i].peak[k], y = again.points[i].peak[k];
                if (!(x > 0)) continue;
                int ok = fabs(y / x - 1) <= 0.05;
                worse += !ok;
                printf("  %-10s %2d threads %8.1f %8.1f %+5.1f%%%s\n", ridge_roofline_peak_name(k),
                       prev.points[i].threads, x, y, 100 * (y / x - 1), ok ? "" : "  <- over 5%");
            }
        prev = again;
    }
    CHECKF(worse == 0, "%d peaks differ by more than 5%% between runs in every attempt", worse);
    ridge_free(a);
    ridge_free(b);
    ridge_free(c);
    ridge_ctx_destroy(ctx);
    return test_finish("test-roofline-probe");
}
