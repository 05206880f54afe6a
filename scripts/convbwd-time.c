/* Times one convolution backward pass (dw or dx) alone through the public API, median of
 * ROUNDS calls after 5 untimed ones, for checking how a change scales with threads: run it
 * against two builds' libridge.so (LD_LIBRARY_PATH) at 1 and 2 threads, alternating. A K x K
 * window (default 3) with padding K / 2, stride STRIDE (default 1), NHWC, G groups (default
 * 1). ALGO is a ridge_conv_algo number (1 direct, 2 im2col, 4 depthwise, 6 winograd-4x3); the
 * checksum of the result tells two builds' bits apart.
 *
 *   cc -O2 -Iinclude -Iscripts scripts/convbwd-time.c -Lbuild -lridge -lm -o /tmp/convbwd-time
 *   LD_LIBRARY_PATH=build /tmp/convbwd-time dw 64 32 14 64 2 6 21
 *   LD_LIBRARY_PATH=build /tmp/convbwd-time dx 1 240 28 240 1 4 41 5 240   (depthwise 5x5)
 *   LD_LIBRARY_PATH=build /tmp/convbwd-time dx 1 32 112 32 1 4 41 3 32 2  (depthwise stride 2)
 *
 * usage: convbwd-time dw|dx N C_IN HW C_OUT THREADS ALGO ROUNDS [K G [STRIDE]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

int main(int argc, char **argv)
{
    if ((argc != 9 && argc != 11 && argc != 12) ||
        (strcmp(argv[1], "dw") && strcmp(argv[1], "dx"))) {
        fprintf(stderr,
                "usage: convbwd-time dw|dx N C_IN HW C_OUT THREADS ALGO ROUNDS [K G [STRIDE]]\n");
        return 2;
    }
    const int data = !strcmp(argv[1], "dx"), n = atoi(argv[2]), ci = atoi(argv[3]),
              hw = atoi(argv[4]), co = atoi(argv[5]), threads = atoi(argv[6]),
              algo = atoi(argv[7]), rounds = atoi(argv[8]);
    const int K = argc > 9 ? atoi(argv[9]) : 3, G = argc > 9 ? atoi(argv[10]) : 1;
    const int S = argc > 11 ? atoi(argv[11]) : 1, ohw = S > 0 ? (hw + 2 * (K / 2) - K) / S + 1 : 0;
    if (n < 1 || ci < 1 || hw < 1 || co < 1 || K < 1 || G < 1 || S < 1 || threads < 1 ||
        rounds < 1 ||
        rounds > 1001) {
        fprintf(stderr, "convbwd-time: sizes, threads and rounds (1-1001) must be positive\n");
        return 2;
    }
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    ridge_ctx *ctx;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = n, d.c_in = ci, d.h = d.w = hw, d.c_out = co, d.r = d.s = K, d.groups = G;
    d.stride_h = d.stride_w = S;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = K / 2, d.layout = RIDGE_NHWC;
    ridge_conv2d_bwd_options bo;
    ridge_conv2d_bwd_options_init(&bo);
    if (data) bo.data_algo = (ridge_conv_algo)algo;
    else bo.weights_algo = (ridge_conv_algo)algo;
    ridge_conv2d_bwd_plan *p;
    if (ridge_ctx_create(&o, &ctx) || ridge_conv2d_bwd_plan_create(ctx, &d, &bo, &p)) {
        fprintf(stderr, "convbwd-time: %s\n", ridge_last_error());
        return 1;
    }
    const size_t nx = (size_t)n * ci * hw * hw, ny = (size_t)n * co * ohw * ohw,
                 nw = (size_t)co * (ci / G) * K * K;
    float *x = malloc(nx * 4), *dy = malloc(ny * 4), *w = malloc(nw * 4), *db = malloc(co * 4);
    double *t = malloc((size_t)rounds * sizeof(double));
    if (!x || !dy || !w || !db || !t) return 1;
    for (size_t i = 0; i < nx; i++) x[i] = (float)(i % 17) / 17 - 0.5f;
    for (size_t i = 0; i < ny; i++) dy[i] = (float)(i % 13) / 13 - 0.5f;
    for (size_t i = 0; i < nw; i++) w[i] = (float)(i % 7) / 70 - 0.05f;
    for (int r = -5; r < rounds; r++) {
        const double t0 = now();
        ridge_status st = data ? ridge_conv2d_backward_data(ctx, p, x, dy, w, NULL)
                               : ridge_conv2d_backward_weights(ctx, p, w, db, x, dy, NULL);
        if (st) {
            fprintf(stderr, "convbwd-time: %s\n", ridge_last_error());
            return 1;
        }
        if (r >= 0) t[r] = now() - t0;
    }
    qsort(t, (size_t)rounds, sizeof(double), cmpd);
    double sum = 0;
    const float *out = data ? x : w;
    for (size_t i = 0; i < (data ? nx : nw); i++) sum += out[i];
    printf("%s algo %d, batch %d, %d -> %d, %dx%d stride %d, %d thread%s: median %.3f ms, best "
           "%.3f (checksum %.6g)\n", argv[1], algo, n, ci, co, hw, hw, S, threads,
           threads > 1 ? "s" : "", t[rounds / 2] * 1e3, t[0] * 1e3, sum);
    ridge_conv2d_bwd_plan_destroy(p);
    ridge_ctx_destroy(ctx);
    free(x), free(dy), free(w), free(db), free(t);
    return 0;
}
