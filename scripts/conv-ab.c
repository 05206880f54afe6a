/* In-process A/B timing of two libridge builds and oneDNN on one convolution, for kernel
 * changes whose effect is smaller than this VM's run-to-run noise (docs/PERFORMANCE.md, conv).
 *
 * Both builds' shared libraries are loaded with dlopen(RTLD_LOCAL), so their symbols do not
 * clash; each gets its own context and plan. The two builds and oneDNN (same shape and layout,
 * weights in its own format, its own input and output buffers) are then called round-robin,
 * one call each per round, so slow phases of the machine hit all three alike. Each method has
 * its own input and output buffers: when A and B shared them (before 2026-12-01), B found the
 * input A had just read in cache and measured 1.1-1.2x faster in position B than in position
 * A with the same library (docs/PERFORMANCE.md, conv, session 4). Medians and
 * bests of the rounds are printed, with B/A (> 1: B faster) and oneDNN/B (> 1: B faster than
 * oneDNN). The builds' outputs are compared first (max |A - B|). A fourth method in the same
 * rounds, memcpy of an input-sized buffer into an output-sized one (its own pair), is the
 * bandwidth roof of a kernel that reads x once and writes y once from the same cache state:
 * `copy` is its time, and roof% = copy time / B's time (stride 1 only: with stride 2 the
 * output is a quarter of the input). With nchw16c oneDNN's AVX2 build offers only its
 * reference loops (~0.1-0.2 s per call), which also leave the caches cold for the others.
 *
 * Shapes: depthwise 3x3 (--window K: K x K), padding 1 (K / 2), stride s (MobileNet,
 * EfficientNet's 5x5, ConvNeXt's 7x7), or with --pointwise a 1x1 C -> C, or
 * with --direct CIN,R,PAD the direct algorithm on CIN -> C channels, an R x R kernel, stride
 * STRIDE and padding PAD (ResNet's first layer: 64 224 2 1 nhwc 21 --direct 3,7,3).
 *
 *   cc -O2 -Iinclude scripts/conv-ab.c -ldnnl -lgomp -ldl -lm -o conv-ab
 *   flock /tmp/ridge-bench.lock ./conv-ab old/libridge.so new/libridge.so 32 112 1 1 nhwc 41
 *
 * usage: conv-ab LIB_A LIB_B C HW STRIDE THREADS [nhwc|nchw16c] [ROUNDS]
 *                [--pointwise | --direct CIN,R,PAD] [--batch N] [--stream SA,SB] [--window K]
 *                [--algo NAME]
 * --stream: the plan option `stream` for A and B (-1 never, 0 by size, 1 always; default 0).
 * --algo: another algorithm for the same shape (auto, direct, im2col, winograd-4x3, ...). */
#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

typedef ridge_status (*fwd_fn)(ridge_ctx *, const ridge_conv2d_plan *, const float *, float *,
                               const float *, const ridge_conv2d_epilogue *, void *);

/* --algo NAME: ridge_conv_algo_name's names (the builds are dlopen'ed, so no parse call here);
 * -3 if unknown */
static int algo_named(const char *s)
{
    static const char *const names[] = {"ref", "direct", "im2col", "pointwise", "depthwise",
                                        "winograd-2x3", "winograd-4x3", "fft"};
    if (!strcmp(s, "auto")) return RIDGE_CONV_AUTO;
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
        if (!strcmp(s, names[i])) return i;
    return -3;
}

typedef struct build {
    ridge_ctx *ctx;
    ridge_conv2d_plan *plan;
    void *ws;
    fwd_fn fwd;
} build;

static int load(build *b, const char *path, const ridge_conv2d_desc *d, const float *w,
                ridge_conv_algo algo, int threads, int stream)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "conv-ab: %s\n", dlerror());
        return -1;
    }
    void (*opt_init)(ridge_ctx_options *) =
        (void (*)(ridge_ctx_options *))dlsym(h, "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
        (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
    ridge_status (*plan_create)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                                const ridge_conv2d_plan_options *, ridge_conv2d_plan **) =
        (ridge_status(*)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                         const ridge_conv2d_plan_options *, ridge_conv2d_plan **))
            dlsym(h, "ridge_conv2d_plan_create");
    size_t (*ws_size)(const ridge_conv2d_plan *, int) =
        (size_t(*)(const ridge_conv2d_plan *, int))dlsym(h, "ridge_conv2d_workspace_size");
    b->fwd = (fwd_fn)dlsym(h, "ridge_conv2d_forward");
    if (!opt_init || !ctx_create || !plan_create || !ws_size || !b->fwd) return -1;
    ridge_ctx_options co;
    opt_init(&co);
    co.threads = threads;
    ridge_conv2d_plan_options po = {.algo = algo, .stream = stream}; /* builds before
                                                                       * 2026-12-01 lack stream */
    if (ctx_create(&co, &b->ctx) || plan_create(b->ctx, d, w, &po, &b->plan)) return -1;
    b->ws = aligned_alloc(64, (ws_size(b->plan, threads) + 127) / 64 * 64);
    return b->ws ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: conv-ab LIB_A LIB_B C HW STRIDE THREADS [nhwc|nchw16c] [ROUNDS] "
                        "[--pointwise | --direct CIN,R,PAD] [--batch N] [--stream SA,SB] "
                        "[--window K]\n");
        return 2;
    }
    const int C = atoi(argv[3]), H = atoi(argv[4]), S = atoi(argv[5]), T = atoi(argv[6]);
    const int blocked = argc > 7 && !strcmp(argv[7], "nchw16c");
    const int rounds = argc > 8 ? atoi(argv[8]) : 31;
    int pw = 0, N = 1, sa = 0, sb = 0, dcin = 0, dr = 0, dpad = 0, dwk = 3, force = -2;
    for (int i = 9; i < argc; i++) {
        if (!strcmp(argv[i], "--pointwise")) pw = 1;
        else if (!strcmp(argv[i], "--direct") && i + 1 < argc &&
                 sscanf(argv[++i], "%d,%d,%d", &dcin, &dr, &dpad) == 3)
            continue;
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc) N = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--window") && i + 1 < argc) dwk = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--algo") && i + 1 < argc) force = algo_named(argv[++i]);
        else if (!strcmp(argv[i], "--stream") && i + 1 < argc &&
                 sscanf(argv[++i], "%d,%d", &sa, &sb) == 2)
            continue;
        else return 2;
    }
    if (C < 1 || H < 3 || S < 1 || T < 1 || rounds < 1 || N < 1 || force == -3) return 2;
    const int dir = dcin > 0; /* --direct: c_in, kernel, padding; groups 1 */
    const int cin = dir ? dcin : C, R = dir ? dr : pw ? 1 : dwk;
    const int PAD = dir ? dpad : pw ? 0 : dwk / 2;
    const int G = dir || pw ? 1 : C, STR = pw ? 1 : S;
    const int OH = (H + 2 * PAD - R) / STR + 1;
    const size_t cpad = (size_t)(C + 15) / 16 * 16, cinpad = (size_t)(cin + 15) / 16 * 16;
    const size_t xn = (size_t)N * cinpad * (size_t)(H * H), yn = (size_t)N * cpad * (size_t)(OH * OH);
    const size_t wn = (size_t)C * (size_t)(cin / G) * (size_t)(R * R);
    float *x = aligned_alloc(64, xn * 4), *x2 = aligned_alloc(64, xn * 4);
    float *y = aligned_alloc(64, yn * 4), *y2 = aligned_alloc(64, yn * 4);
    float *xb = aligned_alloc(64, xn * 4), *yb2 = aligned_alloc(64, yn * 4);
    float *ya = aligned_alloc(64, yn * 4), *yb = aligned_alloc(64, yn * 4);
    float *xc = aligned_alloc(64, xn * 4), *yc = aligned_alloc(64, xn * 4);
    float *w = malloc(wn * 4), *bias = malloc((size_t)C * 4);
    if (!x || !x2 || !y || !y2 || !xb || !yb2 || !ya || !yb || !xc || !yc || !w || !bias) return 1;
    for (size_t i = 0; i < xn; i++) x[i] = x2[i] = xb[i] = (float)(i % 17) * 0.1f - 0.5f;
    for (size_t i = 0; i < wn; i++) w[i] = 0.1f * (float)(i % 7) - 0.3f;
    for (int i = 0; i < C; i++) bias[i] = 0.5f;
    memset(y, 0, yn * 4), memset(y2, 0, yn * 4), memset(yb2, 0, yn * 4);
    memcpy(xc, x, xn * 4), memset(yc, 0, xn * 4);

    ridge_conv2d_desc d;
    memset(&d, 0, sizeof d); /* ridge_conv2d_desc_init lives in the builds, not here */
    d.n = N, d.c_in = cin, d.c_out = C, d.h = d.w = H, d.stride_h = d.stride_w = STR;
    d.dil_h = d.dil_w = 1, d.layout = blocked ? RIDGE_NCHW16C : RIDGE_NHWC;
    d.r = d.s = R, d.groups = G;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = PAD;
    build A, B;
    ridge_conv_algo algo = dir ? RIDGE_CONV_DIRECT : pw ? RIDGE_CONV_POINTWISE : RIDGE_CONV_DEPTHWISE;
    if (force != -2) algo = (ridge_conv_algo)force;
    if (load(&A, argv[1], &d, w, algo, T, sa) || load(&B, argv[2], &d, w, algo, T, sb)) {
        fprintf(stderr, "conv-ab: could not load or plan with %s / %s\n", argv[1], argv[2]);
        return 1;
    }

    /* oneDNN: the same convolution, its own weight format (contents do not matter here) */
    omp_set_num_threads(T);
    dnnl_engine_t eng;
    dnnl_stream_t str;
    dnnl_engine_create(&eng, dnnl_cpu, 0);
    dnnl_stream_create(&str, eng, dnnl_stream_default_flags);
    dnnl_dims_t sd = {N, cin, H, H}, dd = {N, C, OH, OH}, bd = {C};
    dnnl_dims_t wdw = {C, 1, 1, R, R}, wg1 = {C, cin, R, R};
    dnnl_dims_t st = {d.stride_h, d.stride_w}, dl = {0, 0};
    dnnl_dims_t pad = {d.pad_top, d.pad_left};
    dnnl_format_tag_t tag = blocked ? dnnl_nChw16c : dnnl_nhwc;
    dnnl_memory_desc_t smd, dmd, wmd, bmd;
    dnnl_memory_desc_init_by_tag(&smd, 4, sd, dnnl_f32, tag);
    dnnl_memory_desc_init_by_tag(&dmd, 4, dd, dnnl_f32, tag);
    dnnl_memory_desc_init_by_tag(&wmd, G == 1 ? 4 : 5, G == 1 ? wg1 : wdw, dnnl_f32,
                                 dnnl_format_tag_any);
    dnnl_memory_desc_init_by_tag(&bmd, 1, bd, dnnl_f32, dnnl_x);
    dnnl_convolution_desc_t cd;
    dnnl_primitive_desc_t pd;
    dnnl_primitive_t prim;
    if (dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &smd, &wmd, &bmd,
                                                   &dmd, st, dl, pad, pad) ||
        dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL))
        return 1;
    const char *impl = "";
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    const dnnl_memory_desc_t *qw = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    size_t wsz = dnnl_memory_desc_get_size(qw);
    float *wb = aligned_alloc(64, (wsz + 63) / 64 * 64);
    memset(wb, 0, wsz);
    dnnl_memory_t ms, md, mw, mb;
    dnnl_memory_create(&ms, &smd, eng, x2);
    dnnl_memory_create(&md, &dmd, eng, y2);
    dnnl_memory_create(&mw, qw, eng, wb);
    dnnl_memory_create(&mb, &bmd, eng, bias);
    if (dnnl_primitive_create(&prim, pd)) return 1;
    dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb},
                              {DNNL_ARG_DST, md}};

    /* the two builds agree? */
    A.fwd(A.ctx, A.plan, x, ya, bias, NULL, A.ws);
    B.fwd(B.ctx, B.plan, x, yb, bias, NULL, B.ws);
    double diff = 0;
    for (size_t i = 0; i < yn; i++) diff = fmax(diff, fabs((double)ya[i] - yb[i]));

    double *s[4];
    for (int m = 0; m < 4; m++) s[m] = calloc((size_t)rounds, sizeof(double));
    for (int r = -3; r < rounds; r++) /* 3 warm-up rounds */
        for (int m = 0; m < 4; m++) {
            double t0 = now();
            if (m == 0) A.fwd(A.ctx, A.plan, x, y, bias, NULL, A.ws);
            else if (m == 1) B.fwd(B.ctx, B.plan, xb, yb2, bias, NULL, B.ws);
            else if (m == 2) {
                dnnl_primitive_execute(prim, str, 4, args);
                dnnl_stream_wait(str);
            } else memcpy(yc, xc, xn * 4);
            if (r >= 0) s[m][r] = now() - t0;
        }
    for (int m = 0; m < 4; m++) qsort(s[m], (size_t)rounds, sizeof(double), cmpd);
    const int mid = rounds / 2;
    printf("%s N=%d C=%d %dx%d stride %d %s %d thread%s, max|A-B| %.2g; ms median/best: A %.3f/%.3f"
           "  B %.3f/%.3f  oneDNN (%s) %.3f/%.3f  copy %.3f;  B/A %.2f  oneDNN/B %.2f"
           "  roof%%: B %.0f oneDNN %.0f\n",
           dir ? "direct" : pw ? "pointwise" : "depthwise", N, C, H, H, (int)d.stride_h,
           blocked ? "nchw16c" : "nhwc", T,
           T > 1 ? "s" : "", diff, s[0][mid] * 1e3, s[0][0] * 1e3, s[1][mid] * 1e3,
           s[1][0] * 1e3, impl, s[2][mid] * 1e3, s[2][0] * 1e3, s[3][mid] * 1e3,
           s[0][mid] / s[1][mid], s[2][mid] / s[1][mid],
           xn == yn ? 100 * s[3][mid] / s[1][mid] : NAN,
           xn == yn ? 100 * s[3][mid] / s[2][mid] : NAN);
    return 0;
}
