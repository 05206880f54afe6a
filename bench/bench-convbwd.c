/* ridge bench convbwd: the convolution's backward passes (issue 8), NHWC.
 *
 * Per shape and thread count (1 and all):
 *   dx  direct (padding-free, phase-split, the shipped path) against the padded-copy method:
 *       materialize dy zero-padded (and dilated by the stride), rotate and transpose the
 *       weights, and run the forward direct convolution on it (plan creation included: the
 *       weights change every training step). Same micro-kernel both ways, so the ratio is
 *       the cost of the buffer; its size is the memory the padding-free path saves.
 *   dx  also SGEMM (dcol = dy W) + a col2im gather, and (3x3 stride 1) Winograd F(4x4, 3x3).
 *   dw  direct (per output-channel block x tap: the in-place input x output channel tile on
 *       NHWC) against im2col + SGEMM, and (3x3 stride 1) Winograd F(4x4, 3x3).
 *   Depthwise shapes (groups = channels) have no padded-copy row (its weight rotation is for
 *   groups 1) and run the depthwise algorithm in Winograd's place; their dx ratio is to
 *   direct's time instead.
 *   The Winograd rows include their per-call weight transform (dx) and all transforms (dw);
 *   their plans, like every ridge plan here, are made once before timing.
 * With peers (a RIDGE_BENCH_PEERS build with oneDNN): oneDNN's backward-data and
 * backward-weights primitives on the same shapes, memory formats of its choice (tag any; the
 * reorders into them are not timed: the most favourable setting for oneDNN).
 * Every result is first checked against the fp64 reference. Methods are timed in interleaved
 * rounds (one call of each per round), medians reported. Time it alone:
 *   flock /tmp/ridge-bench.lock ridge bench convbwd */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifdef RIDGE_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

/* One oneDNN backward primitive with its memories in the formats it chose. */
typedef struct dnnl_bwd {
    dnnl_primitive_t prim;
    dnnl_memory_t mem[5]; /* dx: diff_dst, weights, diff_src; dw: src, diff_dst, diff_w, diff_b */
    void *buf[5];
    int nmem, args[5];
    char impl[64];
} dnnl_bwd;

static dnnl_engine_t eng;
static dnnl_stream_t str;

static int bwd_reorder(const dnnl_memory_desc_t *smd, void *s, const dnnl_memory_desc_t *dmd,
                        void *d)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t p;
    dnnl_memory_t sm, dm;
    if (dnnl_reorder_primitive_desc_create(&pd, smd, eng, dmd, eng, NULL)) return -1;
    int rc = dnnl_primitive_create(&p, pd) != dnnl_success;
    dnnl_primitive_desc_destroy(pd);
    if (rc) return -1;
    dnnl_memory_create(&sm, smd, eng, s);
    dnnl_memory_create(&dm, dmd, eng, d);
    dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, sm}, {DNNL_ARG_TO, dm}};
    rc = dnnl_primitive_execute(p, str, 2, args) != dnnl_success;
    dnnl_stream_wait(str);
    dnnl_primitive_destroy(p);
    dnnl_memory_destroy(sm);
    dnnl_memory_destroy(dm);
    return rc;
}

static void dnnl_bwd_free(dnnl_bwd *b)
{
    if (b->prim) dnnl_primitive_destroy(b->prim);
    for (int i = 0; i < b->nmem; i++) {
        if (b->mem[i]) dnnl_memory_destroy(b->mem[i]);
        free(b->buf[i]);
    }
    memset(b, 0, sizeof *b);
}

/* weights = 0: backward data (inputs dy, w; output dx); 1: backward weights (inputs x, dy;
 * outputs dw, db). Plain user tensors: NHWC activations, OIHW weights. */
static int dnnl_bwd_setup(dnnl_bwd *b, const ridge_conv2d_desc *d, int64_t oh, int64_t ow,
                          int weights, int threads, const float *x, const float *w,
                          const float *dy)
{
    memset(b, 0, sizeof *b);
    if (!eng && (dnnl_engine_create(&eng, dnnl_cpu, 0) ||
                 dnnl_stream_create(&str, eng, dnnl_stream_default_flags)))
        return -1;
    omp_set_num_threads(threads);
    dnnl_dims_t sd = {d->n, d->c_in, d->h, d->w}, dd = {d->n, d->c_out, oh, ow};
    const int64_t g = d->groups;
    dnnl_dims_t wd = {d->c_out, d->c_in, d->r, d->s}, bd = {d->c_out};
    dnnl_dims_t gwd = {g, d->c_out / g, d->c_in / g, d->r, d->s};
    dnnl_dims_t st = {d->stride_h, d->stride_w}, dl = {d->dil_h - 1, d->dil_w - 1};
    dnnl_dims_t pl = {d->pad_top, d->pad_left}, pr = {d->pad_bottom, d->pad_right};
    dnnl_memory_desc_t su, du, wu, sa, da, wa, bm;
    dnnl_memory_desc_init_by_tag(&su, 4, sd, dnnl_f32, dnnl_nhwc);
    dnnl_memory_desc_init_by_tag(&du, 4, dd, dnnl_f32, dnnl_nhwc);
    /* groups: [g][oc/g][ic/g][r][s], the same memory as OIHW with ic/g inputs */
    if (g > 1) dnnl_memory_desc_init_by_tag(&wu, 5, gwd, dnnl_f32, dnnl_goihw);
    else dnnl_memory_desc_init_by_tag(&wu, 4, wd, dnnl_f32, dnnl_oihw);
    dnnl_memory_desc_init_by_tag(&sa, 4, sd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&da, 4, dd, dnnl_f32, dnnl_format_tag_any);
    if (g > 1) dnnl_memory_desc_init_by_tag(&wa, 5, gwd, dnnl_f32, dnnl_format_tag_any);
    else dnnl_memory_desc_init_by_tag(&wa, 4, wd, dnnl_f32, dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bm, 1, bd, dnnl_f32, dnnl_x);
    dnnl_convolution_desc_t fd, cd;
    if (dnnl_dilated_convolution_forward_desc_init(&fd, dnnl_forward_training,
                                                   dnnl_convolution_direct, &sa, &wa, &bm, &da,
                                                   st, dl, pl, pr))
        return -1;
    dnnl_primitive_desc_t hint, pd;
    if (dnnl_primitive_desc_create(&hint, &fd, NULL, eng, NULL)) return -1;
    dnnl_status_t s =
        weights ? dnnl_dilated_convolution_backward_weights_desc_init(
                      &cd, dnnl_convolution_direct, &sa, &wa, &bm, &da, st, dl, pl, pr)
                : dnnl_dilated_convolution_backward_data_desc_init(
                      &cd, dnnl_convolution_direct, &sa, &wa, &da, st, dl, pl, pr);
    if (!s) s = dnnl_primitive_desc_create(&pd, &cd, NULL, eng, hint);
    dnnl_primitive_desc_destroy(hint);
    if (s) return -1;
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(b->impl, sizeof b->impl, "onednn %s:%s", weights ? "dw" : "dx", impl);
    /* (query, user desc, user data, exec arg) per memory; NULL data: an output */
    typedef struct io_t {
        dnnl_query_t q;
        const dnnl_memory_desc_t *user;
        const void *data;
        int arg;
    } io_t;
    io_t io[3];
    if (weights) {
        io[0] = (io_t){dnnl_query_src_md, &su, x, DNNL_ARG_SRC};
        io[1] = (io_t){dnnl_query_diff_dst_md, &du, dy, DNNL_ARG_DIFF_DST};
        io[2] = (io_t){dnnl_query_diff_weights_md, &wu, NULL, DNNL_ARG_DIFF_WEIGHTS};
        b->nmem = 4;
    } else {
        io[0] = (io_t){dnnl_query_diff_dst_md, &du, dy, DNNL_ARG_DIFF_DST};
        io[1] = (io_t){dnnl_query_weights_md, &wu, w, DNNL_ARG_WEIGHTS};
        io[2] = (io_t){dnnl_query_diff_src_md, &su, NULL, DNNL_ARG_DIFF_SRC};
        b->nmem = 3;
    }
    int rc = -1;
    for (int i = 0; i < b->nmem; i++) {
        const dnnl_memory_desc_t *q =
            i == 3 ? &bm : dnnl_primitive_desc_query_md(pd, io[i].q, 0);
        size_t n = dnnl_memory_desc_get_size(q);
        b->buf[i] = aligned_alloc(64, (n + 63) / 64 * 64);
        b->args[i] = i == 3 ? DNNL_ARG_DIFF_BIAS : io[i].arg;
        if (i == 3) {
            if (!b->buf[i] || dnnl_memory_create(&b->mem[i], q, eng, b->buf[i])) goto done;
            continue;
        }
        if (!b->buf[i] || dnnl_memory_create(&b->mem[i], q, eng, b->buf[i])) goto done;
        if (i < 3 && io[i].data && bwd_reorder(io[i].user, (void *)io[i].data, q, b->buf[i]))
            goto done;
    }
    if (dnnl_primitive_create(&b->prim, pd)) goto done;
    rc = 0;
done:
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

static void dnnl_bwd_run(dnnl_bwd *b)
{
    dnnl_exec_arg_t args[5];
    for (int i = 0; i < b->nmem; i++) args[i] = (dnnl_exec_arg_t){b->args[i], b->mem[i]};
    dnnl_primitive_execute(b->prim, str, b->nmem, args);
    dnnl_stream_wait(str);
}

/* The output (dx NHWC or dw OIHW) in the plain format. */
static int dnnl_bwd_result(dnnl_bwd *b, const ridge_conv2d_desc *d, int weights, float *out)
{
    const int64_t g = d->groups;
    dnnl_dims_t sd = {d->n, d->c_in, d->h, d->w}, wd = {d->c_out, d->c_in, d->r, d->s};
    dnnl_dims_t gwd = {g, d->c_out / g, d->c_in / g, d->r, d->s};
    dnnl_memory_desc_t u;
    const dnnl_memory_desc_t *q;
    if (weights && g > 1) dnnl_memory_desc_init_by_tag(&u, 5, gwd, dnnl_f32, dnnl_goihw);
    else if (weights) dnnl_memory_desc_init_by_tag(&u, 4, wd, dnnl_f32, dnnl_oihw);
    else dnnl_memory_desc_init_by_tag(&u, 4, sd, dnnl_f32, dnnl_nhwc);
    dnnl_memory_get_memory_desc(b->mem[2], &q);
    return bwd_reorder(q, b->buf[2], &u, out);
}
#endif /* RIDGE_HAVE_DNNL */

const char ridge_bench_convbwd_summary[] =
    "convolution backward: padding-free dx vs a padded copy, Winograd dx and dw, dw direct vs "
    "im2col+SGEMM, oneDNN (--peers)";

typedef struct bwd_case {
    const char *name;
    int64_t n, ci, h, w, co, r, stride, pad, groups;
} bwd_case;

static const bwd_case cases[] = {
    /* name                n   ci   h    w    co   r  st pad g */
    {"resnet-3x3-64",      1,  64,  56,  56,  64,  3, 1, 1, 1},
    {"resnet-3x3-128",     1,  128, 28,  28,  128, 3, 1, 1, 1},
    {"resnet-3x3-256",     1,  256, 14,  14,  256, 3, 1, 1, 1},
    {"resnet-3x3-s2-128",  1,  64,  56,  56,  128, 3, 2, 1, 1},
    {"resnet-first-7x7",   1,  3,   224, 224, 64,  7, 2, 3, 1},
    {"resnet-1x1-64",      1,  64,  56,  56,  64,  1, 1, 0, 1},
    {"fmnist-conv1-b64",   64, 1,   28,  28,  32,  3, 1, 1, 1},
    {"fmnist-conv2-b64",   64, 32,  14,  14,  64,  3, 1, 1, 1},
    {"large-9x9",          1,  16,  64,  64,  16,  9, 1, 4, 1},
    /* depthwise: MobileNet's 3x3 at stride 1 and 2, EfficientNet's 5x5 at stride 2 */
    {"mobilenet-dw-32",    1,  32,  112, 112, 32,  3, 1, 1, 32},
    {"mobilenet-dw-s2-64", 1,  64,  112, 112, 64,  3, 2, 1, 64},
    {"effnet-dw5-s2-144",  1,  144, 56,  56,  144, 5, 2, 2, 144},
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
    ridge_conv2d_bwd_plan *bp[3]; /* direct (dx and dw), im2col (dx and dw), winograd (dx and dw) */
#ifdef RIDGE_HAVE_DNNL
    dnnl_bwd dn[2]; /* oneDNN dx, dw */
#endif
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
    ridge_conv2d_plan_options po = {.algo = RIDGE_CONV_DIRECT};
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
    case 2: ridge_conv2d_backward_data(k->ctx, k->bp[1], k->dx, k->dy, k->w, NULL); break;
    case 3: ridge_conv2d_backward_data(k->ctx, k->bp[2], k->dx, k->dy, k->w, NULL); break;
    case 4: ridge_conv2d_backward_weights(k->ctx, k->bp[0], k->dw, k->db, k->x, k->dy, NULL); break;
    case 5:
        ridge_conv2d_backward_weights(k->ctx, k->bp[1], k->dw, k->db, k->x, k->dy, NULL);
        break;
    case 6:
        ridge_conv2d_backward_weights(k->ctx, k->bp[2], k->dw, k->db, k->x, k->dy, NULL);
        break;
#ifdef RIDGE_HAVE_DNNL
    case 7: dnnl_bwd_run(&k->dn[0]); break;
    case 8: dnnl_bwd_run(&k->dn[1]); break;
#endif
    default: break;
    }
}

/* methods 0-6 always (3 and 6 where Winograd applies); 7 and 8 (oneDNN dx, dw) with peers */
#define NM 9
static const char *const names[NM] = {"dx direct (padding-free)", "dx padded copy",
                                      "dx sgemm+col2im", "dx winograd-4x3", "dw direct",
                                      "dw im2col+sgemm", "dw winograd-4x3", "onednn dx",
                                      "onednn dw"};
static const char *const dw_names[2] = {"dx depthwise", "dw depthwise"};
#define IS_DX(m) ((m) < 4 || (m) == 7)

static int bench_case(const ridge_bench_opts *o, bench_table *t, const bwd_case *c, ridge_ctx *ctx,
                      int threads)
{
    work k = {.ctx = ctx};
    ridge_conv2d_desc *d = &k.d;
    ridge_conv2d_desc_init(d);
    d->n = c->n, d->c_in = c->ci, d->h = c->h, d->w = c->w, d->c_out = c->co, d->r = d->s = c->r;
    d->stride_h = d->stride_w = c->stride;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = c->pad;
    d->groups = c->groups;
    d->layout = RIDGE_NHWC;
    const int dwise = d->groups > 1 && d->groups == d->c_in && d->groups == d->c_out;
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
    const size_t wn = (size_t)(d->c_out * (d->c_in / d->groups) * d->r * d->s),
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
    const ridge_conv_algo third = dwise ? RIDGE_CONV_DEPTHWISE : RIDGE_CONV_WINOGRAD_4X3;
    ridge_conv2d_bwd_options bo[3] = {{RIDGE_CONV_DIRECT, RIDGE_CONV_DIRECT},
                                      {RIDGE_CONV_IM2COL, RIDGE_CONV_IM2COL},
                                      {third, third}};
    int fail = 0, avail[NM];
    for (int m = 0; m < NM; m++) avail[m] = 1;
    avail[1] = d->groups == 1; /* the padded copy's weight rotation is for groups 1 */
    avail[3] = avail[6] = ridge_conv2d_bwd_plan_create(ctx, d, &bo[2], &k.bp[2]) == RIDGE_OK;
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
    int nm = 7;
#ifdef RIDGE_HAVE_DNNL
    if (o->peers) {
        if (dnnl_bwd_setup(&k.dn[0], d, k.oh, k.ow, 0, threads, x, w, dy) ||
            dnnl_bwd_setup(&k.dn[1], d, k.oh, k.ow, 1, threads, x, w, dy)) {
            fprintf(stderr, "bench convbwd: %s: oneDNN setup failed\n", c->name);
            fail = 1;
            goto done;
        }
        nm = NM;
    }
#endif
    double err[NM];
    for (int m = 0; m < nm; m++) {
        if (!avail[m]) continue;
        run(&k, m);
#ifdef RIDGE_HAVE_DNNL
        if (m >= 7) dnnl_bwd_result(&k.dn[m - 7], d, m == 8, m == 7 ? k.dx : k.dw);
#endif
        err[m] = IS_DX(m) ? rel_err(k.dx, rx, xn) : rel_err(k.dw, rw, wn);
        if (!(err[m] < 1e-4)) {
            fprintf(stderr, "bench convbwd: %s: %s wrong (relative error %.2e)\n", c->name,
                    names[m], err[m]);
            fail = 1;
        }
    }
    if (fail) goto done;
    const int reps = o->quick ? 5 : 15;
    double *smp = malloc(sizeof(double) * NM * (size_t)reps);
    for (int m = 0; m < nm; m++)
        if (avail[m]) run(&k, m); /* warm-up */
    /* each round starts at the next method: a fixed order would always put the first method
     * right after oneDNN, whose OpenMP team spins for about 9 ms after a call (the 2-thread
     * padding-free dx, first, measured 0.64-0.80x the padded copy by median, 1.0-1.7x by best) */
    for (int r = 0; r < reps; r++)
        for (int q = 0; q < nm; q++) {
            const int m = (q + r) % nm;
            if (!avail[m]) continue;
            /* let the previous method's spinning workers (oneDNN's OpenMP team, ridge's pool)
             * fall asleep, so they do not steal the other core from this one (as bench conv) */
            if (threads > 1) {
                bench_quiesce(3000);
                if (m >= 7) bench_omp_spread(); /* oneDNN's team (bench.h) */
                /* and wake this method's own threads with its untimed calls first: on this VM
                 * a vCPU left idle takes milliseconds to wake, which a method whose threads
                 * start work at once (padding-free dx) paid on about half of its calls. One
                 * untimed call (until session 52) was not enough: ridge's 2-thread medians on
                 * resnet-3x3-64 were up to twice their bests (padding-free dx 1.12-1.32 ms,
                 * best 0.58-0.66); after BENCH_WAKE's 2 ms of calls, as bench conv, 0.65-0.71 */
                BENCH_WAKE(run(&k, m));
            } else {
                /* one untimed call, so that a method is timed with its own operands in cache
                 * at 1 thread too, as in bench conv (until session 52 the 1-thread call found
                 * the previous method's: depthwise dx 0.15 ms on 1 thread, 0.033 on 2) */
                run(&k, m);
            }
            uint64_t t0 = ridge_time_ns();
            run(&k, m);
            smp[m * reps + r] = (double)(ridge_time_ns() - t0) * 1e-9;
        }
    bench_stats st[NM];
    for (int m = 0; m < nm; m++)
        if (avail[m]) st[m] = bench_summarize(smp + m * reps, (size_t)reps);
    free(smp);
    const double gf = ridge_conv2d_flops(d) * 1e-9;
    for (int m = 0; m < nm; m++) {
        if (!avail[m]) continue;
        const int dxm = IS_DX(m);
        const char *label = dwise && (m == 3 || m == 6) ? dw_names[m == 6] : names[m];
#ifdef RIDGE_HAVE_DNNL
        if (m >= 7) label = k.dn[m - 7].impl;
#endif
        bench_val v[] = {
            {c->name, 0},
            {NULL, threads},
            {label, 0},
            {NULL, st[m].median * 1e3},
            {NULL, st[m].best * 1e3},
            {NULL, gf / st[m].median},
            {NULL, m == 1 ? (double)padn * 4 / 1024 : 0},
            {NULL, st[dxm ? (avail[1] ? 1 : 0) : 5].median / st[m].median},
            {NULL, nm > 7 ? st[dxm ? 7 : 8].median / st[m].median : NAN},
            {NULL, err[m]},
        };
        bench_table_row(t, v);
    }
done:
    for (int i = 0; i < 3; i++) ridge_conv2d_bwd_plan_destroy(k.bp[i]);
#ifdef RIDGE_HAVE_DNNL
    for (int i = 0; i < 2; i++) dnnl_bwd_free(&k.dn[i]);
#endif
    free(x), free(w), free(dy), free(rx), free(rw), free(k.dx), free(k.dw), free(k.db);
    free(k.pad), free(k.wt);
    return fail;
}

int ridge_bench_convbwd(const ridge_bench_opts *o, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf(
                "usage: ridge bench convbwd [--quick] [--peers] [--filter NAME] [--threads N]\n"
                "                          [--json]\n\n"
                "Convolution backward, NHWC: padding-free dx against the padded-copy method\n"
                "(ratio x_ref = padded time / this time; buffer_kib: the padded copy's size, what\n"
                "the padding-free path saves), dw direct against im2col + SGEMM (x_ref = im2col\n"
                "time / this time), Winograd F(4x4, 3x3) where it applies. Depthwise shapes run\n"
                "the depthwise algorithm instead of Winograd and have no padded copy: their dx\n"
                "x_ref is direct's time / this time. --peers adds oneDNN's backward primitives\n"
                "(x_onednn = oneDNN's time / this time). GFLOP/s on the direct count\n"
                "2 n oh ow co (ci / groups) r s.\n");
            return 0;
        }
        fprintf(stderr, "ridge bench convbwd: unknown option '%s' (see --help)\n", argv[i]);
        return BENCH_USAGE;
    }
    static const bench_col cols[] = {
        {"shape", BENCH_STR},  {"threads", BENCH_INT},   {"method", BENCH_STR},
        {"ms", BENCH_F3},      {"best_ms", BENCH_F3},    {"gflops", BENCH_F1},
        {"buffer_kib", BENCH_F1}, {"x_ref", BENCH_F2},   {"x_onednn", BENCH_F2},
        {"max_err", BENCH_F3},
    };
#ifndef RIDGE_HAVE_DNNL
    if (o->peers) bench_note(o, "bench convbwd: built without RIDGE_BENCH_PEERS: no oneDNN rows");
#endif
    bench_table t;
    bench_table_begin(&t, o, "convbwd: backward data and weights (NHWC)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
    int max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    int counts[2] = {1, max_threads}, fail = 0;
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1); ti++) {
        ridge_ctx *ctx = bench_ctx(o, counts[ti], "convbwd");
        if (!ctx) {
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
