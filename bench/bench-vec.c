/* ridge bench vec: the vector primitives against the plain C loop and against the vector math
 * libraries, in the same process, interleaved.
 *
 * Table 1: every op at widths 10, 100, 1000, 10000, 1000000 (--quick: 10, 1000, 10000): ridge
 * vs the plain loop of bench/vec-plain.c (gcc -O3, no -march, no -ffast-math), in ns/element,
 * the ratio, GB/s of compulsory traffic and % of the measured read bandwidth of the level the
 * data lives in (ridge/perf.h; the profile is measured once and cached).
 * Table 2: exp, tanh, log, sigmoid against glibc's scalar libm loop, glibc's libmvec
 * (_ZGVdN8v_*, and _ZGVeN16v_* on AVX-512 CPUs) and SLEEF's u10 functions (Sleef_*f8_u10avx2,
 * Sleef_*f16_u10avx512f), at widths 10..1000000 including 4096, with the max ULP error of each
 * on the benchmark's inputs. The libraries are opened with dlopen, so a missing one is a
 * missing column, not a build failure.
 *
 * Every timed op is checked against the plain loop first. A sample times enough calls for
 * ~30 us; each method gets 31 samples (--quick: 9), taken round-robin; the median is reported.
 * The context is single-threaded unless --threads says otherwise (the peers are single-threaded). */
#include <dlfcn.h>
#include <float.h>
#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ridge/perf.h"
#include "ridge/vec.h"
#include "vec-plain.h"

const char ridge_bench_vec_summary[] =
    "reductions, elementwise ops and activations vs plain loops, libm, libmvec and SLEEF";

#define NMAX 1000000

typedef struct vb {
    ridge_ctx *ctx;
    float *x, *y, *z, *o, *xp; /* xp: positive inputs (log) */
    double *xd;
    int32_t *xi;
    int64_t *xl;
    double result; /* of the last reduction */
} vb;

typedef enum op {
    OP_SUM_F32, OP_SUM_I32, OP_SUM_F64, OP_SUM_I64, OP_MIN_F32, OP_MAX_F32, OP_MAX_I32,
    OP_ARGMAX_F32, OP_DOT_F32, OP_MEAN_F64, OP_ADD, OP_SCALE, OP_AXPY, OP_FMA, OP_CLAMP,
    OP_RELU, OP_EXP, OP_LOG, OP_TANH, OP_SIGMOID, OP_SILU, OP_GELU, OP_GELU_ERF, OP_SOFTMAX,
    OP_COUNT
} op;

static const struct {
    const char *name;
    int bytes;     /* compulsory bytes per element: inputs read + outputs written */
    int reduction; /* 1: result in vb.result; 0: output in vb.o */
} ops[OP_COUNT] = {
    {"sum_f32", 4, 1},   {"sum_i32", 4, 1},  {"sum_f64", 8, 1},    {"sum_i64", 8, 1},
    {"min_f32", 4, 1},   {"max_f32", 4, 1},  {"max_i32", 4, 1},    {"argmax_f32", 4, 1},
    {"dot_f32", 8, 1},   {"mean_f64", 8, 1}, {"add", 12, 0},       {"scale", 8, 0},
    {"axpy", 12, 0},     {"fma", 16, 0},     {"clamp", 8, 0},      {"relu", 8, 0},
    {"exp", 8, 0},       {"log", 8, 0},      {"tanh", 8, 0},       {"sigmoid", 8, 0},
    {"silu", 8, 0},      {"gelu", 8, 0},     {"gelu_erf", 8, 0},   {"softmax", 8, 0},
};

/* one call of op on n elements: method 0 ridge, 1 the plain loop. run_op_body is expanded into
 * run_ridge and run_plain with plain constant, and run_op reaches either through the same
 * indirect call, so that both sides are called the same way (a branch on plain in one function
 * lets gcc lay one side out as the fall-through and the other behind a taken jump). */
static inline __attribute__((always_inline)) void run_op_body(vb *b, op k, int plain, size_t n)
{
    ridge_ctx *c = b->ctx;
    float f;
    double d;
    int64_t l;
    int32_t i32;
    size_t idx;
    switch (k) {
    case OP_SUM_F32:
        if (plain) f = plain_sum_f32(b->x, n);
        else ridge_vec_sum_f32(c, b->x, n, &f);
        b->result = f;
        break;
    case OP_SUM_I32:
        if (plain) l = plain_sum_i32(b->xi, n);
        else ridge_vec_sum_i32(c, b->xi, n, &l);
        b->result = (double)l;
        break;
    case OP_SUM_F64:
        if (plain) d = plain_sum_f64(b->xd, n);
        else ridge_vec_sum_f64(c, b->xd, n, &d);
        b->result = d;
        break;
    case OP_SUM_I64:
        if (plain) l = plain_sum_i64(b->xl, n);
        else ridge_vec_sum_i64(c, b->xl, n, &l);
        b->result = (double)l;
        break;
    case OP_MIN_F32:
        if (plain) f = plain_min_f32(b->x, n);
        else ridge_vec_min_f32(c, b->x, n, &f);
        b->result = f;
        break;
    case OP_MAX_F32:
        if (plain) f = plain_max_f32(b->x, n);
        else ridge_vec_max_f32(c, b->x, n, &f);
        b->result = f;
        break;
    case OP_MAX_I32:
        if (plain) i32 = plain_max_i32(b->xi, n);
        else ridge_vec_max_i32(c, b->xi, n, &i32);
        b->result = i32;
        break;
    case OP_ARGMAX_F32:
        if (plain) idx = plain_argmax_f32(b->x, n);
        else ridge_vec_argmax_f32(c, b->x, n, &idx);
        b->result = (double)idx;
        break;
    case OP_DOT_F32:
        if (plain) f = plain_dot_f32(b->x, b->y, n);
        else ridge_vec_dot_f32(c, b->x, b->y, n, &f);
        b->result = f;
        break;
    case OP_MEAN_F64:
        if (plain) d = plain_mean_f64(b->xd, n);
        else ridge_vec_mean_f64(c, b->xd, n, &d);
        b->result = d;
        break;
    case OP_ADD:
        if (plain) plain_add(b->o, b->x, b->y, n);
        else ridge_vec_add_f32(c, b->o, b->x, b->y, n);
        break;
    case OP_SCALE:
        if (plain) plain_scale(b->o, b->x, 1.5f, n);
        else ridge_vec_scale_f32(c, b->o, b->x, 1.5f, n);
        break;
    case OP_AXPY: /* o += a x: repeated calls keep growing o slowly; checked on a fresh o */
        if (plain) plain_axpy(b->o, 1e-3f, b->x, n);
        else ridge_vec_axpy_f32(c, b->o, 1e-3f, b->x, n);
        break;
    case OP_FMA:
        if (plain) plain_fma(b->o, b->x, b->y, b->z, n);
        else ridge_vec_fma_f32(c, b->o, b->x, b->y, b->z, n);
        break;
    case OP_CLAMP:
        if (plain) plain_clamp(b->o, b->x, -1.0f, 1.0f, n);
        else ridge_vec_clamp_f32(c, b->o, b->x, -1.0f, 1.0f, n);
        break;
#define ACT(OP, plainfn, ridgefn, in)                                                         \
    case OP:                                                                                   \
        if (plain) plainfn(b->o, in, n);                                                       \
        else ridgefn(c, b->o, in, n);                                                          \
        break;
        ACT(OP_RELU, plain_relu, ridge_relu_f32, b->x)
        ACT(OP_EXP, plain_exp, ridge_exp_f32, b->x)
        ACT(OP_LOG, plain_log, ridge_log_f32, b->xp)
        ACT(OP_TANH, plain_tanh, ridge_tanh_f32, b->x)
        ACT(OP_SIGMOID, plain_sigmoid, ridge_sigmoid_f32, b->x)
        ACT(OP_SILU, plain_silu, ridge_silu_f32, b->x)
        ACT(OP_GELU, plain_gelu, ridge_gelu_f32, b->x)
        ACT(OP_GELU_ERF, plain_gelu_erf, ridge_gelu_erf_f32, b->x)
#undef ACT
    case OP_SOFTMAX:
        if (plain) plain_softmax(b->o, b->x, n);
        else ridge_softmax_f32(c, b->o, b->x, 1, n);
        break;
    default: break;
    }
}

static __attribute__((noinline)) void run_ridge(vb *b, op k, size_t n) { run_op_body(b, k, 0, n); }
static __attribute__((noinline)) void run_plain(vb *b, op k, size_t n) { run_op_body(b, k, 1, n); }

static void run_op(vb *b, op k, int plain, size_t n)
{
    static void (*const run[2])(vb *, op, size_t) = {run_ridge, run_plain};
    run[plain != 0](b, k, n);
}

/* ridge's result against the plain loop's; returns 0 if they agree */
static int check_op(vb *b, op k, size_t n, float *tmp)
{
    if (k == OP_AXPY) memset(b->o, 0, n * sizeof *b->o);
    run_op(b, k, 0, n);
    double r0 = b->result;
    memcpy(tmp, b->o, n * sizeof *tmp);
    if (k == OP_AXPY) memset(b->o, 0, n * sizeof *b->o);
    run_op(b, k, 1, n);
    if (ops[k].reduction) {
        /* float sums: ridge within its stated bound (include/ridge/vec.h) of the exact sum;
         * everything else must equal the plain loop's answer */
        double tol = 0, want = b->result;
        if (k == OP_SUM_F32 || k == OP_DOT_F32 || k == OP_SUM_F64 || k == OP_MEAN_F64) {
            long double ex = 0, sabs = 0;
            for (size_t i = 0; i < n; i++) {
                long double v = k == OP_SUM_F32   ? (long double)b->x[i]
                                : k == OP_DOT_F32 ? (long double)b->x[i] * b->y[i]
                                                  : (long double)b->xd[i];
                ex += v, sabs += fabsl(v);
            }
            double u = k == OP_SUM_F32 || k == OP_DOT_F32 ? 0x1p-24 : 0x1p-53;
            double scale = k == OP_MEAN_F64 ? 1.0 / (double)n : 1.0;
            want = (double)(ex * scale);
            tol = (0.5 * u * fabs((double)ex) + 39 * u * (double)sabs + 1e-3 * u) * scale;
        }
        if (fabs(r0 - want) > tol) {
            fprintf(stderr, "bench vec: %s n=%zu: ridge %.9g, expected %.9g\n", ops[k].name, n,
                    r0, want);
            return -1;
        }
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        double want = b->o[i], got = tmp[i];
        if (!(fabs(got - want) <= 1e-5 * fabs(want) + 1e-6)) {
            fprintf(stderr, "bench vec: %s n=%zu i=%zu: ridge %.9g, plain loop %.9g\n",
                    ops[k].name, n, i, got, want);
            return -1;
        }
    }
    return 0;
}

/* ---- timing ---------------------------------------------------------------------------------- */

typedef void (*method_fn)(void *arg, int m, size_t n);

/* Times nm methods round-robin; ns_med[m] / ns_best[m] per element. */
static void time_methods(const ridge_bench_opts *o, method_fn fn, void *arg, int nm,
                         const int *have, size_t n, double *ns_med, double *ns_best)
{
    int samples = o->quick ? 9 : 31;
    double target = o->quick ? 15e3 : 30e3; /* ns per sample */
    size_t inner[16];
    double *t = malloc((size_t)nm * (size_t)samples * sizeof *t);
    for (int m = 0; m < nm; m++) {
        ns_med[m] = ns_best[m] = NAN;
        if (!have[m]) continue;
        for (int w = 0; w < 3; w++) fn(arg, m, n); /* warm up: caches, pages, branch history */
        uint64_t t0 = ridge_time_ns();
        fn(arg, m, n);
        double one = (double)(ridge_time_ns() - t0) + 1;
        inner[m] = (size_t)(target / one) + 1;
    }
    for (int s = 0; s < samples; s++)
        for (int m = 0; m < nm; m++) {
            if (!have[m]) continue;
            uint64_t t0 = ridge_time_ns();
            for (size_t r = 0; r < inner[m]; r++) fn(arg, m, n);
            t[m * samples + s] = (double)(ridge_time_ns() - t0) / (double)inner[m] / (double)n;
        }
    for (int m = 0; m < nm; m++) {
        if (!have[m]) continue;
        bench_stats st = bench_summarize(t + m * samples, (size_t)samples);
        ns_med[m] = st.median, ns_best[m] = st.best;
    }
    free(t);
}

typedef struct op_arg {
    vb *b;
    op k;
} op_arg;

static void op_method(void *arg, int m, size_t n)
{
    op_arg *a = arg;
    run_op(a->b, a->k, m, n);
}

/* ---- peers: libmvec and SLEEF through dlopen ----------------------------------------------- */

typedef __m256 (*vf8)(__m256);
typedef __m512 (*vf16)(__m512);

enum { FN_EXP, FN_TANH, FN_LOG, FN_SIGMOID, FN_COUNT };
static const char *const fn_names[FN_COUNT] = {"exp", "tanh", "log", "sigmoid"};
static const char *const fn_base[FN_COUNT] = {"expf", "tanhf", "logf", "expf"};

enum { P_RIDGE, P_LIBM, P_MVEC8, P_SLEEF8, P_MVEC16, P_SLEEF16, P_COUNT };

typedef struct peers {
    void *mvec, *sleef;
    void *f[FN_COUNT][P_COUNT]; /* vector entry points (NULL: absent) */
} peers;

static void peers_open(peers *p, int avx512)
{
    memset(p, 0, sizeof *p);
    p->mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL);
    p->sleef = dlopen("libsleef.so.3", RTLD_NOW | RTLD_LOCAL);
    for (int f = 0; f < FN_COUNT; f++) {
        char name[64];
        if (p->mvec) {
            snprintf(name, sizeof name, "_ZGVdN8v_%s", fn_base[f]);
            p->f[f][P_MVEC8] = dlsym(p->mvec, name);
            snprintf(name, sizeof name, "_ZGVeN16v_%s", fn_base[f]);
            if (avx512) p->f[f][P_MVEC16] = dlsym(p->mvec, name);
        }
        if (p->sleef) {
            snprintf(name, sizeof name, "Sleef_%s8_u10avx2", fn_base[f]);
            p->f[f][P_SLEEF8] = dlsym(p->sleef, name);
            snprintf(name, sizeof name, "Sleef_%s16_u10avx512f", fn_base[f]);
            if (avx512) p->f[f][P_SLEEF16] = dlsym(p->sleef, name);
        }
    }
}

static void peers_close(peers *p)
{
    if (p->mvec) dlclose(p->mvec);
    if (p->sleef) dlclose(p->sleef);
}

/* y = f(x) with an 8-wide vector function; sigmoid = 1/(1 + f(-x)) with f = exp */
__attribute__((target("avx2,fma"))) static void run_vf8(void *fp, int sigmoid, float *y,
                                                        const float *x, size_t n)
{
    vf8 f = (vf8)fp;
    const __m256 one = _mm256_set1_ps(1.0f), neg = _mm256_set1_ps(-0.0f);
    size_t i = 0;
    for (;; i += 8) {
        float tin[8] = {0}, tout[8];
        int tail = i + 8 > n;
        if (i >= n) break;
        __m256 v = tail ? (memcpy(tin, x + i, (n - i) * 4), _mm256_loadu_ps(tin)) : _mm256_loadu_ps(x + i);
        __m256 r = sigmoid ? _mm256_div_ps(one, _mm256_add_ps(one, f(_mm256_xor_ps(v, neg)))) : f(v);
        if (!tail) _mm256_storeu_ps(y + i, r);
        else _mm256_storeu_ps(tout, r), memcpy(y + i, tout, (n - i) * 4);
    }
}

__attribute__((target("avx512f,avx512dq"))) static void run_vf16(void *fp, int sigmoid, float *y,
                                                                 const float *x, size_t n)
{
    vf16 f = (vf16)fp;
    const __m512 one = _mm512_set1_ps(1.0f), neg = _mm512_set1_ps(-0.0f);
    for (size_t i = 0; i < n; i += 16) {
        float tin[16] = {0}, tout[16];
        int tail = i + 16 > n;
        __m512 v = tail ? (memcpy(tin, x + i, (n - i) * 4), _mm512_loadu_ps(tin)) : _mm512_loadu_ps(x + i);
        __m512 r = sigmoid ? _mm512_div_ps(one, _mm512_add_ps(one, f(_mm512_xor_ps(v, neg)))) : f(v);
        if (!tail) _mm512_storeu_ps(y + i, r);
        else _mm512_storeu_ps(tout, r), memcpy(y + i, tout, (n - i) * 4);
    }
}

typedef struct peer_arg {
    vb *b;
    peers *p;
    int f;
} peer_arg;

static const float *peer_input(vb *b, int f) { return f == FN_LOG ? b->xp : b->x; }

static void peer_method(void *arg, int m, size_t n)
{
    peer_arg *a = arg;
    vb *b = a->b;
    const float *x = peer_input(b, a->f);
    switch (m) {
    case P_RIDGE: {
        static const op map[FN_COUNT] = {OP_EXP, OP_TANH, OP_LOG, OP_SIGMOID};
        run_op(b, map[a->f], 0, n);
        break;
    }
    case P_LIBM: {
        static void (*const fns[FN_COUNT])(float *, const float *, size_t) = {
            plain_exp, plain_tanh, plain_log, plain_sigmoid};
        fns[a->f](b->o, x, n);
        break;
    }
    case P_MVEC8:
    case P_SLEEF8: run_vf8(a->p->f[a->f][m], a->f == FN_SIGMOID, b->o, x, n); break;
    default: run_vf16(a->p->f[a->f][m], a->f == FN_SIGMOID, b->o, x, n); break;
    }
}

static double exact_fn(int f, double x)
{
    switch (f) {
    case FN_EXP: return exp(x);
    case FN_TANH: return tanh(x);
    case FN_LOG: return log(x);
    default: return 1.0 / (1.0 + exp(-x));
    }
}

static double max_ulp(const float *y, const float *x, size_t n, int f)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double want = exact_fn(f, x[i]);
        int e;
        frexp(fabs(want), &e);
        double ulp = fmax(ldexp(1.0, e - 24), 0x1p-149);
        double err = fabs((double)y[i] - want) / ulp;
        if (!(err <= worst)) worst = err;
    }
    return worst;
}

/* ---- the tables ------------------------------------------------------------------------------ */

static int match(const ridge_bench_opts *o, const char *name)
{
    return !o->filter || strstr(name, o->filter);
}

int ridge_bench_vec(const ridge_bench_opts *o, int argc, char **argv)
{
    int own = bench_no_options(argc, argv, "vec", ridge_bench_vec_summary);
    if (own) return own > 0 ? 0 : BENCH_USAGE;
    vb b = {0};
    const int threads = o->threads > 0 ? o->threads : 1;
    if (!(b.ctx = bench_ctx(o, threads, "vec"))) return -1;
    b.x = ridge_malloc(NMAX * sizeof(float)), b.y = ridge_malloc(NMAX * sizeof(float));
    b.z = ridge_malloc(NMAX * sizeof(float)), b.o = ridge_malloc(NMAX * sizeof(float));
    b.xp = ridge_malloc(NMAX * sizeof(float)), b.xd = ridge_malloc(NMAX * sizeof(double));
    b.xi = ridge_malloc(NMAX * sizeof(int32_t)), b.xl = ridge_malloc(NMAX * sizeof(int64_t));
    float *tmp = ridge_malloc(NMAX * sizeof(float));
    int rc = 0;
    if (!b.x || !b.y || !b.z || !b.o || !b.xp || !b.xd || !b.xi || !b.xl || !tmp) {
        fprintf(stderr, "bench vec: out of memory\n");
        rc = -1;
        goto done;
    }
    uint64_t s = 12345;
    for (size_t i = 0; i < NMAX; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(s >> 11) * 0x1p-53;
        b.x[i] = (float)(20 * u - 10);
        b.y[i] = (float)(1 - u);
        b.z[i] = (float)(u * 0.5);
        b.xp[i] = (float)(100 * u + 1e-3);
        b.xd[i] = 20 * u - 10;
        b.xi[i] = (int32_t)(s >> 32);
        b.xl[i] = (int64_t)(s >> 8) - ((int64_t)1 << 55);
    }

    ridge_roofline roof;
    int have_roof = ridge_roofline_for_ctx(b.ctx, RIDGE_ROOFLINE_QUICK, &roof) == RIDGE_OK;
    if (!have_roof) bench_note(o, "bench vec: no roofline profile (%s): %% of roof left out",
                               ridge_last_error());
    bench_note(o, "bench vec: %s, %d thread%s", ridge_vec_describe(b.ctx), threads,
               threads > 1 ? "s" : "");

    static const size_t widths_full[] = {10, 100, 1000, 10000, 1000000};
    static const size_t widths_quick[] = {10, 1000, 10000};
    const size_t *widths = o->quick ? widths_quick : widths_full;
    int nw = o->quick ? 3 : 5;

    static const bench_col cols1[] = {
        {"op", BENCH_STR},        {"n", BENCH_INT},          {"ridge_ns", BENCH_F3},
        {"ridge_best_ns", BENCH_F3}, {"plain_ns", BENCH_F3}, {"x_plain", BENCH_F2},
        {"GB_s", BENCH_F1},       {"level", BENCH_STR},      {"pct_roof", BENCH_F1},
    };
    bench_table t;
    bench_table_begin(&t, o, "vec: ridge vs the plain C loop (ns per element, median)", cols1,
                      (int)(sizeof cols1 / sizeof cols1[0]));
    for (int k = 0; k < OP_COUNT && !rc; k++) {
        if (!match(o, ops[k].name)) continue;
        for (int w = 0; w < nw && !rc; w++) {
            size_t n = widths[w];
            if (check_op(&b, (op)k, n, tmp)) {
                rc = -1;
                break;
            }
            op_arg a = {&b, (op)k};
            int have[2] = {1, 1};
            double med[2], best[2];
            time_methods(o, op_method, &a, 2, have, n, med, best);
            double gbs = ops[k].bytes / med[0]; /* bytes/ns = GB/s */
            double pct = NAN;
            const char *level = NULL;
            ridge_roofline_point pt;
            if (have_roof && ridge_roofline_at(&roof, threads, &pt) == RIDGE_OK) {
                ridge_roofline_level lv =
                    ridge_roofline_level_of(&roof, threads, (double)ops[k].bytes * (double)n);
                level = ridge_roofline_level_name(lv);
                pct = 100 * gbs / ridge_roofline_bandwidth(&pt, lv);
            }
            bench_val row[] = {{ops[k].name, 0}, {NULL, (double)n},   {NULL, med[0]},
                               {NULL, best[0]},  {NULL, med[1]},      {NULL, med[1] / med[0]},
                               {NULL, gbs},      {level, 0},          {NULL, pct}};
            bench_table_row(&t, row);
        }
    }
    bench_table_end(&t);
    if (rc) goto done;

    /* table 2: the math functions against libm, libmvec and SLEEF */
    peers p;
    const ridge_cpu *cpu = ridge_ctx_cpu(b.ctx);
    peers_open(&p, cpu->avx512f && cpu->avx512dq && cpu->os_zmm);
    if (!p.mvec) bench_note(o, "bench vec: libmvec.so.1 not found: its columns are left out");
    if (!p.sleef) bench_note(o, "bench vec: libsleef.so.3 not found: its columns are left out");
    static const bench_col cols2[] = {
        {"fn", BENCH_STR},          {"n", BENCH_INT},           {"ridge_ns", BENCH_F3},
        {"libm_ns", BENCH_F3},      {"libmvec8_ns", BENCH_F3},  {"sleef8_ns", BENCH_F3},
        {"libmvec16_ns", BENCH_F3}, {"sleef16_ns", BENCH_F3},   {"x_libm", BENCH_F2},
        {"x_best_vector_peer", BENCH_F2}, {"ridge_ulp", BENCH_F2}, {"libmvec_ulp", BENCH_F2},
        {"sleef_ulp", BENCH_F2},
    };
    bench_table_begin(&t, o, "vec math: ridge vs libm, libmvec, SLEEF u10 (ns per element, median)",
                      cols2, (int)(sizeof cols2 / sizeof cols2[0]));
    static const size_t pw_full[] = {10, 100, 1000, 4096, 10000, 1000000};
    static const size_t pw_quick[] = {10, 4096, 1000000};
    const size_t *pw = o->quick ? pw_quick : pw_full;
    int npw = o->quick ? 3 : 6;
    for (int f = 0; f < FN_COUNT; f++) {
        if (!match(o, fn_names[f])) continue;
        for (int w = 0; w < npw; w++) {
            size_t n = pw[w];
            peer_arg a = {&b, &p, f};
            int have[P_COUNT] = {1, 1};
            for (int m = P_MVEC8; m < P_COUNT; m++) have[m] = p.f[f][m] != NULL;
            double ulp[P_COUNT];
            for (int m = 0; m < P_COUNT; m++) {
                ulp[m] = NAN;
                if (!have[m]) continue;
                peer_method(&a, m, n);
                ulp[m] = max_ulp(b.o, peer_input(&b, f), n, f);
            }
            double med[P_COUNT], best[P_COUNT];
            time_methods(o, peer_method, &a, P_COUNT, have, n, med, best);
            double peer_best = INFINITY;
            for (int m = P_MVEC8; m < P_COUNT; m++)
                if (have[m] && med[m] < peer_best) peer_best = med[m];
            double ulp_mvec = fmax(have[P_MVEC8] ? ulp[P_MVEC8] : 0, have[P_MVEC16] ? ulp[P_MVEC16] : 0);
            double ulp_sleef = fmax(have[P_SLEEF8] ? ulp[P_SLEEF8] : 0, have[P_SLEEF16] ? ulp[P_SLEEF16] : 0);
            bench_val row[] = {{fn_names[f], 0},
                               {NULL, (double)n},
                               {NULL, med[P_RIDGE]},
                               {NULL, med[P_LIBM]},
                               {NULL, med[P_MVEC8]},
                               {NULL, med[P_SLEEF8]},
                               {NULL, med[P_MVEC16]},
                               {NULL, med[P_SLEEF16]},
                               {NULL, med[P_LIBM] / med[P_RIDGE]},
                               {NULL, isinf(peer_best) ? NAN : peer_best / med[P_RIDGE]},
                               {NULL, ulp[P_RIDGE]},
                               {NULL, p.mvec ? ulp_mvec : NAN},
                               {NULL, p.sleef ? ulp_sleef : NAN}};
            bench_table_row(&t, row);
        }
    }
    bench_table_end(&t);
    peers_close(&p);

done:
    ridge_free(b.x), ridge_free(b.y), ridge_free(b.z), ridge_free(b.o), ridge_free(b.xp);
    ridge_free(b.xd), ridge_free(b.xi), ridge_free(b.xl), ridge_free(tmp);
    ridge_ctx_destroy(b.ctx);
    return rc;
}
