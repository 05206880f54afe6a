/* In-process A/B timing of the training batch norm (ridge_batchnorm_forward_train, then
 * ridge_batchnorm_backward, both with the fused relu) from two libridge builds, on a (rows, C)
 * NHWC activation: the Fashion-MNIST CNN's layers are 50176 x 32 and 12544 x 64 at batch 64.
 *
 * Both shared libraries are loaded with dlopen(RTLD_LOCAL), each with its own context and
 * buffers. Each round times A's forward, A's backward, B's forward and B's backward, the
 * builds' order swapping every round; every timed call follows an untimed one of the same
 * build (its pool's workers awake). The two builds' y and dx are compared first (max |A - B|
 * over max |A|). Printed: the medians in ms and B/A of them (> 1: B faster).
 *
 *   cc -O2 -Iinclude scripts/bn-ab.c -ldl -lm -o bn-ab
 *   ./bn-ab old/libridge.so new/libridge.so THREADS ROWS C [ROUNDS]
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ridge/ridge.h"

typedef ridge_status (*fwd_fn)(ridge_ctx *, float *, float *, float *, float *, float *,
                               const float *, const float *, const float *, size_t, size_t,
                               float, float, ridge_epi_act);
typedef ridge_status (*bwd_fn)(ridge_ctx *, float *, float *, float *, float *, const float *,
                               const float *, const float *, const float *, const float *,
                               size_t, size_t, ridge_epi_act);

typedef struct build {
    ridge_ctx *ctx;
    fwd_fn fwd;
    bwd_fn bwd;
    float *x, *y, *dy, *dx, *stat, *dgb; /* stat: mean, rstd; dgb: dgamma, dbeta */
} build;

enum { MAX_ROUNDS = 201 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t rows, C;
static float *gamma_, *beta_, *g0;

static int load(const char *path, build *b, int threads)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "bn-ab: %s\n", dlerror()), -1;
    void (*opt_init)(ridge_ctx_options *) =
        (void (*)(ridge_ctx_options *))dlsym(h, "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
        (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
    void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "ridge_malloc");
    b->fwd = (fwd_fn)dlsym(h, "ridge_batchnorm_forward_train");
    b->bwd = (bwd_fn)dlsym(h, "ridge_batchnorm_backward");
    if (!opt_init || !ctx_create || !alloc || !b->fwd || !b->bwd) return -1;
    ridge_ctx_options co;
    opt_init(&co);
    co.threads = threads;
    if (ctx_create(&co, &b->ctx)) return -1;
    const size_t n = rows * C;
    b->x = alloc(n * 4), b->y = alloc(n * 4), b->dy = alloc(n * 4), b->dx = alloc(n * 4);
    b->stat = alloc(2 * C * 4), b->dgb = alloc(2 * C * 4);
    if (!b->x || !b->y || !b->dy || !b->dx || !b->stat || !b->dgb) return -1;
    for (size_t i = 0; i < n; i++) b->x[i] = (float)(i * 7919 % 1000) * 0.002f + (float)(i % C);
    return 0;
}

static void forward(build *b)
{
    b->fwd(b->ctx, b->y, b->stat, b->stat + C, NULL, NULL, b->x, gamma_, beta_, rows, C, 1e-5f,
           0.1f, RIDGE_EPI_RELU);
}

static void reset_dy(build *b)
{
    memcpy(b->dy, g0, rows * C * 4); /* the backward overwrites dy; not timed */
}

static void backward(build *b)
{
    b->bwd(b->ctx, b->dx, b->dgb, b->dgb + C, b->dy, b->x, b->y, b->stat, b->stat + C, gamma_,
           rows, C, RIDGE_EPI_RELU);
}

static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i])), m = fmax(m, fabs(a[i]));
    return m > 0 ? d / m : d;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bn-ab LIB_A LIB_B THREADS ROWS C [ROUNDS]\n");
        return 2;
    }
    int threads = atoi(argv[3]), rounds = argc > 6 ? atoi(argv[6]) : 41;
    rows = (size_t)atol(argv[4]), C = (size_t)atol(argv[5]);
    if (threads < 1 || rows < 1 || C < 1 || rounds < 1 || rounds > MAX_ROUNDS) return 2;
    gamma_ = malloc(C * 4), beta_ = malloc(C * 4), g0 = malloc(rows * C * 4);
    if (!gamma_ || !beta_ || !g0) return 1;
    for (size_t c = 0; c < C; c++) gamma_[c] = 0.5f + 0.01f * (float)c, beta_[c] = 0.1f;
    for (size_t i = 0; i < rows * C; i++) g0[i] = (float)(i * 31 % 97) * 0.02f - 1.0f;
    build b[2];
    for (int i = 0; i < 2; i++)
        if (load(argv[1 + i], &b[i], threads)) {
            fprintf(stderr, "bn-ab: cannot set up %s\n", argv[1 + i]);
            return 1;
        }
    for (int i = 0; i < 2; i++) forward(&b[i]), reset_dy(&b[i]), backward(&b[i]);
    const double ey = rel_diff(b[0].y, b[1].y, rows * C);
    const double edx = rel_diff(b[0].dx, b[1].dx, rows * C);
    static double t[4][MAX_ROUNDS]; /* A fwd, A bwd, B fwd, B bwd */
    for (int r = -2; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            build *q = &b[(k + r + 2) % 2];
            const int m = 2 * (int)(q - b);
            forward(q); /* untimed: wakes this build's workers */
            double t0 = now();
            forward(q);
            double t1 = now();
            reset_dy(q);
            backward(q); /* untimed */
            reset_dy(q);
            double t2 = now();
            backward(q);
            double t3 = now();
            if (r >= 0) t[m][r] = t1 - t0, t[m + 1][r] = t3 - t2;
        }
    for (int m = 0; m < 4; m++) qsort(t[m], (size_t)rounds, sizeof(double), cmp_double);
    const int h = rounds / 2;
    printf("batchnorm %zu x %zu, %d thread%s, y and dx A vs B %.1e %.1e; ms median: forward A "
           "%.3f B %.3f (B/A %.2f), backward A %.3f B %.3f (B/A %.2f)\n",
           rows, C, threads, threads > 1 ? "s" : "", ey, edx, t[0][h] * 1e3, t[2][h] * 1e3,
           t[0][h] / t[2][h], t[1][h] * 1e3, t[3][h] * 1e3, t[1][h] / t[3][h]);
    return 0;
}
