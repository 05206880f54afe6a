/* ridge bench dense: the 784x128 dense layer (the seed's case study), whole-layer timings.
 *
 * Batch 1 forward with no activation, ReLU, tanh, sigmoid, and softmax (dense then a row
 * softmax), on one thread: the time is compared with what reading the layer's 401 KB of
 * weights costs (GB/s column) and with OpenBLAS's cblas_sgemv and oneDNN's dnnl_sgemm (m = 1)
 * doing only the matrix-vector product (no bias, no activation: a strict comparison). Batch
 * 32 and 256, forward (ReLU) and backward (ReLU: dz, dW, db, dx) on 1 and all threads, against
 * the peers' SGEMM calls for the same products (forward: x W^T; backward: dz^T x and dz W,
 * without the bias gradient or the activation).
 *
 * Every implementation's output is checked first against a double-precision reference at
 * sampled entries. Implementations are timed in interleaved rounds (ridge, peers, ridge, ...),
 * each round running enough calls to last ~0.2 ms; cells are medians over rounds (and ridge's
 * best). Peers are opened with dlopen as in bench-gemm.c (build with -DRIDGE_BENCH_PEERS=ON);
 * OPENBLAS_CORETYPE is unset in this process first so OpenBLAS picks its best kernel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef RIDGE_HAVE_PEERS
#include <dlfcn.h>
#endif
#ifdef RIDGE_HAVE_OPENMP
#include <omp.h>
#endif

const char ridge_bench_dense_summary[] =
    "the 784x128 dense layer: batch 1 forward with each activation, batch 32/256 forward and "
    "backward, vs OpenBLAS/oneDNN (--peers)";

enum { IC = 784, OC = 128 };
enum { I_RIDGE, I_OPENBLAS, I_DNNL, I_COUNT };

typedef struct dcase {
    const char *name;
    int backward;
    size_t B;
    ridge_epi_act act;
    int softmax;
} dcase;

static const dcase cases[] = {
    {"fwd none", 0, 1, RIDGE_EPI_NONE, 0},     {"fwd relu", 0, 1, RIDGE_EPI_RELU, 0},
    {"fwd tanh", 0, 1, RIDGE_EPI_TANH, 0},     {"fwd sigmoid", 0, 1, RIDGE_EPI_SIGMOID, 0},
    {"fwd softmax", 0, 1, RIDGE_EPI_NONE, 1},  {"fwd relu", 0, 32, RIDGE_EPI_RELU, 0},
    {"fwd relu", 0, 256, RIDGE_EPI_RELU, 0},   {"bwd relu", 1, 32, RIDGE_EPI_RELU, 0},
    {"bwd relu", 1, 256, RIDGE_EPI_RELU, 0},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- peers ---------------------------------------------------------------------------------- */

typedef void (*sgemv_fn)(int, int, int, int, float, const float *, int, const float *, int,
                         float, float *, int);
typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int,
                         const float *, int, float, float *, int);
typedef int (*dnnl_sgemm_fn)(char, char, int64_t, int64_t, int64_t, float, const float *,
                             int64_t, const float *, int64_t, float, float *, int64_t);
static struct {
    int have[I_COUNT];
    sgemv_fn sgemv;
    sgemm_fn sgemm;
    void (*openblas_threads)(int);
    dnnl_sgemm_fn dnnl_sgemm;
} peer;

static void peers_open(const ridge_bench_opts *o)
{
    peer.have[I_RIDGE] = 1;
    if (!o->peers) return;
#ifdef RIDGE_HAVE_PEERS
#ifdef RIDGE_PEER_OPENBLAS
    unsetenv("OPENBLAS_CORETYPE");
    void *lib = dlopen(RIDGE_PEER_OPENBLAS, RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        peer.sgemv = (sgemv_fn)dlsym(lib, "cblas_sgemv");
        peer.sgemm = (sgemm_fn)dlsym(lib, "cblas_sgemm");
        peer.openblas_threads = (void (*)(int))dlsym(lib, "openblas_set_num_threads");
        char *(*core)(void) = (char *(*)(void))dlsym(lib, "openblas_get_corename");
        peer.have[I_OPENBLAS] = peer.sgemv && peer.sgemm && peer.openblas_threads;
        if (core) bench_note(o, "bench dense: OpenBLAS core: %s", core());
    }
    if (!peer.have[I_OPENBLAS]) bench_note(o, "bench dense: OpenBLAS not usable");
#endif /* RIDGE_PEER_OPENBLAS */
#ifdef RIDGE_PEER_DNNL
    void *dl = dlopen(RIDGE_PEER_DNNL, RTLD_NOW | RTLD_LOCAL);
    if (dl) peer.dnnl_sgemm = (dnnl_sgemm_fn)dlsym(dl, "dnnl_sgemm");
    peer.have[I_DNNL] = peer.dnnl_sgemm != NULL;
    if (!peer.have[I_DNNL]) bench_note(o, "bench dense: oneDNN not usable");
#endif /* RIDGE_PEER_DNNL */
#else
    bench_note(o, "bench dense: built without peers (configure with -DRIDGE_BENCH_PEERS=ON)");
#endif /* RIDGE_HAVE_PEERS */
}

static void peers_threads(int n)
{
    if (peer.have[I_OPENBLAS]) peer.openblas_threads(n);
#ifdef RIDGE_HAVE_OPENMP
    omp_set_num_threads(n); /* oneDNN's runtime here is OpenMP */
#endif
}

/* ---- one call ------------------------------------------------------------------------------- */

typedef struct dcall {
    const dcase *c;
    ridge_ctx *ctx;
    float *x, *w, *b, *y, *dy, *dy0, *dx, *dw, *db;
    int failed;
} dcall;

static void run(dcall *d, int impl)
{
    const dcase *c = d->c;
    const int B = (int)c->B;
    switch (impl) {
    case I_RIDGE:
        if (!c->backward) {
            if (ridge_dense_forward(d->ctx, d->y, d->x, d->w, d->b, c->B, IC, OC, c->act) ||
                (c->softmax && ridge_softmax_f32(d->ctx, d->y, d->y, c->B, OC)))
                d->failed = 1;
        } else {
            memcpy(d->dy, d->dy0, c->B * OC * sizeof(float)); /* the backward overwrites dy */
            if (ridge_dense_backward(d->ctx, d->dx, d->dw, d->db, d->dy, d->x, d->w, d->y, c->B,
                                     IC, OC, c->act))
                d->failed = 1;
        }
        break;
    case I_OPENBLAS:
        if (!c->backward && B == 1)
            peer.sgemv(101, 111, OC, IC, 1.0f, d->w, IC, d->x, 1, 0.0f, d->y, 1);
        else if (!c->backward)
            peer.sgemm(101, 111, 112, B, OC, IC, 1.0f, d->x, IC, d->w, IC, 0.0f, d->y, OC);
        else {
            peer.sgemm(101, 112, 111, OC, IC, B, 1.0f, d->dy0, OC, d->x, IC, 0.0f, d->dw, IC);
            peer.sgemm(101, 111, 111, B, IC, OC, 1.0f, d->dy0, OC, d->w, IC, 0.0f, d->dx, IC);
        }
        break;
    case I_DNNL:
        if (!c->backward) {
            if (peer.dnnl_sgemm('N', 'T', B, OC, IC, 1.0f, d->x, IC, d->w, IC, 0.0f, d->y, OC))
                d->failed = 1;
        } else if (peer.dnnl_sgemm('T', 'N', OC, IC, B, 1.0f, d->dy0, OC, d->x, IC, 0.0f, d->dw,
                                   IC) ||
                   peer.dnnl_sgemm('N', 'N', B, IC, OC, 1.0f, d->dy0, OC, d->w, IC, 0.0f, d->dx,
                                   IC))
            d->failed = 1;
        break;
    }
}

static double act_ref(ridge_epi_act a, double z)
{
    return a == RIDGE_EPI_RELU ? (z > 0 ? z : 0) : a == RIDGE_EPI_TANH ? tanh(z)
           : a == RIDGE_EPI_SIGMOID ? 1 / (1 + exp(-z)) : z;
}

/* Checks the forward output (ridge: with bias, activation, softmax; peers: the product only)
 * or, for the backward, dx at sampled entries (with dz = dy for the peers, relu'(y) dy for
 * ridge), against double sums. */
static int verify(const dcall *d, int impl)
{
    const dcase *c = d->c;
    for (size_t r = 0; r < c->B; r += c->B > 8 ? c->B / 8 : 1) {
        double z[OC], sm = 0;
        for (size_t j = 0; j < OC; j++) {
            double s = impl == I_RIDGE ? d->b[j] : 0;
            for (size_t i = 0; i < IC; i++) s += (double)d->x[r * IC + i] * d->w[j * IC + i];
            z[j] = impl == I_RIDGE ? act_ref(c->act, s) : s;
            sm += exp(z[j]);
        }
        for (size_t i = 0; i < (c->backward ? IC : OC); i += c->backward ? 37 : 1) {
            double want, got;
            if (!c->backward) {
                want = c->softmax && impl == I_RIDGE ? exp(z[i]) / sm : z[i];
                got = d->y[r * OC + i];
            } else {
                want = 0;
                for (size_t j = 0; j < OC; j++) {
                    double dz = d->dy0[r * OC + j];
                    if (impl == I_RIDGE && !(d->y[r * OC + j] > 0)) dz = 0;
                    want += dz * d->w[j * IC + i];
                }
                got = d->dx[r * IC + i];
            }
            if (!(fabs(got - want) <= 1e-4 * (1 + fabs(want)))) {
                fprintf(stderr, "bench dense: %s B=%zu impl %d: [%zu][%zu] = %g, expected %g\n",
                        c->name, c->B, impl, r, i, got, want);
                return -1;
            }
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Interleaved rounds: returns per-call medians (and ridge's best) in seconds. */
static void time_case(dcall *d, int rounds, double med[I_COUNT], double *best)
{
    int inner = 1;
    uint64_t t0 = ridge_time_ns();
    run(d, I_RIDGE);
    uint64_t one = ridge_time_ns() - t0 + 1;
    inner = (int)(200000 / one < 1 ? 1 : 200000 / one > 4096 ? 4096 : 200000 / one);
    double *s = malloc((size_t)rounds * I_COUNT * sizeof *s);
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < I_COUNT; i++) {
            if (!peer.have[i]) continue;
            run(d, i); /* warm the caches for this implementation */
            t0 = ridge_time_ns();
            for (int k = 0; k < inner; k++) run(d, i);
            s[i * rounds + r] = (double)(ridge_time_ns() - t0) * 1e-9 / inner;
        }
    for (int i = 0; i < I_COUNT; i++) {
        med[i] = NAN;
        if (!peer.have[i]) continue;
        qsort(s + i * rounds, (size_t)rounds, sizeof *s, cmp_double);
        med[i] = s[i * rounds + rounds / 2];
        if (i == I_RIDGE) *best = s[0];
    }
    free(s);
}

int ridge_bench_dense(const ridge_bench_opts *o, int argc, char **argv)
{
    int own = bench_no_options(argc, argv, "dense", ridge_bench_dense_summary);
    if (own) return own > 0 ? 0 : BENCH_USAGE;
    peers_open(o);
    const int rounds = o->quick ? 11 : 41;
    const size_t maxB = 256;
    dcall d = {0};
    float **bufs[] = {&d.x, &d.w, &d.b, &d.y, &d.dy, &d.dy0, &d.dx, &d.dw, &d.db};
    const size_t sizes[] = {maxB * IC, OC * IC, OC, maxB * OC, maxB * OC, maxB * OC, maxB * IC,
                            OC * IC, OC};
    for (size_t i = 0; i < 9; i++)
        if (!(*bufs[i] = ridge_malloc(sizes[i] * sizeof(float)))) {
            fprintf(stderr, "bench dense: out of memory\n");
            return 1;
        }
    uint64_t seed = 42;
    for (size_t i = 0; i < 9; i++)
        for (size_t k = 0; k < sizes[i]; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            (*bufs[i])[k] = (float)((seed >> 40) * (1.0 / (1ull << 24)) - 0.5) *
                            (bufs[i] == &d.w ? 0.07f : 1.0f);
        }

    static const bench_col cols[] = {
        {"case", BENCH_STR},         {"batch", BENCH_INT},       {"threads", BENCH_INT},
        {"ridge_us", BENCH_F2},      {"ridge_best_us", BENCH_F2}, {"weights_GB/s", BENCH_F1},
        {"GFLOP/s", BENCH_F1},       {"x_L2_roof", BENCH_F2},    {"vs_none", BENCH_F2},      {"openblas_us", BENCH_F2},
        {"openblas/ridge", BENCH_F2}, {"onednn_us", BENCH_F2},    {"onednn/ridge", BENCH_F2},
    };
    bench_table t;
    bench_table_begin(&t, o, "dense 784x128", cols, sizeof cols / sizeof cols[0]);
    const int maxt = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    /* the batch-1 roof: one core reading the 401 KB of weights at its measured L2 bandwidth */
    double roof_s = NAN;
    {
        ridge_ctx_options co;
        ridge_ctx_options_init(&co);
        co.threads = 1;
        ridge_ctx *c1;
        ridge_roofline roof;
        ridge_roofline_point pt;
        if (ridge_ctx_create(&co, &c1) == RIDGE_OK) {
            if (ridge_roofline_for_ctx(c1, o->quick ? RIDGE_ROOFLINE_QUICK : 0, &roof) ||
                ridge_roofline_at(&roof, 1, &pt))
                bench_note(o, "bench dense: no roofline: %s", ridge_last_error());
            else {
                double bw = ridge_roofline_bandwidth(&pt, RIDGE_LEVEL_L2);
                roof_s = IC * OC * 4.0 / (bw * 1e9);
                bench_note(o, "bench dense: L2 read %.1f GB/s (1 thread): reading the weights "
                           "takes %.2f us", bw, roof_s * 1e6);
            }
            ridge_ctx_destroy(c1);
        }
    }
    int rc = 0;
    double none_b1 = NAN;
    for (size_t ci = 0; ci < NCASES && !rc; ci++) {
        const dcase *c = &cases[ci];
        if (o->filter && !strstr(c->name, o->filter)) continue;
        for (int threads = 1; threads <= maxt && !rc; threads = threads == 1 && maxt > 1 ? maxt : maxt + 1) {
            if (c->B == 1 && threads > 1) break; /* batch 1: one core, as the target states */
            if (!(d.ctx = bench_ctx(o, threads, "dense"))) {
                rc = 1;
                break;
            }
            peers_threads(threads);
            d.c = c;
            if (c->backward) {
                d.c = &(dcase){"", 0, c->B, c->act, 0};
                run(&d, I_RIDGE); /* y for the backward */
                d.c = c;
            }
            for (int i = 0; i < I_COUNT && !rc; i++)
                if (peer.have[i]) {
                    run(&d, i);
                    if (d.failed || verify(&d, i)) rc = 1;
                }
            double med[I_COUNT], best = NAN;
            if (!rc) time_case(&d, rounds, med, &best);
            ridge_ctx_destroy(d.ctx);
            if (rc) break;
            if (c->B == 1 && c->act == RIDGE_EPI_NONE && !c->softmax) none_b1 = med[I_RIDGE];
            const double flops = 2.0 * c->B * IC * OC * (c->backward ? 2 : 1);
            bench_val v[] = {
                {c->name, 0},
                {NULL, (double)c->B},
                {NULL, threads},
                {NULL, med[I_RIDGE] * 1e6},
                {NULL, best * 1e6},
                {NULL, c->B == 1 ? IC * OC * 4.0 / med[I_RIDGE] * 1e-9 : NAN},
                {NULL, flops / med[I_RIDGE] * 1e-9},
                {NULL, c->B == 1 ? med[I_RIDGE] / roof_s : NAN},
                {NULL, c->B == 1 ? med[I_RIDGE] / none_b1 : NAN},
                {NULL, med[I_OPENBLAS] * 1e6},
                {NULL, med[I_OPENBLAS] / med[I_RIDGE]},
                {NULL, med[I_DNNL] * 1e6},
                {NULL, med[I_DNNL] / med[I_RIDGE]},
            };
            bench_table_row(&t, v);
        }
    }
    bench_table_end(&t);
    for (size_t i = 0; i < 9; i++) ridge_free(*bufs[i]);
    return rc;
}
