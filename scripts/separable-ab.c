/* In-process A/B timing of the fused depthwise-separable block (ridge_conv2d_separable_forward)
 * from two libridge builds, with each build's two separate calls (depthwise, then pointwise)
 * beside it: MobileNet's block, depthwise 3x3 + ReLU then pointwise 64 -> 64 + ReLU, 56 x 56,
 * NHWC, batch N.
 *
 * Both shared libraries are loaded with dlopen(RTLD_LOCAL), each with its own context, plans
 * and buffers. Each round calls the four methods (A fused, A unfused, B fused, B unfused) in
 * an order that rotates from round to round. Each method is called twice in a row and only
 * the second call is timed: a build's pool workers sleep while the other build runs, and the
 * first call after that pays their wake-up (which, without the untimed call, fell on the
 * fused method in most rounds). The four outputs are compared first (max |difference|).
 * Printed: the medians (ms) and the median and range of the per-round ratio fused A / fused
 * B (> 1: B faster).
 *
 *   cc -O2 -Iinclude scripts/separable-ab.c -ldl -o separable-ab
 *   ./separable-ab old/libridge.so new/libridge.so THREADS N ROUNDS
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/conv.h"

typedef ridge_status (*fwd_fn)(ridge_ctx *, const ridge_conv2d_plan *, const float *, float *,
                               const float *, const ridge_conv2d_epilogue *, void *);
typedef ridge_status (*sep_fn)(ridge_ctx *, const ridge_conv2d_plan *, const ridge_conv2d_plan *,
                               const float *, float *, const float *,
                               const ridge_conv2d_epilogue *, const float *,
                               const ridge_conv2d_epilogue *, void *);

typedef struct build {
    ridge_ctx *ctx;
    ridge_conv2d_plan *dp, *pp;
    fwd_fn fwd;
    sep_fn sep;
    float *x, *mid, *y;
} build;

enum { C = 64, HW = 56, MAX_ROUNDS = 201 };

static int load(const char *path, build *b, int threads, int n)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "separable-ab: %s\n", dlerror()), -1;
    void (*opt_init)(ridge_ctx_options *) = (void (*)(ridge_ctx_options *))dlsym(h,
                                                                              "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
        (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
    void (*desc_init)(ridge_conv2d_desc *) =
        (void (*)(ridge_conv2d_desc *))dlsym(h, "ridge_conv2d_desc_init");
    ridge_status (*plan_create)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                                const ridge_conv2d_plan_options *, ridge_conv2d_plan **) =
        (ridge_status(*)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                         const ridge_conv2d_plan_options *, ridge_conv2d_plan **))
            dlsym(h, "ridge_conv2d_plan_create");
    b->fwd = (fwd_fn)dlsym(h, "ridge_conv2d_forward");
    b->sep = (sep_fn)dlsym(h, "ridge_conv2d_separable_forward");
    if (!opt_init || !ctx_create || !desc_init || !plan_create || !b->fwd || !b->sep) return -1;
    ridge_conv2d_desc dd, pd;
    desc_init(&dd);
    dd.n = n, dd.c_in = dd.c_out = dd.groups = C, dd.h = dd.w = HW, dd.r = dd.s = 3;
    dd.pad_top = dd.pad_bottom = dd.pad_left = dd.pad_right = 1, dd.layout = RIDGE_NHWC;
    pd = dd, pd.groups = 1, pd.r = pd.s = 1;
    pd.pad_top = pd.pad_bottom = pd.pad_left = pd.pad_right = 0;
    float wd[C * 9], wp[C * C];
    for (int i = 0; i < C * 9; i++) wd[i] = (float)(i % 7) * 0.05f - 0.15f;
    for (int i = 0; i < C * C; i++) wp[i] = (float)(i % 11) * 0.01f - 0.05f;
    ridge_ctx_options co;
    opt_init(&co);
    co.threads = threads;
    ridge_conv2d_plan_options od = {.algo = RIDGE_CONV_DEPTHWISE};
    ridge_conv2d_plan_options op = {.algo = RIDGE_CONV_POINTWISE};
    if (ctx_create(&co, &b->ctx) || plan_create(b->ctx, &dd, wd, &od, &b->dp) ||
        plan_create(b->ctx, &pd, wp, &op, &b->pp))
        return -1;
    size_t len = (size_t)n * C * HW * HW;
    b->x = aligned_alloc(64, len * 4), b->mid = aligned_alloc(64, len * 4);
    b->y = aligned_alloc(64, len * 4);
    if (!b->x || !b->mid || !b->y) return -1;
    for (size_t i = 0; i < len; i++) b->x[i] = (float)(i * 7919 % 1000) / 1000.0f - 0.5f;
    return 0;
}

static void run(build *b, int fused)
{
    static const ridge_conv2d_epilogue relu = {RIDGE_CONV_ACT_RELU, NULL};
    if (fused) b->sep(b->ctx, b->dp, b->pp, b->x, b->y, NULL, &relu, NULL, &relu, NULL);
    else {
        b->fwd(b->ctx, b->dp, b->x, b->mid, NULL, &relu, NULL);
        b->fwd(b->ctx, b->pp, b->mid, b->y, NULL, &relu, NULL);
    }
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: separable-ab LIB_A LIB_B THREADS N ROUNDS\n");
        return 2;
    }
    int threads = atoi(argv[3]), n = atoi(argv[4]), rounds = atoi(argv[5]);
    if (threads < 1 || n < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "separable-ab: THREADS, N >= 1, ROUNDS 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    build b[2];
    for (int i = 0; i < 2; i++)
        if (load(argv[1 + i], &b[i], threads, n)) {
            fprintf(stderr, "separable-ab: cannot set up %s\n", argv[1 + i]);
            return 1;
        }
    /* check: the four methods' outputs against A's fused one */
    size_t len = (size_t)n * C * HW * HW;
    float *want = malloc(len * 4);
    if (!want) return 1;
    run(&b[0], 1);
    memcpy(want, b[0].y, len * 4);
    double diff = 0;
    for (int m = 1; m < 4; m++) {
        memset(b[m / 2].y, 0, len * 4);
        run(&b[m / 2], m % 2 == 0);
        for (size_t i = 0; i < len; i++) diff = fmax(diff, fabs((double)b[m / 2].y[i] - want[i]));
    }
    static double t[4][MAX_ROUNDS];
    for (int r = -2; r < rounds; r++) /* two rounds of warm-up */
        for (int k = 0; k < 4; k++) {
            int m = (k + r + 4) % 4; /* 0 A fused, 1 A unfused, 2 B fused, 3 B unfused */
            run(&b[m / 2], m % 2 == 0); /* untimed: wakes this build's workers */
            double t0 = now();
            run(&b[m / 2], m % 2 == 0);
            if (r >= 0) t[m][r] = now() - t0;
        }
    double ratio[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) ratio[r] = t[0][r] / t[2][r];
    for (int m = 0; m < 4; m++) qsort(t[m], (size_t)rounds, sizeof(double), cmpd);
    qsort(ratio, (size_t)rounds, sizeof(double), cmpd);
    int h = rounds / 2;
    printf("separable 64 56x56 N=%d, %d thread%s, max|diff| %.3g; ms median: A fused %.3f "
           "unfused %.3f, B fused %.3f unfused %.3f; fused A/B %.3f [%.3f..%.3f]\n",
           n, threads, threads > 1 ? "s" : "", diff, t[0][h] * 1e3, t[1][h] * 1e3,
           t[2][h] * 1e3, t[3][h] * 1e3, ratio[h], ratio[0], ratio[rounds - 1]);
    return 0;
}
