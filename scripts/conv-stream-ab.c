/* Streamed against cached output stores (ridge_conv2d_plan_options.stream 1 and -1) for one
 * NHWC layer, on the same buffers, in one process: the regime of a layer whose x (and y) the
 * call before left in the L3, as in a network's chain of layers or a benchmark that calls the
 * same layer again. conv-ab.c's --stream compares the same two plans with x from DRAM (each
 * of its four methods has its own buffers).
 *
 * Per round each plan runs 3 calls untimed, then 1 timed; with `read` the timed part also
 * reads y once afterwards, as the next layer would. The plans take turns, the first swapping
 * every round. Printed: median and best ms of each.
 *
 *   cc -O2 -Iinclude scripts/conv-stream-ab.c -Lbuild -lridge -Wl,-rpath,$PWD/build -o csab
 *   ./csab 2 8 64 56 31 dw read     (threads, batch, C, H = W, rounds, dw | pw, [read])
 *
 * dw: depthwise 3x3, pad 1; pw: pointwise 1x1, C -> C. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

#define MAX_ROUNDS 201

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: %s THREADS BATCH C HW ROUNDS dw|pw [read]\n", argv[0]);
        return 2;
    }
    const int threads = atoi(argv[1]), rounds = atoi(argv[5]);
    const int64_t n = atoll(argv[2]), c = atoll(argv[3]), hw = atoll(argv[4]);
    const int dw = !strcmp(argv[6], "dw"), read = argc > 7 && !strcmp(argv[7], "read");
    if (threads < 1 || n < 1 || c < 1 || hw < 1 || rounds < 1 || rounds > MAX_ROUNDS ||
        (!dw && strcmp(argv[6], "pw"))) {
        fprintf(stderr, "%s: bad arguments\n", argv[0]);
        return 2;
    }
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    ridge_ctx *ctx;
    if (ridge_ctx_create(&o, &ctx)) return fprintf(stderr, "%s\n", ridge_last_error()), 1;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = n, d.c_in = d.c_out = c, d.h = d.w = hw, d.layout = RIDGE_NHWC;
    d.r = d.s = dw ? 3 : 1;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = dw ? 1 : 0;
    d.groups = dw ? c : 1;
    const size_t xn = (size_t)(n * c * hw * hw), wn = (size_t)(dw ? c * 9 : c * c);
    float *x = aligned_alloc(64, xn * 4), *y = aligned_alloc(64, xn * 4), *w = malloc(wn * 4);
    if (!x || !y || !w) return fprintf(stderr, "out of memory\n"), 1;
    for (size_t i = 0; i < xn; i++) x[i] = (float)(i % 7) * 0.1f;
    for (size_t i = 0; i < wn; i++) w[i] = 0.01f * (float)(i % 5);
    ridge_conv2d_plan *plan[2];
    for (int s = 0; s < 2; s++) {
        ridge_conv2d_plan_options po;
        ridge_conv2d_plan_options_init(&po);
        po.algo = dw ? RIDGE_CONV_DEPTHWISE : RIDGE_CONV_POINTWISE;
        po.stream = s ? 1 : -1;
        if (ridge_conv2d_plan_create(ctx, &d, w, &po, &plan[s]))
            return fprintf(stderr, "%s\n", ridge_last_error()), 1;
    }
    static double t[2][MAX_ROUNDS];
    volatile float sink = 0;
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            const int s = r % 2 ? 1 - k : k;
            for (int i = 0; i < 3; i++) ridge_conv2d_forward(ctx, plan[s], x, y, NULL, NULL, NULL);
            double t0 = now();
            ridge_conv2d_forward(ctx, plan[s], x, y, NULL, NULL, NULL);
            if (read) {
                float acc = 0;
                for (size_t i = 0; i < xn; i += 16) acc += y[i];
                sink += acc;
            }
            t[s][r] = now() - t0;
        }
    printf("%s N=%lld C=%lld %lldx%lld, %d thread%s%s, x + y = %.1f MB:\n",
           dw ? "depthwise 3x3" : "pointwise", (long long)n, (long long)c, (long long)hw,
           (long long)hw, threads, threads > 1 ? "s" : "", read ? ", y read after" : "",
           8.0 * (double)xn / 1e6);
    for (int s = 0; s < 2; s++) {
        qsort(t[s], (size_t)rounds, sizeof(double), cmpd);
        printf("  %-8s median %.3f ms  best %.3f ms\n", s ? "streamed" : "cached",
               t[s][rounds / 2] * 1e3, t[s][0] * 1e3);
    }
    for (int s = 0; s < 2; s++) ridge_conv2d_plan_destroy(plan[s]);
    ridge_ctx_destroy(ctx);
    free(x), free(y), free(w);
    return 0;
}
