/* Streamed against cached stores in a chain of convolutions, where each layer reads the output
 * the one before wrote (docs/PERFORMANCE.md, session 14). `ridge bench conv` times one layer
 * called again and again on the same input, which stays in cache while only y moves; a
 * network's next layer reads y instead, from wherever the stores left it.
 *
 * L layers of the same shape (NHWC, batch N, C -> C channels, H x H, "same" padding) run over
 * two buffers, x -> y -> x -> ...; two plans of one library, opts.stream = 1 (non-temporal)
 * and -1 (through the cache), take turns, the first swapping every round. Each turn runs the
 * chain once untimed (its own steady state), then once timed. Printed per plan: the median
 * and best time per layer over the rounds.
 *
 *   cc -O2 -Iinclude scripts/conv-chain.c -Lbuild -lridge -Wl,-rpath,$PWD/build -o conv-chain
 *   ./conv-chain dw 2 8 4 31          # depthwise 3x3, C = 64, 56 x 56, 2 threads, batch 8
 *
 * usage: conv-chain dw|pw THREADS N L ROUNDS [C [H]] (pw: 1x1 pointwise; default C 64, H 56)
 * CONV_CHAIN_STREAM=A,B: the two plans' opts.stream instead of 1,-1 (0: the library's choice
 * by size, which for depthwise may be the cached path with the input prefetched). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

int main(int argc, char **argv)
{
    if (argc < 6 || (strcmp(argv[1], "dw") && strcmp(argv[1], "pw"))) {
        fprintf(stderr, "usage: conv-chain dw|pw THREADS N L ROUNDS [C [H]]\n");
        return 2;
    }
    const int dw = !strcmp(argv[1], "dw"), threads = atoi(argv[2]), n = atoi(argv[3]);
    const int layers = atoi(argv[4]), rounds = atoi(argv[5]);
    const int c = argc > 6 ? atoi(argv[6]) : 64, hw = argc > 7 ? atoi(argv[7]) : 56;
    if (threads < 1 || n < 1 || layers < 1 || rounds < 1 || c < 1 || hw < 1) {
        fprintf(stderr, "conv-chain: every number must be positive\n");
        return 2;
    }
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    ridge_ctx *ctx;
    if (ridge_ctx_create(&o, &ctx)) {
        fprintf(stderr, "conv-chain: %s\n", ridge_last_error());
        return 1;
    }
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = n, d.c_in = d.c_out = c, d.h = d.w = hw, d.layout = RIDGE_NHWC;
    d.r = d.s = dw ? 3 : 1;
    d.groups = dw ? c : 1;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = dw ? 1 : 0;
    const size_t elems = (size_t)n * c * hw * hw, welems = dw ? (size_t)c * 9 : (size_t)c * c;
    float *w = malloc(welems * sizeof(float)), *buf[2];
    for (size_t i = 0; i < welems; i++) w[i] = dw ? 0.11f : 1.0f / (float)c;
    for (int b = 0; b < 2; b++) {
        buf[b] = ridge_malloc(elems * sizeof(float));
        for (size_t i = 0; i < elems; i++) buf[b][i] = 0.01f * (float)(i % 17);
    }
    int stream[2] = {1, -1};
    const char *modes = getenv("CONV_CHAIN_STREAM");
    if (modes && sscanf(modes, "%d,%d", &stream[0], &stream[1]) != 2) {
        fprintf(stderr, "conv-chain: CONV_CHAIN_STREAM must be two modes, such as 0,-1\n");
        return 2;
    }
    ridge_conv2d_plan *plan[2];
    double *t[2];
    for (int m = 0; m < 2; m++) {
        ridge_conv2d_plan_options po;
        ridge_conv2d_plan_options_init(&po);
        po.algo = dw ? RIDGE_CONV_DEPTHWISE : RIDGE_CONV_POINTWISE;
        po.stream = stream[m];
        if (ridge_conv2d_plan_create(ctx, &d, w, &po, &plan[m])) {
            fprintf(stderr, "conv-chain: %s\n", ridge_last_error());
            return 1;
        }
        t[m] = malloc((size_t)rounds * sizeof(double));
    }
    for (int r = 0; r < rounds; r++)
        for (int q = 0; q < 2; q++) {
            const int m = r & 1 ? 1 - q : q;
            for (int pass = 0; pass < 2; pass++) {
                const double t0 = now();
                for (int l = 0; l < layers; l++)
                    ridge_conv2d_forward(ctx, plan[m], buf[l & 1], buf[(l + 1) & 1], NULL, NULL,
                                         NULL);
                t[m][r] = (now() - t0) / layers;
            }
        }
    printf("%s C=%d %dx%d batch %d, %d layers, %d thread%s, x + y = %.1f MB:\n",
           dw ? "depthwise 3x3" : "pointwise 1x1", c, hw, hw, n, layers, threads,
           threads > 1 ? "s" : "", 8.0 * (double)elems / 1e6);
    for (int m = 0; m < 2; m++) {
        qsort(t[m], (size_t)rounds, sizeof(double), cmpd);
        printf("  %-11s median %.3f ms per layer, best %.3f\n",
               stream[m] > 0 ? "streamed" : stream[m] ? "cached" : "by size",
               t[m][rounds / 2] * 1e3, t[m][0] * 1e3);
    }
    return 0;
}
