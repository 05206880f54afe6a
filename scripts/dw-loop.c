/* One depthwise 3x3 layer (pad 1, NHWC, AUTO's pick) called back to back, as in a network's
 * forward pass with the pool's workers spinning between calls: 200 untimed calls, then CALLS
 * timed ones; prints the 10th percentile, median and 90th percentile in microseconds. Linked
 * against a shared build, so that two builds compare by LD_LIBRARY_PATH in alternating runs
 * (docs/PERFORMANCE.md, session 33):
 *
 *   cc -O2 -Iinclude scripts/dw-loop.c -Lbuild -l:libridge.so -lm -o dw-loop
 *   ln -s libridge.so old/libridge.so.0   (each build's directory)
 *   LD_LIBRARY_PATH=old ./dw-loop 32 112 2 3000; LD_LIBRARY_PATH=new ./dw-loop 32 112 2 3000
 *
 * usage: dw-loop C HW THREADS [CALLS [BATCH]] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: dw-loop C HW THREADS [CALLS [BATCH]]\n");
        return 2;
    }
    const int c = atoi(argv[1]), hw = atoi(argv[2]), threads = atoi(argv[3]);
    const int calls = argc > 4 ? atoi(argv[4]) : 2000, batch = argc > 5 ? atoi(argv[5]) : 1;
    if (c < 1 || hw < 1 || threads < 1 || calls < 1 || batch < 1) return 2;
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    ridge_ctx *ctx = NULL;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.layout = RIDGE_NHWC, d.n = batch, d.c_in = d.c_out = d.groups = c, d.h = d.w = hw;
    d.r = d.s = 3, d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    const size_t n = (size_t)batch * (size_t)c * (size_t)hw * (size_t)hw;
    float *w = malloc((size_t)c * 9 * sizeof(float)), *x = ridge_malloc(n * sizeof(float)),
          *y = ridge_malloc(n * sizeof(float));
    double *t = malloc((size_t)calls * sizeof(double));
    if (!w || !x || !y || !t) return 1;
    for (int i = 0; i < 9 * c; i++) w[i] = 0.01f * (float)(i % 13);
    for (size_t i = 0; i < n; i++) x[i] = 0.1f * (float)(i % 7);
    ridge_conv2d_plan *p = NULL;
    if (ridge_ctx_create(&o, &ctx) || ridge_conv2d_plan_create(ctx, &d, w, NULL, &p)) {
        fprintf(stderr, "dw-loop: %s\n", ridge_last_error());
        return 1;
    }
    for (int i = 0; i < 200; i++) /* warm-up, each call checked */
        if (ridge_conv2d_forward(ctx, p, x, y, NULL, NULL, NULL)) {
            fprintf(stderr, "dw-loop: %s\n", ridge_last_error());
            return 1;
        }
    for (int i = 0; i < calls; i++) {
        const double t0 = now();
        ridge_conv2d_forward(ctx, p, x, y, NULL, NULL, NULL);
        t[i] = now() - t0;
    }
    qsort(t, (size_t)calls, sizeof(double), cmpd);
    printf("depthwise C=%d %dx%d batch %d, %d threads: us p10 %.1f median %.1f p90 %.1f\n", c, hw,
           hw, batch, threads, t[calls / 10] * 1e6, t[calls / 2] * 1e6, t[calls * 9 / 10] * 1e6);
    ridge_conv2d_plan_destroy(p);
    ridge_ctx_destroy(ctx);
    ridge_free(x), ridge_free(y), free(w), free(t);
    return 0;
}
