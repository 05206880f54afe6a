/* ridge bench lowp: int8 and bf16 GEMM throughput against ridge's own fp32 SGEMM in the same
 * run, against the roof of the instructions each kernel uses, and (--peers) against oneDNN's
 * dnnl_gemm_u8s8s32.
 *
 * Implementations, timed in interleaved rounds (each round runs every one once, so machine
 * noise hits them alike; cells are medians over rounds):
 *   i8    ridge_qgemm_plan_execute: u8 A x s8 B -> int32
 *   bf16  ridge_bf16_plan_execute: bf16 A x bf16 B -> fp32
 *   f32   ridge_sgemm_plan_execute on the same shapes
 *   onednn dnnl_gemm_u8s8s32, the same int8 product (row-major, offsets 0, alpha 1, beta 0)
 * ridge's three take B from a plan (weights packed once, as in inference); oneDNN's C API has
 * no packed form and packs B on every call (its cost is in its numbers).
 * Every result is checked first: int8 exactly (int64 sums at 200 sampled entries), bf16 and
 * fp32 within (k + 2) eps sum |a b|. A peer that fails the exact check is still timed and is
 * flagged (oneDNN's docs warn that on CPUs without VNNI its int8 GEMM may saturate in int16).
 *
 * Roofs: int8 on AVX2 is vpmaddwd + vpaddd (the kernel's instruction pair: 16 multiply-adds =
 * 32 OP), measured here on every thread; with VNNI it is the roofline's vpdpbusd peak; bf16 on
 * AVX2 is the fp32 FMA peak (the same arithmetic), with AVX512-BF16 the vdpbf16ps peak. GOP/s
 * counts 2 m n k. Data: A, B uniform over the full int8/uint8 range (bf16: [-1, 1)); with
 * --7bit, A in [0, 127] and B in [-64, 63], where int16 pair sums cannot saturate, so that
 * oneDNN's non-VNNI int8 path gives exact sums and its speed compares like for like. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "lowp/lowp-internal.h"

#ifdef RIDGE_HAVE_PEERS
#include <dlfcn.h>
#endif
#include <immintrin.h>
#ifdef RIDGE_HAVE_OPENMP
#include <omp.h>
#endif

const char ridge_bench_lowp_summary[] =
    "int8 and bf16 GEMM GOP/s vs fp32 SGEMM, the int8/bf16 roofs, and oneDNN int8 (--peers)";

typedef struct lshape {
    const char *name;
    char tb;       /* 'N': B (k, n); 'T': B stored (n, k), as weights */
    size_t m, n, k;
    int big;       /* left out by --quick */
} lshape;

static const lshape shapes[] = {
    {"square", 'N', 1024, 1024, 1024, 0},
    {"square", 'N', 2048, 2048, 2048, 1},
    {"gpt2 fc fwd", 'T', 256, 3072, 768, 0},
    {"conv 3x3 im2col", 'N', 64, 3136, 576, 0},
    {"mlp dense b256", 'T', 256, 128, 784, 0},
    {"dense batch 1", 'T', 1, 128, 784, 0},
};
#define NSHAPES (sizeof shapes / sizeof shapes[0])

enum { I_I8, I_BF16, I_F32, I_DNNL, I_COUNT };
static const char *const impl_name[I_COUNT] = {"i8", "bf16", "f32", "onednn-i8"};

typedef int (*dnnl_gemm_u8s8s32_fn)(char, char, char, int64_t, int64_t, int64_t, float,
                                    const uint8_t *, int64_t, uint8_t, const int8_t *, int64_t,
                                    int8_t, float, int32_t *, int64_t, const int32_t *);
static dnnl_gemm_u8s8s32_fn dnnl_u8s8s32;

static void peers_open(const ridge_bench_opts *o)
{
#if defined(RIDGE_HAVE_PEERS) && defined(RIDGE_PEER_DNNL)
    void *lib = dlopen(RIDGE_PEER_DNNL, RTLD_NOW | RTLD_LOCAL);
    dnnl_u8s8s32 = lib ? (dnnl_gemm_u8s8s32_fn)dlsym(lib, "dnnl_gemm_u8s8s32") : NULL;
    if (!dnnl_u8s8s32) bench_note(o, "bench lowp: oneDNN not usable: %s", dlerror());
#else
    bench_note(o, "bench lowp: built without oneDNN (configure with -DRIDGE_BENCH_PEERS=ON)");
#endif
}

/* ---- the int8 AVX2 roof ------------------------------------------------------------------------ */

/* vpmaddwd + vpaddd (the micro-kernel's pair), OP/s: 12 independent chains, each step
 * a = a + vpmaddwd(a, y), so nothing can be hoisted or shared between chains (the values
 * overflow; only the time matters). */
__attribute__((target("avx2"))) static double peak_i8_avx2(long iters)
{
    __m256i y = _mm256_set1_epi16(3);
    __m256i a0 = _mm256_set1_epi32(1), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    uint64_t t0 = ridge_time_ns();
    for (long i = 0; i < iters; i++) {
#define STEP(a) a = _mm256_add_epi32(a, _mm256_madd_epi16(a, y))
        STEP(a0), STEP(a1), STEP(a2), STEP(a3), STEP(a4), STEP(a5);
        STEP(a6), STEP(a7), STEP(a8), STEP(a9), STEP(a10), STEP(a11);
#undef STEP
        __asm__ volatile("" : "+x"(a0), "+x"(a1), "+x"(a2), "+x"(a3), "+x"(a4), "+x"(a5),
                         "+x"(a6), "+x"(a7), "+x"(a8), "+x"(a9), "+x"(a10), "+x"(a11));
    }
    double t = (double)(ridge_time_ns() - t0) * 1e-9;
    return (double)iters * 12 * 32 / t;
}

typedef struct peak_job {
    double ops[64];
} peak_job;

static void peak_task(void *arg, int ith, int nth)
{
    peak_job *j = arg;
    double best = 0;
    for (int r = 0; r < 5; r++) {
        double f = peak_i8_avx2(2000000);
        if (f > best) best = f;
    }
    if (ith < 64) j->ops[ith] = best;
}

/* The roofs for ctx on `threads` threads, GOP/s: int8 (by the kernel the context picks) and
 * bf16, and the fp32 FMA peak. 0 where unknown. */
static void roofs(ridge_ctx *ctx, int threads, double *i8, double *bf16, double *f32)
{
    *i8 = *bf16 = *f32 = 0;
    ridge_roofline roof;
    ridge_roofline_point pt;
    if (ridge_roofline_for_ctx(ctx, RIDGE_ROOFLINE_QUICK, &roof) == RIDGE_OK &&
        ridge_roofline_at(&roof, threads, &pt) == RIDGE_OK) {
        ridge_isa isa = ridge_ctx_isa(ctx);
        *f32 = pt.peak[ridge_roofline_peak_f32(isa)];
        if (isa == RIDGE_ISA_AVX512 && pt.peak[RIDGE_PEAK_I8_DOT] > 0) *i8 = pt.peak[RIDGE_PEAK_I8_DOT];
        *bf16 = isa == RIDGE_ISA_AVX512 && pt.peak[RIDGE_PEAK_BF16_DOT] > 0
                    ? pt.peak[RIDGE_PEAK_BF16_DOT] : *f32;
    }
    /* AVX-VNNI (ymm vpdpbusd) has no probe of its own: its roof is left unknown (0) */
    if (strstr(ridge_lowp_describe(ctx), "avxvnni")) return;
    if (*i8 == 0 && ridge_ctx_isa(ctx) >= RIDGE_ISA_AVX2) {
        peak_job j = {{0}};
        ridge_parallel_run(ctx, threads, peak_task, &j);
        for (int i = 0; i < threads && i < 64; i++) *i8 += j.ops[i] * 1e-9;
    }
}

/* ---- one case ---------------------------------------------------------------------------------- */

typedef struct lcall {
    const lshape *s;
    int impl;
    ridge_ctx *ctx;
    const uint8_t *a8;
    const int8_t *b8;
    const ridge_qgemm_plan *plan;
    const ridge_bf16_plan *bplan;
    const ridge_sgemm_plan *fplan;
    const uint16_t *a16, *b16;
    const float *af, *bf;
    void *c;
    int failed;
} lcall;

static void call(void *arg)
{
    lcall *g = arg;
    const lshape *s = g->s;
    int tb = s->tb == 'T';
    size_t ldb = tb ? s->k : s->n;
    ridge_status st = RIDGE_OK;
    switch (g->impl) {
    case I_I8:
        st = ridge_qgemm_plan_execute(g->ctx, g->plan, RIDGE_LOWP_U8, s->m, g->a8, s->k, 0, g->c,
                                      s->n, NULL);
        break;
    case I_BF16:
        st = ridge_bf16_plan_execute(g->ctx, g->bplan, s->m, g->a16, s->k, 0.0f, g->c, s->n);
        break;
    case I_F32:
        st = ridge_sgemm_plan_execute(g->ctx, g->fplan, RIDGE_NO_TRANS, s->m, 1.0f, g->af, s->k,
                                      0.0f, g->c, s->n, NULL);
        break;
    case I_DNNL: {
        int32_t co = 0;
        st = dnnl_u8s8s32('N', s->tb, 'F', (int64_t)s->m, (int64_t)s->n, (int64_t)s->k, 1.0f,
                          g->a8, (int64_t)s->k, 0, g->b8, (int64_t)ldb, 0, 0.0f, g->c,
                          (int64_t)s->n, &co) ? RIDGE_EINTERNAL : RIDGE_OK;
        break;
    }
    }
    if (st) g->failed = 1;
}

/* Checks 200 sampled entries; returns the number wrong. */
static int verify(const lcall *g)
{
    const lshape *s = g->s;
    int tb = s->tb == 'T', wrong = 0;
    uint64_t r = 7;
    for (int t = 0; t < 200; t++) {
        r = r * 6364136223846793005ull + 1;
        size_t i = (size_t)(r >> 33) % s->m, j = (size_t)(r >> 13) % s->n;
        int64_t si = 0;
        double sd = 0, mag = 0;
        for (size_t p = 0; p < s->k; p++) {
            size_t bi = tb ? j * s->k + p : p * s->n + j;
            if (g->impl == I_I8 || g->impl == I_DNNL) {
                si += (int64_t)g->a8[i * s->k + p] * g->b8[bi];
            } else {
                double x = g->impl == I_BF16 ? ridge_bf16_to_f32_1(g->a16[i * s->k + p]) : g->af[i * s->k + p];
                double y = g->impl == I_BF16 ? ridge_bf16_to_f32_1(g->b16[bi]) : g->bf[bi];
                sd += x * y, mag += fabs(x * y);
            }
        }
        if (g->impl == I_I8 || g->impl == I_DNNL) {
            wrong += ((const int32_t *)g->c)[i * s->n + j] != si;
        } else {
            double got = ((const float *)g->c)[i * s->n + j];
            wrong += !(fabs(got - sd) <= (s->k + 2) * 1.2e-7 * mag + 1e-30);
        }
    }
    return wrong;
}

#define RIDGE_BENCH_MAX(a, b) ((a) > (b) ? (a) : (b))
static int seven_bit; /* --7bit */
static uint64_t rng = 42;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 32);
}

static int bench_shape(const ridge_bench_opts *o, bench_table *t, const lshape *s,
                       ridge_ctx *ctx, int threads, const double roof[3])
{
    size_t mk = s->m * s->k, kn = s->k * s->n, mn = s->m * s->n;
    uint8_t *a8 = ridge_malloc(mk);
    int8_t *b8 = ridge_malloc(kn);
    uint16_t *a16 = ridge_malloc(mk * 2), *b16 = ridge_malloc(kn * 2);
    float *af = ridge_malloc(mk * 4), *bf = ridge_malloc(kn * 4);
    void *c[I_COUNT] = {0};
    ridge_qgemm_plan *plan = NULL;
    ridge_bf16_plan *bplan = NULL;
    ridge_sgemm_plan *fplan = NULL;
    double *samples[I_COUNT] = {0};
    int rc = 0, have[I_COUNT] = {1, 1, 1, dnnl_u8s8s32 != NULL};
    const char *peer_note = NULL;
    if (!a8 || !b8 || !a16 || !b16 || !af || !bf) rc = -1;
    for (int i = 0; i < I_COUNT && !rc; i++)
        if (have[i] && !(c[i] = ridge_calloc(mn, 4))) rc = -1;
    if (rc) {
        fprintf(stderr, "bench lowp: out of memory for %zux%zux%zu\n", s->m, s->n, s->k);
        goto out;
    }
    for (size_t i = 0; i < mk; i++) {
        a8[i] = (uint8_t)(seven_bit ? rnd() % 128 : rnd());
        af[i] = (float)((int)(rnd() % 2048) - 1024) / 1024.0f;
        a16[i] = ridge_bf16_from_f32(af[i]);
    }
    for (size_t i = 0; i < kn; i++) {
        b8[i] = (int8_t)(seven_bit ? (int)(rnd() % 128) - 64 : (int)(int8_t)rnd());
        bf[i] = (float)((int)(rnd() % 2048) - 1024) / 1024.0f;
        b16[i] = ridge_bf16_from_f32(bf[i]);
    }
    ridge_trans tb = s->tb == 'T' ? RIDGE_TRANS : RIDGE_NO_TRANS;
    size_t ldb = s->tb == 'T' ? s->k : s->n;
    if (ridge_qgemm_plan_create(ctx, tb, s->n, s->k, b8, ldb, &plan) ||
        ridge_bf16_plan_create(ctx, tb, s->n, s->k, b16, ldb, &bplan) ||
        ridge_sgemm_plan_create(ctx, tb, s->n, s->k, bf, ldb, &fplan)) {
        fprintf(stderr, "bench lowp: %s\n", ridge_last_error());
        rc = -1;
        goto out;
    }
    lcall g[I_COUNT];
    double est = 0;
    for (int i = 0; i < I_COUNT; i++) {
        g[i] = (lcall){s, i, ctx, a8, b8, plan, bplan, fplan, a16, b16, af, bf, c[i], 0};
        if (!have[i]) continue;
        uint64_t t0 = ridge_time_ns();
        call(&g[i]); /* warm-up, then check */
        double dt = (double)(ridge_time_ns() - t0) * 1e-9;
        if (dt > est) est = dt;
        int wrong = g[i].failed ? 200 : verify(&g[i]);
        if (wrong && i != I_DNNL) {
            fprintf(stderr, "bench lowp: %s gave %d wrong entries of 200 at %zux%zux%zu\n",
                    impl_name[i], wrong, s->m, s->n, s->k);
            rc = -1;
        } else if (wrong) {
            peer_note = "inexact";
            bench_note(o, "bench lowp: oneDNN u8s8s32 is not exact here: %d of 200 sampled "
                          "entries differ from the int64 sums (intermediate int16 saturation); "
                          "timed anyway", wrong);
        }
    }
    if (rc) goto out;
    double target = o->quick ? 0.2 : 1.0;
    int rounds = (int)(target / (I_COUNT * (est > 1e-9 ? est : 1e-9)));
    rounds = rounds < 3 ? 3 : rounds > 100 ? 100 : rounds;
    int per = est < 1e-4 ? (int)(1e-4 / (est > 1e-9 ? est : 1e-9)) + 1 : 1;
    for (int i = 0; i < I_COUNT; i++)
        if (have[i] && !(samples[i] = malloc((size_t)rounds * sizeof(double)))) rc = -1;
    if (rc) goto out;
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < I_COUNT; i++) {
            if (!have[i]) continue;
            uint64_t t0 = ridge_time_ns();
            for (int q = 0; q < per; q++) call(&g[i]);
            samples[i][r] = (double)(ridge_time_ns() - t0) * 1e-9 / per;
        }
    double gops[I_COUNT], best_i8;
    double ops = 2.0 * (double)s->m * (double)s->n * (double)s->k;
    for (int i = 0; i < I_COUNT; i++) {
        gops[i] = NAN;
        if (!have[i]) continue;
        bench_stats st = bench_summarize(samples[i], (size_t)rounds);
        gops[i] = ops / st.median * 1e-9;
        if (i == I_I8) best_i8 = ops / st.best * 1e-9;
    }
    char shape[64], name[64];
    snprintf(shape, sizeof shape, "%zux%zux%zu", s->m, s->n, s->k);
    snprintf(name, sizeof name, "%s %c", s->name, s->tb);
    bench_val row[] = {
        {name, 0},
        {shape, 0},
        {NULL, threads},
        {NULL, gops[I_I8]},
        {NULL, best_i8},
        {NULL, roof[0] > 0 ? 100.0 * gops[I_I8] / roof[0] : NAN},
        {NULL, gops[I_BF16]},
        {NULL, roof[1] > 0 ? 100.0 * gops[I_BF16] / roof[1] : NAN},
        {NULL, gops[I_F32]},
        {NULL, gops[I_I8] / gops[I_F32]},
        {NULL, gops[I_BF16] / gops[I_F32]},
        {NULL, gops[I_DNNL]},
        {NULL, gops[I_I8] / gops[I_DNNL]},
        {peer_note ? peer_note : have[I_DNNL] ? "exact" : NULL, 0},
    };
    bench_table_row(t, row);
out:
    for (int i = 0; i < I_COUNT; i++) free(samples[i]), ridge_free(c[i]);
    ridge_qgemm_plan_destroy(plan);
    ridge_bf16_plan_destroy(bplan);
    ridge_sgemm_plan_destroy(fplan);
    ridge_free(a8), ridge_free(b8), ridge_free(a16), ridge_free(b16), ridge_free(af), ridge_free(bf);
    return rc;
}

/* ---- int8 convolution vs fp32 convolution ------------------------------------------------------ */

typedef struct cshape {
    const char *name;
    int64_t c, hw, co, r, pad, groups; /* groups = c = co: depthwise */
} cshape;

static const cshape cshapes[] = {
    {"3x3 56x56 64->64", 64, 56, 64, 3, 1, 1},
    {"3x3 28x28 128->128", 128, 28, 128, 3, 1, 1},
    {"1x1 56x56 64->256", 64, 56, 256, 1, 0, 1},
    {"3x3 28x28 1->32 (cnn conv1)", 1, 28, 32, 3, 1, 1},
    {"3x3 14x14 32->64 (cnn conv2)", 32, 14, 64, 3, 1, 1},
    {"dw 3x3 56x56 c64", 64, 56, 64, 3, 1, 64},
    {"dw 3x3 28x28 c256", 256, 28, 256, 3, 1, 256},
};

typedef struct ccall {
    ridge_ctx *ctx;
    const ridge_qconv2d_plan *qp; /* AUTO, or the other groups-1 algorithm for impl 2 */
    const ridge_conv2d_plan *fp;
    const uint8_t *x8;
    const float *xf;
    void *y;
    const ridge_requant *rq;
    int impl; /* 0 int8, 1 fp32, 2 int8, the other algorithm */
    int failed;
} ccall;

static void ccall_run(void *arg)
{
    ccall *g = arg;
    ridge_status st = g->impl != 1
                          ? ridge_qconv2d_forward(g->ctx, g->qp, RIDGE_LOWP_U8, g->x8, 3, g->y, g->rq)
                          : ridge_conv2d_forward(g->ctx, g->fp, g->xf, g->y, NULL, NULL, NULL);
    if (st) g->failed = 1;
}

/* One NHWC convolution, batch 1: ridge's int8 (AUTO: direct, pointwise or depthwise; and for
 * groups 1 the other of direct and im2col; int32 output so that it checks exactly) against
 * ridge's fp32 (its own algorithm choice), checked at 200 sampled outputs (int8 exactly, fp32
 * within (K + 2) eps sum |x w|), then interleaved. */
static int bench_conv(const ridge_bench_opts *o, bench_table *t, const cshape *cs, ridge_ctx *ctx,
                      int threads)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 1, d.c_in = cs->c, d.h = d.w = cs->hw, d.c_out = cs->co, d.r = d.s = cs->r;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = cs->pad, d.layout = RIDGE_NHWC;
    d.groups = cs->groups;
    const int64_t cig = cs->c / cs->groups; /* input channels per output channel */
    size_t xn = (size_t)(cs->hw * cs->hw * cs->c), wn = (size_t)(cs->co * cig * cs->r * cs->r);
    size_t yn = (size_t)(cs->hw * cs->hw * cs->co), K = (size_t)(cig * cs->r * cs->r);
    uint8_t *x8 = malloc(xn);
    int8_t *w8 = malloc(wn);
    float *xf = malloc(xn * 4), *wf = malloc(wn * 4);
    int32_t *y8 = malloc(yn * 4), *yd = malloc(yn * 4);
    float *yf = malloc(yn * 4);
    ridge_qconv2d_plan *qp = NULL, *qd = NULL;
    ridge_conv2d_plan *fp = NULL;
    int rc = -1;
    if (!x8 || !w8 || !xf || !wf || !y8 || !yd || !yf) goto out;
    for (size_t i = 0; i < xn; i++) x8[i] = (uint8_t)rnd(), xf[i] = (float)x8[i] / 255.0f;
    for (size_t i = 0; i < wn; i++) w8[i] = (int8_t)rnd(), wf[i] = (float)w8[i] / 128.0f;
    if (ridge_qconv2d_plan_create(ctx, &d, w8, RIDGE_CONV_AUTO, &qp) ||
        (cs->groups == 1 &&
         ridge_qconv2d_plan_create(ctx, &d, w8,
                                   ridge_qconv2d_plan_algo(qp) == RIDGE_CONV_DIRECT
                                       ? RIDGE_CONV_IM2COL
                                       : RIDGE_CONV_DIRECT,
                                   &qd)) ||
        ridge_conv2d_plan_create(ctx, &d, wf, NULL, &fp)) {
        fprintf(stderr, "bench lowp: %s\n", ridge_last_error());
        goto out;
    }
    ccall g[3] = {{ctx, qp, fp, x8, xf, y8, NULL, 0, 0}, {ctx, qp, fp, x8, xf, yf, NULL, 1, 0},
                  {ctx, qd, fp, x8, xf, yd, NULL, 2, 0}};
    const int impls = qd ? 3 : 2; /* the other algorithm: groups 1 only */
    double est = 0;
    for (int i = 0; i < impls; i++) {
        uint64_t t0 = ridge_time_ns();
        ccall_run(&g[i]);
        est = RIDGE_BENCH_MAX(est, (double)(ridge_time_ns() - t0) * 1e-9);
    }
    uint64_t r = 11;
    int wrong = g[0].failed || g[1].failed || g[2].failed;
    for (int s = 0; s < 200 && !wrong; s++) {
        r = r * 6364136223846793005ull + 1;
        int64_t pix = (int64_t)((r >> 33) % (uint64_t)(cs->hw * cs->hw)), oc = (int64_t)((r >> 13) % (uint64_t)cs->co);
        int64_t oy = pix / cs->hw, ox = pix % cs->hw, si = 0, c0 = oc / (cs->co / cs->groups) * cig;
        double sd = 0, mag = 0;
        for (int64_t c = 0; c < cig; c++)
            for (int64_t ky = 0; ky < cs->r; ky++)
                for (int64_t kx = 0; kx < cs->r; kx++) {
                    int64_t iy = oy - cs->pad + ky, ix = ox - cs->pad + kx;
                    size_t wi = (size_t)(((oc * cig + c) * cs->r + ky) * cs->r + kx);
                    int64_t xv = 3; /* the zero point: padding adds nothing */
                    double xd = 0;
                    if (iy >= 0 && iy < cs->hw && ix >= 0 && ix < cs->hw) {
                        size_t xi = (size_t)((iy * cs->hw + ix) * cs->c + c0 + c);
                        xv = x8[xi], xd = xf[xi];
                    }
                    si += (xv - 3) * w8[wi];
                    sd += xd * wf[wi], mag += fabs(xd * wf[wi]);
                }
        wrong |= y8[pix * cs->co + oc] != si || (qd && yd[pix * cs->co + oc] != si);
        wrong |= !(fabs(yf[pix * cs->co + oc] - sd) <= (double)(K + 2) * 1.2e-7 * mag + 1e-30);
    }
    if (wrong) {
        fprintf(stderr, "bench lowp: conv %s: a wrong result\n", cs->name);
        goto out;
    }
    int rounds = (int)((o->quick ? 0.2 : 1.0) / (impls * (est > 1e-9 ? est : 1e-9)));
    rounds = rounds < 3 ? 3 : rounds > 100 ? 100 : rounds;
    double *smp[3] = {malloc((size_t)rounds * sizeof(double)), malloc((size_t)rounds * sizeof(double)),
                      malloc((size_t)rounds * sizeof(double))};
    if (smp[0] && smp[1] && smp[2]) {
        for (int q = 0; q < rounds; q++)
            for (int i = 0; i < impls; i++) {
                uint64_t t0 = ridge_time_ns();
                ccall_run(&g[i]);
                smp[i][q] = (double)(ridge_time_ns() - t0) * 1e-9;
            }
        double ops = 2.0 * (double)yn * (double)K;
        bench_stats s8 = bench_summarize(smp[0], (size_t)rounds), sf = bench_summarize(smp[1], (size_t)rounds);
        bench_stats sd = qd ? bench_summarize(smp[2], (size_t)rounds) : (bench_stats){0};
        char name[64];
        snprintf(name, sizeof name, "conv %s", cs->name);
        bench_val row[] = {{name, 0}, {ridge_conv_algo_name(ridge_qconv2d_plan_algo(qp)), 0},
                           {ridge_conv_algo_name(ridge_conv2d_plan_algo(fp)), 0},
                           {qd ? ridge_conv_algo_name(ridge_qconv2d_plan_algo(qd)) : "-", 0},
                           {NULL, threads}, {NULL, ops / s8.median * 1e-9},
                           {NULL, ops / s8.best * 1e-9}, {NULL, qd ? ops / sd.median * 1e-9 : NAN},
                           {NULL, ops / sf.median * 1e-9}, {NULL, sf.median / s8.median},
                           {NULL, qd ? sf.median / sd.median : NAN}};
        bench_table_row(t, row);
        rc = 0;
    }
    free(smp[0]), free(smp[1]), free(smp[2]);
out:
    ridge_qconv2d_plan_destroy(qp);
    ridge_qconv2d_plan_destroy(qd);
    ridge_conv2d_plan_destroy(fp);
    free(x8), free(w8), free(xf), free(wf), free(y8), free(yd), free(yf);
    return rc;
}

int ridge_bench_lowp(const ridge_bench_opts *o, int argc, char **argv)
{
    seven_bit = 0;
    if (bench_help(argc, argv, "lowp", ridge_bench_lowp_summary, "[--7bit]")) return 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--7bit")) seven_bit = 1;
        else {
            fprintf(stderr, "bench lowp: unknown option '%s' (its own: --7bit)\n", argv[i]);
            return BENCH_USAGE;
        }
    }
    static const bench_col cols[] = {
        {"case", BENCH_STR},      {"m x n x k", BENCH_STR}, {"thr", BENCH_INT},
        {"i8_gops", BENCH_F1},    {"i8_best", BENCH_F1},    {"i8_pct_roof", BENCH_F1},
        {"bf16_gflops", BENCH_F1}, {"bf16_pct_roof", BENCH_F1}, {"f32_gflops", BENCH_F1},
        {"i8_x_f32", BENCH_F2},   {"bf16_x_f32", BENCH_F2}, {"onednn_i8_gops", BENCH_F1},
        {"i8_x_onednn", BENCH_F2}, {"onednn_result", BENCH_STR},
    };
    if (o->peers) peers_open(o);
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    int counts[2] = {1, max_threads};
    int rc = 0;
    bench_table t;
    bench_table_begin(&t, o, "lowp: int8 GOP/s and bf16 GFLOP/s vs fp32 (median over interleaved rounds)",
                      cols, (int)(sizeof cols / sizeof cols[0]));
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1) && !rc; ti++) {
        int n = counts[ti];
        ridge_ctx *ctx = bench_ctx(o, n, "lowp");
        if (!ctx) {
            rc = -1;
            break;
        }
#ifdef RIDGE_HAVE_OPENMP
        omp_set_num_threads(n);
#endif
        double roof[3];
        roofs(ctx, n, &roof[0], &roof[1], &roof[2]);
        bench_note(o, "bench lowp: %d thread%s, %s; roofs: int8 %.1f GOP/s, bf16 %.1f, fp32 %.1f GFLOP/s; %s data",
                   n, n > 1 ? "s" : "", ridge_lowp_describe(ctx), roof[0], roof[1], roof[2],
                   seven_bit ? "7-bit" : "full-range int8");
        for (size_t si = 0; si < NSHAPES && !rc; si++) {
            const lshape *s = &shapes[si];
            if (o->quick && s->big) continue;
            if (o->filter && !strstr(s->name, o->filter)) continue;
            bench_note(o, "bench lowp: %s %zux%zux%zu, %d thread%s...", s->name, s->m, s->n, s->k,
                       n, n > 1 ? "s" : "");
            rc = bench_shape(o, &t, s, ctx, n, roof);
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    if (rc) return rc;

    static const bench_col ccols[] = {
        {"case", BENCH_STR},     {"i8_algo", BENCH_STR},  {"f32_algo", BENCH_STR},
        {"alt_algo", BENCH_STR}, {"thr", BENCH_INT},      {"i8_gops", BENCH_F1},
        {"i8_best", BENCH_F1},   {"alt_gops", BENCH_F1},  {"f32_gflops", BENCH_F1},
        {"i8_x_f32", BENCH_F2},  {"alt_x_f32", BENCH_F2},
    };
    bench_table_begin(&t, o,
                      "lowp conv: int8 (AUTO, and the other of direct and im2col) vs fp32, NHWC, "
                      "batch 1",
                      ccols, (int)(sizeof ccols / sizeof ccols[0]));
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1) && !rc; ti++) {
        ridge_ctx *ctx = bench_ctx(o, counts[ti], "lowp");
        if (!ctx) {
            rc = -1;
            break;
        }
        for (size_t i = 0; i < sizeof cshapes / sizeof cshapes[0] && !rc; i++) {
            if (o->filter && !strstr(cshapes[i].name, o->filter)) continue;
            bench_note(o, "bench lowp: conv %s, %d thread%s...", cshapes[i].name, counts[ti],
                       counts[ti] > 1 ? "s" : "");
            rc = bench_conv(o, &t, &cshapes[i], ctx, counts[ti]);
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    return rc;
}
