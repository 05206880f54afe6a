/* Batch normalization over the rows of a (rows, C) matrix (NHWC activations: rows = n*h*w).
 *
 * Statistics are two-pass (mean, then the mean of squared deviations, which does not cancel
 * the way E[x^2] - E[x]^2 does), summed in double per fixed chunk of rows and the chunks
 * added in order, so the result does not depend on the thread count. The backward is the
 * usual closed form: with xhat = (x - mean) rstd and M rows,
 *   dbeta = sum dy,  dgamma = sum dy xhat,  dx = gamma rstd (dy - dbeta/M - xhat dgamma/M). */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/nn-conv.h"
#include "ridge/nn.h"

#define BN_CHUNKS 32

typedef struct bn_args {
    size_t rows, C, nchunk;
    const float *x, *dy, *gamma, *beta, *mean, *rstd;
    float *y;
    double *part; /* [nchunk][2][C] */
    int pass, relu;
    float eps;
} bn_args;

static void chunk_rows(const bn_args *a, size_t chunk, size_t *b, size_t *e)
{
    ridge_partition(a->rows, 1, (int)chunk, (int)a->nchunk, b, e);
}

/* pass 0: sum x; 1: sum (x - mean)^2; 2: sum dy and dy * xhat. Per chunk of rows, 8 channels
 * at a time: float sums over blocks of 64 rows (registers, no store-to-load chain), each
 * block added into the chunk's double sums. */
#define BN_BLOCK 64
static void sums_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    const size_t C = a->C;
    (void)ith;
    for (size_t ch = b; ch < e; ch++) {
        double *s0 = a->part + ch * 2 * C, *s1 = s0 + C;
        size_t r0, r1;
        chunk_rows(a, ch, &r0, &r1);
        for (size_t c0 = 0; c0 < C; c0 += 8) {
            const size_t cn = RIDGE_MIN(8, C - c0);
            double d0[8] = {0}, d1[8] = {0};
            float m[8] = {0}, rs[8] = {0};
            for (size_t j = 0; j < cn; j++)
                if (a->pass) m[j] = a->mean[c0 + j], rs[j] = a->pass == 2 ? a->rstd[c0 + j] : 0;
            for (size_t rb = r0; rb < r1; rb += BN_BLOCK) {
                const size_t re = RIDGE_MIN(rb + BN_BLOCK, r1);
                float f0[8] = {0}, f1[8] = {0};
                if (cn == 8 && a->pass == 0) {
                    for (size_t r = rb; r < re; r++)
                        for (int j = 0; j < 8; j++) f0[j] += a->x[r * C + c0 + j];
                } else if (cn == 8 && a->pass == 1) {
                    for (size_t r = rb; r < re; r++)
                        for (int j = 0; j < 8; j++) {
                            float t = a->x[r * C + c0 + j] - m[j];
                            f0[j] += t * t;
                        }
                } else if (cn == 8) {
                    for (size_t r = rb; r < re; r++)
                        for (int j = 0; j < 8; j++) {
                            float g = a->dy[r * C + c0 + j];
                            f0[j] += g;
                            f1[j] += g * ((a->x[r * C + c0 + j] - m[j]) * rs[j]);
                        }
                } else {
                    for (size_t r = rb; r < re; r++)
                        for (size_t j = 0; j < cn; j++) {
                            float xv = a->x[r * C + c0 + j];
                            if (a->pass == 0) f0[j] += xv;
                            else if (a->pass == 1) f0[j] += (xv - m[j]) * (xv - m[j]);
                            else {
                                float g = a->dy[r * C + c0 + j];
                                f0[j] += g;
                                f1[j] += g * ((xv - m[j]) * rs[j]);
                            }
                        }
                }
                for (size_t j = 0; j < cn; j++) d0[j] += f0[j], d1[j] += f1[j];
            }
            for (size_t j = 0; j < cn; j++) s0[c0 + j] = d0[j], s1[c0 + j] = d1[j];
        }
    }
}

/* the chunks' sums, in order, into out0 (and out1) */
static void reduce(const bn_args *a, double *out0, double *out1)
{
    for (size_t c = 0; c < a->C; c++) {
        double s0 = 0, s1 = 0;
        for (size_t ch = 0; ch < a->nchunk; ch++) {
            s0 += a->part[ch * 2 * a->C + c];
            s1 += a->part[ch * 2 * a->C + a->C + c];
        }
        out0[c] = s0;
        if (out1) out1[c] = s1;
    }
}

/* y = act(gamma (x - mean) rstd + beta) for rows [b, e) */
static void apply_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    const size_t C = a->C;
    (void)ith;
    float sc[256], sh[256];
    for (size_t c0 = 0; c0 < C; c0 += 256) {
        size_t cn = RIDGE_MIN(256, C - c0);
        for (size_t c = 0; c < cn; c++) {
            sc[c] = a->gamma[c0 + c] * a->rstd[c0 + c];
            sh[c] = a->beta[c0 + c] - a->mean[c0 + c] * sc[c];
        }
        for (size_t r = b; r < e; r++) {
            const float *x = a->x + r * C + c0;
            float *y = a->y + r * C + c0;
            if (a->relu)
                for (size_t c = 0; c < cn; c++) {
                    float v = x[c] * sc[c] + sh[c];
                    y[c] = v > 0.0f ? v : 0.0f;
                }
            else
                for (size_t c = 0; c < cn; c++) y[c] = x[c] * sc[c] + sh[c];
        }
    }
}

/* dx = k dy + u x + v per channel, coefficients [k | u | v] in a->gamma, rows [b, e) */
static void dx_range(void *arg, size_t b, size_t e, int ith)
{
    const bn_args *a = arg;
    const size_t C = a->C;
    const float *k = a->gamma, *u = k + C, *v = u + C;
    (void)ith;
    for (size_t r = b; r < e; r++) {
        const float *g = a->dy + r * C, *xr = a->x + r * C;
        float *o = a->y + r * C;
        for (size_t c = 0; c < C; c++) o[c] = k[c] * g[c] + u[c] * xr[c] + v[c];
    }
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
    bn_args a = {rows, C, RIDGE_MIN(BN_CHUNKS, rows), x, NULL, gamma, beta, mean, rstd, y,
                 NULL, 0, act == RIDGE_EPI_RELU, eps};
    /* the chunks' partial sums, then s0 (C) and the row count, then s1 (C) */
    a.part = ridge_malloc((a.nchunk * 2 * C + 2 * C + 1) * sizeof(double));
    if (!a.part) return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    double *s0 = a.part + a.nchunk * 2 * C, *s1 = s0 + C + 1, *n = s0 + C;
    ridge_parallel_for(ctx, a.nchunk, 1, sums_range, &a);
    reduce(&a, s0, NULL);
    *n = (double)rows;
    if (sum && (st = sum(s0, C + 1))) goto done; /* mpi: the whole batch's sums and rows */
    for (size_t c = 0; c < C; c++) mean[c] = (float)(s0[c] / *n);
    a.pass = 1;
    ridge_parallel_for(ctx, a.nchunk, 1, sums_range, &a);
    reduce(&a, s1, NULL);
    if (sum && (st = sum(s1, C))) goto done;
    for (size_t c = 0; c < C; c++) {
        double var = s1[c] / *n;
        rstd[c] = (float)(1.0 / sqrt(var + eps));
        if (run_mean) run_mean[c] = (1 - momentum) * run_mean[c] + momentum * mean[c];
        if (run_var) {
            double unbiased = *n > 1 ? s1[c] / (*n - 1) : var;
            run_var[c] = (float)((1 - momentum) * run_var[c] + momentum * unbiased);
        }
    }
done:
    ridge_free(a.part);
    if (st) return st;
    ridge_parallel_for(ctx, rows, row_grain(C), apply_range, &a);
    return RIDGE_OK;
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
    float *rstd = ridge_malloc(C * sizeof(float));
    if (!rstd) return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    for (size_t c = 0; c < C; c++) rstd[c] = (float)(1.0 / sqrt((double)run_var[c] + eps));
    bn_args a = {rows, C, 1, x, NULL, gamma, beta, run_mean, rstd, y, NULL, 0,
                 act == RIDGE_EPI_RELU, eps};
    ridge_parallel_for(ctx, rows, row_grain(C), apply_range, &a);
    ridge_free(rstd);
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
    if (act != RIDGE_EPI_NONE && (st = ridge_nn_act_backward(ctx, dy, dy, y, rows * C, act)))
        return st;
    bn_args a = {rows, C, RIDGE_MIN(BN_CHUNKS, rows), x, dy, gamma, NULL, mean, rstd, dx,
                 NULL, 2, 0, 0};
    /* the chunks' partial sums, then s0 (C), s1 (C) and the row count */
    a.part = ridge_malloc((a.nchunk * 2 * C + 2 * C + 1) * sizeof(double));
    float *coef = ridge_malloc(3 * C * sizeof(float));
    if (!a.part || !coef) {
        ridge_free(a.part);
        ridge_free(coef);
        return ridge_error(RIDGE_ENOMEM, "batchnorm: out of memory");
    }
    double *s0 = a.part + a.nchunk * 2 * C, *s1 = s0 + C, *M = s1 + C;
    ridge_parallel_for(ctx, a.nchunk, 1, sums_range, &a);
    reduce(&a, s0, s1);
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
    a.y = dx;
    a.gamma = coef;
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
