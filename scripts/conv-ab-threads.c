/* In-process A/B timing of two libridge builds on one convolution with several threads, under
 * the protocol of `ridge bench conv --threads N` (docs/PERFORMANCE.md, session 9).
 *
 * conv-ab.c is for one thread: with two, its rounds ran A, B, oneDNN and a copy back to back,
 * and whichever came after a sleeping pool often ran at the 1-thread rate. Here there is no
 * oneDNN, and each turn of a build sleeps 3 ms (the other build's workers fall asleep), runs
 * its own calls for 2 ms untimed (on the KVM hosts measured, a vCPU left idle runs slowly for
 * about a millisecond after it wakes), then times 3 calls. The builds take turns, the first
 * swapping every round. Each build has its own input and output (shared, the second build
 * found the first's output lines in cache). Printed per build: median, 25th percentile and
 * best of all timed calls in ms, and A/B of the medians (> 1: B faster).
 *
 * Environment (defaults: the bench's protocol): CAB_SLEEP_US (3000) before each turn,
 * CAB_WARM_US (2000) of untimed calls, CAB_CALLS (3) timed calls a turn, CAB_BATCH (1) images.
 * Calls back to back, as in a network's forward pass, with the workers spinning:
 * CAB_SLEEP_US=0 CAB_WARM_US=300 CAB_CALLS=20.
 *
 *   cc -O2 -Iinclude scripts/conv-ab-threads.c -ldl -o conv-ab-threads
 *   ./conv-ab-threads old/libridge.so new/libridge.so first 40 [THREADS]
 *
 * Shapes (NHWC, batch 1): first (3 -> 64, 7x7, stride 2, pad 3, 224x224), pw64 (1x1 64 -> 64,
 * 56x56), pw256 (1x1 256 -> 64, 56x56), 3x3-128 (128 -> 128, 28x28, pad 1), 3x3-256 (256 ->
 * 256, 14x14, pad 1), fmnist1 (1 -> 32,
 * 3x3, pad 1, 28x28), fmnist2 (32 -> 64, 3x3, pad 1, 14x14), dw32 and dw64 (depthwise 3x3,
 * pad 1, C = 32 on 112x112 and C = 64 on 56x56). AUTO picks the algorithm unless
 * the last argument is "direct". Paths to the libraries need a slash (./libridge.so). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

typedef ridge_status (*fwd_fn)(ridge_ctx *, const ridge_conv2d_plan *, const float *, float *,
                               const float *, const ridge_conv2d_epilogue *, void *);
typedef struct build {
    ridge_ctx *ctx;
    ridge_conv2d_plan *plan;
    fwd_fn fwd;
} build;

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : fallback;
}

static int set_shape(ridge_conv2d_desc *d, const char *s)
{
    d->layout = RIDGE_NHWC, d->n = 1;
    int64_t pad = 0;
    if (!strcmp(s, "first"))
        d->c_in = 3, d->h = d->w = 224, d->c_out = 64, d->r = d->s = 7, pad = 3,
        d->stride_h = d->stride_w = 2;
    else if (!strcmp(s, "pw64")) d->c_in = 64, d->h = d->w = 56, d->c_out = 64, d->r = d->s = 1;
    else if (!strcmp(s, "pw256")) d->c_in = 256, d->h = d->w = 56, d->c_out = 64, d->r = d->s = 1;
    else if (!strcmp(s, "3x3-128"))
        d->c_in = 128, d->h = d->w = 28, d->c_out = 128, d->r = d->s = 3, pad = 1;
    else if (!strcmp(s, "3x3-256"))
        d->c_in = 256, d->h = d->w = 14, d->c_out = 256, d->r = d->s = 3, pad = 1;
    else if (!strcmp(s, "fmnist1"))
        d->c_in = 1, d->h = d->w = 28, d->c_out = 32, d->r = d->s = 3, pad = 1;
    else if (!strcmp(s, "fmnist2"))
        d->c_in = 32, d->h = d->w = 14, d->c_out = 64, d->r = d->s = 3, pad = 1;
    else if (!strcmp(s, "dw32"))
        d->c_in = d->c_out = d->groups = 32, d->h = d->w = 112, d->r = d->s = 3, pad = 1;
    else if (!strcmp(s, "dw64"))
        d->c_in = d->c_out = d->groups = 64, d->h = d->w = 56, d->r = d->s = 3, pad = 1;
    else return -1;
    d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = pad;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: conv-ab-threads LIB_A LIB_B first|pw64|pw256|3x3-128|3x3-256|"
                        "fmnist1|fmnist2|dw32|dw64 ROUNDS [THREADS [direct]]\n");
        return 2;
    }
    const int rounds = atoi(argv[4]), threads = argc > 5 ? atoi(argv[5]) : 2;
    if (rounds < 1 || threads < 1) return 2;
    const long sleep_us = env_long("CAB_SLEEP_US", 3000), warm_us = env_long("CAB_WARM_US", 2000);
    const int PER = (int)env_long("CAB_CALLS", 3), batch = (int)env_long("CAB_BATCH", 1);
    if (sleep_us < 0 || warm_us < 0 || PER < 1 || batch < 1) return 2;
    const size_t wn = 256 * 256 * 9, xn = (224 * 224 * 3 + 56 * 56 * 256) * (size_t)batch,
                 yn = 112 * 112 * 64 * (size_t)batch;
    float *w = malloc(wn * 4), *xs[2], *ys[2];
    for (size_t i = 0; i < wn; i++) w[i] = (float)(i % 13) * 0.01f;
    for (int k = 0; k < 2; k++) {
        xs[k] = malloc(xn * 4), ys[k] = aligned_alloc(64, yn * 4);
        for (size_t i = 0; i < xn; i++) xs[k][i] = (float)(i % 7) * 0.1f;
    }
    build b[2];
    for (int k = 0; k < 2; k++) {
        void *h = dlopen(argv[1 + k], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "conv-ab-threads: %s\n", dlerror());
            return 1;
        }
        void (*opt_init)(ridge_ctx_options *) = (void (*)(ridge_ctx_options *))dlsym(h, "ridge_ctx_options_init");
        ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
            (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
        void (*desc_init)(ridge_conv2d_desc *) = (void (*)(ridge_conv2d_desc *))dlsym(h, "ridge_conv2d_desc_init");
        ridge_status (*plan_create)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                                    const ridge_conv2d_plan_options *, ridge_conv2d_plan **) =
            (ridge_status(*)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                             const ridge_conv2d_plan_options *, ridge_conv2d_plan **))
                dlsym(h, "ridge_conv2d_plan_create");
        b[k].fwd = (fwd_fn)dlsym(h, "ridge_conv2d_forward");
        ridge_ctx_options o;
        opt_init(&o);
        o.threads = threads;
        ridge_conv2d_desc d;
        desc_init(&d);
        if (set_shape(&d, argv[3])) {
            fprintf(stderr, "conv-ab-threads: unknown shape %s\n", argv[3]);
            return 2;
        }
        d.n = batch;
        ridge_conv2d_plan_options po = {.algo = RIDGE_CONV_AUTO};
        if (argc > 6 && !strcmp(argv[6], "direct")) po.algo = RIDGE_CONV_DIRECT;
        if (ctx_create(&o, &b[k].ctx) || plan_create(b[k].ctx, &d, w, &po, &b[k].plan)) {
            fprintf(stderr, "conv-ab-threads: %s: no context or plan\n", argv[1 + k]);
            return 1;
        }
    }
    double *s[2] = {malloc(sizeof(double) * rounds * PER), malloc(sizeof(double) * rounds * PER)};
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < 2; q++) {
            const int k = (q + r) & 1;
            build *c = &b[k];
            double *out = s[k] + r * PER;
            if (sleep_us)
                nanosleep(&(struct timespec){sleep_us / 1000000, sleep_us % 1000000 * 1000}, NULL);
            for (double w0 = now(); now() - w0 < (double)warm_us * 1e-6;)
                c->fwd(c->ctx, c->plan, xs[k], ys[k], NULL, NULL, NULL);
            for (int i = 0; i < PER; i++) {
                double t0 = now();
                c->fwd(c->ctx, c->plan, xs[k], ys[k], NULL, NULL, NULL);
                out[i] = now() - t0;
            }
        }
    const int n = rounds * PER;
    for (int k = 0; k < 2; k++) qsort(s[k], (size_t)n, sizeof(double), cmpd);
    printf("%s, %d threads, ms median/p25/best: A %.3f/%.3f/%.3f  B %.3f/%.3f/%.3f  A/B %.3f\n",
           argv[3], threads, s[0][n / 2] * 1e3, s[0][n / 4] * 1e3, s[0][0] * 1e3,
           s[1][n / 2] * 1e3, s[1][n / 4] * 1e3, s[1][0] * 1e3, s[0][n / 2] / s[1][n / 2]);
    return 0;
}
