/* ridge bench convbwd: the convolution's backward passes (issue 8), NHWC.
 *
 * Per shape and thread count (1 and all):
 *   dx  direct (padding-free, phase-split, the shipped path) against the padded-copy method:
 *       materialize dy zero-padded (and dilated by the stride), rotate and transpose the
 *       weights, and run the forward direct convolution on it (plan creation included: the
 *       weights change every training step). Same micro-kernel both ways, so the ratio is
 *       the cost of the buffer; its size is the memory the padding-free path saves.
 *   dw  direct (per output-channel block x tap on the micro-kernel) against im2col + SGEMM.
 * Every result is first checked against the fp64 reference. Methods are timed in interleaved
 * rounds (one call of each per round), medians reported. Time it alone:
 *   flock /tmp/ridge-bench.lock ridge bench convbwd */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char ridge_bench_convbwd_summary[] =
    "convolution backward: padding-free dx vs a padded copy, dw direct vs im2col+SGEMM";

typedef struct bwd_case {
    const char *name;
    int64_t n, ci, h, w, co, r, stride, pad;
} bwd_case;

static const bwd_case cases[] = {
    /* name                n   ci   h    w    co   r  st pad */
    {"resnet-3x3-64",      1,  64,  56,  56,  64,  3, 1, 1},
    {"resnet-3x3-128",     1,  128, 28,  28,  128, 3, 1, 1},
    {"resnet-3x3-256",     1,  256, 14,  14,  256, 3, 1, 1},
    {"resnet-3x3-s2-128",  1,  64,  56,  56,  128, 3, 2, 1},
    {"resnet-first-7x7",   1,  3,   224, 224, 64,  7, 2, 3},
    {"resnet-1x1-64",      1,  64,  56,  56,  64,  1, 1, 0},
    {"fmnist-conv2-b64",   64, 32,  14,  14,  64,  3, 1, 1},
    {"large-9x9",          1,  16,  64,  64,  16,  9, 1, 4},
};

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* max |got - ref| / max |ref| */
static double rel_err(const float *got, const float *ref, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - ref[i]);
        if (!(d <= e)) e = d;
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    return e / (m > 0 ? m : 1);
}

typedef struct work {
    ridge_ctx *ctx;
    ridge_conv2d_desc d, pd; /* the convolution; the padded-copy method's forward */
    int64_t oh, ow, hp, wp, offh, offw;
    ridge_conv2d_bwd_plan *bp[2]; /* dw direct, dw im2col (dx direct in both) */
    const float *x, *w, *dy;
    float *dx, *dw, *db, *pad, *wt;
} work;

/* The padded-copy dx: dy scattered into a zeroed (hp x wp) buffer at stride steps, weights
 * rotated and transposed, the forward direct convolution with no padding. */
static void dx_padded(work *k)
{
    const ridge_conv2d_desc *d = &k->d;
    const int64_t co = d->c_out, ci = d->c_in, R = d->r, S = d->s;
    memset(k->pad, 0, (size_t)(d->n * k->hp * k->wp * co) * sizeof(float));
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t i = 0; i < k->oh; i++)
            for (int64_t j = 0; j < k->ow; j++)
                memcpy(k->pad + ((n * k->hp + k->offh + i * d->stride_h) * k->wp + k->offw +
                                 j * d->stride_w) * co,
                       k->dy + ((n * k->oh + i) * k->ow + j) * co, (size_t)co * sizeof(float));
    for (int64_t o = 0; o < ci; o++)
        for (int64_t c = 0; c < co; c++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t s = 0; s < S; s++)
                    k->wt[((o * co + c) * R + r) * S + s] =
                        k->w[((c * ci + o) * R + (R - 1 - r)) * S + (S - 1 - s)];
    ridge_conv2d_plan_options po = {RIDGE_CONV_DIRECT, 0};
    ridge_conv2d_plan *p;
    if (ridge_conv2d_plan_create(k->ctx, &k->pd, k->wt, &po, &p)) return;
    ridge_conv2d_forward(k->ctx, p, k->pad, k->dx, NULL, NULL, NULL);
    ridge_conv2d_plan_destroy(p);
}

static void run(work *k, int m)
{
    switch (m) {
    case 0: ridge_conv2d_backward_data(k->ctx, k->bp[0], k->dx, k->dy, k->w, NULL); break;
    case 1: dx_padded(k); break;
    case 2: ridge_conv2d_backward_weights(k->ctx, k->bp[0], k->dw, k->db, k->x, k->dy, NULL); break;
    default:
        ridge_conv2d_backward_weights(k->ctx, k->bp[1], k->dw, k->db, k->x, k->dy, NULL);
        break;
    }
}

static const char *const names[4] = {"dx direct (padding-free)", "dx padded copy",
                                     "dw direct", "dw im2col+sgemm"};

static int bench_case(const ridge_bench_opts *o, bench_table *t, const bwd_case *c, ridge_ctx *ctx,
                      int threads)
{
    work k = {.ctx = ctx};
    ridge_conv2d_desc *d = &k.d;
    ridge_conv2d_desc_init(d);
    d->n = c->n, d->c_in = c->ci, d->h = c->h, d->w = c->w, d->c_out = c->co, d->r = d->s = c->r;
    d->stride_h = d->stride_w = c->stride;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = c->pad;
    d->layout = RIDGE_NHWC;
    if (ridge_conv2d_desc_check(d, &k.oh, &k.ow)) {
        fprintf(stderr, "bench convbwd: %s: %s\n", c->name, ridge_last_error());
        return 1;
    }
    /* padded copy: dilated dy, (r-1) - pad zeros before, enough after for h outputs */
    k.offh = (d->r - 1) - d->pad_top, k.offw = (d->s - 1) - d->pad_left;
    k.hp = d->h + d->r - 1, k.wp = d->w + d->s - 1;
    k.pd = *d;
    k.pd.c_in = d->c_out, k.pd.c_out = d->c_in, k.pd.h = k.hp, k.pd.w = k.wp;
    k.pd.stride_h = k.pd.stride_w = 1;
    k.pd.pad_top = k.pd.pad_bottom = k.pd.pad_left = k.pd.pad_right = 0;
    const size_t xn = (size_t)(d->n * d->h * d->w * d->c_in),
                 yn = (size_t)(d->n * k.oh * k.ow * d->c_out);
    const size_t wn = (size_t)(d->c_out * d->c_in * d->r * d->s),
                 padn = (size_t)(d->n * k.hp * k.wp * d->c_out);
    float *x = malloc(xn * 4), *w = malloc(wn * 4), *dy = malloc(yn * 4), *rx = malloc(xn * 4);
    float *rw = malloc((wn + (size_t)d->c_out) * 4);
    k.dx = malloc(xn * 4), k.dw = malloc(wn * 4), k.db = malloc((size_t)d->c_out * 4);
    k.pad = malloc(padn * 4), k.wt = malloc(wn * 4);
    unsigned s = 7;
    for (size_t i = 0; i < xn; i++) x[i] = frand(&s);
    for (size_t i = 0; i < wn; i++) w[i] = frand(&s);
    for (size_t i = 0; i < yn; i++) dy[i] = frand(&s);
    k.x = x, k.w = w, k.dy = dy;
    ridge_conv2d_bwd_options bo[2] = {{RIDGE_CONV_DIRECT, RIDGE_CONV_DIRECT},
                                      {RIDGE_CONV_DIRECT, RIDGE_CONV_IM2COL}};
    int fail = 0;
    for (int i = 0; i < 2; i++)
        if (ridge_conv2d_bwd_plan_create(ctx, d, &bo[i], &k.bp[i])) {
            fprintf(stderr, "bench convbwd: %s: %s\n", c->name, ridge_last_error());
            fail = 1;
        }
    if (fail || ridge_conv2d_backward_data_ref(d, rx, dy, w) ||
        ridge_conv2d_backward_weights_ref(d, rw, rw + wn, x, dy)) {
        fail = 1;
        goto done;
    }
    double err[4];
    for (int m = 0; m < 4; m++) {
        run(&k, m);
        err[m] = m < 2 ? rel_err(k.dx, rx, xn) : rel_err(k.dw, rw, wn);
        if (!(err[m] < 1e-4)) {
            fprintf(stderr, "bench convbwd: %s: %s wrong (relative error %.2e)\n", c->name,
                    names[m], err[m]);
            fail = 1;
        }
    }
    if (fail) goto done;
    const int reps = o->quick ? 5 : 15;
    double *smp = malloc(sizeof(double) * 4 * (size_t)reps);
    for (int m = 0; m < 4; m++) run(&k, m); /* warm-up */
    for (int r = 0; r < reps; r++)
        for (int m = 0; m < 4; m++) {
            uint64_t t0 = ridge_time_ns();
            run(&k, m);
            smp[m * reps + r] = (double)(ridge_time_ns() - t0) * 1e-9;
        }
    bench_stats st[4];
    for (int m = 0; m < 4; m++) st[m] = bench_summarize(smp + m * reps, (size_t)reps);
    free(smp);
    const double gf = ridge_conv2d_flops(d) * 1e-9;
    for (int m = 0; m < 4; m++) {
        const int dxm = m < 2;
        bench_val v[] = {
            {c->name, 0},
            {NULL, threads},
            {names[m], 0},
            {NULL, st[m].median * 1e3},
            {NULL, st[m].best * 1e3},
            {NULL, gf / st[m].median},
            {NULL, m == 1 ? (double)padn * 4 / 1024 : 0},
            {NULL, dxm ? st[1].median / st[m].median : st[3].median / st[m].median},
            {NULL, err[m]},
        };
        bench_table_row(t, v);
    }
done:
    for (int i = 0; i < 2; i++) ridge_conv2d_bwd_plan_destroy(k.bp[i]);
    free(x), free(w), free(dy), free(rx), free(rw), free(k.dx), free(k.dw), free(k.db);
    free(k.pad), free(k.wt);
    return fail;
}

int ridge_bench_convbwd(const ridge_bench_opts *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(
                "usage: ridge bench convbwd [--quick] [--filter NAME] [--threads N] [--json]\n\n"
                "Convolution backward, NHWC: padding-free dx against the padded-copy method\n"
                "(ratio x_ref = padded time / this time; buffer_kib: the padded copy's size, what\n"
                "the padding-free path saves), dw direct against im2col + SGEMM (x_ref = im2col\n"
                "time / this time). GFLOP/s on the direct count 2 n oh ow co ci r s.\n");
            return 0;
        }
        fprintf(stderr, "ridge bench convbwd: unknown option '%s' (see --help)\n", argv[i]);
        return 2;
    }
    static const bench_col cols[] = {
        {"shape", BENCH_STR},  {"threads", BENCH_INT},   {"method", BENCH_STR},
        {"ms", BENCH_F3},      {"best_ms", BENCH_F3},    {"gflops", BENCH_F1},
        {"buffer_kib", BENCH_F1}, {"x_ref", BENCH_F2},   {"max_err", BENCH_F3},
    };
    bench_table t;
    bench_table_begin(&t, o, "convbwd: backward data and weights (NHWC)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    int counts[2] = {1, max_threads}, fail = 0;
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
        ridge_ctx_options co;
        ridge_ctx_options_init(&co);
        co.threads = counts[ti];
        co.isa = o->isa;
        ridge_ctx *ctx = NULL;
        if (ridge_ctx_create(&co, &ctx)) {
            fprintf(stderr, "bench convbwd: %s\n", ridge_last_error());
            return 1;
        }
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            if (o->filter && !strstr(cases[c].name, o->filter)) continue;
            bench_note(o, "bench convbwd: %s, %d thread%s...", cases[c].name, counts[ti],
                       counts[ti] > 1 ? "s" : "");
            fail |= bench_case(o, &t, &cases[c], ctx, counts[ti]);
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    return fail;
}
