/* Times the training pooling pair (ridge_pool2d_forward_argmax, then ridge_pool2d_backward)
 * alone: max 2 x 2 at stride 2 on N x HW x HW x C (NHWC), median of 41 rounds each, and the
 * GB/s of x, y and the argmax (forward) or dy, the argmax and dx (backward). Run it against
 * two builds' libridge.so (LD_LIBRARY_PATH), alternating; the checksum tells their bits apart.
 * With NOBWD set, the forward alone (x then stays in cache from call to call).
 *
 *   cc -O2 -Iinclude scripts/pool-time.c -Lbuild -lridge -lm -o /tmp/pool-time
 *   LD_LIBRARY_PATH=build /tmp/pool-time 64 28 32 1
 *
 * usage: pool-time N HW C THREADS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: pool-time N HW C THREADS\n");
        return 2;
    }
    const int n = atoi(argv[1]), hw = atoi(argv[2]), c = atoi(argv[3]), threads = atoi(argv[4]);
    if (n < 1 || hw < 2 || c < 1 || threads < 1) {
        fprintf(stderr, "pool-time: N, C, THREADS >= 1 and HW >= 2\n");
        return 2;
    }
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    ridge_ctx *ctx;
    if (ridge_ctx_create(&o, &ctx)) {
        fprintf(stderr, "pool-time: %s\n", ridge_last_error());
        return 1;
    }
    ridge_pool2d_desc d = {.n = n, .c = c, .h = hw, .w = hw, .r = 2, .s = 2, .stride_h = 2,
                           .stride_w = 2, .kind = RIDGE_POOL_MAX, .layout = RIDGE_NHWC};
    const size_t nx = (size_t)n * c * hw * hw, ny = (size_t)n * c * (hw / 2) * (hw / 2);
    float *x = malloc(nx * 4), *y = malloc(ny * 4), *dx = malloc(nx * 4), *dy = malloc(ny * 4);
    int32_t *am = malloc(ny * 4);
    if (!x || !y || !dx || !dy || !am) return 1;
    for (size_t i = 0; i < nx; i++) x[i] = (float)((i * 7919) % 1000) / 1000;
    for (size_t i = 0; i < ny; i++) dy[i] = 1;
    enum { R = 41 };
    double tf[R], tb[R];
    const int fwd_only = getenv("NOBWD") != NULL;
    for (int r = 0; r < R; r++) {
        const double t0 = now();
        ridge_status st = ridge_pool2d_forward_argmax(ctx, &d, x, y, am);
        const double t1 = now();
        if (!st && !fwd_only) st = ridge_pool2d_backward(ctx, &d, dx, dy, am);
        if (st) {
            fprintf(stderr, "pool-time: %s\n", ridge_last_error());
            return 1;
        }
        tf[r] = t1 - t0, tb[r] = now() - t1;
    }
    qsort(tf, R, sizeof(double), cmpd);
    qsort(tb, R, sizeof(double), cmpd);
    double sum = 0;
    for (size_t i = 0; i < ny; i++) sum += y[i] + (double)am[i];
    for (size_t i = 0; !fwd_only && i < nx; i++) sum += dx[i] * x[i];
    const double bytes = (double)(nx + 2 * ny) * 4;
    printf("max pool 2x2 on %d x %d x %d x %d, %d thread%s: forward %.3f ms (%.1f GB/s)", n, hw,
           hw, c, threads, threads > 1 ? "s" : "", tf[R / 2] * 1e3, bytes / tf[R / 2] / 1e9);
    if (!fwd_only)
        printf(", backward %.3f ms (%.1f GB/s)", tb[R / 2] * 1e3, bytes / tb[R / 2] / 1e9);
    printf(" (checksum %.6g)\n", sum);
    ridge_ctx_destroy(ctx);
    free(x), free(y), free(dx), free(dy), free(am);
    return 0;
}
