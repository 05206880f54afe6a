/* ridge bench layout: the data-movement kernels around the convolutions, against the measured
 * bandwidth roof and (--peers, when built with RIDGE_BENCH_PEERS) oneDNN in the same process:
 * the reorders between NCHW, NHWC and NCHW16c (ridge_layout_reorder, every ordered pair) and
 * max and average pooling in each layout (ridge_pool2d_forward).
 *
 * Each result is checked first: a reorder element by element against the layouts' index
 * formulas (and padded channels of NCHW16c zero), a pooling against plain loops over the
 * logical (n, c, h, w) tensor. Then ridge and oneDNN are timed round-robin, one call each per
 * round after untimed calls of the same method (as bench conv), so each finds its operands in
 * cache as a layer finds what its predecessor wrote. GB/s counts the bytes read and written
 * once (source and destination, NCHW16c with its padded channels); % roof judges that against
 * the bandwidth of the cache level the two fit in (ridge roofline). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef RIDGE_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

const char ridge_bench_layout_summary[] =
    "layout reorders (NCHW, NHWC, NCHW16c) and pooling in each layout: GB/s, % of roof, oneDNN";

typedef struct tensor_case {
    const char *name;
    int64_t c, h, w;
} tensor_case;

static const tensor_case tensors[] = {
    {"image-3x224", 3, 224, 224},      /* a network's input */
    {"act-64x56", 64, 56, 56},         /* ResNet stage 1 */
    {"act-32x112", 32, 112, 112},      /* MobileNet's first block */
    {"act-256x14", 256, 14, 14},       /* ResNet stage 3 */
    {"act-17x33", 17, 33, 33},         /* channels not a multiple of 16 */
};

typedef struct pool_case {
    const char *name;
    int64_t c, h, w, r, stride, pad;
    ridge_pool_kind kind;
} pool_case;

static const pool_case pools[] = {
    {"maxpool-3x3s2-64x112", 64, 112, 112, 3, 2, 1, RIDGE_POOL_MAX}, /* ResNet's stem */
    {"maxpool-2x2-32x28", 32, 28, 28, 2, 2, 0, RIDGE_POOL_MAX},      /* the Fashion-MNIST CNN */
    {"avgpool-2x2-256x28", 256, 28, 28, 2, 2, 0, RIDGE_POOL_AVG},    /* DenseNet's transition */
    {"avgpool-7x7-512x7", 512, 7, 7, 7, 1, 0, RIDGE_POOL_AVG},       /* a global average */
};

static const ridge_layout all_layouts[3] = {RIDGE_NCHW, RIDGE_NHWC, RIDGE_NCHW16C};

/* Index of logical element (n, c, y, x) in layout l */
static size_t at(ridge_layout l, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t y,
                 int64_t x)
{
    switch (l) {
    case RIDGE_NHWC: return (size_t)(((n * H + y) * W + x) * C + c);
    case RIDGE_NCHW16C: {
        int64_t cb = (C + 15) / 16;
        return (size_t)((((n * cb + c / 16) * H + y) * W + x) * 16 + c % 16);
    }
    default: return (size_t)(((n * C + c) * H + y) * W + x);
    }
}

enum { MAX_METHODS = 2 };

typedef struct method {
    char name[48];
    int kind; /* 0 ridge, 2 oneDNN */
    double *samples;
    int ok;
#ifdef RIDGE_HAVE_DNNL
    dnnl_primitive_t prim;
    dnnl_memory_t src, dst, ws;
#endif
} method;

typedef struct job {
    int pool;                  /* 0: reorder, 1: pooling */
    ridge_layout sl, dl;       /* reorder: source and destination; pooling: sl */
    int64_t n, c, h, w;
    ridge_pool2d_desc pd;
    const float *x;
    float *y;
} job;

/* ---- oneDNN ---------------------------------------------------------------------------------- */

#ifdef RIDGE_HAVE_DNNL
static dnnl_engine_t eng;
static dnnl_stream_t str;

static dnnl_format_tag_t tag_of(ridge_layout l)
{
    return l == RIDGE_NHWC ? dnnl_nhwc : l == RIDGE_NCHW16C ? dnnl_nChw16c : dnnl_nchw;
}

static void dnnl_release(method *m)
{
    if (m->prim) dnnl_primitive_destroy(m->prim);
    if (m->src) dnnl_memory_destroy(m->src);
    if (m->dst) dnnl_memory_destroy(m->dst);
    if (m->ws) dnnl_memory_destroy(m->ws);
}

static int dnnl_setup(method *m, const job *j, int threads)
{
    if (!eng && (dnnl_engine_create(&eng, dnnl_cpu, 0) ||
                 dnnl_stream_create(&str, eng, dnnl_stream_default_flags)))
        return -1;
    omp_set_num_threads(threads);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_memory_desc_t smd, dmd;
    dnnl_dims_t sd = {j->n, j->c, j->h, j->w};
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag_of(j->sl));
    if (!j->pool) {
        dnnl_memory_desc_init_by_tag(&dmd, 4, sd, dnnl_f32, tag_of(j->dl));
        if (dnnl_reorder_primitive_desc_create(&pd, &smd, eng, &dmd, eng, NULL)) return -1;
    } else {
        const ridge_pool2d_desc *p = &j->pd;
        int64_t oh, ow;
        ridge_pool2d_desc_check(p, &oh, &ow);
        dnnl_dims_t dd = {j->n, j->c, oh, ow}, k = {p->r, p->s}, st = {p->stride_h, p->stride_w};
        dnnl_dims_t pl = {p->pad_top, p->pad_left}, pr = {p->pad_bottom, p->pad_right};
        dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag_of(j->sl));
        dnnl_alg_kind_t alg = p->kind == RIDGE_POOL_MAX ? dnnl_pooling_max
                              : p->count_pad          ? dnnl_pooling_avg_include_padding
                                                      : dnnl_pooling_avg_exclude_padding;
        dnnl_pooling_desc_t desc;
        if (dnnl_pooling_forward_desc_init(&desc, dnnl_forward_inference, alg, &smd, &dmd, st, k,
                                           pl, pr) ||
            dnnl_primitive_desc_create(&pd, &desc, NULL, eng, NULL))
            return -1;
    }
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(m->name, sizeof m->name, "onednn:%s", impl);
    int rc = dnnl_primitive_create(&m->prim, pd) != dnnl_success;
    if (!rc) {
        const dnnl_memory_desc_t *q_d = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
        dnnl_memory_create(&m->src, &smd, eng, (void *)j->x);
        dnnl_memory_create(&m->dst, q_d, eng, j->y);
    }
    dnnl_primitive_desc_destroy(pd);
    return rc ? -1 : 0;
}
#endif

static int run_method(ridge_ctx *ctx, method *m, const job *j)
{
    if (m->kind == 0) {
        if (j->pool) return ridge_pool2d_forward(ctx, &j->pd, j->x, j->y) ? -1 : 0;
        return ridge_layout_reorder(ctx, j->y, j->dl, j->x, j->sl, j->n, j->c, j->h, j->w) ? -1
                                                                                         : 0;
    }
#ifdef RIDGE_HAVE_DNNL
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, m->src}, {DNNL_ARG_TO, m->dst}};
    if (j->pool) args[0].arg = DNNL_ARG_SRC, args[1].arg = DNNL_ARG_DST;
    int rc = dnnl_primitive_execute(m->prim, str, 2, args) != dnnl_success;
    dnnl_stream_wait(str);
    return rc ? -1 : 0;
#else
    return -1;
#endif
}

/* ---- checks ---------------------------------------------------------------------------------- */

/* 0 if y is x reordered from j->sl to j->dl, padded channels zero */
static int check_reorder(const job *j, const float *x, const float *y)
{
    int64_t C = j->c, H = j->h, W = j->w, cp = j->dl == RIDGE_NCHW16C ? (C + 15) / 16 * 16 : C;
    for (int64_t n = 0; n < j->n; n++)
        for (int64_t c = 0; c < cp; c++)
            for (int64_t yy = 0; yy < H; yy++)
                for (int64_t xx = 0; xx < W; xx++) {
                    float want = c < C ? x[at(j->sl, C, H, W, n, c, yy, xx)] : 0.0f;
                    if (y[at(j->dl, C, H, W, n, c, yy, xx)] != want) return -1;
                }
    return 0;
}

/* 0 if y is the pooling of x, within float rounding for the average */
static int check_pool(const job *j, const float *x, const float *y)
{
    const ridge_pool2d_desc *p = &j->pd;
    int64_t oh, ow, C = j->c, H = j->h, W = j->w;
    ridge_pool2d_desc_check(p, &oh, &ow);
    for (int64_t n = 0; n < j->n; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t o = 0; o < ow; o++) {
                    double acc = p->kind == RIDGE_POOL_MAX ? -INFINITY : 0.0;
                    int cnt = 0;
                    for (int64_t r = 0; r < p->r; r++)
                        for (int64_t s = 0; s < p->s; s++) {
                            int64_t yy = i * p->stride_h - p->pad_top + r;
                            int64_t xx = o * p->stride_w - p->pad_left + s;
                            if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
                            double v = x[at(j->sl, C, H, W, n, c, yy, xx)];
                            acc = p->kind == RIDGE_POOL_MAX ? fmax(acc, v) : acc + v;
                            cnt++;
                        }
                    if (p->kind == RIDGE_POOL_AVG) acc /= p->count_pad ? p->r * p->s : cnt;
                    double got = y[at(j->sl, C, oh, ow, n, c, i, o)];
                    if (!(fabs(got - acc) <= 1e-5 * (1.0 + fabs(acc)))) return -1;
                }
    return 0;
}

/* ---- one case -------------------------------------------------------------------------------- */

typedef struct run_ctx {
    const ridge_bench_opts *o;
    bench_table *t;
    ridge_roofline roof;
    int have_roof;
} run_ctx;

static int bench_job(run_ctx *rc, const char *name, job *j, ridge_ctx *ctx, int threads)
{
    const ridge_bench_opts *o = rc->o;
    int64_t oh = j->h, ow = j->w;
    if (j->pool && ridge_pool2d_desc_check(&j->pd, &oh, &ow)) return -1;
    const ridge_layout yl = j->pool ? j->sl : j->dl;
    size_t xn = ridge_tensor_elems(j->sl, j->n, j->c, j->h, j->w);
    size_t yn = ridge_tensor_elems(yl, j->n, j->c, oh, ow);
    float *x = ridge_malloc(xn * 4), *y = ridge_malloc(yn * 4);
    method ms[MAX_METHODS];
    int nm = 0, fail = 0;
    memset(ms, 0, sizeof ms);
    if (!x || !y) {
        fail = 1;
        goto done;
    }
    unsigned seed = 7;
    for (size_t i = 0; i < xn; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
    if (j->sl == RIDGE_NCHW16C) /* padded channels zero, as a producer leaves them */
        for (int64_t n = 0; n < j->n; n++)
            for (int64_t c = j->c; c < (j->c + 15) / 16 * 16; c++)
                for (int64_t i = 0; i < j->h * j->w; i++)
                    x[at(RIDGE_NCHW16C, j->c, j->h, j->w, n, c, 0, 0) + (size_t)i * 16] = 0.0f;
    j->x = x, j->y = y;
    snprintf(ms[0].name, sizeof ms[0].name, "ridge");
    nm = 1;
#ifdef RIDGE_HAVE_DNNL
    if (o->peers) {
        ms[1].kind = 2;
        if (dnnl_setup(&ms[1], j, threads) == 0) nm = 2;
        else {
            bench_note(o, "bench layout: oneDNN refused %s", name);
            dnnl_release(&ms[1]);
            memset(&ms[1], 0, sizeof ms[1]);
        }
    }
#endif
    for (int i = 0; i < nm; i++) {
        for (size_t k = 0; k < yn; k++) y[k] = NAN;
        ms[i].ok = run_method(ctx, &ms[i], j) == 0 &&
                   (j->pool ? check_pool(j, x, y) : check_reorder(j, x, y)) == 0;
        if (!ms[i].ok) {
            fprintf(stderr, "bench layout: %s %s: wrong result\n", name, ms[i].name);
            fail = 1;
        }
    }
    const double bytes = 4.0 * ((double)xn + (double)yn);
    const int rounds = o->quick ? 3 : 11;
    /* calls per sample: at least 4 MB moved a sample */
    const int per = bytes < 4e6 ? (int)ceil(4e6 / bytes) : 1;
    for (int i = 0; i < nm; i++) ms[i].samples = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < nm; q++) {
            method *m = &ms[(q + r) % nm];
            if (!m->ok || !m->samples) continue;
            if (threads > 1) {
                bench_quiesce(3000);
                if (m->kind == 2) bench_omp_spread();
                BENCH_WAKE(run_method(ctx, m, j));
            } else {
                run_method(ctx, m, j);
            }
            uint64_t t0 = ridge_time_ns();
            for (int k = 0; k < per; k++) run_method(ctx, m, j);
            m->samples[r] = (double)(ridge_time_ns() - t0) * 1e-9 / per;
        }
    bench_stats st[MAX_METHODS] = {{0}};
    double t_dnnl = NAN;
    for (int i = 0; i < nm; i++)
        if (ms[i].ok && ms[i].samples) {
            st[i] = bench_summarize(ms[i].samples, (size_t)rounds);
            if (ms[i].kind == 2) t_dnnl = st[i].median;
        }
    char lay[32];
    if (j->pool) snprintf(lay, sizeof lay, "%s", ridge_layout_name(j->sl));
    else snprintf(lay, sizeof lay, "%s>%s", ridge_layout_name(j->sl), ridge_layout_name(j->dl));
    for (int i = 0; i < nm; i++) {
        if (!ms[i].ok || !ms[i].samples) continue;
        double frac = NAN;
        ridge_roofline_verdict v;
        if (rc->have_roof &&
            ridge_roofline_judge(&rc->roof, threads, ridge_roofline_peak_f32(ridge_ctx_isa(ctx)),
                                 0, bytes, bytes, st[i].median, &v) == RIDGE_OK)
            frac = v.fraction * 100;
        bench_val row[] = {
            {name, 0},
            {lay, 0},
            {NULL, threads},
            {ms[i].name, 0},
            {NULL, st[i].median * 1e3},
            {NULL, st[i].best * 1e3},
            {NULL, bytes / st[i].median * 1e-9},
            {NULL, frac},
            {NULL, ms[i].kind == 0 ? t_dnnl / st[i].median : NAN},
        };
        bench_table_row(rc->t, row);
    }
done:
    for (int i = 0; i < nm; i++) {
        free(ms[i].samples);
#ifdef RIDGE_HAVE_DNNL
        if (ms[i].kind == 2) dnnl_release(&ms[i]);
#endif
    }
    ridge_free(x), ridge_free(y);
    return fail ? -1 : 0;
}

/* ---- the entry point ------------------------------------------------------------------------- */

static void help(void)
{
    printf("usage: ridge bench layout [--quick] [--peers] [--json] [--threads N] [--filter TEXT]\n"
           "                          [--batch N]\n\n"
           "Times ridge_layout_reorder between NCHW, NHWC and NCHW16c (every ordered pair) on\n"
           "a network's input (3 x 224 x 224), activations of ResNet and MobileNet, and a\n"
           "tensor whose channels are not a multiple of 16; and ridge_pool2d_forward in each\n"
           "layout (ResNet's 3x3 stride-2 max pooling, the Fashion-MNIST CNN's 2x2 max, a 2x2\n"
           "average, a 7x7 global average), at 1 thread and at --threads, after checking each\n"
           "result, with oneDNN's reorder and pooling primitives in the same rounds (--peers).\n"
           "Columns: median and best ms, GB/s (source and destination bytes, each once), %% of\n"
           "the bandwidth roof of the cache level they fit in (ridge roofline), x_onednn\n"
           "(oneDNN's time / ridge's: > 1 is faster than oneDNN). Default batch 1.\n");
}

int ridge_bench_layout(const ridge_bench_opts *o, int argc, char **argv)
{
    long batch = 1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            return 0;
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            char *end;
            batch = strtol(argv[++i], &end, 10);
            if (*end || batch < 1 || batch > 1024) {
                fprintf(stderr, "ridge bench layout: --batch '%s': expected 1..1024\n", argv[i]);
                return BENCH_USAGE;
            }
        } else {
            fprintf(stderr, "ridge bench layout: unknown option '%s' (see --help)\n", argv[i]);
            return BENCH_USAGE;
        }
    }
    static const bench_col cols[] = {
        {"case", BENCH_STR},   {"layout", BENCH_STR},  {"threads", BENCH_INT},
        {"method", BENCH_STR}, {"ms", BENCH_F3},       {"best_ms", BENCH_F3},
        {"gbs", BENCH_F1},     {"roof_pct", BENCH_F1}, {"x_onednn", BENCH_F2},
    };
#ifndef RIDGE_HAVE_DNNL
    if (o->peers) bench_note(o, "bench layout: built without RIDGE_BENCH_PEERS: no oneDNN rows");
#endif
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    run_ctx rc = {o, NULL, {0}, 0};
    bench_table t;
    rc.t = &t;
    bench_table_begin(&t, o, "layout: reorders and pooling (GB/s of source and destination)",
                      cols, (int)(sizeof cols / sizeof cols[0]));
    {
        ridge_ctx *rctx = bench_ctx(o, max_threads, "layout");
        if (rctx)
            rc.have_roof = ridge_roofline_for_ctx(rctx, RIDGE_ROOFLINE_QUICK, &rc.roof) == RIDGE_OK;
        ridge_ctx_destroy(rctx);
    }
    int fail = 0, counts[2] = {1, max_threads};
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
        ridge_ctx *ctx = bench_ctx(o, counts[ti], "layout");
        if (!ctx) {
            fail = 1;
            break;
        }
        for (size_t c = 0; c < sizeof tensors / sizeof tensors[0]; c++) {
            const tensor_case *tc = &tensors[c];
            if (o->filter && !strstr(tc->name, o->filter)) continue;
            bench_note(o, "bench layout: reorders of %s, %d thread%s...", tc->name, counts[ti],
                       counts[ti] > 1 ? "s" : "");
            for (int s = 0; s < 3; s++)
                for (int d = 0; d < 3; d++) {
                    if (s == d) continue;
                    job j = {.sl = all_layouts[s], .dl = all_layouts[d], .n = batch, .c = tc->c, .h = tc->h,
                             .w = tc->w};
                    fail |= bench_job(&rc, tc->name, &j, ctx, counts[ti]) != 0;
                }
        }
        for (size_t c = 0; c < sizeof pools / sizeof pools[0]; c++) {
            const pool_case *pc = &pools[c];
            if (o->filter && !strstr(pc->name, o->filter)) continue;
            bench_note(o, "bench layout: %s, %d thread%s...", pc->name, counts[ti],
                       counts[ti] > 1 ? "s" : "");
            for (int l = 0; l < 3; l++) {
                job j = {.pool = 1, .sl = all_layouts[l], .dl = all_layouts[l], .n = batch,
                         .c = pc->c, .h = pc->h, .w = pc->w};
                j.pd = (ridge_pool2d_desc){batch,      pc->c,      pc->h,   pc->w,
                                           pc->r,      pc->r,      pc->stride, pc->stride,
                                           pc->pad,    pc->pad,    pc->pad, pc->pad,
                                           pc->kind,   0,          all_layouts[l]};
                fail |= bench_job(&rc, pc->name, &j, ctx, counts[ti]) != 0;
            }
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    return fail;
}
