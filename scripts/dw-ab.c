/* In-process A/B timing of two libridge builds on one depthwise layer (NHWC, K x K window,
 * padding K / 2), for threaded changes: conv-ab.c calls its methods round-robin, one call
 * each, so the idle build's pool still spins (50 us) while the other runs, which on this
 * 2-CPU VM takes a CPU from 2-thread calls. Here the builds (dlopen, RTLD_LOCAL) take turns
 * by blocks: 1 ms asleep (the other pool's workers stop spinning), 20 untimed calls, 100
 * timed ones, whose median is the block's; A goes first in even rounds, B in odd ones. Prints
 * the median of the blocks' medians per build and A/B (> 1: B faster), after comparing the two
 * outputs (max |A - B|). Both builds read the same input and write their own output.
 *
 *   cc -O2 -Iinclude -Iscripts scripts/dw-ab.c -ldl -lm -o dw-ab
 *   ./dw-ab old/libridge.so new/libridge.so 64 28 2 11
 *
 * usage: dw-ab LIB_A LIB_B C HW THREADS ROUNDS [BATCH [STRIDE [K]]] */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timing.h"
#include "ridge/ridge.h"

#define BLOCK 100
#define MAX_ROUNDS 401

typedef struct build {
    ridge_ctx *ctx;
    ridge_conv2d_plan *plan;
    ridge_status (*forward)(ridge_ctx *, const ridge_conv2d_plan *, const float *, float *,
                            const float *, const ridge_epilogue *, const float *);
    float *y;
    double med[MAX_ROUNDS];
} build;

static void *sym(void *lib, const char *name)
{
    void *f = dlsym(lib, name);
    if (!f) fprintf(stderr, "dw-ab: %s\n", dlerror()), exit(1);
    return f;
}

static void load(build *b, const char *path, const ridge_conv2d_desc *shape, int threads,
                 const float *w, size_t ny)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) fprintf(stderr, "dw-ab: %s\n", dlerror()), exit(1);
    void (*ctx_options_init)(ridge_ctx_options *) = sym(lib, "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
        sym(lib, "ridge_ctx_create");
    void (*desc_init)(ridge_conv2d_desc *) = sym(lib, "ridge_conv2d_desc_init");
    ridge_status (*plan_create)(ridge_ctx *, const ridge_conv2d_desc *, const float *,
                                const ridge_conv2d_plan_options *, ridge_conv2d_plan **) =
        sym(lib, "ridge_conv2d_plan_create");
    b->forward = sym(lib, "ridge_conv2d_forward");
    ridge_ctx_options o;
    ctx_options_init(&o);
    o.threads = threads;
    ridge_conv2d_desc d;
    desc_init(&d); /* this build's defaults, then the shape */
    d.layout = shape->layout, d.n = shape->n, d.c_in = d.c_out = d.groups = shape->c_in;
    d.h = d.w = shape->h, d.r = d.s = shape->r, d.stride_h = d.stride_w = shape->stride_h;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = shape->r / 2;
    b->y = aligned_alloc(64, (ny * sizeof(float) + 63) / 64 * 64);
    if (!b->y || ctx_create(&o, &b->ctx) || plan_create(b->ctx, &d, w, NULL, &b->plan))
        fprintf(stderr, "dw-ab: %s: no context or plan\n", path), exit(1);
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: dw-ab LIB_A LIB_B C HW THREADS ROUNDS [BATCH [STRIDE [K]]]\n");
        return 2;
    }
    const int c = atoi(argv[3]), hw = atoi(argv[4]), threads = atoi(argv[5]);
    const int rounds = atoi(argv[6]), batch = argc > 7 ? atoi(argv[7]) : 1;
    const int stride = argc > 8 ? atoi(argv[8]) : 1, k = argc > 9 ? atoi(argv[9]) : 3;
    if (c < 1 || hw < 1 || threads < 1 || rounds < 1 || rounds > MAX_ROUNDS || batch < 1 ||
        stride < 1 || k < 1 || k % 2 == 0) {
        fprintf(stderr, "dw-ab: sizes >= 1, ROUNDS <= %d, K odd\n", MAX_ROUNDS);
        return 2;
    }
    ridge_conv2d_desc shape = {0};
    shape.layout = RIDGE_NHWC, shape.n = batch, shape.c_in = c, shape.h = hw, shape.r = k;
    shape.stride_h = stride;
    const int oh = (hw - 1) / stride + 1;
    const size_t nx = (size_t)batch * (size_t)c * (size_t)hw * (size_t)hw;
    const size_t ny = (size_t)batch * (size_t)c * (size_t)oh * (size_t)oh;
    float *w = malloc((size_t)(k * k * c) * sizeof(float));
    float *x = aligned_alloc(64, (nx * sizeof(float) + 63) / 64 * 64);
    if (!w || !x) return 1;
    for (int i = 0; i < k * k * c; i++) w[i] = 0.01f * (float)(i % 13);
    for (size_t i = 0; i < nx; i++) x[i] = 0.1f * (float)(i % 7);
    build b[2];
    for (int i = 0; i < 2; i++) load(&b[i], argv[1 + i], &shape, threads, w, ny);
    double diff = 0;
    for (int i = 0; i < 2; i++)
        if (b[i].forward(b[i].ctx, b[i].plan, x, b[i].y, NULL, NULL, NULL))
            fprintf(stderr, "dw-ab: %s: forward failed\n", argv[1 + i]), exit(1);
    for (size_t i = 0; i < ny; i++) diff = fmax(diff, fabs((double)b[0].y[i] - b[1].y[i]));
    double t[BLOCK];
    for (int r = 0; r < rounds; r++)
        for (int j = 0; j < 2; j++) {
            build *u = &b[r % 2 ? 1 - j : j];
            usleep(1000);
            for (int i = 0; i < 20; i++) u->forward(u->ctx, u->plan, x, u->y, NULL, NULL, NULL);
            for (int i = 0; i < BLOCK; i++) {
                const double t0 = now();
                u->forward(u->ctx, u->plan, x, u->y, NULL, NULL, NULL);
                t[i] = now() - t0;
            }
            qsort(t, BLOCK, sizeof(double), cmpd);
            u->med[r] = t[BLOCK / 2];
        }
    for (int i = 0; i < 2; i++) qsort(b[i].med, (size_t)rounds, sizeof(double), cmpd);
    const double ta = b[0].med[rounds / 2], tb = b[1].med[rounds / 2];
    printf("depthwise %dx%d C=%d %dx%d stride %d batch %d, %d threads: A %.2f us  B %.2f us  "
           "A/B %.3f  (max |A - B| %.1e)\n",
           k, k, c, hw, hw, stride, batch, threads, ta * 1e6, tb * 1e6, ta / tb, diff);
    return 0;
}
