/* ridge bench conv: every algorithm that applies to each typical shape, and AUTO's pick,
 * against the measured roof and (--peers, when built with RIDGE_BENCH_PEERS) against oneDNN
 * in the same process, interleaved.
 *
 * Per shape and layout: each candidate is planned (weights packed outside the timing) and
 * checked against the fp64 reference first (max |y - ref| / max |ref|); then all methods are
 * timed round-robin, one call each per round, so slow phases of the VM hit every method
 * alike; each timed call follows untimed calls of the same method (docs/ARCHITECTURE.md,
 * "Waking before timing"), so it finds its own operands in cache. GFLOP/s is always on the
 * direct algorithm's FLOP count (Winograd's fewer multiplications show as a higher effective
 * rate); % roof judges that against the roofline profile (ridge roofline). `direct-padded` is
 * the direct kernel run the old way, on a zero-padded copy of the input made inside the
 * timing, to show what padding-free saves. oneDNN runs with its own layout (format_tag any,
 * reorders outside the timing) and with the plain layout of the row; one primitive per thread
 * count (its OpenMP team is fixed then). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef RIDGE_HAVE_DNNL
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#endif

const char ridge_bench_conv_summary[] =
    "convolution: every algorithm per shape, AUTO's pick, % of roof, oneDNN as peer";

typedef struct conv_case {
    const char *name;
    int64_t ci, h, w, co, r, stride, pad, groups;
    int64_t s, pad_w; /* a kernel r x s with padding pad_w left and right (0, 0: square) */
} conv_case;

static const conv_case cases[] = {
    /* name              ci   h    w    co   r  st pad groups s pad_w */
    {"resnet-3x3-64",    64,  56,  56,  64,  3, 1, 1, 1, 0, 0},
    {"resnet-3x3-128",   128, 28,  28,  128, 3, 1, 1, 1, 0, 0},
    {"resnet-3x3-256",   256, 14,  14,  256, 3, 1, 1, 1, 0, 0},
    {"resnet-first-7x7", 3,   224, 224, 64,  7, 2, 3, 1, 0, 0},
    {"resnet-1x1-64",    64,  56,  56,  64,  1, 1, 0, 1, 0, 0},
    {"resnet-1x1-256-64", 256, 56, 56,  64,  1, 1, 0, 1, 0, 0},
    {"mobilenet-dw-32",  32,  112, 112, 32,  3, 1, 1, 32, 0, 0},
    {"mobilenet-dw-64",  64,  56,  56,  64,  3, 1, 1, 64, 0, 0},
    /* its middle layers, and a stride-2 one (each halves the image) */
    {"mobilenet-dw-128", 128, 56,  56,  128, 3, 1, 1, 128, 0, 0},
    {"mobilenet-dw-256", 256, 28,  28,  256, 3, 1, 1, 256, 0, 0},
    {"mobilenet-dw-256-s2", 256, 28, 28, 256, 3, 2, 1, 256, 0, 0},
    /* MobileNet's last depthwise layers: 2 KiB and 4 KiB between a channel's pixels */
    {"mobilenet-dw-512", 512, 14,  14,  512, 3, 1, 1, 512, 0, 0},
    {"mobilenet-dw-1024", 1024, 7, 7,   1024, 3, 1, 1, 1024, 0, 0},
    {"effnet-dw5-240",   240, 28,  28,  240, 5, 1, 2, 240, 0, 0},
    {"convnext-dw7-96",  96,  56,  56,  96,  7, 1, 3, 96, 0, 0},
    {"fmnist-conv1",     1,   28,  28,  32,  3, 1, 1, 1, 0, 0},
    {"fmnist-conv2",     32,  14,  14,  64,  3, 1, 1, 1, 0, 0},
    {"large-9x9",        16,  64,  64,  16,  9, 1, 4, 1, 0, 0},
    {"large-11x11",      16,  64,  64,  16,  11, 1, 5, 1, 0, 0},
    {"large-5x5-64-56",  64,  56,  56,  64,  5, 1, 2, 1, 0, 0},
    {"large-7x7-64-56",  64,  56,  56,  64,  7, 1, 3, 1, 0, 0},
    {"large-7x7-64-28",  64,  28,  28,  64,  7, 1, 3, 1, 0, 0},
    {"large-11x11-64-56", 64, 56,  56,  64,  11, 1, 5, 1, 0, 0},
    {"large-11x11-64-28", 64, 28,  28,  64,  11, 1, 5, 1, 0, 0},
    /* 1-D kernels (sequences, audio): FFT on tiles of one row */
    {"long-1x31-64",     64,  1,   2048, 64, 1, 1, 0, 1, 31, 15},
    {"long-1x63-16",     16,  1,   4096, 16, 1, 1, 0, 1, 63, 31},
};

enum { MAX_METHODS = 16 };

typedef struct method {
    char name[48];
    int kind;                 /* 0 ridge plan, 1 direct on a padded copy, 2 oneDNN */
    ridge_conv2d_plan *plan;
    void *ws;
    size_t ws_bytes, extra_bytes;
    double err;
    double *samples;
    int ok;
#ifdef RIDGE_HAVE_DNNL
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, dst, bia, scratch;
    float *src_buf, *dst_buf, *wei_buf, *scr_buf;
#endif
} method;

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static double max_rel_err(const float *y, const float *ref, size_t n)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)y[i] - ref[i]);
        if (!(d <= e)) e = d;
        if (fabs(ref[i]) > m) m = fabs(ref[i]);
    }
    return m > 0 ? e / m : e;
}

/* ---- oneDNN ---------------------------------------------------------------------------------- */

#ifdef RIDGE_HAVE_DNNL
static dnnl_engine_t dnnl_eng;
static dnnl_stream_t dnnl_str;

static void dnnl_release(method *m)
{
    if (m->prim) dnnl_primitive_destroy(m->prim);
    dnnl_memory_t mems[] = {m->src, m->wei, m->dst, m->bia, m->scratch};
    for (int i = 0; i < 5; i++)
        if (mems[i]) dnnl_memory_destroy(mems[i]);
    free(m->src_buf), free(m->dst_buf), free(m->wei_buf), free(m->scr_buf);
}

/* Reorders between two memory descriptors over plain buffers (outside any timing). */
static int dnnl_copy(const dnnl_memory_desc_t *smd, void *s, const dnnl_memory_desc_t *dmd,
                     void *d)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    dnnl_memory_t sm, dm;
    if (dnnl_reorder_primitive_desc_create(&pd, smd, dnnl_eng, dmd, dnnl_eng, NULL)) return -1;
    int rc = dnnl_primitive_create(&p, pd) != dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    if (rc) return -1;
    dnnl_memory_create(&sm, smd, dnnl_eng, s);
    dnnl_memory_create(&dm, dmd, dnnl_eng, d);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, sm}, {DNNL_ARG_TO, dm}};
    rc = dnnl_primitive_execute(p, dnnl_str, 2, args) != dnnl_success;
    dnnl_stream_wait(dnnl_str);
    dnnl_primitive_destroy(p);
    dnnl_memory_destroy(sm);
    dnnl_memory_destroy(dm);
    return rc ? -1 : 0;
}

/* A oneDNN forward convolution for d with `threads` OpenMP threads; tag_any: its own layout
 * (else the descriptor's plain layout). x, w in ridge's layout / OIHW; y_ref to verify. */
static int dnnl_setup(method *m, const ridge_conv2d_desc *d, int64_t oh, int64_t ow, int tag_any,
                      int threads, const float *x, const float *w, const float *bias)
{
    if (!dnnl_eng) {
        if (dnnl_engine_create(&dnnl_eng, dnnl_cpu, 0) ||
            dnnl_stream_create(&dnnl_str, dnnl_eng, dnnl_stream_default_flags))
            return -1;
    }
    omp_set_num_threads(threads);
    dnnl_format_tag_t plain = d->layout == RIDGE_NHWC      ? dnnl_nhwc
                              : d->layout == RIDGE_NCHW16C ? dnnl_nChw16c
                                                           : dnnl_nchw;
    dnnl_dims_t sd = {d->n, d->c_in, d->h, d->w}, dd = {d->n, d->c_out, oh, ow};
    dnnl_dims_t wd = {d->groups, d->c_out / d->groups, d->c_in / d->groups, d->r, d->s};
    dnnl_dims_t bd = {d->c_out};
    dnnl_dims_t st = {d->stride_h, d->stride_w}, dl = {d->dil_h - 1, d->dil_w - 1};
    dnnl_dims_t pl = {d->pad_top, d->pad_left}, pr = {d->pad_bottom, d->pad_right};
    int g = d->groups > 1;
    dnnl_memory_desc_t smd, dmd, wmd, bmd, s_user, d_user, w_user;
    dnnl_memory_desc_init_by_tag(&s_user, 4, sd, dnnl_f32, plain);
    dnnl_memory_desc_init_by_tag(&d_user, 4, dd, dnnl_f32, plain);
    dnnl_memory_desc_init_by_tag(&w_user, g ? 5 : 4, g ? wd : wd + 1, dnnl_f32,
                                 g ? dnnl_goihw : dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag_any ? dnnl_format_tag_any : plain);
    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag_any ? dnnl_format_tag_any : plain);
    dnnl_memory_desc_init_by_tag(&wmd, g ? 5 : 4, g ? wd : wd + 1, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x);
    dnnl_convolution_desc_t cd;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &smd, &wmd, &bmd,
                                                   &dmd, st, dl, pl, pr))
        return -1;
    dnnl_primitive_attr_t attr;
    dnnl_primitive_attr_create(&attr);
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    dnnl_primitive_desc_t pd;
    dnnl_status_t s = dnnl_primitive_desc_create(&pd, &cd, attr, dnnl_eng, NULL);
    dnnl_primitive_attr_destroy(attr);
    if (s) return -1;
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(m->name, sizeof m->name, "onednn-%s:%s", tag_any ? "any" : "plain", impl);
    if (strstr(impl, "ref")) { /* its reference loops: seconds per call, not a peer */
        dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    const dnnl_memory_desc_t *q_s = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *q_d = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    const dnnl_memory_desc_t *q_w = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *q_p = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t ss = dnnl_memory_desc_get_size(q_s), ds = dnnl_memory_desc_get_size(q_d);
    size_t wsz = dnnl_memory_desc_get_size(q_w), ps = q_p ? dnnl_memory_desc_get_size(q_p) : 0;
    m->src_buf = aligned_alloc(64, (ss + 63) / 64 * 64);
    m->dst_buf = aligned_alloc(64, (ds + 63) / 64 * 64);
    m->wei_buf = aligned_alloc(64, (wsz + 63) / 64 * 64);
    m->scr_buf = ps ? aligned_alloc(64, (ps + 63) / 64 * 64) : NULL;
    m->ws_bytes = ps;
    int rc = -1;
    if (!m->src_buf || !m->dst_buf || !m->wei_buf || (ps && !m->scr_buf)) goto done;
    if (dnnl_copy(&s_user, (void *)x, q_s, m->src_buf) ||
        dnnl_copy(&w_user, (void *)w, q_w, m->wei_buf))
        goto done;
    dnnl_memory_create(&m->src, q_s, dnnl_eng, m->src_buf);
    dnnl_memory_create(&m->dst, q_d, dnnl_eng, m->dst_buf);
    dnnl_memory_create(&m->wei, q_w, dnnl_eng, m->wei_buf);
    dnnl_memory_create(&m->bia, &bmd, dnnl_eng, (void *)bias);
    if (ps) dnnl_memory_create(&m->scratch, q_p, dnnl_eng, m->scr_buf);
    if (dnnl_primitive_create(&m->prim, pd)) goto done;
    rc = 0;
done:
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

static int dnnl_run(method *m)
{
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, m->src}, {DNNL_ARG_WEIGHTS, m->wei},
                              {DNNL_ARG_BIAS, m->bia}, {DNNL_ARG_DST, m->dst},
                              {DNNL_ARG_SCRATCHPAD, m->scratch}};
    int rc = dnnl_primitive_execute(m->prim, dnnl_str, m->scratch ? 5 : 4, args) != dnnl_success;
    dnnl_stream_wait(dnnl_str);
    return rc;
}

/* The primitive's output in the plain layout, for verification. */
static int dnnl_result(method *m, const ridge_conv2d_desc *d, int64_t oh, int64_t ow, float *y)
{
    dnnl_format_tag_t plain = d->layout == RIDGE_NHWC      ? dnnl_nhwc
                              : d->layout == RIDGE_NCHW16C ? dnnl_nChw16c
                                                           : dnnl_nchw;
    dnnl_dims_t dd = {d->n, d->c_out, oh, ow};
    dnnl_memory_desc_t d_user;
    const dnnl_memory_desc_t *q_d;
    dnnl_memory_desc_init_by_tag(&d_user, 4, dd, dnnl_f32, plain);
    dnnl_memory_get_memory_desc(m->dst, &q_d);
    return dnnl_copy(q_d, m->dst_buf, &d_user, y);
}
#endif /* RIDGE_HAVE_DNNL */

/* ---- running a method ------------------------------------------------------------------------ */

/* Copies x into the interior of the padded buffer xp (whose borders are zero): row by row,
 * each row contiguous in every layout (per channel block for NCHW16c, per channel for NCHW). */
static void pad_copy(float *xp, const float *x, const ridge_conv2d_desc *d)
{
    int64_t hp = d->h + d->pad_top + d->pad_bottom, wp = d->w + d->pad_left + d->pad_right;
    int64_t nb = d->layout == RIDGE_NHWC      ? 1
                 : d->layout == RIDGE_NCHW16C ? (d->c_in + 15) / 16
                                              : d->c_in;
    int64_t cw = d->layout == RIDGE_NHWC ? d->c_in : d->layout == RIDGE_NCHW16C ? 16 : 1;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t b = 0; b < nb; b++) {
            const float *s = x + (n * nb + b) * d->h * d->w * cw;
            float *t = xp + (n * nb + b) * hp * wp * cw;
            for (int64_t i = 0; i < d->h; i++)
                memcpy(t + ((i + d->pad_top) * wp + d->pad_left) * cw, s + i * d->w * cw,
                       (size_t)(d->w * cw) * sizeof(float));
        }
}

static int run_method(ridge_ctx *ctx, method *m, const ridge_conv2d_desc *d, const float *x,
                      float *xp, float *y, const float *b)
{
    switch (m->kind) {
    case 0: return ridge_conv2d_forward(ctx, m->plan, x, y, b, NULL, m->ws) ? -1 : 0;
    case 1:
        pad_copy(xp, x, d);
        return ridge_conv2d_forward(ctx, m->plan, xp, y, b, NULL, m->ws) ? -1 : 0;
#ifdef RIDGE_HAVE_DNNL
    case 2: return dnnl_run(m);
#endif
    default: return -1;
    }
}

/* ---- one shape ------------------------------------------------------------------------------- */

typedef struct run_ctx {
    const ridge_bench_opts *o;
    int only_algo;            /* --algo: time only this ridge algorithm (and the peers); -2 all */
    bench_table *t;
    ridge_roofline roof;
    int have_roof;
} run_ctx;

static int bench_case(run_ctx *rc, const conv_case *cs, ridge_layout layout, int64_t batch,
                      ridge_ctx *ctx, int threads)
{
    const ridge_bench_opts *o = rc->o;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = batch, d.c_in = cs->ci, d.h = cs->h, d.w = cs->w, d.c_out = cs->co;
    d.r = cs->r, d.s = cs->s ? cs->s : cs->r, d.stride_h = d.stride_w = cs->stride;
    d.pad_top = d.pad_bottom = cs->pad;
    d.pad_left = d.pad_right = cs->s ? cs->pad_w : cs->pad;
    d.groups = cs->groups, d.layout = layout;
    int64_t oh, ow;
    if (ridge_conv2d_desc_check(&d, &oh, &ow)) return -1;
    size_t xn = ridge_tensor_elems(layout, d.n, d.c_in, d.h, d.w);
    size_t yn = ridge_tensor_elems(layout, d.n, d.c_out, oh, ow);
    size_t wn = (size_t)(d.c_out * d.c_in / d.groups * d.r * d.s);
    /* the padded copy of the input, for direct-padded */
    ridge_conv2d_desc dp = d;
    dp.h += d.pad_top + d.pad_bottom, dp.w += d.pad_left + d.pad_right;
    dp.pad_top = dp.pad_bottom = dp.pad_left = dp.pad_right = 0;
    size_t xpn = ridge_tensor_elems(layout, dp.n, dp.c_in, dp.h, dp.w);
    float *x = ridge_malloc(xn * 4), *w = ridge_malloc(wn * 4), *b = ridge_malloc(d.c_out * 4);
    float *y = ridge_malloc(yn * 4), *ref = ridge_malloc(yn * 4), *xp = ridge_malloc(xpn * 4);
    method ms[MAX_METHODS];
    int nm = 0, fail = 0;
    memset(ms, 0, sizeof ms);
    if (!x || !w || !b || !y || !ref || !xp) {
        fail = 1;
        goto done;
    }
    unsigned seed = 42;
    for (size_t i = 0; i < xn; i++) x[i] = frand(&seed);
    for (size_t i = 0; i < wn; i++) w[i] = frand(&seed) * 0.2f;
    for (int64_t i = 0; i < d.c_out; i++) b[i] = frand(&seed);
    /* zero the padded channels of x (NCHW16c) the way a producer would */
    if (layout == RIDGE_NCHW16C) {
        float *x0 = ridge_malloc(xn * 4);
        if (x0) {
            memcpy(x0, x, xn * 4);
            ridge_layout_reorder(ctx, x, layout, x0, layout, d.n, d.c_in, d.h, d.w);
            ridge_free(x0);
        }
    }
    ridge_conv2d_forward_ref(&d, x, w, ref, b, NULL);

    /* AUTO first, then every algorithm that applies */
    ridge_conv2d_plan *autop = NULL;
    ridge_conv_algo auto_algo = RIDGE_CONV_AUTO;
    if (ridge_conv2d_plan_create(ctx, &d, w, NULL, &autop) == RIDGE_OK) {
        auto_algo = ridge_conv2d_plan_algo(autop);
        if (o->json == 0 && getenv("RIDGE_BENCH_EXPLAIN"))
            fprintf(stderr, "%s", ridge_conv2d_plan_explain(autop));
        ridge_conv2d_plan_destroy(autop);
    }
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++) {
        method *m = &ms[nm];
        if (rc->only_algo != -2 && a != (rc->only_algo == RIDGE_CONV_AUTO ? (int)auto_algo
                                                                           : rc->only_algo))
            continue;
        ridge_conv2d_plan_options po = {.algo = (ridge_conv_algo)a};
        if (ridge_conv2d_plan_create(ctx, &d, w, &po, &m->plan)) continue;
        snprintf(m->name, sizeof m->name, "%s%s", ridge_conv_algo_name((ridge_conv_algo)a),
                 a == (int)auto_algo ? " (auto)" : "");
        m->ws_bytes = ridge_conv2d_workspace_size(m->plan, threads);
        m->ws = ridge_malloc(m->ws_bytes ? m->ws_bytes : 64);
        nm++;
        if (a == RIDGE_CONV_DIRECT && dp.h * dp.w > d.h * d.w) { /* the same kernel, padded copy */
            method *q = &ms[nm];
            po.algo = RIDGE_CONV_DIRECT;
            if (ridge_conv2d_plan_create(ctx, &dp, w, &po, &q->plan) == RIDGE_OK) {
                q->kind = 1;
                snprintf(q->name, sizeof q->name, "direct-padded");
                q->ws_bytes = ridge_conv2d_workspace_size(q->plan, threads);
                q->ws = ridge_malloc(q->ws_bytes ? q->ws_bytes : 64);
                q->extra_bytes = xpn * 4;
                nm++;
            }
        }
    }
#ifdef RIDGE_HAVE_DNNL
    if (o->peers)
        for (int any = 1; any >= (layout == RIDGE_NCHW16C ? 1 : 0); any--) {
            /* no plain-nChw16c peer: oneDNN's AVX2 build runs its reference there (seconds) */
            method *m = &ms[nm];
            m->kind = 2;
            if (dnnl_setup(m, &d, oh, ow, any, threads, x, w, b)) {
                bench_note(o, "bench conv: oneDNN refused %s (%s), or offered only its reference "
                           "implementation", cs->name, any ? "any" : "plain");
                dnnl_release(m);
                memset(m, 0, sizeof *m);
                continue;
            }
            nm++;
        }
#endif
    /* verify every method first */
    for (int i = 0; i < nm; i++) {
        method *m = &ms[i];
        for (size_t k = 0; k < yn; k++) y[k] = NAN;
        if (m->kind == 1) memset(xp, 0, xpn * 4); /* borders zeroed once, outside the timing */
        m->ok = run_method(ctx, m, &d, x, xp, y, b) == 0;
#ifdef RIDGE_HAVE_DNNL
        if (m->kind == 2 && m->ok) m->ok = dnnl_result(m, &d, oh, ow, y) == 0;
#endif
        m->err = m->ok ? max_rel_err(y, ref, yn) : NAN;
        if (!m->ok || !(m->err < 1e-3)) {
            fprintf(stderr, "bench conv: %s %s %s: wrong result (max relative error %g)\n",
                    cs->name, ridge_layout_name(layout), m->name, m->err);
            fail = 1;
            m->ok = 0;
        }
    }
    /* time round-robin */
    int rounds = o->quick ? 3 : 11;
    double flops = ridge_conv2d_flops(&d);
    /* calls per sample on small shapes: at least 1.6e8 FLOP a sample below 2e7 a call (a 3 us
     * layer timed 8 calls at a time moved by 1.5x from run to run on 2 threads) */
    int per = flops < 2e7 ? (int)ceil(1.6e8 / flops) : flops < 2e8 ? 2 : 1;
    for (int i = 0; i < nm; i++) {
        ms[i].samples = calloc((size_t)rounds, sizeof(double));
        if (ms[i].ok) run_method(ctx, &ms[i], &d, x, xp, y, b); /* warm-up */
    }
    /* each round starts at the next method, so no method always runs right after oneDNN's
     * (its OpenMP team spins for about 9 ms after a call: bench convbwd) */
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < nm; q++) {
            const int i = (q + r) % nm;
            if (!ms[i].ok || !ms[i].samples) continue;
            /* let the previous method's spinning workers (oneDNN's OpenMP team, ridge's pool)
             * fall asleep, so they do not steal the other core from this one */
            if (threads > 1) {
                bench_quiesce(3000);
                if (ms[i].kind == 2) bench_omp_spread();
                BENCH_WAKE(run_method(ctx, &ms[i], &d, x, xp, y, b));
            } else {
                /* one untimed call first, so that at 1 thread too (as after BENCH_WAKE) a
                 * method is timed with its own operands in cache, as a layer finds the input
                 * its predecessor just wrote, not with whatever the method before left */
                run_method(ctx, &ms[i], &d, x, xp, y, b);
            }
            uint64_t t0 = ridge_time_ns();
            for (int k = 0; k < per; k++) run_method(ctx, &ms[i], &d, x, xp, y, b);
            ms[i].samples[r] = (double)(ridge_time_ns() - t0) * 1e-9 / per;
        }
    /* report */
    bench_stats st[MAX_METHODS];
    double best_ridge = INFINITY, best_dnnl = INFINITY, t_auto = NAN, t_direct = NAN;
    for (int i = 0; i < nm; i++) {
        if (!ms[i].ok || !ms[i].samples) continue;
        st[i] = bench_summarize(ms[i].samples, (size_t)rounds);
        if (ms[i].kind == 0 && st[i].median < best_ridge) best_ridge = st[i].median;
        if (ms[i].kind == 2 && st[i].median < best_dnnl) best_dnnl = st[i].median;
        if (ms[i].kind == 0 && strstr(ms[i].name, "(auto)")) t_auto = st[i].median;
        if (ms[i].kind == 0 && !strncmp(ms[i].name, "direct", 6)) t_direct = st[i].median;
    }
    double cbytes = 4.0 * ((double)xn + (double)yn + (double)wn);
    for (int i = 0; i < nm; i++) {
        if (!ms[i].ok || !ms[i].samples) continue;
        double frac = NAN;
        if (rc->have_roof) {
            ridge_roofline_verdict v;
            ridge_isa isa =
                ms[i].kind == 2 ? ridge_cpu_best_isa(ridge_cpu_get()) : ridge_ctx_isa(ctx);
            if (ridge_roofline_judge(&rc->roof, threads, ridge_roofline_peak_f32(isa), flops,
                                     cbytes, cbytes, st[i].median, &v) == RIDGE_OK)
                frac = v.fraction * 100;
        }
        char shape[64];
        snprintf(shape, sizeof shape, "%s/n%lld", cs->name, (long long)batch);
        bench_val row[] = {
            {shape, 0},
            {ridge_layout_name(layout), 0},
            {NULL, threads},
            {ms[i].name, 0},
            {NULL, st[i].median * 1e3},
            {NULL, st[i].best * 1e3},
            {NULL, flops / st[i].median * 1e-9},
            {NULL, frac},
            {NULL, (double)(ms[i].ws_bytes + ms[i].extra_bytes) / 1024.0},
            {NULL, ms[i].err * 1e6},
            {NULL, ms[i].kind == 0 && !strncmp(ms[i].name, "direct", 6) ? NAN
                   : ms[i].kind == 1 ? st[i].median / t_direct : t_direct / st[i].median},
            {NULL, isfinite(best_dnnl) ? best_dnnl / st[i].median : NAN},
            {NULL, ms[i].kind == 0 && strstr(ms[i].name, "(auto)") ? t_auto / best_ridge : NAN},
        };
        bench_table_row(rc->t, row);
    }
done:
    for (int i = 0; i < nm; i++) {
        free(ms[i].samples);
        ridge_conv2d_plan_destroy(ms[i].plan);
        ridge_free(ms[i].ws);
#ifdef RIDGE_HAVE_DNNL
        if (ms[i].kind == 2) dnnl_release(&ms[i]);
#endif
    }
    ridge_free(x), ridge_free(w), ridge_free(b), ridge_free(y), ridge_free(ref), ridge_free(xp);
    return fail ? -1 : 0;
}

/* ---- the depthwise-separable block ----------------------------------------------------------- */

/* MobileNet's block (depthwise 3x3 + ReLU, pointwise 64 -> 64 + ReLU) fused and as two calls,
 * against the standard 3x3 convolution it replaces (AUTO), at 56x56. Each row's GFLOP/s is on
 * its own direct FLOP count; x_direct here is the standard conv's time / this time. */
static int bench_separable(run_ctx *rc, ridge_ctx *ctx, int threads, int64_t batch)
{
    const int64_t C = 64, H = 56;
    ridge_conv2d_desc dd, pd, sd;
    ridge_conv2d_desc_init(&dd);
    dd.n = batch, dd.c_in = dd.c_out = dd.groups = C, dd.h = dd.w = H, dd.r = dd.s = 3;
    dd.pad_top = dd.pad_bottom = dd.pad_left = dd.pad_right = 1, dd.layout = RIDGE_NHWC;
    pd = dd, pd.groups = 1, pd.r = pd.s = 1,
    pd.pad_top = pd.pad_bottom = pd.pad_left = pd.pad_right = 0;
    sd = dd, sd.groups = 1;
    size_t n = (size_t)(batch * C * H * H);
    float *x = ridge_malloc(n * 4), *mid = ridge_malloc(n * 4), *y = ridge_malloc(n * 4);
    float *ref = ridge_malloc(n * 4), *ws = NULL;
    float *wd = ridge_malloc((size_t)C * 9 * 4), *wp = ridge_malloc((size_t)(C * C) * 4);
    float *wsd = ridge_malloc((size_t)(C * C * 9) * 4);
    ridge_conv2d_plan *dp = NULL, *pp = NULL, *sp = NULL;
    ridge_conv2d_plan_options od = {.algo = RIDGE_CONV_DEPTHWISE};
    ridge_conv2d_plan_options op = {.algo = RIDGE_CONV_POINTWISE};
    int fail = 1;
    if (!x || !mid || !y || !ref || !wd || !wp || !wsd) goto done;
    unsigned seed = 7;
    for (size_t i = 0; i < n; i++) x[i] = frand(&seed);
    for (int64_t i = 0; i < C * 9; i++) wd[i] = frand(&seed) * 0.3f;
    for (int64_t i = 0; i < C * C; i++) wp[i] = frand(&seed) * 0.1f;
    for (int64_t i = 0; i < C * C * 9; i++) wsd[i] = frand(&seed) * 0.05f;
    if (ridge_conv2d_plan_create(ctx, &dd, wd, &od, &dp) ||
        ridge_conv2d_plan_create(ctx, &pd, wp, &op, &pp) ||
        ridge_conv2d_plan_create(ctx, &sd, wsd, NULL, &sp))
        goto done;
    size_t wsb = ridge_conv2d_separable_workspace_size(dp, pp);
    size_t wsb2 = ridge_conv2d_workspace_size(sp, threads);
    ws = ridge_malloc(wsb > wsb2 ? wsb : wsb2);
    ridge_conv2d_epilogue relu = {RIDGE_CONV_ACT_RELU, NULL};
    /* verify: fused vs the two references */
    ridge_conv2d_forward_ref(&dd, x, wd, mid, NULL, &relu);
    ridge_conv2d_forward_ref(&pd, mid, wp, ref, NULL, &relu);
    if (!ws || ridge_conv2d_separable_forward(ctx, dp, pp, x, y, NULL, &relu, NULL, &relu, ws))
        goto done;
    double err = max_rel_err(y, ref, n);
    if (!(err < 1e-4)) {
        fprintf(stderr, "bench conv: separable block: wrong result (%g)\n", err);
        goto done;
    }
    enum { FUSED, UNFUSED, STANDARD, NM };
    const char *names[NM] = {"separable-fused", "separable-unfused", "standard-3x3 (auto)"};
    const double flops[NM] = {ridge_conv2d_flops(&dd) + ridge_conv2d_flops(&pd),
                              ridge_conv2d_flops(&dd) + ridge_conv2d_flops(&pd),
                              ridge_conv2d_flops(&sd)};
    int rounds = rc->o->quick ? 3 : 11;
    double samples[NM][16];
    for (int r = -1; r < rounds; r++) /* r = -1: warm-up */
        for (int m = 0; m < NM; m++) {
            uint64_t t0 = ridge_time_ns();
            if (m == FUSED)
                ridge_conv2d_separable_forward(ctx, dp, pp, x, y, NULL, &relu, NULL, &relu, ws);
            else if (m == UNFUSED) {
                ridge_conv2d_forward(ctx, dp, x, mid, NULL, &relu, ws);
                ridge_conv2d_forward(ctx, pp, mid, y, NULL, &relu, ws);
            } else ridge_conv2d_forward(ctx, sp, x, y, NULL, &relu, ws);
            if (r >= 0) samples[m][r] = (double)(ridge_time_ns() - t0) * 1e-9;
        }
    bench_stats st[NM];
    for (int m = 0; m < NM; m++) st[m] = bench_summarize(samples[m], (size_t)rounds);
    char shape[64];
    snprintf(shape, sizeof shape, "separable-64-56/n%lld", (long long)batch);
    for (int m = 0; m < NM; m++) {
        bench_val row[] = {
            {shape, 0}, {"nhwc", 0}, {NULL, threads}, {names[m], 0},
            {NULL, st[m].median * 1e3}, {NULL, st[m].best * 1e3},
            {NULL, flops[m] / st[m].median * 1e-9}, {NULL, NAN},
            {NULL, m == FUSED ? wsb / 1024.0 : m == UNFUSED ? n * 4 / 1024.0 : wsb2 / 1024.0},
            {NULL, m == FUSED ? err * 1e6 : NAN},
            {NULL, st[STANDARD].median / st[m].median}, {NULL, NAN}, {NULL, NAN},
        };
        bench_table_row(rc->t, row);
    }
    fail = 0;
done:
    ridge_conv2d_plan_destroy(dp), ridge_conv2d_plan_destroy(pp), ridge_conv2d_plan_destroy(sp);
    ridge_free(x), ridge_free(mid), ridge_free(y), ridge_free(ref), ridge_free(ws);
    ridge_free(wd), ridge_free(wp), ridge_free(wsd);
    return fail ? -1 : 0;
}

/* ---- the entry point ------------------------------------------------------------------------- */

static void help(void)
{
    printf("usage: ridge bench conv [--quick] [--peers] [--json] [--threads N] [--filter TEXT]\n"
           "                        [--layout nchw|nhwc|nchw16c|all] [--batch N] [--algo A]\n\n"
           "Times every convolution algorithm that applies to each shape (ResNet-50 3x3 and 1x1\n"
           "layers, its 7x7 first layer, MobileNet depthwise 3x3 from 112x112 to 7x7 and one at\n"
           "stride 2, EfficientNet's 5x5 and ConvNeXt's 7x7 depthwise, the Fashion-MNIST CNN,\n"
           "9x9 and 11x11 kernels, 5x5 to 11x11 at 64 channels for FFT, 1x31 and 1x63 kernels on\n"
           "one row of 2048 and 4096 pixels) at 1 thread and at --threads, after checking each\n"
           "against the fp64 reference. Columns: median and best ms, GFLOP/s on the direct FLOP\n"
           "count, %% of the roof, workspace KiB (direct-padded: the padded copy), err_1e-6 (max\n"
           "|y - ref| / max |ref| against the fp64 reference, in millionths), x_direct (speed vs\n"
           "direct; for direct-padded its time / direct's), x_onednn (oneDNN's best time / this\n"
           "time: > 1 is faster than oneDNN), auto_vs_best (AUTO's time / the fastest ridge\n"
           "algorithm). Default layout nhwc, batch 1. --algo A times only ridge's algorithm A\n"
           "(auto: AUTO's pick) next to the peers. The separable-64-56 rows: MobileNet's\n"
           "depthwise 3x3 + pointwise block, fused and as two calls, against the standard 3x3\n"
           "conv it replaces (x_direct: its time / this).\n"
           "RIDGE_BENCH_EXPLAIN=1 prints each AUTO plan's explanation to stderr.\n");
}

int ridge_bench_conv(const ridge_bench_opts *o, int argc, char **argv)
{
    int layouts[3] = {RIDGE_NHWC}, nl = 1, only_algo = -2;
    long batch = 1;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            help();
            return 0;
        } else if (!strcmp(argv[i], "--layout") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "all")) {
                layouts[0] = RIDGE_NCHW, layouts[1] = RIDGE_NHWC, layouts[2] = RIDGE_NCHW16C;
                nl = 3;
            } else {
                ridge_layout l;
                if (ridge_layout_parse(v, &l)) {
                    fprintf(stderr, "ridge bench conv: %s\n", ridge_last_error());
                    return BENCH_USAGE;
                }
                layouts[0] = l;
            }
        } else if (!strcmp(argv[i], "--algo") && i + 1 < argc) {
            ridge_conv_algo a;
            if (ridge_conv_algo_parse(argv[++i], &a) || a == RIDGE_CONV_REF) {
                fprintf(stderr, "ridge bench conv: --algo '%s': expected auto, direct, im2col, "
                        "pointwise, depthwise, winograd-2x3, winograd-4x3 or fft\n", argv[i]);
                return BENCH_USAGE;
            }
            only_algo = (int)a;
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            char *end;
            batch = strtol(argv[++i], &end, 10);
            if (*end || batch < 1 || batch > 1024) {
                fprintf(stderr, "ridge bench conv: --batch '%s': expected 1..1024\n", argv[i]);
                return BENCH_USAGE;
            }
        } else {
            fprintf(stderr, "ridge bench conv: unknown option '%s' (see --help)\n", argv[i]);
            return BENCH_USAGE;
        }
    }
    static const bench_col cols[] = {
        {"shape", BENCH_STR},     {"layout", BENCH_STR},  {"threads", BENCH_INT},
        {"method", BENCH_STR},    {"ms", BENCH_F3},       {"best_ms", BENCH_F3},
        {"gflops", BENCH_F1},     {"roof_pct", BENCH_F1}, {"ws_kib", BENCH_F1},
        {"err_1e-6", BENCH_F2},    {"x_direct", BENCH_F2}, {"x_onednn", BENCH_F2},
        {"auto_vs_best", BENCH_F2},
    };
#ifndef RIDGE_HAVE_DNNL
    if (o->peers) bench_note(o, "bench conv: built without RIDGE_BENCH_PEERS: no oneDNN rows");
#endif
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    run_ctx rc = {o, only_algo, NULL, {0}, 0};
    bench_table t;
    rc.t = &t;
    bench_table_begin(&t, o, "conv: forward, every algorithm (GFLOP/s on the direct count)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
    int fail = 0;
    int counts[2] = {1, max_threads};
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
        ridge_ctx *ctx = bench_ctx(o, counts[ti], "conv");
        if (!ctx) {
            fail = 1;
            break;
        }
        if (ti == 0 || !rc.have_roof) {
            /* the profile of the largest thread count covers both */
            ridge_ctx *rctx = bench_ctx(o, max_threads, "conv");
            if (rctx)
                rc.have_roof =
                    ridge_roofline_for_ctx(rctx, RIDGE_ROOFLINE_QUICK, &rc.roof) == RIDGE_OK;
            ridge_ctx_destroy(rctx);
        }
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            if (o->filter && !strstr(cases[c].name, o->filter)) continue;
            for (int l = 0; l < nl; l++) {
                bench_note(o, "bench conv: %s %s, %d thread%s...", cases[c].name,
                           ridge_layout_name((ridge_layout)layouts[l]), counts[ti],
                           counts[ti] > 1 ? "s" : "");
                fail |= bench_case(&rc, &cases[c], (ridge_layout)layouts[l], batch, ctx,
                                   counts[ti]) != 0;
            }
        }
        if (!o->filter || strstr("separable-64-56", o->filter)) {
            bench_note(o, "bench conv: separable block, %d thread%s...", counts[ti],
                       counts[ti] > 1 ? "s" : "");
            fail |= bench_separable(&rc, ctx, counts[ti], batch) != 0;
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
    return fail;
}
