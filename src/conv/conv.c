/* The conv family's public entry points: layouts and reorders, descriptor validation, the
 * plan (candidates, cost model, optional tuning, explanation), forward, batch-norm folding.
 * The algorithms themselves are in conv-algos.c and the kernels in conv-template.h. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conv/conv.h"
#include "ridge/perf.h"

/* ---- layouts -------------------------------------------------------------------------------- */

static const char *const layout_names[] = {"nchw", "nhwc", "nchw16c"};

const char *ridge_layout_name(ridge_layout l)
{
    return (unsigned)l < 3 ? layout_names[l] : "?";
}

ridge_status ridge_layout_parse(const char *name, ridge_layout *out)
{
    for (int i = 0; i < 3; i++)
        if (name && !strcmp(name, layout_names[i])) {
            *out = (ridge_layout)i;
            return RIDGE_OK;
        }
    return ridge_error(RIDGE_EINVAL, "layout '%s': expected nchw, nhwc or nchw16c",
                       name ? name : "(null)");
}

static int64_t cpad16(int64_t c) { return (c + 15) / 16 * 16; }

conv_view conv_view_make(ridge_layout l, int64_t c, int64_t h, int64_t w)
{
    conv_view v;
    switch (l) {
    case RIDGE_NHWC:
        v = (conv_view){.sn = h * w * c, .sh = w * c, .sw = c, .cblk = c, .scb = 0, .sc = 1};
        break;
    case RIDGE_NCHW16C:
        v = (conv_view){.sn = cpad16(c) * h * w, .sh = w * 16, .sw = 16, .cblk = 16,
                        .scb = h * w * 16, .sc = 1};
        break;
    default:
        v = (conv_view){.sn = c * h * w, .sh = w, .sw = 1, .cblk = 1, .scb = h * w, .sc = 0};
        break;
    }
    return v;
}

void conv_view_chan_table(const conv_view *v, int64_t c, ptrdiff_t *tab)
{
    for (int64_t i = 0; i < c; i++) tab[i] = conv_view_chan(v, i);
}

unsigned char *conv_yfast_table(const ptrdiff_t *tab, int64_t groups, int64_t per_group, int nr,
                                int vl)
{
    const int64_t nblk = (per_group + nr - 1) / nr;
    unsigned char *t = ridge_malloc((size_t)(groups * nblk));
    if (!t) return NULL;
    for (int64_t g = 0; g < groups; g++)
        for (int64_t b = 0; b < nblk; b++)
            t[g * nblk + b] = per_group - b * nr >= nr &&
                              conv_runs_contiguous(tab + g * per_group + b * nr, nr, vl);
    return t;
}

void conv_zero_channel_padding(float *y, ridge_layout l, int64_t n, int64_t c, int64_t h,
                               int64_t w)
{
    if (l != RIDGE_NCHW16C || c % 16 == 0) return;
    conv_view v = conv_view_make(l, c, h, w);
    for (int64_t i = 0; i < n; i++) {
        float *p = y + i * v.sn + (c / 16) * v.scb;
        for (int64_t q = 0; q < h * w; q++)
            for (int64_t k = c % 16; k < 16; k++) p[q * 16 + k] = 0.0f;
    }
}

size_t ridge_tensor_elems(ridge_layout l, int64_t n, int64_t c, int64_t h, int64_t w)
{
    if (n <= 0 || c <= 0 || h <= 0 || w <= 0 || (unsigned)l > 2) {
        ridge_error(RIDGE_EINVAL, "tensor (%lld, %lld, %lld, %lld): sizes must be positive",
                    (long long)n, (long long)c, (long long)h, (long long)w);
        return 0;
    }
    size_t e;
    if (ridge_size_mul((size_t)n, (size_t)(l == RIDGE_NCHW16C ? cpad16(c) : c), "tensor", &e) ||
        ridge_size_mul(e, (size_t)h, "tensor", &e) || ridge_size_mul(e, (size_t)w, "tensor", &e))
        return 0;
    /* offsets are ptrdiff_t and the byte size must fit size_t */
    if (e > (size_t)PTRDIFF_MAX / sizeof(float)) {
        ridge_error(RIDGE_EOVERFLOW, "tensor: %zu elements do not fit in memory", e);
        return 0;
    }
    return e;
}

/* ridge_layout_reorder's work: units of `chunk` pixels of one image, every channel of them,
 * so that each unit reads and writes whole runs of both layouts. NCHW against a layout with
 * channels innermost (NHWC, NCHW16c's blocks) is a transpose of channels x pixels, by the ISA's
 * 8 x 8 blocks (conv_kernels.transpose); NHWC against NCHW16c copies runs of up to 16
 * channels. Padded channels of an NCHW16c destination are written as 0 in the same pass. */
typedef struct reorder_args {
    float *dst;
    const float *src;
    ridge_layout dl, sl;
    int64_t c, hw;
    int64_t dn, sn;      /* elements per image of dst and src */
    size_t chunk, units; /* pixels per unit, units per image */
    void (*transpose)(const float *, size_t, float *, size_t, size_t, size_t);
} reorder_args;

static void reorder_range(void *arg, size_t b, size_t e, int ith)
{
    const reorder_args *a = arg;
    (void)ith;
    const int64_t C = a->c, HW = a->hw, nb = (C + 15) / 16;
    for (size_t u = b; u < e; u++) {
        const int64_t n = (int64_t)(u / a->units), p0 = (int64_t)(u % a->units * a->chunk);
        const int64_t pn = RIDGE_MIN((int64_t)a->chunk, HW - p0);
        const float *s = a->src + n * a->sn;
        float *d = a->dst + n * a->dn;
        if (a->sl == a->dl && a->sl != RIDGE_NCHW16C) {
            if (a->sl == RIDGE_NHWC) memcpy(d + p0 * C, s + p0 * C, (size_t)(pn * C) * 4);
            else
                for (int64_t c = 0; c < C; c++)
                    memcpy(d + c * HW + p0, s + c * HW + p0, (size_t)pn * 4);
            continue;
        }
        if (a->sl == RIDGE_NCHW && a->dl == RIDGE_NHWC) {
            a->transpose(s + p0, (size_t)HW, d + p0 * C, (size_t)C, (size_t)C, (size_t)pn);
            continue;
        }
        if (a->sl == RIDGE_NHWC && a->dl == RIDGE_NCHW) {
            a->transpose(s + p0 * C, (size_t)C, d + p0, (size_t)HW, (size_t)pn, (size_t)C);
            continue;
        }
        for (int64_t k = 0; k < nb; k++) { /* one block of NCHW16c, the other side's channels */
            const int64_t c0 = 16 * k, cn = RIDGE_MIN(16, C - c0);
            float *db = d + (k * HW + p0) * 16; /* NCHW16c destination */
            const float *sb = s + (k * HW + p0) * 16;
            if (a->dl == RIDGE_NCHW16C) {
                if (cn < 16) memset(db, 0, (size_t)(pn * 16) * 4); /* padded channels */
                if (a->sl == RIDGE_NCHW)
                    a->transpose(s + c0 * HW + p0, (size_t)HW, db, 16, (size_t)cn, (size_t)pn);
                else if (a->sl == RIDGE_NHWC && cn == 16)
                    for (int64_t p = 0; p < pn; p++)
                        for (int64_t j = 0; j < 16; j++) db[p * 16 + j] = s[(p0 + p) * C + c0 + j];
                else if (a->sl == RIDGE_NHWC)
                    for (int64_t p = 0; p < pn; p++)
                        for (int64_t j = 0; j < cn; j++) db[p * 16 + j] = s[(p0 + p) * C + c0 + j];
                else
                    for (int64_t p = 0; p < pn; p++)
                        for (int64_t j = 0; j < cn; j++) db[p * 16 + j] = sb[p * 16 + j];
            } else if (a->dl == RIDGE_NCHW) {
                a->transpose(sb, 16, d + c0 * HW + p0, (size_t)HW, (size_t)pn, (size_t)cn);
            } else {
                for (int64_t p = 0; p < pn; p++)
                    for (int64_t j = 0; j < cn; j++) d[(p0 + p) * C + c0 + j] = sb[p * 16 + j];
            }
        }
    }
}

ridge_status ridge_layout_reorder(ridge_ctx *ctx, float *dst, ridge_layout dl, const float *src,
                                  ridge_layout sl, int64_t n, int64_t c, int64_t h, int64_t w)
{
    if (!ctx || !dst || !src) return ridge_error(RIDGE_EINVAL, "layout_reorder: NULL argument");
    if ((unsigned)dl > 2 || (unsigned)sl > 2)
        return ridge_error(RIDGE_EINVAL, "layout_reorder: bad layout");
    if (!ridge_tensor_elems(dl, n, c, h, w) || !ridge_tensor_elems(sl, n, c, h, w))
        return RIDGE_EINVAL;
    /* about 16 K floats of each side a unit, whole groups of 8 pixels */
    const int64_t hw = h * w;
    const size_t chunk = (size_t)RIDGE_MIN(hw, RIDGE_MAX(8, 16384 / cpad16(c) / 8 * 8));
    reorder_args a = {.dst = dst, .src = src, .dl = dl, .sl = sl, .c = c, .hw = hw,
                      .dn = conv_view_make(dl, c, h, w).sn, .sn = conv_view_make(sl, c, h, w).sn,
                      .chunk = chunk, .units = ((size_t)hw + chunk - 1) / chunk,
                      .transpose = conv_kernels_for(ridge_ctx_isa(ctx))->transpose};
    ridge_parallel_for(ctx, (size_t)n * a.units, 1, reorder_range, &a);
    return RIDGE_OK;
}

/* ---- the descriptor -------------------------------------------------------------------------- */

void ridge_conv2d_desc_init(ridge_conv2d_desc *d)
{
    memset(d, 0, sizeof *d);
    d->stride_h = d->stride_w = d->dil_h = d->dil_w = d->groups = 1;
    d->layout = RIDGE_NCHW;
}

#define SIZE_LIMIT ((int64_t)1 << 31) /* every single size; products are checked separately */

ridge_status ridge_conv2d_desc_check(const ridge_conv2d_desc *d, int64_t *oh_out,
                                     int64_t *ow_out)
{
    if (!d) return ridge_error(RIDGE_EINVAL, "conv2d: descriptor is NULL");
    const struct {
        const char *name;
        int64_t v, lo;
    } f[] = {
        {"n", d->n, 1},           {"c_in", d->c_in, 1},       {"h", d->h, 1},
        {"w", d->w, 1},           {"c_out", d->c_out, 1},     {"r", d->r, 1},
        {"s", d->s, 1},           {"stride_h", d->stride_h, 1}, {"stride_w", d->stride_w, 1},
        {"dil_h", d->dil_h, 1},   {"dil_w", d->dil_w, 1},     {"pad_top", d->pad_top, 0},
        {"pad_bottom", d->pad_bottom, 0}, {"pad_left", d->pad_left, 0},
        {"pad_right", d->pad_right, 0},   {"groups", d->groups, 1},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v < f[i].lo)
            return ridge_error(RIDGE_EINVAL, "conv2d: %s = %lld, must be >= %lld", f[i].name,
                               (long long)f[i].v, (long long)f[i].lo);
        if (f[i].v >= SIZE_LIMIT)
            return ridge_error(RIDGE_EOVERFLOW, "conv2d: %s = %lld is too large (limit 2^31)",
                               f[i].name, (long long)f[i].v);
    }
    if ((unsigned)d->layout > 2)
        return ridge_error(RIDGE_EINVAL, "conv2d: layout = %d is not a ridge_layout",
                           (int)d->layout);
    if (d->c_in % d->groups || d->c_out % d->groups)
        return ridge_error(RIDGE_EINVAL,
                           "conv2d: groups = %lld must divide c_in = %lld and c_out = %lld",
                           (long long)d->groups, (long long)d->c_in, (long long)d->c_out);
    /* all int64 arithmetic below stays far from overflow: every term < 2^31, products < 2^62 */
    int64_t ext_h = d->dil_h * (d->r - 1) + 1, ext_w = d->dil_w * (d->s - 1) + 1;
    int64_t span_h = d->h + d->pad_top + d->pad_bottom, span_w = d->w + d->pad_left + d->pad_right;
    if (ext_h > span_h || ext_w > span_w)
        return ridge_error(RIDGE_EINVAL,
                           "conv2d: the dilated kernel (%lld x %lld) is larger than the padded "
                           "input (%lld x %lld): the output would be empty",
                           (long long)ext_h, (long long)ext_w, (long long)span_h,
                           (long long)span_w);
    int64_t oh = (span_h - ext_h) / d->stride_h + 1, ow = (span_w - ext_w) / d->stride_w + 1;
    size_t wel;
    if (!ridge_tensor_elems(d->layout, d->n, d->c_in, d->h, d->w) ||
        !ridge_tensor_elems(d->layout, d->n, d->c_out, oh, ow))
        return ridge_error(RIDGE_EOVERFLOW, "conv2d: %s", ridge_last_error());
    if (ridge_size_mul((size_t)d->c_out, (size_t)(d->c_in / d->groups), "conv2d weights", &wel) ||
        ridge_size_mul(wel, (size_t)d->r, "conv2d weights", &wel) ||
        ridge_size_mul(wel, (size_t)d->s, "conv2d weights", &wel) ||
        wel > (size_t)PTRDIFF_MAX / 64)
        return ridge_error(RIDGE_EOVERFLOW, "conv2d: the weights do not fit in memory");
    if (oh_out) *oh_out = oh;
    if (ow_out) *ow_out = ow;
    return RIDGE_OK;
}

double ridge_conv2d_flops(const ridge_conv2d_desc *d)
{
    int64_t oh, ow;
    if (ridge_conv2d_desc_check(d, &oh, &ow)) return 0.0;
    return 2.0 * (double)d->n * (double)oh * (double)ow * (double)d->c_out *
           (double)(d->c_in / d->groups) * (double)d->r * (double)d->s;
}

/* ---- algorithms ------------------------------------------------------------------------------ */

static const char *const algo_names[RIDGE_CONV_ALGO_COUNT] = {
    "ref", "direct", "im2col", "pointwise", "depthwise", "winograd-2x3", "winograd-4x3", "fft"};

const char *ridge_conv_algo_name(ridge_conv_algo a)
{
    if (a == RIDGE_CONV_AUTO) return "auto";
    return (unsigned)a < RIDGE_CONV_ALGO_COUNT ? algo_names[a] : "?";
}

ridge_status ridge_conv_algo_parse(const char *name, ridge_conv_algo *out)
{
    if (name && !strcmp(name, "auto")) {
        *out = RIDGE_CONV_AUTO;
        return RIDGE_OK;
    }
    for (int i = 0; i < RIDGE_CONV_ALGO_COUNT; i++)
        if (name && !strcmp(name, algo_names[i])) {
            *out = (ridge_conv_algo)i;
            return RIDGE_OK;
        }
    return ridge_error(RIDGE_EINVAL,
                       "conv algorithm '%s': expected auto, ref, direct, im2col, pointwise, "
                       "depthwise, winograd-2x3, winograd-4x3 or fft",
                       name ? name : "(null)");
}

void ridge_conv2d_plan_options_init(ridge_conv2d_plan_options *o)
{
    o->algo = RIDGE_CONV_AUTO;
    o->tune = 0;
    o->fft_tile = 0;
    o->stream = 0;
}

const conv_kernels *conv_kernels_for(ridge_isa isa)
{
    if (isa == RIDGE_ISA_AVX512) return &ridge_f32_conv_kernels__avx512;
    if (isa == RIDGE_ISA_AVX2) return &ridge_f32_conv_kernels__avx2;
    return &ridge_f32_conv_kernels__scalar;
}

const char *ridge_conv_describe(const ridge_ctx *ctx)
{
    static char buf[4][96]; /* one per ISA: constant strings, built once per call */
    ridge_isa isa = ridge_ctx_isa(ctx);
    int i = (int)isa < 0 || (int)isa > 2 ? 3 : (int)isa;
    const char *n = conv_kernels_for(isa)->name;
    snprintf(buf[i], sizeof buf[i],
             "%s (direct, im2col, pointwise, depthwise, winograd 2x3/4x3, fft)", n);
    return buf[i];
}

/* ---- the cost model -------------------------------------------------------------------------- */

/* A roofline-style estimate: time = executed FLOPs / (peak * efficiency) + bytes / the
 * bandwidth of the level they fit in + the algorithm's extra passes + a fixed cost per call.
 * The level is judged as the benchmark's roofline judges a working set (per-thread L2, the
 * shared usable L3, else DRAM): a plan runs many times, and a layer whose x and y fit the L3
 * finds them there when it runs again; its weights too if they fit the L2, else they come
 * from DRAM (see below). The machine numbers are the measured roof
 * (`ridge roofline`'s cached profile for this CPU: the FMA peak of the ISA, DRAM, L3 and L2
 * bandwidth at this thread count) when it exists, else nominal ones (FMA width x 2 pipes x 3
 * GHz, 12 GB/s DRAM, 40 GB/s L3 and 70 GB/s L2 per thread). The efficiencies are what each
 * kernel reached in `ridge bench conv` on the AMD EPYC Zen 3 VM (docs/PERFORMANCE.md).
 * Compute and memory time add up rather than overlap (the max of a strict roofline), since
 * streamed weights with little reuse stall the FMAs: with the weights from DRAM that fits the
 * measurements of Winograd F(4,3) at 256 channels, batch 1, within 5% (session 12). They rank
 * candidates; the tuning mode measures instead. */
typedef struct cost_machine {
    double flops; /* peak FLOP/s over the threads */
    double bw;    /* DRAM bytes/s over the threads */
    double l2bw;  /* L2 bytes/s over the threads */
    double l3bw;  /* L3 bytes/s over the threads */
    int threads;
    int measured; /* 1: from the roofline profile */
    ridge_roofline sizes; /* the cache sizes ridge_roofline_level_of judges by: the cached
                           * profile's, else the CPU's (only l1d, l2, l3_usable set) */
} cost_machine;

/* FLOPs one lane of the kernel's vector does per cycle at peak, relative to scalar code */
static double per_lane_flops(const conv_kernels *k)
{
    return k->isa == RIDGE_ISA_REF ? 1.0 : (double)k->vlen;
}

static pthread_mutex_t roof_lock = PTHREAD_MUTEX_INITIALIZER;
static int roof_state; /* 0 not looked, 1 loaded, -1 none */
static ridge_roofline roof_cached;

static cost_machine cost_machine_for(const conv_kernels *k, int threads)
{
    double per_cycle = k->isa == RIDGE_ISA_REF ? 2.0 : 2.0 * 2.0 * k->vlen;
    const ridge_cpu *cpu = ridge_cpu_get();
    cost_machine m = {.flops = per_cycle * 3.0e9 * threads,
                      .bw = 12e9 * (threads > 1 ? 1.3 : 1.0),
                      .l2bw = 70e9 * threads,
                      .l3bw = 40e9 * threads,
                      .threads = threads};
    m.sizes.l1d = cpu->l1d, m.sizes.l2 = cpu->l2, m.sizes.l3_usable = cpu->l3_usable;
    pthread_mutex_lock(&roof_lock);
    if (roof_state == 0) {
        /* the profile of the machine's full thread count also holds the smaller counts */
        char path[1024];
        roof_state = -1;
        if (ridge_roofline_cache_path(cpu->brand, cpu->logical_cpus, path, sizeof path) ==
                RIDGE_OK &&
            ridge_roofline_load(path, &roof_cached) == RIDGE_OK)
            roof_state = 1;
    }
    ridge_roofline_point pt;
    if (roof_state == 1 && threads <= roof_cached.threads &&
        ridge_roofline_at(&roof_cached, threads, &pt) == RIDGE_OK &&
        pt.peak[ridge_roofline_peak_f32(k->isa)] > 0) {
        m.flops = pt.peak[ridge_roofline_peak_f32(k->isa)] * 1e9;
        m.bw = ridge_roofline_bandwidth(&pt, RIDGE_LEVEL_DRAM) * 1e9;
        m.l2bw = ridge_roofline_bandwidth(&pt, RIDGE_LEVEL_L2) * 1e9;
        m.l3bw = ridge_roofline_bandwidth(&pt, RIDGE_LEVEL_L3) * 1e9;
        m.sizes = roof_cached;
        m.measured = 1;
    }
    pthread_mutex_unlock(&roof_lock);
    return m;
}

/* Bytes of the weights as algorithm a holds them (packed to whole channel blocks,
 * transformed to alpha x alpha for Winograd). */
static size_t weight_bytes(const ridge_conv2d_plan *p, ridge_conv_algo a)
{
    const ridge_conv2d_desc *d = &p->d;
    int64_t nr = p->k->nr, taps = d->r * d->s;
    switch (a) {
    case RIDGE_CONV_REF: return (size_t)(d->c_out * p->cig * taps) * 4;
    case RIDGE_CONV_DEPTHWISE: return (size_t)(taps * ((d->c_out + nr - 1) / nr * nr)) * 4;
    case RIDGE_CONV_WINOGRAD_2X3: taps = 16; break;
    case RIDGE_CONV_WINOGRAD_4X3: taps = 36; break;
    case RIDGE_CONV_FFT: return conv_fft_weight_elems(p) * 4;
    default: break;
    }
    return (size_t)(d->groups * p->ncob * nr * p->cig * taps) * 4;
}

/* Winograd's and FFT's efficiency on more than one thread, as a share of their 1-thread one:
 * more threads gain them less than direct. On Zen 5, 2 threads ran F(4,3) 1.29x its 1-thread
 * speed on fmnist-conv2 at batch 1 (direct 1.8x); the model had predicted 0.56-0.90x of
 * Winograd's measured time on 2 threads (3x3 32 -> 64 14 x 14 batch 1 and 64, 128 on 28 x 28,
 * 256 on 14 x 14; within 5% on 1 thread), with the factor 0.92-1.03x (`ridge conv --tune`).
 * FFT's had been 0.52x (fmnist-conv2 at batch 8 and 64), and without the factor it took over
 * from F(4,3) there; the large kernels FFT wins stay 2.0-8.5x ahead of direct. Since the
 * per-thread areas lie 1 MiB apart (conv_area_stride, session 40), F(4,3) on 2 threads runs
 * 1.6-2.0x its 1-thread speed (3x3 64 56 x 56 at batch 1 and 8, 128 28 x 28, 256 14 x 14,
 * 32 -> 64 14 x 14 at batch 64) and 1.2x on 14 x 14 at batch 1 (49 tiles); with 0.7 the model
 * predicted 1.2-1.6x its measured 2-thread time, with 0.85 1.0-1.3x, as on 1 thread. */
#define TRANSFORM_THREADS_EFF 0.7
#define WINOGRAD_THREADS_EFF 0.85

static double cost_predict(const ridge_conv2d_plan *p, ridge_conv_algo a, const cost_machine *m,
                           const conv_kernels *k, char *why, size_t why_len)
{
    const ridge_conv2d_desc *d = &p->d;
    const double pix = (double)d->n * p->oh * p->ow;
    const double cig = (double)p->cig, cog = (double)p->cog, G = (double)d->groups;
    const double taps = (double)d->r * d->s;
    const double nr = k->nr, cogp = ceil(cog / nr) * nr;
    /* compulsory traffic: x, y, and the weights as this algorithm holds them (U of F(4,3)
     * is 4x the 3x3 weights and, past the caches, bounds a batch-1 layer) */
    const double wb = (double)weight_bytes(p, a);
    const double io_bytes = 4.0 * ((double)d->n * d->c_in * d->h * d->w + pix * d->c_out) + wb;
    const int chan_contig = d->layout != RIDGE_NCHW;
    double flops = 0, eff = 0, bytes = io_bytes, extra = 0;
    const char *note = "";
    char fft_note[64];
    switch (a) {
    case RIDGE_CONV_REF:
        flops = 2 * pix * d->c_out * cig * taps;
        eff = 0.5 / (per_lane_flops(k)); /* scalar fp64 */
        note = "scalar fp64 loops; ";
        break;
    case RIDGE_CONV_DIRECT:
    case RIDGE_CONV_POINTWISE: {
        flops = 2 * pix * G * cogp * cig * taps;
        /* the reduction restarts per tap, or per kernel row when a window row is one run of
         * memory (NHWC, groups 1, no dilation): short loops pay their setup */
        double kc = d->layout == RIDGE_NHWC && G == 1 && d->dil_w == 1 ? cig * d->s : cig;
        /* pointwise on the micro-kernel runs whole images as one row: fewer calls */
        eff = (a == RIDGE_CONV_POINTWISE ? (conv_gemm_route(d, a) ? 0.85 : 0.92) : 0.90) * kc /
              (kc + 1.0);
        if (conv_gemm_route(d, a)) note = "on ridge_sgemm; ";
        else if (!chan_contig) eff *= 0.8, note = "NCHW: strided broadcasts, scalar stores; ";
        /* on a pointwise shape, direct splits the same GEMM at every row (10-15% measured) */
        char unused[8];
        if (a == RIDGE_CONV_DIRECT &&
            conv_algo_applies(d, RIDGE_CONV_POINTWISE, unused, sizeof unused) == RIDGE_OK)
            eff *= 0.88;
        else if (cogp > cog) note = "channel tail in scalar stores; ";
        if (conv_gemm_route(d, a)) extra = 5e-6 * d->n * G; /* one SGEMM call per image, group */
        break;
    }
    case RIDGE_CONV_IM2COL: {
        double K = cig * taps;
        flops = 2 * pix * G * cogp * K;
        eff = 0.80 * K / (K + 1.5);
        /* the lowered strip is written and read back through L2 (gathers: 1/4 of its rate) */
        extra = 2.0 * 4.0 * pix * G * K / (0.25 * m->l2bw);
        if (d->layout == RIDGE_NCHW) /* the NCHW lowering gathers element by element */
            extra = 2.5e-9 * pix * G * K, note = "NCHW: element-wise lowering; ";
        if (conv_gemm_route(d, a)) { /* one SGEMM call and one lowering per strip and group */
            note = d->layout == RIDGE_NCHW ? "on ridge_sgemm, element-wise lowering; "
                                           : "on ridge_sgemm; ";
            double strip = fmax(64.0, 262144.0 / K);
            extra += 1e-5 * d->n * G * ceil((double)p->oh * p->ow / strip);
        }
        break;
    }
    case RIDGE_CONV_DEPTHWISE:
        flops = 2 * pix * d->c_out * taps;
        eff = chan_contig ? 0.50 : 0.15;
        note = chan_contig ? "weights in registers; " : "NCHW: plane rows; ";
        break;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3: {
        int mt = a == RIDGE_CONV_WINOGRAD_2X3 ? 2 : 4, al = mt + 2;
        double tiles = (double)d->n * ceil((double)p->oh / mt) * ceil((double)p->ow / mt);
        flops = 2 * tiles * al * al * G * cig * cogp;
        eff = 0.85 * cig / (cig + 4.0);
        /* transforms: about 8 FLOPs per tile element and channel each way, at 1/4 of peak,
         * plus the alpha^2 planes V and M written and read through L2 */
        extra = tiles * G * (cig + cog) * al * al * 8.0 / (m->flops / 4.0) +
                tiles * G * (cig + cogp) * al * al * 8.0 / m->l2bw;
        if (!chan_contig) extra *= 2.0, note = "NCHW: strided gathers and stores; ";
        if (m->threads > 1) eff *= WINOGRAD_THREADS_EFF, extra /= WINOGRAD_THREADS_EFF;
        break;
    }
    case RIDGE_CONV_FFT: {
        /* conv-fft.c's model: complex GEMMs and transforms at their measured efficiencies,
         * the transformed weights and the spectra through memory */
        conv_fft_cost fc = conv_fft_tile(p, p->fft_th, p->fft_tw, m->flops, m->bw);
        flops = fc.gemm_flops + fc.fft_flops;
        eff = flops / (m->flops * fc.compute_s);
        if (m->threads > 1) eff *= TRANSFORM_THREADS_EFF;
        bytes += fc.spectra_bytes;
        snprintf(fft_note, sizeof fft_note, "%dx%d tiles, %.0f%% of the FLOPs in transforms; ",
                 fc.th, fc.tw, 100.0 * fc.fft_flops / flops);
        note = fft_note;
        break;
    }
    default: break;
    }
    /* sets that fit L1 move at the L2's rate: a call streams them through */
    const ridge_roofline_level lv = ridge_roofline_level_of(&m->sizes, m->threads, bytes);
    const double bw = lv == RIDGE_LEVEL_DRAM ? m->bw : lv == RIDGE_LEVEL_L3 ? m->l3bw : m->l2bw;
    /* ... but weights past the L2 come from memory: between two calls of a layer, the other
     * layers of its network pass through the L3 (ResNet-50's 3x3 weights alone are several
     * times the L3 as F(4,3) holds them), as the other algorithms do between two calls of one
     * in `ridge bench conv`. There, 3x3 256 -> 256 on 14 x 14 at batch 1 on 1 thread took 0.85
     * ms with F(4,3) (9.4 MB of weights; 0.44 ms called back to back) and 0.69 ms with F(2,3)
     * (4.2 MB; 0.56-0.60 back to back), against a prediction of 0.52 and 0.63 ms with the
     * weights in the L3. */
    const int w_dram = wb / m->threads > (double)m->sizes.l2;
    double tc = flops / (m->flops * eff), tm = (bytes - wb) / bw + wb / (w_dram ? m->bw : bw);
    /* the two walls do not overlap here (weights streamed with little reuse stall the FMAs,
     * measured on Winograd's U): their sum */
    double t = tc + tm + extra + 5e-6;
    snprintf(why, why_len, "%s%s-bound: %.3g GFLOP executed at %.0f%% of peak%s, %.3g MB%s",
             note, tc > tm ? "compute" : "memory", flops * 1e-9, eff * 100,
             extra > 0 ? " + extra passes" : "", bytes * 1e-6,
             w_dram ? " (weights from DRAM)" : "");
    return t;
}

/* ---- the plan -------------------------------------------------------------------------------- */

ridge_conv_algo ridge_conv2d_plan_algo(const ridge_conv2d_plan *p)
{
    return p ? p->algo : RIDGE_CONV_AUTO;
}

/* The shared part of the workspace: the bias, padded to whole channel blocks. */
static size_t ws_shared(const ridge_conv2d_plan *p)
{
    size_t nb = (size_t)(p->d.groups * p->ncob * p->k->nr + p->d.c_out + 64);
    return (nb * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
}

size_t ridge_conv2d_workspace_size(const ridge_conv2d_plan *p, int threads)
{
    if (!p) return 0;
    if (threads < 1 || p->gemm_route) threads = 1;
    return ws_shared(p) + p->ws_fixed + conv_areas_bytes(p->ws_per_thread, threads);
}

const ridge_conv2d_candidate *ridge_conv2d_plan_candidates(const ridge_conv2d_plan *p)
{
    return p ? p->cand : NULL;
}

const char *ridge_conv2d_plan_explain(const ridge_conv2d_plan *p)
{
    return p ? p->explain : "";
}

void ridge_conv2d_plan_destroy(ridge_conv2d_plan *p)
{
    if (!p) return;
    ridge_free(p->xco);
    ridge_free(p->yco);
    ridge_free(p->roff);
    ridge_free(p->soff);
    ridge_free(p->iota);
    ridge_free(p->zrow);
    ridge_free(p->yfast);
    ridge_free(p->wp);
    ridge_free(p->wref);
    ridge_free(p->fft_twid);
    if (p->gplan)
        for (int64_t g = 0; g < p->d.groups; g++) ridge_sgemm_plan_destroy(p->gplan[g]);
    ridge_free(p->gplan);
    ridge_free(p);
}

/* Tables and packed weights for algorithm a. */
static ridge_status plan_build(ridge_ctx *ctx, ridge_conv2d_plan *p, const float *w)
{
    const ridge_conv2d_desc *d = &p->d;
    const int nr = p->k->nr;
    p->xv = conv_view_make(d->layout, d->c_in, d->h, d->w);
    p->yv = conv_view_make(d->layout, d->c_out, p->oh, p->ow);
    p->ncob = (p->cog + nr - 1) / nr;
    int64_t iota_n = RIDGE_MAX(d->c_in, d->c_out) + nr;
    iota_n = RIDGE_MAX(iota_n, p->cig * d->r * d->s);
    p->xco = ridge_malloc(sizeof(ptrdiff_t) * (size_t)d->c_in);
    p->yco = ridge_malloc(sizeof(ptrdiff_t) * (size_t)(d->c_out + nr));
    p->roff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)d->r);
    p->soff = ridge_malloc(sizeof(ptrdiff_t) * (size_t)d->s);
    p->iota = ridge_malloc(sizeof(ptrdiff_t) * (size_t)iota_n);
    p->zrow = ridge_malloc(sizeof(float) * (size_t)p->cig);
    if (!p->xco || !p->yco || !p->roff || !p->soff || !p->iota || !p->zrow)
        return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for offset tables");
    conv_view_chan_table(&p->xv, d->c_in, p->xco);
    conv_view_chan_table(&p->yv, d->c_out, p->yco);
    for (int i = 0; i < nr; i++) p->yco[d->c_out + i] = p->yco[d->c_out - 1]; /* never stored */
    p->yfast = conv_yfast_table(p->yco, d->groups, p->cog, nr, p->k->vlen);
    if (!p->yfast) return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for offset tables");
    for (int64_t r = 0; r < d->r; r++) p->roff[r] = r * d->dil_h * p->xv.sh;
    for (int64_t s = 0; s < d->s; s++) p->soff[s] = s * d->dil_w * p->xv.sw;
    for (int64_t i = 0; i < iota_n; i++) p->iota[i] = i;
    memset(p->zrow, 0, sizeof(float) * (size_t)p->cig);
    if (p->algo == RIDGE_CONV_REF) {
        size_t n = (size_t)(d->c_out * p->cig * d->r * d->s);
        p->wref = ridge_malloc(n * sizeof(float));
        if (!p->wref) return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for weights");
        memcpy(p->wref, w, n * sizeof(float));
        p->ws_per_thread = 0;
        return RIDGE_OK;
    }
    p->gemm_route = conv_gemm_route(d, p->algo);
    ridge_status st = p->gemm_route ? conv_gemm_pack(ctx, p, w) : conv_algo_pack(p, w);
    if (st) return st;
    p->ws_per_thread = conv_algo_ws_per_thread(p, p->algo);
    p->ws_fixed = p->algo == RIDGE_CONV_FFT ? conv_fft_ws_fixed(p) : 0;
    return RIDGE_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of 5 runs (after one warm-up) of algorithm a; 0 on failure. */
static double tune_time(ridge_ctx *ctx, const ridge_conv2d_desc *d, const float *w,
                        ridge_conv_algo a, const float *x, float *y)
{
    ridge_conv2d_plan_options o = {.algo = a};
    ridge_conv2d_plan *p = NULL;
    if (ridge_conv2d_plan_create(ctx, d, w, &o, &p)) return 0.0;
    double t[5];
    int ok = ridge_conv2d_forward(ctx, p, x, y, NULL, NULL, NULL) == RIDGE_OK;
    for (int i = 0; i < 5 && ok; i++) {
        uint64_t t0 = ridge_time_ns();
        ok = ridge_conv2d_forward(ctx, p, x, y, NULL, NULL, NULL) == RIDGE_OK;
        t[i] = (double)(ridge_time_ns() - t0) * 1e-9;
    }
    ridge_conv2d_plan_destroy(p);
    if (!ok) return 0.0;
    qsort(t, 5, sizeof t[0], cmp_double);
    return t[2];
}

static void tune(ridge_ctx *ctx, ridge_conv2d_plan *p, const float *w, conv_tune_entry *e)
{
    const ridge_conv2d_desc *d = &p->d;
    size_t xn = ridge_tensor_elems(d->layout, d->n, d->c_in, d->h, d->w);
    size_t yn = ridge_tensor_elems(d->layout, d->n, d->c_out, p->oh, p->ow);
    float *x = ridge_malloc(xn * sizeof(float)), *y = ridge_malloc(yn * sizeof(float));
    memset(e, 0, sizeof *e);
    e->d = *d;
    e->isa = p->k->isa;
    e->threads = ridge_ctx_threads(ctx);
    e->algo = RIDGE_CONV_AUTO;
    if (x && y) {
        for (size_t i = 0; i < xn; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
        double best = 0;
        for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++) {
            if (!p->cand[a].applies) continue;
            e->measured[a] = tune_time(ctx, d, w, (ridge_conv_algo)a, x, y);
            if (e->measured[a] > 0 && (best == 0 || e->measured[a] < best))
                best = e->measured[a], e->algo = (ridge_conv_algo)a;
        }
    }
    ridge_free(x);
    ridge_free(y);
}

static void plan_explain(ridge_conv2d_plan *p, int threads, const char *reason,
                         const char *machine_note, const char *stream_why)
{
    const ridge_conv2d_desc *d = &p->d;
    char *b = p->explain;
    size_t n = sizeof p->explain, o = 0;
#define OUT(...) (o += (size_t)snprintf(o < n ? b + o : NULL, o < n ? n - o : 0, __VA_ARGS__))
    OUT("conv2d n=%lld c_in=%lld %lldx%lld -> c_out=%lld %lldx%lld, kernel %lldx%lld stride "
        "%lldx%lld dilation %lldx%lld pad t%lld b%lld l%lld r%lld, groups %lld, %s\n",
        (long long)d->n, (long long)d->c_in, (long long)d->h, (long long)d->w,
        (long long)d->c_out, (long long)p->oh, (long long)p->ow, (long long)d->r,
        (long long)d->s, (long long)d->stride_h, (long long)d->stride_w, (long long)d->dil_h,
        (long long)d->dil_w, (long long)d->pad_top, (long long)d->pad_bottom,
        (long long)d->pad_left, (long long)d->pad_right, (long long)d->groups,
        ridge_layout_name(d->layout));
    OUT("%.4g GFLOP (direct count); kernels %s, %d thread%s; cost model on the %s\n",
        ridge_conv2d_flops(d) * 1e-9, p->k->name, threads, threads > 1 ? "s" : "",
        machine_note);
    OUT("  %-13s %-7s %12s %12s %12s %12s  %s\n", "candidate", "applies", "predicted_ms",
        "measured_ms", "workspace_B", "weights_B", "basis / reason");
    for (int a = 0; a < RIDGE_CONV_ALGO_COUNT; a++) {
        const ridge_conv2d_candidate *c = &p->cand[a];
        char pred[32] = "-", meas[32] = "-", ws[32] = "-", wb[32] = "-";
        if (c->applies) {
            snprintf(pred, sizeof pred, "%.4f", c->predicted_s * 1e3);
            snprintf(ws, sizeof ws, "%zu", c->workspace);
            snprintf(wb, sizeof wb, "%zu", c->weight_bytes);
        }
        if (c->measured_s > 0) snprintf(meas, sizeof meas, "%.4f", c->measured_s * 1e3);
        OUT("%c %-13s %-7s %12s %12s %12s %12s  %s\n", a == (int)p->algo ? '*' : ' ',
            algo_names[a], c->applies ? "yes" : "no", pred, meas, ws, wb, c->why);
    }
    OUT("pick: %s: %s\n", algo_names[p->algo], reason);
    if (stream_why[0])
        OUT("stores: %s (%s)\n",
            p->stores == CONV_STORES_STREAMED
                ? "non-temporal, past the cache, when y is 64-byte aligned"
            : p->stores == CONV_STORES_PREFETCHED
                ? "through the cache, the input prefetched"
                : "through the cache",
            stream_why);
#undef OUT
}

ridge_status ridge_conv2d_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                      const float *w, const ridge_conv2d_plan_options *opts,
                                      ridge_conv2d_plan **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "conv2d_plan_create: out is NULL");
    *out = NULL;
    if (!ctx || !w) return ridge_error(RIDGE_EINVAL, "conv2d_plan_create: ctx or weights NULL");
    ridge_conv2d_plan_options o;
    if (opts) o = *opts;
    else ridge_conv2d_plan_options_init(&o), o.tune = ctx->conv_tune;
    if (o.algo < RIDGE_CONV_AUTO || o.algo >= RIDGE_CONV_ALGO_COUNT)
        return ridge_error(RIDGE_EINVAL, "conv2d_plan_create: algo = %d is not a ridge_conv_algo",
                           (int)o.algo);
    if (o.tune < 0 || o.tune > 2)
        return ridge_error(RIDGE_EINVAL, "conv2d_plan_create: tune = %d must be 0, 1 or 2", o.tune);
    if (o.stream < -1 || o.stream > 1)
        return ridge_error(RIDGE_EINVAL, "conv2d_plan_create: stream = %d must be -1, 0 or 1",
                           o.stream);
    int64_t oh, ow;
    ridge_status st = ridge_conv2d_desc_check(d, &oh, &ow);
    if (st) return st;
    const int64_t kext = RIDGE_MAX(d->dil_h * (d->r - 1), d->dil_w * (d->s - 1)) + 1;
    if (o.fft_tile && (o.fft_tile < 8 || o.fft_tile > 64 || (o.fft_tile & (o.fft_tile - 1)) ||
                       o.fft_tile < kext))
        return ridge_error(RIDGE_EINVAL,
                           "conv2d_plan_create: fft_tile = %d must be 8, 16, 32 or 64 and at "
                           "least the dilated kernel (%lld)", o.fft_tile, (long long)kext);

    ridge_conv2d_plan *p = ridge_calloc(1, sizeof *p);
    if (!p) return ridge_error(RIDGE_ENOMEM, "conv2d_plan_create: out of memory");
    p->d = *d;
    p->oh = oh, p->ow = ow;
    p->stream = o.stream;
    p->cig = d->c_in / d->groups, p->cog = d->c_out / d->groups;
    p->k = conv_kernels_for(ridge_ctx_isa(ctx));
    p->ncob = (p->cog + p->k->nr - 1) / p->k->nr;
    const int threads = ridge_ctx_threads(ctx);

    /* every candidate: applies?, predicted time, workspace, weight bytes */
    cost_machine m = cost_machine_for(p->k, threads);
    ridge_conv_algo best = RIDGE_CONV_REF;
    char unused[8];
    if (conv_algo_applies(d, RIDGE_CONV_FFT, unused, sizeof unused) == RIDGE_OK) {
        conv_fft_cost fc = conv_fft_tile(p, o.fft_tile, o.fft_tile, m.flops, m.bw);
        p->fft_th = fc.th, p->fft_tw = fc.tw;
    }
    for (int a = 0; a < RIDGE_CONV_ALGO_COUNT; a++) {
        ridge_conv2d_candidate *c = &p->cand[a];
        c->algo = (ridge_conv_algo)a;
        c->applies = conv_algo_applies(d, c->algo, c->why, sizeof c->why) == RIDGE_OK;
        if (!c->applies) continue;
        c->predicted_s = cost_predict(p, c->algo, &m, p->k, c->why, sizeof c->why);
        c->workspace = ws_shared(p) + conv_areas_bytes(conv_algo_ws_per_thread(p, c->algo),
                                                       conv_gemm_route(d, c->algo) ? 1 : threads);
        if (c->algo == RIDGE_CONV_FFT) c->workspace += conv_fft_ws_fixed(p);
        c->weight_bytes = weight_bytes(p, c->algo);
    }
    /* the lowest prediction; within 5% of each other (the model's resolution) the one that
     * moves less memory (weights + workspace) wins */
    for (int a = RIDGE_CONV_DIRECT; a < RIDGE_CONV_ALGO_COUNT; a++) {
        const ridge_conv2d_candidate *c = &p->cand[a], *b = &p->cand[best];
        if (!c->applies) continue;
        if (best == RIDGE_CONV_REF || c->predicted_s < 0.95 * b->predicted_s ||
            (c->predicted_s < 1.05 * b->predicted_s &&
             c->weight_bytes + c->workspace < b->weight_bytes + b->workspace))
            best = c->algo;
    }

    char reason[512];
    if (o.algo != RIDGE_CONV_AUTO) {
        if (!p->cand[o.algo].applies) {
            st = ridge_error(RIDGE_EUNSUPPORTED, "conv2d: %s does not apply: %s",
                             algo_names[o.algo], p->cand[o.algo].why);
            goto err_free_plan;
        }
        p->algo = o.algo;
        snprintf(reason, sizeof reason, "forced by the caller");
    } else {
        p->algo = best;
        int second = -1;
        for (int a = 1; a < RIDGE_CONV_ALGO_COUNT; a++)
            if (a != (int)best && p->cand[a].applies &&
                (second < 0 || p->cand[a].predicted_s < p->cand[second].predicted_s))
                second = a;
        if (second >= 0)
            snprintf(reason, sizeof reason,
                     "lowest predicted time, or within 5%% of it with less memory (%.4f ms; "
                     "next: %s at %.4f ms, %.2fx)",
                     p->cand[best].predicted_s * 1e3, algo_names[second],
                     p->cand[second].predicted_s * 1e3,
                     p->cand[second].predicted_s / p->cand[best].predicted_s);
        else
            snprintf(reason, sizeof reason, "the only fast algorithm that applies (%.4f ms)",
                     p->cand[best].predicted_s * 1e3);
        if (o.tune) {
            /* a stored result counts only if it timed exactly the algorithms that apply */
            conv_tune_entry e;
            char where[320];
            const char *brand = ridge_ctx_cpu(ctx)->brand;
            int cached = o.tune == 1 && conv_tune_lookup(brand, d, p->k->isa, threads, &e, where,
                                                         sizeof where);
            for (int a = RIDGE_CONV_DIRECT; cached && a < RIDGE_CONV_ALGO_COUNT; a++)
                if ((e.measured[a] > 0) != (p->cand[a].applies != 0)) cached = 0;
            int saved = 0;
            if (!cached) {
                tune(ctx, p, w, &e);
                saved = e.algo != RIDGE_CONV_AUTO &&
                        conv_tune_store(brand, &e, where, sizeof where);
            }
            for (int a = 0; a < RIDGE_CONV_ALGO_COUNT; a++) p->cand[a].measured_s = e.measured[a];
            if (e.algo != RIDGE_CONV_AUTO) {
                p->algo = e.algo;
                snprintf(reason, sizeof reason,
                         "fastest measured (%.4f ms, median of 5; %s %s); the model predicted %s",
                         e.measured[e.algo] * 1e3,
                         cached ? "cached" : saved ? "saved to" : "not saved:", where,
                         algo_names[best]);
            }
        }
    }
    if ((st = plan_build(ctx, p, w))) goto err_free_plan;
    char stream_why[128];
    p->stores = conv_stream_choice(p, stream_why, sizeof stream_why);
    plan_explain(p, threads, reason,
                 m.measured ? "measured roof (ridge roofline profile)"
                            : "nominal machine (no ridge roofline profile cached)", stream_why);
    if (ctx->verbose) fprintf(stderr, "ridge: %s", p->explain);
    *out = p;
    return RIDGE_OK;

err_free_plan:
    ridge_conv2d_plan_destroy(p);
    return st;
}

/* ---- forward --------------------------------------------------------------------------------- */

/* The profiler's record of one forward: the direct FLOP count, x + y + weights as bytes. */
static void prof_end(ridge_ctx *ctx, const ridge_conv2d_plan *p, uint64_t t0)
{
    const ridge_conv2d_desc *d = &p->d;
    double bytes = 4.0 * ((double)d->n * d->c_in * d->h * d->w +
                          (double)d->n * d->c_out * p->oh * p->ow) +
                   (double)weight_bytes(p, p->algo);
    RIDGE_PROF_END(ctx, t0, "conv2d", algo_names[p->algo], ridge_conv2d_flops(d), bytes, bytes,
                   "n%lld %lld->%lld %lldx%lld k%lldx%lld/%lld %s", (long long)d->n,
                   (long long)d->c_in, (long long)d->c_out, (long long)d->h, (long long)d->w,
                   (long long)d->r, (long long)d->s, (long long)d->stride_h,
                   ridge_layout_name(d->layout));
}

/* The bias as the kernels read it: whole NR blocks per group (depthwise: c_out + 2 NR), zeros
 * past the channels, and zeros for no bias. */
static void pad_bias(const ridge_conv2d_plan *p, const float *bias, float *bp)
{
    const int nr = p->k->nr;
    if (p->algo == RIDGE_CONV_DEPTHWISE) {
        for (int64_t c = 0; c < p->d.c_out + 2 * nr; c++)
            bp[c] = bias && c < p->d.c_out ? bias[c] : 0.0f;
        return;
    }
    for (int64_t g = 0; g < p->d.groups; g++)
        for (int64_t j = 0; j < p->ncob * nr; j++)
            bp[g * p->ncob * nr + j] = bias && j < p->cog ? bias[g * p->cog + j] : 0.0f;
}

ridge_status ridge_conv2d_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *x,
                                  float *y, const float *bias, const ridge_conv2d_epilogue *ep,
                                  void *workspace)
{
    if (!ctx || !p || !x || !y)
        return ridge_error(RIDGE_EINVAL, "conv2d_forward: ctx, plan, x or y is NULL");
    int act = ep ? (int)ep->act : 0;
    const float *res = ep ? ep->residual : NULL;
    if (act < 0 || act > RIDGE_CONV_ACT_RELU)
        return ridge_error(RIDGE_EINVAL, "conv2d_forward: act = %d is not a ridge_conv_act", act);
    uint64_t t0 = RIDGE_PROF_START(ctx);
    if (p->algo == RIDGE_CONV_REF) {
        conv_forward_ref(&p->d, p->oh, p->ow, x, p->wref, y, bias, act, res);
        prof_end(ctx, p, t0);
        return RIDGE_OK;
    }
    void *own = NULL; /* SGEMM-route plans use the ctx arena inside ridge_sgemm */
    if (!workspace) {
        size_t bytes = ridge_conv2d_workspace_size(p, ridge_ctx_threads(ctx));
        if (p->gemm_route) {
            workspace = own = ridge_malloc(bytes);
            if (!own) return ridge_error(RIDGE_ENOMEM, "conv2d_forward: out of memory");
        } else {
            ridge_status st = ridge_ctx_scratch(ctx, bytes, &workspace);
            if (st) return st;
        }
    }
    /* the bias, padded to whole NR blocks per group, then the per-thread areas */
    float *bp = workspace;
    pad_bias(p, bias, bp);
    ridge_status st = conv_algo_forward(ctx, p, NULL, x, y, bp, bias, act, res,
                                        (char *)workspace + ws_shared(p));
    ridge_free(own);
    if (st) return st;
    conv_zero_channel_padding(y, p->d.layout, p->d.n, p->d.c_out, p->oh, p->ow);
    prof_end(ctx, p, t0);
    return RIDGE_OK;
}

ridge_status conv_forward_with(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *wp,
                               const float *x, float *y, void *ws)
{
    pad_bias(p, NULL, ws);
    ridge_status st = conv_algo_forward(ctx, p, wp, x, y, ws, NULL, 0, NULL,
                                        (char *)ws + ws_shared(p));
    if (!st) conv_zero_channel_padding(y, p->d.layout, p->d.n, p->d.c_out, p->oh, p->ow);
    return st;
}

ridge_status ridge_conv2d_forward_ref(const ridge_conv2d_desc *d, const float *x, const float *w,
                                      float *y, const float *bias,
                                      const ridge_conv2d_epilogue *ep)
{
    int64_t oh, ow;
    ridge_status st = ridge_conv2d_desc_check(d, &oh, &ow);
    if (st) return st;
    if (!x || !w || !y) return ridge_error(RIDGE_EINVAL, "conv2d_forward_ref: NULL tensor");
    conv_forward_ref(d, oh, ow, x, w, y, bias, ep ? (int)ep->act : 0, ep ? ep->residual : NULL);
    return RIDGE_OK;
}

/* ---- fusion helpers -------------------------------------------------------------------------- */

static ridge_status separable_check(const ridge_conv2d_plan *dw, const ridge_conv2d_plan *pw)
{
    if (!dw || !pw) return ridge_error(RIDGE_EINVAL, "conv2d_separable: NULL plan");
    if (dw->algo != RIDGE_CONV_DEPTHWISE || pw->algo != RIDGE_CONV_POINTWISE)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "conv2d_separable: needs a depthwise plan then a pointwise plan "
                           "(got %s, %s)", algo_names[dw->algo], algo_names[pw->algo]);
    if (dw->d.layout != RIDGE_NHWC || pw->d.layout != RIDGE_NHWC)
        return ridge_error(RIDGE_EUNSUPPORTED, "conv2d_separable: NHWC only (got %s, %s)",
                           ridge_layout_name(dw->d.layout), ridge_layout_name(pw->d.layout));
    if (pw->d.n != dw->d.n || pw->d.c_in != dw->d.c_out || pw->d.h != dw->oh ||
        pw->d.w != dw->ow || pw->d.groups != 1)
        return ridge_error(RIDGE_EINVAL,
                           "conv2d_separable: the pointwise plan's input (%lld, %lld, %lld, "
                           "%lld, groups %lld) is not the depthwise output (%lld, %lld, %lld, "
                           "%lld)", (long long)pw->d.n, (long long)pw->d.c_in,
                           (long long)pw->d.h, (long long)pw->d.w, (long long)pw->d.groups,
                           (long long)dw->d.n, (long long)dw->d.c_out, (long long)dw->oh,
                           (long long)dw->ow);
    return RIDGE_OK;
}

size_t ridge_conv2d_separable_workspace_size(const ridge_conv2d_plan *dw,
                                             const ridge_conv2d_plan *pw)
{
    if (separable_check(dw, pw)) return 0;
    return ws_shared(dw) + ws_shared(pw) +
           (size_t)(conv_separable_strip_rows(dw) * dw->ow * dw->d.c_out) * 4;
}

ridge_status ridge_conv2d_separable_forward(ridge_ctx *ctx, const ridge_conv2d_plan *dw,
                                            const ridge_conv2d_plan *pw, const float *x,
                                            float *y, const float *dw_bias,
                                            const ridge_conv2d_epilogue *dw_ep,
                                            const float *pw_bias,
                                            const ridge_conv2d_epilogue *pw_ep, void *workspace)
{
    ridge_status st = separable_check(dw, pw);
    if (st) return st;
    if (!ctx || !x || !y) return ridge_error(RIDGE_EINVAL, "conv2d_separable: NULL argument");
    if (dw_ep && dw_ep->residual)
        return ridge_error(RIDGE_EINVAL, "conv2d_separable: the depthwise step takes no residual");
    int dw_act = dw_ep ? (int)dw_ep->act : 0, pw_act = pw_ep ? (int)pw_ep->act : 0;
    if (dw_act < 0 || dw_act > RIDGE_CONV_ACT_RELU || pw_act < 0 || pw_act > RIDGE_CONV_ACT_RELU)
        return ridge_error(RIDGE_EINVAL, "conv2d_separable: act is not a ridge_conv_act");
    if (!workspace) {
        st = ridge_ctx_scratch(ctx, ridge_conv2d_separable_workspace_size(dw, pw), &workspace);
        if (st) return st;
    }
    float *dbp = workspace, *pbp = (float *)((char *)workspace + ws_shared(dw));
    pad_bias(dw, dw_bias, dbp);
    pad_bias(pw, pw_bias, pbp);
    conv_separable_forward(ctx, dw, pw, x, y, dbp, dw_act, pbp, pw_act,
                           pw_ep ? pw_ep->residual : NULL,
                           (float *)((char *)pbp + ws_shared(pw)));
    return RIDGE_OK;
}

ridge_status ridge_conv2d_fold_bn(int64_t c_out, int64_t per_out, float *w, float *bias,
                                  const float *gamma, const float *beta, const float *mean,
                                  const float *var, float eps)
{
    if (c_out <= 0 || per_out <= 0)
        return ridge_error(RIDGE_EINVAL, "conv2d_fold_bn: c_out = %lld, per_out = %lld",
                           (long long)c_out, (long long)per_out);
    if (!w || !bias || !gamma || !beta || !mean || !var)
        return ridge_error(RIDGE_EINVAL, "conv2d_fold_bn: NULL argument");
    if (!(eps >= 0.0f)) return ridge_error(RIDGE_EINVAL, "conv2d_fold_bn: eps = %g", eps);
    for (int64_t o = 0; o < c_out; o++) {
        if (!(var[o] + eps > 0.0f))
            return ridge_error(RIDGE_EINVAL, "conv2d_fold_bn: var[%lld] + eps = %g is not > 0",
                               (long long)o, var[o] + eps);
    }
    for (int64_t o = 0; o < c_out; o++) {
        double k = gamma[o] / sqrt((double)var[o] + eps);
        for (int64_t i = 0; i < per_out; i++) w[o * per_out + i] = (float)(w[o * per_out + i] * k);
        bias[o] = (float)((bias[o] - (double)mean[o]) * k + beta[o]);
    }
    return RIDGE_OK;
}
