/* In-process A/B timing of the CNN's memory-bound training operators from two libridge builds,
 * on one NHWC activation of N x H x H x C: the batch norm (ridge_batchnorm_forward_train, then
 * ridge_batchnorm_backward, both with the fused relu, on N*H*H rows) and 2 x 2 max pooling
 * (ridge_pool2d_forward_argmax, then ridge_pool2d_backward). The Fashion-MNIST CNN at batch 64
 * has 64 28 32 and 64 14 64.
 *
 * Both shared libraries are loaded with dlopen(RTLD_LOCAL), each with its own context and
 * buffers. Each round times the four calls for A, then for B (the order swapping every
 * round); every timed call follows an untimed one of the same build (its pool's workers
 * awake; the backward's dy is restored between, untimed). The builds' outputs are compared
 * first (max |A - B| over max |A|). Printed: the medians in ms and A/B of them (> 1: B faster).
 *
 *   cc -O2 -Iinclude scripts/cnn-ops-ab.c -ldl -lm -o cnn-ops-ab
 *   ./cnn-ops-ab old/libridge.so new/libridge.so THREADS N H C [ROUNDS]
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

typedef ridge_status (*bn_fwd_fn)(ridge_ctx *, float *, float *, float *, float *, float *,
                                  const float *, const float *, const float *, size_t, size_t,
                                  float, float, ridge_epi_act);
typedef ridge_status (*bn_bwd_fn)(ridge_ctx *, float *, float *, float *, float *,
                                  const float *, const float *, const float *, const float *,
                                  const float *, size_t, size_t, ridge_epi_act);
typedef ridge_status (*pool_fwd_fn)(ridge_ctx *, const ridge_pool2d_desc *, const float *,
                                    float *, int32_t *);
typedef ridge_status (*pool_bwd_fn)(ridge_ctx *, const ridge_pool2d_desc *, float *,
                                    const float *, const int32_t *);

typedef struct build {
    ridge_ctx *ctx;
    bn_fwd_fn bn_fwd;
    bn_bwd_fn bn_bwd;
    pool_fwd_fn pool_fwd;
    pool_bwd_fn pool_bwd;
    float *x, *y, *dy, *dx, *stat, *dgb; /* stat: mean, rstd; dgb: dgamma, dbeta */
    float *py, *pdy, *pdx;               /* pooling: y, dy (the pooled size), dx */
    int32_t *am;
} build;

enum { OPS = 4, MAX_ROUNDS = 201 };
static const char *op_names[OPS] = {"bn forward", "bn backward", "pool forward", "pool backward"};

static size_t rows, C, pn;    /* pn: pooled elements */
static ridge_pool2d_desc pd;
static float *gamma_, *beta_, *g0;

static int load(const char *path, build *b, int threads)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "cnn-ops-ab: %s\n", dlerror()), -1;
    void (*opt_init)(ridge_ctx_options *) =
        (void (*)(ridge_ctx_options *))dlsym(h, "ridge_ctx_options_init");
    ridge_status (*ctx_create)(const ridge_ctx_options *, ridge_ctx **) =
        (ridge_status(*)(const ridge_ctx_options *, ridge_ctx **))dlsym(h, "ridge_ctx_create");
    void *(*alloc)(size_t) = (void *(*)(size_t))dlsym(h, "ridge_malloc");
    b->bn_fwd = (bn_fwd_fn)dlsym(h, "ridge_batchnorm_forward_train");
    b->bn_bwd = (bn_bwd_fn)dlsym(h, "ridge_batchnorm_backward");
    b->pool_fwd = (pool_fwd_fn)dlsym(h, "ridge_pool2d_forward_argmax");
    b->pool_bwd = (pool_bwd_fn)dlsym(h, "ridge_pool2d_backward");
    if (!opt_init || !ctx_create || !alloc || !b->bn_fwd || !b->bn_bwd || !b->pool_fwd ||
        !b->pool_bwd)
        return -1;
    ridge_ctx_options co;
    opt_init(&co);
    co.threads = threads;
    if (ctx_create(&co, &b->ctx)) return -1;
    const size_t n = rows * C;
    b->x = alloc(n * 4), b->y = alloc(n * 4), b->dy = alloc(n * 4), b->dx = alloc(n * 4);
    b->stat = alloc(2 * C * 4), b->dgb = alloc(2 * C * 4);
    b->py = alloc(pn * 4), b->pdy = alloc(pn * 4), b->pdx = alloc(n * 4), b->am = alloc(pn * 4);
    if (!b->x || !b->y || !b->dy || !b->dx || !b->stat || !b->dgb || !b->py || !b->pdy ||
        !b->pdx || !b->am)
        return -1;
    for (size_t i = 0; i < n; i++) b->x[i] = (float)(i * 7919 % 1000) * 0.002f + (float)(i % C);
    for (size_t i = 0; i < pn; i++) b->pdy[i] = (float)(i * 13 % 29) * 0.1f - 1.0f;
    return 0;
}

/* op 0..3; reset: restore the backward's dy (untimed) */
static void run(build *b, int op)
{
    switch (op) {
    case 0:
        b->bn_fwd(b->ctx, b->y, b->stat, b->stat + C, NULL, NULL, b->x, gamma_, beta_, rows, C,
                  1e-5f, 0.1f, RIDGE_EPI_RELU);
        break;
    case 1:
        b->bn_bwd(b->ctx, b->dx, b->dgb, b->dgb + C, b->dy, b->x, b->y, b->stat, b->stat + C,
                  gamma_, rows, C, RIDGE_EPI_RELU);
        break;
    case 2: b->pool_fwd(b->ctx, &pd, b->y, b->py, b->am); break;
    default: b->pool_bwd(b->ctx, &pd, b->pdx, b->pdy, b->am); break;
    }
}

static void reset(build *b, int op)
{
    if (op == 1) memcpy(b->dy, g0, rows * C * 4); /* the backward overwrites dy */
}

static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs((double)a[i] - b[i])), m = fmax(m, fabs(a[i]));
    return m > 0 ? d / m : d;
}

int main(int argc, char **argv)
{
    if (argc < 7) {
        fprintf(stderr, "usage: cnn-ops-ab LIB_A LIB_B THREADS N H C [ROUNDS]\n");
        return 2;
    }
    const int threads = atoi(argv[3]), N = atoi(argv[4]), H = atoi(argv[5]);
    const int rounds = argc > 7 ? atoi(argv[7]) : 31;
    C = (size_t)atol(argv[6]);
    if (threads < 1 || N < 1 || H < 2 || C < 1 || rounds < 1 || rounds > MAX_ROUNDS) return 2;
    rows = (size_t)N * (size_t)H * (size_t)H;
    pd = (ridge_pool2d_desc){.n = N, .c = (int64_t)C, .h = H, .w = H, .r = 2, .s = 2,
                             .stride_h = 2, .stride_w = 2, .kind = RIDGE_POOL_MAX,
                             .layout = RIDGE_NHWC};
    pn = (size_t)N * (size_t)(H / 2) * (size_t)(H / 2) * C;
    gamma_ = malloc(C * 4), beta_ = malloc(C * 4), g0 = malloc(rows * C * 4);
    if (!gamma_ || !beta_ || !g0) return 1;
    for (size_t c = 0; c < C; c++) gamma_[c] = 0.5f + 0.01f * (float)c, beta_[c] = 0.1f;
    for (size_t i = 0; i < rows * C; i++) g0[i] = (float)(i * 31 % 97) * 0.02f - 1.0f;
    build b[2];
    for (int i = 0; i < 2; i++)
        if (load(argv[1 + i], &b[i], threads)) {
            fprintf(stderr, "cnn-ops-ab: cannot set up %s\n", argv[1 + i]);
            return 1;
        }
    for (int i = 0; i < 2; i++)
        for (int op = 0; op < OPS; op++) reset(&b[i], op), run(&b[i], op);
    const double e_y = rel_diff(b[0].y, b[1].y, rows * C);
    const double e_dx = rel_diff(b[0].dx, b[1].dx, rows * C);
    const double e_py = rel_diff(b[0].py, b[1].py, pn);
    const double e_pdx = rel_diff(b[0].pdx, b[1].pdx, rows * C);
    static double t[2][OPS][MAX_ROUNDS];
    for (int r = -2; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            const int w = (k + r + 2) % 2;
            for (int op = 0; op < OPS; op++) {
                reset(&b[w], op);
                run(&b[w], op); /* untimed */
                reset(&b[w], op);
                const double t0 = now();
                run(&b[w], op);
                if (r >= 0) t[w][op][r] = now() - t0;
            }
        }
    printf("%d x %d x %d x %zu, %d thread%s; A vs B: bn y %.1e dx %.1e, pool y %.1e dx %.1e\n", N,
           H, H, C, threads, threads > 1 ? "s" : "", e_y, e_dx, e_py, e_pdx);
    for (int op = 0; op < OPS; op++) {
        qsort(t[0][op], (size_t)rounds, sizeof(double), cmpd);
        qsort(t[1][op], (size_t)rounds, sizeof(double), cmpd);
        const double a = t[0][op][rounds / 2], bb = t[1][op][rounds / 2];
        printf("  %-13s ms median: A %.3f  B %.3f  A/B %.2f\n", op_names[op], a * 1e3, bb * 1e3,
               a / bb);
    }
    return 0;
}
