/* In-process A/B timing of two libridge builds on one convolution backward pass (dx or dW), for
 * changes smaller than this VM's noise between processes (convbwd-time.c runs one build per
 * process). Both libraries are dlopen'ed (RTLD_LOCAL), each with its own context and plan on a
 * 3x3, pad 1, stride 1 NHWC layer; the two are called alternately, the first of each round
 * swapping, after 3 untimed rounds. Both get the same inputs and their outputs are compared.
 * Printed: medians and bests in ms and A/B of the medians (> 1: B faster).
 *
 *   cc -O2 -Iinclude scripts/convbwd-ab.c -ldl -o convbwd-ab
 *   ./convbwd-ab old/libridge.so new/libridge.so dx 64 32 14 64 1 31 6
 *
 * usage: convbwd-ab LIB_A LIB_B dx|dw N C_IN HW C_OUT THREADS ROUNDS [ALGO]
 * ALGO: a ridge_conv_algo number (1 direct, 2 im2col, 6 winograd-4x3; default -1, AUTO). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ridge/ridge.h"
#include "timing.h"

typedef struct build {
    void *ctx, *plan;
    ridge_status (*data)(void *, void *, float *, const float *, const float *, void *);
    ridge_status (*weights)(void *, void *, float *, float *, const float *, const float *,
                            void *);
    float *out;
} build;

static int load(build *b, const char *path, const ridge_conv2d_desc *d, int dx, int algo,
                int threads, size_t out_elems)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "convbwd-ab: %s\n", dlerror());
        return -1;
    }
    void (*ctx_opts)(ridge_ctx_options *) = dlsym(h, "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, void **) =
        dlsym(h, "ridge_ctx_create");
    void (*bwd_opts)(ridge_conv2d_bwd_options *) = dlsym(h, "ridge_conv2d_bwd_options_init");
    ridge_status (*plan_create)(void *, const ridge_conv2d_desc *,
                                const ridge_conv2d_bwd_options *, void **) =
        dlsym(h, "ridge_conv2d_bwd_plan_create");
    b->data = dlsym(h, "ridge_conv2d_backward_data");
    b->weights = dlsym(h, "ridge_conv2d_backward_weights");
    if (!ctx_opts || !ctx_create || !bwd_opts || !plan_create || !b->data || !b->weights)
        return -1;
    ridge_ctx_options co;
    ctx_opts(&co);
    co.threads = threads;
    ridge_conv2d_bwd_options bo;
    bwd_opts(&bo);
    if (dx) bo.data_algo = (ridge_conv_algo)algo;
    else bo.weights_algo = (ridge_conv_algo)algo;
    b->out = malloc(out_elems * sizeof(float));
    return b->out && !ctx_create(&co, &b->ctx) && !plan_create(b->ctx, d, &bo, &b->plan) ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 10) {
        fprintf(stderr, "usage: convbwd-ab LIB_A LIB_B dx|dw N C_IN HW C_OUT THREADS ROUNDS "
                        "[ALGO]\n");
        return 2;
    }
    const int dx = !strcmp(argv[3], "dx"), n = atoi(argv[4]), ci = atoi(argv[5]);
    const int hw = atoi(argv[6]), co = atoi(argv[7]), threads = atoi(argv[8]);
    const int rounds = atoi(argv[9]), algo = argc > 10 ? atoi(argv[10]) : -1;
    if ((!dx && strcmp(argv[3], "dw")) || n < 1 || ci < 1 || hw < 1 || co < 1 || threads < 1 ||
        rounds < 1)
        return 2;
    ridge_conv2d_desc d;
    memset(&d, 0, sizeof d); /* ridge_conv2d_desc_init lives in the builds, not here */
    d.n = n, d.c_in = ci, d.c_out = co, d.h = d.w = hw, d.r = d.s = 3, d.groups = 1;
    d.stride_h = d.stride_w = d.dil_h = d.dil_w = 1, d.layout = RIDGE_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    const size_t xn = (size_t)n * ci * hw * hw, yn = (size_t)n * co * hw * hw;
    const size_t wn = (size_t)co * ci * 9, on = dx ? xn : wn;
    float *x = malloc(xn * sizeof(float)), *dy = malloc(yn * sizeof(float));
    float *w = malloc(wn * sizeof(float)), *db = malloc((size_t)co * sizeof(float));
    double *t[2] = {malloc((size_t)rounds * sizeof(double)),
                    malloc((size_t)rounds * sizeof(double))};
    if (!x || !dy || !w || !db || !t[0] || !t[1]) return 1;
    for (size_t i = 0; i < xn; i++) x[i] = (float)(i % 17) * 0.1f - 0.5f;
    for (size_t i = 0; i < yn; i++) dy[i] = (float)(i % 13) * 0.1f - 0.6f;
    for (size_t i = 0; i < wn; i++) w[i] = (float)(i % 7) * 0.1f - 0.3f;
    build b[2];
    for (int k = 0; k < 2; k++)
        if (load(&b[k], argv[1 + k], &d, dx, algo, threads, on)) {
            fprintf(stderr, "convbwd-ab: could not load or plan with %s\n", argv[1 + k]);
            return 1;
        }
    for (int r = -3; r < rounds; r++)
        for (int q = 0; q < 2; q++) {
            const int k = r & 1 ? 1 - q : q;
            const double t0 = now();
            const ridge_status st =
                dx ? b[k].data(b[k].ctx, b[k].plan, b[k].out, dy, w, NULL)
                   : b[k].weights(b[k].ctx, b[k].plan, b[k].out, db, x, dy, NULL);
            if (st) return fprintf(stderr, "convbwd-ab: %s failed\n", argv[1 + k]), 1;
            if (r >= 0) t[k][r] = now() - t0;
        }
    double diff = 0;
    for (size_t i = 0; i < on; i++) {
        const double e = (double)b[0].out[i] - b[1].out[i];
        diff = e > diff ? e : -e > diff ? -e : diff;
    }
    qsort(t[0], (size_t)rounds, sizeof(double), cmpd);
    qsort(t[1], (size_t)rounds, sizeof(double), cmpd);
    const double ma = t[0][rounds / 2], mb = t[1][rounds / 2];
    printf("%s, batch %d, %d -> %d, %dx%d, %d thread%s: ms median/best A %.3f/%.3f  B %.3f/%.3f  "
           "A/B %.3f  max|A-B| %g\n",
           argv[3], n, ci, co, hw, hw, threads, threads > 1 ? "s" : "", ma * 1e3, t[0][0] * 1e3,
           mb * 1e3, t[1][0] * 1e3, ma / mb, diff);
    return 0;
}
