/* Batch normalization over the rows of a (rows, C) matrix (NHWC activations: rows = n*h*w).
 *
 * The statistics take one pass over x (bn-kernels.h: per block of rows, its sum and its
 * squared deviations from its own mean, merged in double), per fixed chunk of rows, and the
 * chunks are combined in order, so the result does not depend on the thread count:
 *   mean = sum_k n_k mean_k / M,  M2 = sum_k (M2_k + n_k (mean_k - mean)^2),
 * the second an identity of the two-pass sum of (x - mean)^2, without its cancellation. The
 * backward is the usual closed form: with xhat = (x - mean) rstd and M rows,
 *   dbeta = sum dy,  dgamma = sum dy xhat,  dx = gamma rstd (dy - dbeta/M - xhat dgamma/M),
 * the relu mask applied to dy in the same pass as the sums. The loops are compiled for each
 * ISA (bn-ref.c, bn-avx2.c, bn-avx512.c), vectorized over the channels; all give the same
 * bits. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "nn/bn-internal.h"
#include "ridge/nn-conv.h"
#include "ridge/nn.h"

#define BN_CHUNKS 32

typedef struct bn_kernels {
    void (*stats)(const float *restrict, size_t, size_t, size_t, double *restrict,
                  double *restrict);
    void (*grad_sums)(float *restrict, const float *restrict, const float *restrict, size_t,
                      size_t, size_t, const float *restrict, const float *restrict,
                      double *restrict, double *restrict);
    void (*apply)(const float *restrict, float *restrict, size_t, size_t, size_t,
                  const float *restrict, const float *restrict, int);
    void (*dx)(const float *, const float *restrict, float *, size_t, size_t, size_t,
               const float *restrict, const float *restrict, const float *restrict);
} bn_kernels;

static bn_kernels bn_pick(const ridge_ctx *ctx)
{
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512:
        return (bn_kernels){ridge_f32_bn_stats__avx512, ridge_f32_bn_grad_sums__avx512,
                            ridge_f32_bn_apply__avx512, ridge_f32_bn_dx__avx512};
    case RIDGE_ISA_AVX2:
        return (bn_kernels){ridge_f32_bn_stats__avx2, ridge_f32_bn_grad_sums__avx2,
                            ridge_f32_bn_apply__avx2, ridge_f32_bn_dx__avx2};
    default:
        return (bn_kernels){ridge_f32_bn_stats__ref, ridge_f32_bn_grad_sums__ref,
                            ridge_f32_bn_apply__ref, ridge_f32_bn_dx__ref};
    }
}

typedef struct bn_args {
    bn_kernels k;
    size_t rows, C, nchunk;
    float *dy;
    const float *x, *y_act, *mean, *rstd;
    const float *sc, *sh; /* apply: scale and shift; dx: k and u (v = sh + C) */
    float *out;
    double *part; /* [nchunk][2][C]: a chunk's mean and M2, or its sums of dy and dy xhat */
    int relu;
} bn_args;

/* The fixed chunk ch of rows (the same for any thread count). */
static void chunk_rows(const bn_args *a, size_t ch, size_t *b, size_t *e)
{
    ridge_partition(a->rows, 1, (int)ch, (int)a->nchunk, b, e);
}

/* Per fixed chunk of rows: its mean and M2 (forward), or its sums of dy and dy xhat
 * (backward: a->dy set). */
static void chunk_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    (void)ith;
    for (size_t ch = b; ch < e; ch++) {
        size_t r0, r1;
        chunk_rows(a, ch, &r0, &r1);
        double *p = a->part + ch * 2 * a->C;
        if (a->dy)
            a->k.grad_sums(a->dy, a->y_act, a->x, a->C, r0, r1, a->mean, a->rstd, p, p + a->C);
        else a->k.stats(a->x, a->C, r0, r1, p, p + a->C);
    }
}

static void apply_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    (void)ith;
    a->k.apply(a->x, a->out, a->C, b, e, a->sc, a->sh, a->relu);
}

static void dx_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    (void)ith;
    a->k.dx(a->dy, a->x, a->out, a->C, b, e, a->sc, a->sh, a->sh + a->C);
}

static ridge_status check(const char *fn, const void *p1, const void *p2, const void *p3,
                          size_t rows, size_t C, ridge_epi_act act)
{
    if (!p1 || !p2 || !p3) return ridge_error(RIDGE_EINVAL, "%s: NULL argument", fn);
    if (rows < 1 || C < 1 || rows > SIZE_MAX / 2 / C)
        return ridge_error(RIDGE_EINVAL, "%s: rows %zu, channels %zu", fn, rows, C);
    if (act != RIDGE_EPI_NONE && act != RIDGE_EPI_RELU)
        return ridge_error(RIDGE_EINVAL, "%s: activation %s not supported (none, relu)", fn,
                           ridge_nn_act_name(act));
    return RIDGE_OK;
}

static size_t row_grain(size_t C) { return RIDGE_MAX(1, 4096 / C); }

static ridge_status forward_train(ridge_ctx *ctx, float *y, float *mean, float *rstd,
                                  float *run_mean, float *run_var, const float *x,
                                  const float *gamma, const float *beta, size_t rows, size_t C,
                                  float eps, float momentum, ridge_epi_act act,
                                  ridge_sum_f64_fn sum)
{
    ridge_status st = check("batchnorm_forward_train", y, x, gamma, rows, C, act);
    if (st) return st;
    if (!ctx || !mean || !rstd || !beta)
        return ridge_error(RIDGE_EINVAL, "batchnorm_forward_train: NULL argument");
    if (!(eps > 0) || !(momentum >= 0 && momentum <= 1))
        return ridge_error(RIDGE_EINVAL, "batchnorm_forward_train: eps %g, momentum %g", eps,
                           momentum);
    bn_args a = {.k = bn_pick(ctx), .rows = rows, .C = C, .nchunk = RIDGE_MIN(BN_CHUNKS, rows),
                 .x = x, .out = y, .relu = act == RIDGE_EPI_RELU};
    /* the chunks' means and M2s, then s0 (C sums) and the row count, then s1 (C), then the
     * scale and shift (2C floats) */
    a.part = ridge_malloc((a.nchunk * 2 * C + 2 * C + 1) * sizeof(double) + 2 * C * sizeof(float));
    if (!a.part) return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    double *s0 = a.part + a.nchunk * 2 * C, *n = s0 + C, *s1 = n + 1;
    float *sc = (float *)(s1 + C), *sh = sc + C;
    ridge_parallel_for(ctx, a.nchunk, 1, chunk_range, &a);
    for (size_t c = 0; c < C; c++) {
        double t = 0;
        for (size_t ch = 0; ch < a.nchunk; ch++) {
            size_t r0, r1;
            chunk_rows(&a, ch, &r0, &r1);
            t += (double)(r1 - r0) * a.part[ch * 2 * C + c];
        }
        s0[c] = t;
    }
    *n = (double)rows;
    if (sum && (st = sum(s0, C + 1))) goto done; /* mpi: the whole batch's sums and rows */
    for (size_t c = 0; c < C; c++) {
        const double m = s0[c] / *n;
        double t = 0;
        for (size_t ch = 0; ch < a.nchunk; ch++) {
            size_t r0, r1;
            chunk_rows(&a, ch, &r0, &r1);
            const double d = a.part[ch * 2 * C + c] - m;
            t += a.part[ch * 2 * C + C + c] + (double)(r1 - r0) * d * d;
        }
        s1[c] = t;
        mean[c] = (float)m;
    }
    if (sum && (st = sum(s1, C))) goto done;
    for (size_t c = 0; c < C; c++) {
        double var = s1[c] / *n;
        rstd[c] = (float)(1.0 / sqrt(var + eps));
        if (run_mean) run_mean[c] = (1 - momentum) * run_mean[c] + momentum * mean[c];
        if (run_var) {
            double unbiased = *n > 1 ? s1[c] / (*n - 1) : var;
            run_var[c] = (float)((1 - momentum) * run_var[c] + momentum * unbiased);
        }
        sc[c] = gamma[c] * rstd[c];
        sh[c] = beta[c] - mean[c] * sc[c];
    }
    a.sc = sc, a.sh = sh;
    ridge_parallel_for(ctx, rows, row_grain(C), apply_range, &a);
done:
    ridge_free(a.part);
    return st;
}

/* Both forwards are recorded by the profiler as "batchnorm.fwd". */
ridge_status ridge_batchnorm_forward_train_sync(ridge_ctx *ctx, float *y, float *mean,
                                                float *rstd, float *run_mean, float *run_var,
                                                const float *x, const float *gamma,
                                                const float *beta, size_t rows, size_t C,
                                                float eps, float momentum, ridge_epi_act act,
                                                ridge_sum_f64_fn sum)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = forward_train(ctx, y, mean, rstd, run_mean, run_var, x, gamma, beta, rows,
                                    C, eps, momentum, act, sum);
    RIDGE_PROF_END(ctx, t0, "batchnorm.fwd", "", 8.0 * rows * C, 4.0 * 2.0 * rows * C, 4.0 * 2.0 * rows * C, "%zux%zu", rows, C);
    return st;
}

ridge_status ridge_batchnorm_forward_train(ridge_ctx *ctx, float *y, float *mean, float *rstd,
                                           float *run_mean, float *run_var, const float *x,
                                           const float *gamma, const float *beta, size_t rows,
                                           size_t C, float eps, float momentum,
                                           ridge_epi_act act)
{
    return ridge_batchnorm_forward_train_sync(ctx, y, mean, rstd, run_mean, run_var, x, gamma,
                                              beta, rows, C, eps, momentum, act, NULL);
}

ridge_status ridge_batchnorm_forward_infer(ridge_ctx *ctx, float *y, const float *x,
                                           const float *gamma, const float *beta,
                                           const float *run_mean, const float *run_var,
                                           size_t rows, size_t C, float eps, ridge_epi_act act)
{
    ridge_status st = check("batchnorm_forward_infer", y, x, gamma, rows, C, act);
    if (st) return st;
    if (!ctx || !beta || !run_mean || !run_var)
        return ridge_error(RIDGE_EINVAL, "batchnorm_forward_infer: NULL argument");
    float *sc = ridge_malloc(2 * C * sizeof(float));
    if (!sc) return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    float *sh = sc + C;
    for (size_t c = 0; c < C; c++) {
        sc[c] = gamma[c] * (float)(1.0 / sqrt((double)run_var[c] + eps));
        sh[c] = beta[c] - run_mean[c] * sc[c];
    }
    bn_args a = {.k = bn_pick(ctx), .rows = rows, .C = C, .x = x, .out = y, .sc = sc, .sh = sh,
                 .relu = act == RIDGE_EPI_RELU};
    ridge_parallel_for(ctx, rows, row_grain(C), apply_range, &a);
    ridge_free(sc);
    return RIDGE_OK;
}

static ridge_status backward(ridge_ctx *ctx, float *dx, float *dgamma, float *dbeta, float *dy,
                             const float *x, const float *y, const float *mean,
                             const float *rstd, const float *gamma, size_t rows, size_t C,
                             ridge_epi_act act, ridge_sum_f64_fn sum)
{
    ridge_status st = check("batchnorm_backward", dx, dy, x, rows, C, act);
    if (st) return st;
    if (!ctx || !dgamma || !dbeta || !mean || !rstd || !gamma || (act && !y))
        return ridge_error(RIDGE_EINVAL, "batchnorm_backward: NULL argument");
    bn_args a = {.k = bn_pick(ctx), .rows = rows, .C = C, .nchunk = RIDGE_MIN(BN_CHUNKS, rows),
                 .dy = dy, .x = x, .y_act = act == RIDGE_EPI_RELU ? y : NULL, .mean = mean,
                 .rstd = rstd, .out = dx};
    /* the chunks' partial sums, then s0 (C), s1 (C) and the row count */
    a.part = ridge_malloc((a.nchunk * 2 * C + 2 * C + 1) * sizeof(double));
    float *coef = ridge_malloc(3 * C * sizeof(float));
    if (!a.part || !coef) {
        ridge_free(a.part);
        ridge_free(coef);
        return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    }
    double *s0 = a.part + a.nchunk * 2 * C, *s1 = s0 + C, *M = s1 + C;
    /* the sums, with dy masked by the relu in the same pass */
    ridge_parallel_for(ctx, a.nchunk, 1, chunk_range, &a);
    for (size_t c = 0; c < C; c++) {
        double t0 = 0, t1 = 0;
        for (size_t ch = 0; ch < a.nchunk; ch++)
            t0 += a.part[ch * 2 * C + c], t1 += a.part[ch * 2 * C + C + c];
        s0[c] = t0, s1[c] = t1;
    }
    *M = (double)rows;
    for (size_t c = 0; c < C; c++) dbeta[c] = (float)s0[c], dgamma[c] = (float)s1[c];
    if (sum && (st = sum(s0, 2 * C + 1))) { /* mpi: the whole batch's sums for dx */
        ridge_free(a.part);
        ridge_free(coef);
        return st;
    }
    /* dx = k (dy - dbeta/M - (x - mean) rstd dgamma/M), k = gamma rstd: an affine map of dy
     * and x per channel, dx = k dy + u x + v */
    float *k = coef, *u = coef + C, *v = coef + 2 * C;
    for (size_t c = 0; c < C; c++) {
        double kk = (double)gamma[c] * rstd[c];
        double uu = -kk * rstd[c] * s1[c] / *M;
        k[c] = (float)kk;
        u[c] = (float)uu;
        v[c] = (float)(-kk * s0[c] / *M - uu * mean[c]);
    }
    ridge_free(a.part);
    a.sc = k, a.sh = u; /* v follows u */
    ridge_parallel_for(ctx, rows, row_grain(C), dx_range, &a);
    ridge_free(coef);
    return RIDGE_OK;
}

/* Both backwards are recorded by the profiler as "batchnorm.bwd". */
ridge_status ridge_batchnorm_backward_sync(ridge_ctx *ctx, float *dx, float *dgamma,
                                           float *dbeta, float *dy, const float *x,
                                           const float *y, const float *mean, const float *rstd,
                                           const float *gamma, size_t rows, size_t C,
                                           ridge_epi_act act, ridge_sum_f64_fn sum)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = backward(ctx, dx, dgamma, dbeta, dy, x, y, mean, rstd, gamma, rows, C, act, sum);
    RIDGE_PROF_END(ctx, t0, "batchnorm.bwd", "", 12.0 * rows * C, 4.0 * 4.0 * rows * C, 4.0 * 4.0 * rows * C, "%zux%zu", rows, C);
    return st;
}

ridge_status ridge_batchnorm_backward(ridge_ctx *ctx, float *dx, float *dgamma, float *dbeta,
                                      float *dy, const float *x, const float *y,
                                      const float *mean, const float *rstd, const float *gamma,
                                      size_t rows, size_t C, ridge_epi_act act)
{
    return ridge_batchnorm_backward_sync(ctx, dx, dgamma, dbeta, dy, x, y, mean, rstd, gamma,
                                         rows, C, act, NULL);
}
