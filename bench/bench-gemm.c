/* ridge bench gemm: SGEMM throughput over the shapes the models use, against the machine's
 * measured roof and, with --peers, against OpenBLAS, BLIS and oneDNN in the same process.
 *
 * % of roof is ridge's median against the roof `ridge roofline` measured (include/ridge/perf.h:
 * the FMA peak, or bandwidth x intensity where that is lower) at the same thread count.
 *
 * Every implementation's result is first checked against a double-precision dot product at
 * sampled entries (bound: (k + 2) eps sum |a||b|). Then the implementations are timed in
 * interleaved rounds (ridge, peer 1, peer 2, ..., ridge, ...) so that machine noise hits them
 * alike; each cell is the median over rounds (the table also gives ridge's best). alpha = 1,
 * beta = 0, row-major, minimal leading dimensions.
 *
 * The FMA peak drifts on a shared machine (another tenant, a clock change), so the rounds also
 * time the roofline's FMA probe (src/perf/probe.h) on the same threads, for about as long as
 * one ridge sample: pct_fma is ridge's median against that loop's median in the same run,
 * while pct_roof judges against the peak `ridge roofline` measured earlier.
 *
 * Peers (built with -DRIDGE_BENCH_PEERS=ON) are opened with dlopen(RTLD_LOCAL) from the paths
 * CMake found: OpenBLAS and BLIS both export cblas_sgemm/sgemm_, and loading each privately
 * keeps them apart. OpenBLAS picks its kernels in a constructor that reads OPENBLAS_CORETYPE,
 * so this process unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE before opening it (measuring
 * OpenBLAS at its best on this CPU) and reports the core it chose. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "perf/probe.h"

#ifdef RIDGE_HAVE_PEERS
#include <dlfcn.h>
#endif
#ifdef RIDGE_HAVE_OPENMP
#include <omp.h>
#endif

const char ridge_bench_gemm_summary[] =
    "SGEMM GFLOP/s over model shapes vs the measured roof, and vs OpenBLAS/BLIS/oneDNN (--peers)";

typedef struct gshape {
    const char *name;
    char ta, tb; /* 'N' or 'T' */
    size_t m, n, k;
    int big;     /* left out by --quick */
} gshape;

/* GPT-2 linear layers store W as (out, in) (llm.c, PyTorch): forward y = x W^T is NT, the
 * input gradient dx = dy W is NN, the weight gradient dW = dy^T x is TN. Batch B*T = 256. */
static const gshape shapes[] = {
    {"square", 'N', 'N', 1024, 1024, 1024, 0},
    {"square", 'N', 'N', 2048, 2048, 2048, 0},
    {"square", 'N', 'N', 4096, 4096, 4096, 1},
    {"gpt2 attn.proj fwd", 'N', 'T', 256, 768, 768, 0},
    {"gpt2 qkv fwd", 'N', 'T', 256, 2304, 768, 0},
    {"gpt2 fc fwd", 'N', 'T', 256, 3072, 768, 0},
    {"gpt2 fc.proj fwd", 'N', 'T', 256, 768, 3072, 0},
    {"gpt2 lm_head fwd", 'N', 'T', 256, 50304, 768, 0},
    {"gpt2 qkv dx", 'N', 'N', 256, 768, 2304, 0},
    {"gpt2 qkv dW", 'T', 'N', 2304, 768, 256, 0},
    {"gpt2 fc.proj dx", 'N', 'N', 256, 3072, 768, 0},
    {"gpt2 fc.proj dW", 'T', 'N', 768, 3072, 256, 0},
    {"gpt2 lm_head dx", 'N', 'N', 256, 768, 50304, 1},
    {"gpt2 lm_head dW", 'T', 'N', 50304, 768, 256, 1},
    {"gpt2 attn.proj NN", 'N', 'N', 256, 768, 768, 0},
    {"conv 1x1 56x56", 'N', 'N', 64, 3136, 64, 0},
    {"conv 3x3 im2col", 'N', 'N', 64, 3136, 576, 0},
    {"dense batch 1", 'N', 'T', 1, 128, 784, 0},
    {"dense batch 1", 'N', 'N', 1, 128, 784, 0},
    {"dense batch 32", 'N', 'T', 32, 128, 784, 0},
    {"dense batch 32", 'N', 'N', 32, 128, 784, 0},
    {"dense 10 classes", 'N', 'T', 64, 10, 128, 0}, /* the MLP's output layer, batch 64 */
    {"dense 10 classes dx", 'N', 'N', 64, 128, 10, 0}, /* its backward: k = 10 */
    {"dense 10 classes dW", 'T', 'N', 10, 128, 64, 0},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

enum { I_RIDGE, I_OPENBLAS, I_BLIS, I_DNNL, I_COUNT };
static const char *const impl_name[I_COUNT] = {"ridge", "openblas", "blis", "onednn"};

/* ---- peers ---------------------------------------------------------------------------------- */

typedef void (*cblas_sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                               const float *, int, float, float *, int);
typedef void (*bli_sgemm_fn)(int, int, int64_t, int64_t, int64_t, float *, float *, int64_t,
                             int64_t, float *, int64_t, int64_t, float *, float *, int64_t,
                             int64_t);
typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *,
                             int64_t, const float *, int64_t, float, float *, int64_t);

static struct {
    int have[I_COUNT];
    cblas_sgemm_fn cblas_sgemm;
    void (*openblas_threads)(int);
    char *(*openblas_core)(void);
    bli_sgemm_fn bli_sgemm;
    void (*bli_threads)(int64_t);
    int (*bli_arch)(void);
    char *(*bli_arch_string)(int);
    dnnl_sgemm_fn dnnl_sgemm;
} peer;

#ifdef RIDGE_HAVE_PEERS
static void *open_sym(void *lib, const char *name, int *ok)
{
    void *f = lib ? dlsym(lib, name) : NULL;
    if (!f) *ok = 0;
    return f;
}
#endif /* RIDGE_HAVE_PEERS */

static void peers_open(const ridge_bench_opts *o)
{
    peer.have[I_RIDGE] = 1;
#ifdef RIDGE_HAVE_PEERS
#ifdef RIDGE_PEER_OPENBLAS
    {
        const char *ct = getenv("OPENBLAS_CORETYPE");
        if (ct) bench_note(o, "bench gemm: OPENBLAS_CORETYPE=%s unset for OpenBLAS's best", ct);
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv("OPENBLAS_L2_SIZE");
        void *lib = dlopen(RIDGE_PEER_OPENBLAS, RTLD_NOW | RTLD_LOCAL);
        int ok = lib != NULL;
        peer.cblas_sgemm = (cblas_sgemm_fn)open_sym(lib, "cblas_sgemm", &ok);
        peer.openblas_threads = (void (*)(int))open_sym(lib, "openblas_set_num_threads", &ok);
        peer.openblas_core = (char *(*)(void))open_sym(lib, "openblas_get_corename", &ok);
        peer.have[I_OPENBLAS] = ok;
        if (ok) bench_note(o, "bench gemm: OpenBLAS core: %s", peer.openblas_core());
        else bench_note(o, "bench gemm: OpenBLAS not usable: %s", dlerror());
    }
#endif /* RIDGE_PEER_OPENBLAS */
#ifdef RIDGE_PEER_BLIS
    {
        void *lib = dlopen(RIDGE_PEER_BLIS, RTLD_NOW | RTLD_LOCAL);
        int ok = lib != NULL;
        peer.bli_sgemm = (bli_sgemm_fn)open_sym(lib, "bli_sgemm", &ok);
        peer.bli_threads = (void (*)(int64_t))open_sym(lib, "bli_thread_set_num_threads", &ok);
        peer.bli_arch = (int (*)(void))open_sym(lib, "bli_arch_query_id", &ok);
        peer.bli_arch_string = (char *(*)(int))open_sym(lib, "bli_arch_string", &ok);
        peer.have[I_BLIS] = ok;
        if (ok) bench_note(o, "bench gemm: BLIS arch: %s", peer.bli_arch_string(peer.bli_arch()));
        else bench_note(o, "bench gemm: BLIS not usable: %s", dlerror());
    }
#endif /* RIDGE_PEER_BLIS */
#ifdef RIDGE_PEER_DNNL
    {
        void *lib = dlopen(RIDGE_PEER_DNNL, RTLD_NOW | RTLD_LOCAL);
        int ok = lib != NULL;
        peer.dnnl_sgemm = (dnnl_sgemm_fn)open_sym(lib, "dnnl_sgemm", &ok);
        peer.have[I_DNNL] = ok;
        if (!ok) bench_note(o, "bench gemm: oneDNN not usable: %s", dlerror());
    }
#endif /* RIDGE_PEER_DNNL */
#else
    bench_note(o, "bench gemm: built without peers (configure with -DRIDGE_BENCH_PEERS=ON)");
#endif /* RIDGE_HAVE_PEERS */
}

static void peers_set_threads(int n)
{
    if (peer.have[I_OPENBLAS]) peer.openblas_threads(n);
    if (peer.have[I_BLIS]) peer.bli_threads(n);
#ifdef RIDGE_HAVE_OPENMP
    omp_set_num_threads(n); /* oneDNN's runtime here is OpenMP (libgomp) */
#endif
}

/* ---- one case ------------------------------------------------------------------------------- */

typedef struct gcall {
    const gshape *s;
    int impl;
    ridge_ctx *ctx;
    const float *a, *b;
    float *c;
    size_t lda, ldb, ldc;
    int failed;
} gcall;

static void call(void *arg)
{
    gcall *g = arg;
    const gshape *s = g->s;
    int ta = s->ta == 'T', tb = s->tb == 'T';
    float one = 1.0f, zero = 0.0f;
    switch (g->impl) {
    case I_RIDGE:
        if (ridge_sgemm(g->ctx, ta ? RIDGE_TRANS : RIDGE_NO_TRANS, tb ? RIDGE_TRANS : RIDGE_NO_TRANS,
                        s->m, s->n, s->k, 1.0f, g->a, g->lda, g->b, g->ldb, 0.0f, g->c, g->ldc))
            g->failed = 1;
        break;
    case I_OPENBLAS:
        peer.cblas_sgemm(101 /* row major */, ta ? 112 : 111, tb ? 112 : 111, (int)s->m,
                         (int)s->n, (int)s->k, 1.0f, g->a, (int)g->lda, g->b, (int)g->ldb, 0.0f,
                         g->c, (int)g->ldc);
        break;
    case I_BLIS:
        /* general strides: row-major is row stride ld, column stride 1 */
        peer.bli_sgemm(ta ? 8 : 0, tb ? 8 : 0, (int64_t)s->m, (int64_t)s->n, (int64_t)s->k, &one,
                       (float *)g->a, (int64_t)g->lda, 1, (float *)g->b, (int64_t)g->ldb, 1,
                       &zero, g->c, (int64_t)g->ldc, 1);
        break;
    case I_DNNL:
        if (peer.dnnl_sgemm(s->ta, s->tb, (int64_t)s->m, (int64_t)s->n, (int64_t)s->k, 1.0f,
                            g->a, (int64_t)g->lda, g->b, (int64_t)g->ldb, 0.0f, g->c,
                            (int64_t)g->ldc))
            g->failed = 1;
        break;
    }
}

static uint64_t rng = 42;
static float frand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) * (1.0 / (1ull << 24)) - 0.5);
}

/* Checks 200 sampled entries of C against a double dot product. */
static int verify(const gcall *g)
{
    const gshape *s = g->s;
    uint64_t r = 7;
    for (int t = 0; t < 200; t++) {
        r = r * 6364136223846793005ull + 1;
        size_t i = (size_t)(r >> 33) % s->m, j = (size_t)(r >> 13) % s->n;
        double sum = 0, mag = 0;
        for (size_t p = 0; p < s->k; p++) {
            double x = g->a[s->ta == 'T' ? p * g->lda + i : i * g->lda + p];
            double y = g->b[s->tb == 'T' ? j * g->ldb + p : p * g->ldb + j];
            sum += x * y;
            mag += fabs(x * y);
        }
        double got = g->c[i * g->ldc + j];
        if (!(fabs(got - sum) <= (s->k + 2) * 1.2e-7 * mag + 1e-30)) {
            fprintf(stderr, "bench gemm: %s %zux%zux%zu %c%c: C[%zu][%zu] = %g, expected %g\n",
                    impl_name[g->impl], s->m, s->n, s->k, s->ta, s->tb, i, j, got, sum);
            return -1;
        }
    }
    return 0;
}

/* ---- the FMA loop: this run's peak --------------------------------------------------------- */

typedef struct fma_loop {
    ridge_ctx *ctx;
    int threads;
    ridge_probe_compute_fn probe;
    uint64_t iters; /* per thread and call */
    double ops;     /* all threads, per call */
} fma_loop;

static volatile float fma_sink;

static void fma_task(void *arg, int ith, int nth)
{
    fma_loop *f = arg;
    ridge_probe_result r = f->probe(f->iters);
    if (ith == 0) f->ops = r.ops * nth, fma_sink = r.sink;
}

static void fma_call(void *arg)
{
    fma_loop *f = arg;
    ridge_parallel_run(f->ctx, f->threads, fma_task, f);
}

/* The FMA probe of the context's ISA on `threads` threads, sized to last about `sec` a call. */
static void fma_loop_init(fma_loop *f, ridge_ctx *ctx, int threads, double sec)
{
    ridge_isa isa = ridge_ctx_isa(ctx);
    *f = (fma_loop){ctx, threads,
                    isa == RIDGE_ISA_AVX512 ? ridge_probe_fma__avx512
                    : isa == RIDGE_ISA_AVX2 ? ridge_probe_fma__avx2
                                            : ridge_probe_fma__scalar,
                    1000, 0};
    for (;;) { /* grow until a call lasts a tenth of `sec`, then scale */
        uint64_t t0 = ridge_time_ns();
        fma_call(f);
        double dt = (double)(ridge_time_ns() - t0) * 1e-9;
        if (dt >= sec / 10 || f->iters >= (1ull << 36)) {
            f->iters = (uint64_t)((double)f->iters * sec / (dt > 1e-9 ? dt : 1e-9)) + 1;
            return;
        }
        f->iters *= 4;
    }
}

/* ---- the run -------------------------------------------------------------------------------- */

static int bench_shape(const ridge_bench_opts *o, bench_table *t, const gshape *s,
                       ridge_ctx *ctx, int threads, const ridge_roofline *roof)
{
    size_t ar = s->ta == 'T' ? s->k : s->m, ac = s->ta == 'T' ? s->m : s->k;
    size_t br = s->tb == 'T' ? s->n : s->k, bc = s->tb == 'T' ? s->k : s->n;
    float *a = ridge_malloc(ar * ac * sizeof(float)), *b = ridge_malloc(br * bc * sizeof(float));
    float *c[I_COUNT] = {0};
    int rc = 0;
    if (!a || !b) rc = -1;
    for (int i = 0; i < I_COUNT && !rc; i++)
        if (peer.have[i] && (i == I_RIDGE || o->peers) &&
            !(c[i] = ridge_calloc(s->m * s->n, sizeof(float))))
            rc = -1;
    if (rc) {
        fprintf(stderr, "bench gemm: out of memory for %zux%zux%zu\n", s->m, s->n, s->k);
        goto out;
    }
    for (size_t i = 0; i < ar * ac; i++) a[i] = frand();
    for (size_t i = 0; i < br * bc; i++) b[i] = frand();
    gcall g[I_COUNT];
    double flop = 2.0 * s->m * s->n * s->k, est = 0;
    for (int i = 0; i < I_COUNT; i++) {
        g[i] = (gcall){s, i, ctx, a, b, c[i], ac, bc, s->n, 0};
        if (!c[i]) continue;
        uint64_t t0 = ridge_time_ns();
        call(&g[i]); /* warm-up, then check */
        double dt = (double)(ridge_time_ns() - t0) * 1e-9;
        if (i == I_RIDGE) est = dt;
        if (g[i].failed || verify(&g[i])) {
            fprintf(stderr, "bench gemm: %s gave a wrong result; not timed\n", impl_name[i]);
            if (i == I_RIDGE) rc = -1;
            ridge_free(c[i]);
            c[i] = NULL;
        }
    }
    if (rc) goto out;
    call(&g[I_RIDGE]); /* a second warm-up: the first paid for page faults */
    double target = o->quick ? 0.15 : 0.6;
    int rounds = (int)(target / (est > 1e-9 ? est : 1e-9));
    rounds = rounds < 3 ? 3 : rounds > 200 ? 200 : rounds;
    /* interleaved: every round times each implementation once, in batches long enough that
     * the clock's resolution does not matter, then the FMA loop (index I_COUNT) for about as
     * long; a sample is the time of one call */
    int per = est < 1e-3 ? (int)(1e-3 / (est > 1e-9 ? est : 1e-9)) + 1 : 1;
    fma_loop fma;
    fma_loop_init(&fma, ctx, threads, fmin(fmax(est * per, 2e-4), 0.2));
    void (*fn[I_COUNT + 1])(void *);
    void *arg[I_COUNT + 1];
    double *samples[I_COUNT + 1] = {0};
    for (int i = 0; i <= I_COUNT; i++) {
        fn[i] = i == I_COUNT ? fma_call : call;
        arg[i] = i == I_COUNT ? (void *)&fma : (void *)&g[i];
        if (i == I_COUNT || c[i]) samples[i] = malloc(rounds * sizeof(double));
    }
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i <= I_COUNT; i++) {
            if (!samples[i]) continue;
            const int reps = i == I_COUNT ? 1 : per;
            /* let the previous library's spinning workers (OpenMP, OpenBLAS, ridge's pool)
             * fall asleep so they do not steal the core from this one */
            if (threads > 1 && o->peers) {
                bench_quiesce(1000);
                if (i == I_DNNL) bench_omp_spread();
                BENCH_WAKE(fn[i](arg[i]));
            }
            uint64_t t0 = ridge_time_ns();
            for (int q = 0; q < reps; q++) fn[i](arg[i]);
            samples[i][r] = (double)(ridge_time_ns() - t0) * 1e-9 / reps;
        }
    bench_stats st[I_COUNT + 1];
    for (int i = 0; i <= I_COUNT; i++)
        if (samples[i]) st[i] = bench_summarize(samples[i], (size_t)rounds);
    char shape[64], name[64];
    snprintf(shape, sizeof shape, "%zux%zux%zu", s->m, s->n, s->k);
    snprintf(name, sizeof name, "%s %c%c", s->name, s->ta, s->tb);
    double gf = flop / st[I_RIDGE].median * 1e-9, best_peer = NAN;
    bench_val row[24];
    int nv = 0;
    row[nv++] = (bench_val){name, 0};
    row[nv++] = (bench_val){shape, 0};
    row[nv++] = (bench_val){NULL, threads};
    row[nv++] = (bench_val){NULL, gf};
    row[nv++] = (bench_val){NULL, flop / st[I_RIDGE].best * 1e-9};
    ridge_roofline_verdict v;
    double bytes = 4.0 * ((double)s->m * s->k + (double)s->k * s->n + (double)s->m * s->n);
    int judged = roof && !ridge_roofline_judge(roof, threads, ridge_roofline_peak_f32(ridge_ctx_isa(ctx)),
                                               flop, bytes, bytes, st[I_RIDGE].median, &v);
    row[nv++] = (bench_val){NULL, judged ? 100.0 * v.fraction : NAN};
    const double fma_gf = fma.ops / st[I_COUNT].median * 1e-9;
    row[nv++] = (bench_val){NULL, fma_gf};
    row[nv++] = (bench_val){NULL, 100.0 * gf / fma_gf};
    row[nv++] = (bench_val){NULL, flop / bytes};
    for (int i = 1; i < I_COUNT; i++) {
        double pg = c[i] ? flop / st[i].median * 1e-9 : NAN;
        row[nv++] = (bench_val){NULL, pg};
        row[nv++] = (bench_val){NULL, gf / pg};
        if (c[i] && !(pg <= best_peer)) best_peer = pg;
    }
    row[nv++] = (bench_val){NULL, gf / best_peer};
    bench_table_row(t, row);
    for (int i = 0; i <= I_COUNT; i++) free(samples[i]);
out:
    for (int i = 0; i < I_COUNT; i++) ridge_free(c[i]);
    ridge_free(a);
    ridge_free(b);
    return rc;
}

static void help(void)
{
    printf("usage: ridge bench gemm [--quick] [--peers] [--json] [--threads N] [--filter TEXT]\n"
           "                        [--shape MxNxK [--trans NN|NT|TN|TT]]\n\n"
           "Times ridge_sgemm (row-major C = op(A) op(B), alpha 1, beta 0) on square, GPT-2,\n"
           "convolution and dense-layer shapes at 1 thread and at --threads, after checking each\n"
           "result, with OpenBLAS, BLIS and oneDNN interleaved in the same rounds (--peers).\n"
           "Columns: median and best GFLOP/s, %% of the roof (ridge roofline's verdict for the\n"
           "product's FLOPs and bytes), the FMA loop's median GFLOP/s in the same rounds and\n"
           "ridge's median as %% of it (the peak now, not when `ridge roofline` ran), FLOP per\n"
           "byte, each peer's median GFLOP/s and ridge's speed over it, and over the best peer.\n"
           "--shape MxNxK times that product alone (C is M x N, the reduction K long), with\n"
           "--trans giving op(A) and op(B) (default NN; NT is a linear layer's y = x W^T).\n");
}

/* "MxNxK", each 1..2^20; prints a message and returns -1 if not. */
static int parse_shape(const char *v, gshape *s)
{
    unsigned long d[3];
    int used = 0;
    if (sscanf(v, "%lux%lux%lu%n", &d[0], &d[1], &d[2], &used) != 3 || v[used] ||
        !d[0] || !d[1] || !d[2] || d[0] > (1ul << 20) || d[1] > (1ul << 20) || d[2] > (1ul << 20)) {
        fprintf(stderr, "ridge bench gemm: --shape '%s': expected MxNxK, each 1..1048576\n", v);
        return -1;
    }
    s->m = d[0], s->n = d[1], s->k = d[2];
    return 0;
}

int ridge_bench_gemm(const ridge_bench_opts *o, int argc, char **argv)
{
    gshape custom = {"shape", 'N', 'N', 0, 0, 0, 0};
    const char *trans = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            return 0;
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (parse_shape(argv[++i], &custom)) return BENCH_USAGE;
        } else if (!strcmp(argv[i], "--trans") && i + 1 < argc) {
            trans = argv[++i];
            if (strlen(trans) != 2 || !strchr("NT", trans[0]) || !strchr("NT", trans[1])) {
                fprintf(stderr, "ridge bench gemm: --trans '%s': expected NN, NT, TN or TT\n",
                        trans);
                return BENCH_USAGE;
            }
            custom.ta = trans[0], custom.tb = trans[1];
        } else {
            fprintf(stderr, "ridge bench gemm: unknown option '%s' (see --help)\n", argv[i]);
            return BENCH_USAGE;
        }
    }
    if (trans && !custom.m) {
        fprintf(stderr, "ridge bench gemm: --trans needs --shape\n");
        return BENCH_USAGE;
    }
    static const bench_col cols[] = {
        {"case", BENCH_STR},        {"shape", BENCH_STR},  {"thr", BENCH_INT},
        {"gflops", BENCH_F1},       {"best", BENCH_F1},        {"pct_roof", BENCH_F1},
        {"fma_loop", BENCH_F1},     {"pct_fma", BENCH_F1},
        {"intensity", BENCH_F1},    {"openblas", BENCH_F1},     {"x_openblas", BENCH_F2},  {"blis", BENCH_F1},
        {"x_blis", BENCH_F2},       {"onednn", BENCH_F1},      {"x_onednn", BENCH_F2},
        {"x_best_peer", BENCH_F2},
    };
    if (o->peers) peers_open(o);
    else peer.have[I_RIDGE] = 1;
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    int counts[2] = {1, max_threads};
    int rc = 0;
    bench_table t;
    bench_table_begin(&t, o, "gemm: SGEMM GFLOP/s (median over interleaved rounds)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1) && !rc; ti++) {
        int n = counts[ti];
        ridge_ctx *ctx = bench_ctx(o, n, "gemm");
        if (!ctx) {
            rc = -1;
            break;
        }
        peers_set_threads(n);
        ridge_roofline roof;
        int have_roof = !ridge_roofline_for_ctx(ctx, 0, &roof);
        ridge_roofline_point pt;
        if (have_roof && !ridge_roofline_at(&roof, n, &pt))
            bench_note(o, "bench gemm: %d thread%s, %s (%s), roof: FMA peak %.1f GFLOP/s, L2 %.0f "
                       "GB/s (ridge roofline, %s)", n, n > 1 ? "s" : "",
                       ridge_isa_name(ridge_ctx_isa(ctx)), ridge_gemm_describe(ctx),
                       pt.peak[ridge_roofline_peak_f32(ridge_ctx_isa(ctx))], pt.read[RIDGE_LEVEL_L2],
                       roof.measured_at);
        else
            bench_note(o, "bench gemm: no roofline profile: %s", ridge_last_error());
        for (size_t si = 0; si < (custom.m ? 1 : NSHAPES) && !rc; si++) {
            const gshape *s = custom.m ? &custom : &shapes[si];
            if (o->quick && s->big) continue;
            if (o->filter && !strstr(s->name, o->filter)) continue;
            bench_note(o, "bench gemm: %s %zux%zux%zu %c%c, %d thread%s...", s->name, s->m, s->n,
                       s->k, s->ta, s->tb, n, n > 1 ? "s" : "");
            rc = bench_shape(o, &t, s, ctx, n, have_roof ? &roof : NULL);
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    return rc;
}
