/* The public SGEMM entry points: argument validation, the mapping of transposes to strides,
 * and dispatch to the path that suits the shape and the context's ISA. */
#include <stdint.h>
#include <string.h>

#include "gemm/gemm-internal.h"

/* ---- validation ------------------------------------------------------------------------------ */

/* Sizes above this are a negative int converted to size_t, or absurd. */
#define GEMM_SIZE_MAX (SIZE_MAX / 2)

static ridge_status check_size(const char *fn, const char *what, size_t v)
{
    if (v > GEMM_SIZE_MAX)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) is negative or too large", fn, what, v);
    return RIDGE_OK;
}

/* A stored rows x cols matrix with leading dimension ld: checks ld >= max(1, cols), that its
 * extent (rows - 1) * ld + cols (in floats, returned) fits in bytes, and that ptr is set when
 * `used`. */
static ridge_status check_matrix(const char *fn, const char *name, const void *ptr, int used,
                                 size_t rows, size_t cols, const char *cols_name, size_t ld,
                                 const char *ld_name, size_t *extent)
{
    *extent = 0;
    ridge_status st = check_size(fn, ld_name, ld);
    if (st) return st;
    if (ld < cols || ld == 0)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) < %s (%zu) (must be >= max(1, %s))", fn,
                           ld_name, ld, cols_name, cols, cols_name);
    if (rows && cols) {
        size_t span;
        if (__builtin_mul_overflow(rows - 1, ld, &span) ||
            __builtin_add_overflow(span, cols, extent) || *extent > GEMM_SIZE_MAX / sizeof(float))
            return ridge_error(RIDGE_EINVAL, "%s: %s spans more than the address space (%zu rows, %s %zu)",
                               fn, name, rows, ld_name, ld);
    }
    if (used && !ptr) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, name);
    return RIDGE_OK;
}

/* `batch` matrices `stride` floats apart, each spanning `extent`. */
static ridge_status check_batch(const char *fn, const char *name, size_t batch, size_t stride,
                                size_t extent)
{
    ridge_status st = check_size(fn, "batch stride", stride);
    if (st || batch <= 1 || extent == 0) return st;
    size_t span, total;
    if (__builtin_mul_overflow(batch - 1, stride, &span) ||
        __builtin_add_overflow(span, extent, &total) || total > GEMM_SIZE_MAX / sizeof(float))
        return ridge_error(RIDGE_EINVAL, "%s: the %zu %s matrices span more than the address space",
                           fn, batch, name);
    return RIDGE_OK;
}

static ridge_status check_trans(const char *fn, const char *name, ridge_trans t)
{
    if (t != RIDGE_NO_TRANS && t != RIDGE_TRANS)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%d) is neither RIDGE_NO_TRANS nor RIDGE_TRANS",
                           fn, name, (int)t);
    return RIDGE_OK;
}

static ridge_status check_epilogue(const char *fn, const ridge_epilogue *e, size_t batch,
                                   size_t m, size_t n)
{
    if (e->bias_kind != RIDGE_BIAS_NONE && e->bias_kind != RIDGE_BIAS_COL &&
        e->bias_kind != RIDGE_BIAS_ROW)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias_kind (%d) is unknown", fn,
                           (int)e->bias_kind);
    if (e->bias_kind != RIDGE_BIAS_NONE && !e->bias && m && n)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias is NULL but bias_kind is %s", fn,
                           e->bias_kind == RIDGE_BIAS_COL ? "COL" : "ROW");
    if (e->bias_kind == RIDGE_BIAS_NONE && e->bias)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue bias is set but bias_kind is NONE", fn);
    if ((unsigned)e->act > RIDGE_ACT_TANH)
        return ridge_error(RIDGE_EINVAL, "%s: epilogue act (%d) is unknown", fn, (int)e->act);
    if (e->residual) {
        size_t ext;
        ridge_status st = check_matrix(fn, "residual", e->residual, 1, m, n, "n", e->ldr,
                                       "ldr", &ext);
        if (!st) st = check_batch(fn, "residual", batch, e->residual_stride, ext);
        if (st) return st;
    }
    return RIDGE_OK;
}

/* ---- dispatch -------------------------------------------------------------------------------- */

typedef struct run_job {
    const gemm_problem *p;
} run_job;

static void ref_block(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const run_job *j = arg;
    ridge_f32_gemm__ref(j->p, i0, i1, j0, j1);
}

/* Computes one validated product on the context's threads. */
static void gemm_run(ridge_ctx *ctx, const gemm_problem *p)
{
    if (p->m == 0 || p->n == 0) return;
    run_job j = {p};
    ridge_parallel_for_2d(ctx, p->m, p->n, 8, 64, ref_block, &j);
}

/* Fills the transpose-independent part of a problem. */
static void set_a(gemm_problem *p, ridge_trans t, const float *a, size_t lda)
{
    p->a = a;
    p->a_rs = t == RIDGE_NO_TRANS ? lda : 1;
    p->a_cs = t == RIDGE_NO_TRANS ? 1 : lda;
}

static void set_b(gemm_problem *p, ridge_trans t, const float *b, size_t ldb)
{
    p->b = b;
    p->b_rs = t == RIDGE_NO_TRANS ? ldb : 1;
    p->b_cs = t == RIDGE_NO_TRANS ? 1 : ldb;
}

/* Validates everything but B, shared by the plain calls and the plan. */
static ridge_status check_common(const char *fn, ridge_ctx *ctx, ridge_trans trans_a,
                                 size_t batch, size_t m, size_t n, size_t k, float alpha,
                                 const float *a, size_t lda, size_t stride_a, float *c,
                                 size_t ldc, size_t stride_c, const ridge_epilogue *epi)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_trans(fn, "trans_a", trans_a)) || (st = check_size(fn, "batch", batch)) ||
        (st = check_size(fn, "m", m)) || (st = check_size(fn, "n", n)) ||
        (st = check_size(fn, "k", k)))
        return st;
    int product = m && n && k && alpha != 0.0f && batch;
    size_t ext;
    if (trans_a == RIDGE_NO_TRANS) st = check_matrix(fn, "a", a, product, m, k, "k", lda, "lda", &ext);
    else st = check_matrix(fn, "a", a, product, k, m, "m", lda, "lda", &ext);
    if (!st) st = check_batch(fn, "a", batch, stride_a, ext);
    if (!st) st = check_matrix(fn, "c", c, m && n && batch, m, n, "n", ldc, "ldc", &ext);
    if (!st) st = check_batch(fn, "c", batch, stride_c, ext);
    if (!st && epi) st = check_epilogue(fn, epi, batch, m, n);
    return st;
}

static ridge_status check_b(const char *fn, ridge_trans trans_b, size_t batch, size_t m,
                            size_t n, size_t k, float alpha, const float *b, size_t ldb,
                            size_t stride_b)
{
    ridge_status st = check_trans(fn, "trans_b", trans_b);
    if (st) return st;
    int product = m && n && k && alpha != 0.0f && batch;
    size_t ext;
    if (trans_b == RIDGE_NO_TRANS) st = check_matrix(fn, "b", b, product, k, n, "n", ldb, "ldb", &ext);
    else st = check_matrix(fn, "b", b, product, n, k, "k", ldb, "ldb", &ext);
    if (!st) st = check_batch(fn, "b", batch, stride_b, ext);
    return st;
}

static ridge_status sgemm_common(const char *fn, ridge_ctx *ctx, ridge_trans trans_a,
                                 ridge_trans trans_b, size_t batch, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, size_t stride_a,
                                 const float *b, size_t ldb, size_t stride_b, float beta,
                                 float *c, size_t ldc, size_t stride_c, const ridge_epilogue *epi)
{
    ridge_status st = check_common(fn, ctx, trans_a, batch, m, n, k, alpha, a, lda, stride_a,
                                   c, ldc, stride_c, epi);
    if (!st) st = check_b(fn, trans_b, batch, m, n, k, alpha, b, ldb, stride_b);
    if (st) return st;
    gemm_problem p = {.m = m, .n = n, .k = alpha != 0.0f ? k : 0, .alpha = alpha, .beta = beta,
                      .c = c, .ldc = ldc};
    if (epi) p.epi = *epi;
    for (size_t i = 0; i < batch; i++) {
        set_a(&p, trans_a, p.k ? a + i * stride_a : NULL, lda);
        set_b(&p, trans_b, p.k ? b + i * stride_b : NULL, ldb);
        p.c = c + i * stride_c;
        if (epi && epi->residual) p.epi.residual = epi->residual + i * epi->residual_stride;
        gemm_run(ctx, &p);
    }
    return RIDGE_OK;
}

ridge_status ridge_sgemm(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b, size_t m,
                         size_t n, size_t k, float alpha, const float *a, size_t lda,
                         const float *b, size_t ldb, float beta, float *c, size_t ldc)
{
    return sgemm_common("sgemm", ctx, trans_a, trans_b, 1, m, n, k, alpha, a, lda, 0, b, ldb,
                        0, beta, c, ldc, 0, NULL);
}

ridge_status ridge_sgemm_ex(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b, size_t m,
                            size_t n, size_t k, float alpha, const float *a, size_t lda,
                            const float *b, size_t ldb, float beta, float *c, size_t ldc,
                            const ridge_epilogue *epi)
{
    return sgemm_common("sgemm_ex", ctx, trans_a, trans_b, 1, m, n, k, alpha, a, lda, 0, b,
                        ldb, 0, beta, c, ldc, 0, epi);
}

ridge_status ridge_sgemm_batched(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b,
                                 size_t batch, size_t m, size_t n, size_t k, float alpha,
                                 const float *a, size_t lda, size_t stride_a, const float *b,
                                 size_t ldb, size_t stride_b, float beta, float *c, size_t ldc,
                                 size_t stride_c, const ridge_epilogue *epi)
{
    return sgemm_common("sgemm_batched", ctx, trans_a, trans_b, batch, m, n, k, alpha, a, lda,
                        stride_a, b, ldb, stride_b, beta, c, ldc, stride_c, epi);
}

/* ---- prepacked B ----------------------------------------------------------------------------- */

struct ridge_sgemm_plan {
    ridge_trans trans_b;
    size_t n, k;
    float *packed; /* op(B) as a row-major k x n matrix */
};

static void plan_pack(ridge_sgemm_plan *plan, const float *b, size_t ldb)
{
    for (size_t p = 0; p < plan->k; p++)
        for (size_t j = 0; j < plan->n; j++)
            plan->packed[p * plan->n + j] =
                plan->trans_b == RIDGE_NO_TRANS ? b[p * ldb + j] : b[j * ldb + p];
}

ridge_status ridge_sgemm_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                     const float *b, size_t ldb, ridge_sgemm_plan **out)
{
    const char *fn = "sgemm_plan_create";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_size(fn, "n", n)) || (st = check_size(fn, "k", k)) ||
        (st = check_b(fn, trans_b, 1, 1, n, k, 1.0f, b, ldb, 0)))
        return st;
    ridge_sgemm_plan *plan = ridge_calloc(1, sizeof *plan);
    if (!plan) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    plan->trans_b = trans_b;
    plan->n = n;
    plan->k = k;
    if (n && k) {
        plan->packed = ridge_malloc(n * k * sizeof(float));
        if (!plan->packed) {
            ridge_free(plan);
            return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu x %zu floats", fn, k, n);
        }
        plan_pack(plan, b, ldb);
    }
    *out = plan;
    return RIDGE_OK;
}

ridge_status ridge_sgemm_plan_update(ridge_ctx *ctx, ridge_sgemm_plan *plan, const float *b,
                                     size_t ldb)
{
    const char *fn = "sgemm_plan_update";
    if (!ctx || !plan)
        return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, ctx ? "plan" : "ctx");
    ridge_status st = check_b(fn, plan->trans_b, 1, 1, plan->n, plan->k, 1.0f, b, ldb, 0);
    if (st) return st;
    if (plan->packed) plan_pack(plan, b, ldb);
    return RIDGE_OK;
}

void ridge_sgemm_plan_destroy(ridge_sgemm_plan *plan)
{
    if (!plan) return;
    ridge_free(plan->packed);
    ridge_free(plan);
}

ridge_status ridge_sgemm_plan_execute(ridge_ctx *ctx, const ridge_sgemm_plan *plan,
                                      ridge_trans trans_a, size_t m, float alpha,
                                      const float *a, size_t lda, float beta, float *c,
                                      size_t ldc, const ridge_epilogue *epi)
{
    const char *fn = "sgemm_plan_execute";
    if (!plan) return ridge_error(RIDGE_EINVAL, "%s: plan is NULL", fn);
    ridge_status st = check_common(fn, ctx, trans_a, 1, m, plan->n, plan->k, alpha, a, lda, 0,
                                   c, ldc, 0, epi);
    if (st) return st;
    gemm_problem p = {.m = m, .n = plan->n, .k = alpha != 0.0f ? plan->k : 0, .alpha = alpha,
                      .beta = beta, .c = c, .ldc = ldc};
    if (epi) p.epi = *epi;
    set_a(&p, trans_a, p.k ? a : NULL, lda);
    set_b(&p, RIDGE_NO_TRANS, p.k ? plan->packed : NULL, plan->n);
    gemm_run(ctx, &p);
    return RIDGE_OK;
}

/* ---- introspection --------------------------------------------------------------------------- */

const char *ridge_gemm_describe(const ridge_ctx *ctx)
{
    return "f32-gemm-ref";
}
