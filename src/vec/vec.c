/* The vec family's public entry points: argument checks, the ISA's kernel table, splitting
 * large spans over the context's threads and combining partial results.
 *
 * Threads: a span is split only when it is large enough for the fork-join (a few
 * microseconds, `ridge bench pool`) to pay: 256 Ki elements for the memory-bound operations,
 * 32 Ki for the transcendental activations. Splits are on block boundaries of the float
 * summation scheme, and the block sums are combined in block order, so every result is
 * independent of the thread count. Integer sums are exact (128-bit) so any split gives the
 * same answer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "vec/vec.h"

#define PAR_MIN_MEM ((size_t)1 << 18)
#define PAR_MIN_ACT ((size_t)1 << 15)
#define PAR_GRAIN 4096 /* a multiple of both block sizes */

/* The table of an ISA: one load (static inline, so entry points do not call through the PLT).
 * A context's isa is resolved to ref, avx2 or avx512 when it is created. */
static const ridge_vec_kernels *const tables[] = {&ridge_vec_kernels_ref, &ridge_vec_kernels_avx2,
                                                  &ridge_vec_kernels_avx512};
static inline const ridge_vec_kernels *kernels_for(ridge_isa isa)
{
    return tables[(unsigned)isa <= RIDGE_ISA_AVX512 ? (unsigned)isa : 0];
}

const ridge_vec_kernels *ridge_vec_kernels_for(ridge_isa isa) { return kernels_for(isa); }

static inline const ridge_vec_kernels *K(const ridge_ctx *ctx) { return kernels_for(ctx->isa); }

const char *ridge_vec_describe(const ridge_ctx *ctx)
{
    switch (ctx->isa) {
    case RIDGE_ISA_AVX512: return "vec-avx512 (f32x16 math, 64-lane float sums)";
    case RIDGE_ISA_AVX2: return "vec-avx2 (f32x8 math, 64-lane float sums)";
    default: return "vec-ref (scalar C, activations in double)";
    }
}

static int use_threads(const ridge_ctx *ctx, size_t n, size_t min)
{
    return ctx->threads > 1 && n >= min;
}

#define CHECK_CTX(what)                                                                       \
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", what)
#define CHECK_PTR(p, what)                                                                    \
    if (!(p) && n) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL with n = %zu", what, #p, n)
#define CHECK_OUT(what)                                                                       \
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", what)
#define CHECK_NONEMPTY(what)                                                                  \
    if (n == 0) return ridge_error(RIDGE_EINVAL, "%s: empty span (n = 0) has no %s", what, what)

/* ---- float sums over blocks ---------------------------------------------------------------- */

typedef struct fsum_job {
    const ridge_vec_kernels *k;
    const void *x, *y;
    size_t n, block;
    int type; /* 0 sum f32, 1 dot f32, 2 sum f64, 3 dot f64 */
    double *partial; /* one per block */
} fsum_job;

static double block_sum(const fsum_job *j, size_t b)
{
    size_t i = b * j->block, len = RIDGE_MIN(j->block, j->n - i);
    switch (j->type) {
    case 0: return j->k->sum_f32((const float *)j->x + i, len);
    case 1: return j->k->dot_f32((const float *)j->x + i, (const float *)j->y + i, len);
    case 2: return j->k->sum_f64((const double *)j->x + i, len);
    default: return j->k->dot_f64((const double *)j->x + i, (const double *)j->y + i, len);
    }
}

static void fsum_range(void *arg, size_t begin, size_t end, int ith)
{
    (void)ith;
    fsum_job *j = arg;
    for (size_t b = begin; b < end; b++) j->partial[b] = block_sum(j, b);
}

/* The fixed scheme: block sums (bit-identical on every ISA) added in block order in double. */
static ridge_status fsum(ridge_ctx *ctx, int type, const void *x, const void *y, size_t n,
                         double *out)
{
    fsum_job j = {K(ctx), x, y, n, type < 2 ? RIDGE_VEC_BLOCK_F32 : RIDGE_VEC_BLOCK_F64, type,
                  NULL};
    size_t nb = (n + j.block - 1) / j.block;
    double s = 0;
    if (use_threads(ctx, n, PAR_MIN_MEM)) {
        j.partial = malloc(nb * sizeof *j.partial);
        if (!j.partial) return ridge_error(RIDGE_ENOMEM, "vec: cannot allocate %zu partial sums", nb);
        ridge_parallel_for(ctx, nb, 1, fsum_range, &j);
        for (size_t b = 0; b < nb; b++) s += j.partial[b];
        free(j.partial);
    } else {
        for (size_t b = 0; b < nb; b++) s += block_sum(&j, b);
    }
    *out = s;
    return RIDGE_OK;
}

/* One block (every span up to 2048 floats / 1024 doubles) is a direct kernel call. */
#define FSUM_API(SC, name, T, type, Y, yarg, block, direct)                                   \
    SC ridge_status name(ridge_ctx *ctx, const T *x Y, size_t n, T *out)                       \
    {                                                                                          \
        CHECK_CTX(#name);                                                                      \
        CHECK_PTR(x, #name);                                                                   \
        CHECK_OUT(#name);                                                                      \
        if (n <= block) {                                                                      \
            *out = K(ctx)->direct;                                                             \
            return RIDGE_OK;                                                                   \
        }                                                                                      \
        double s;                                                                              \
        ridge_status st = fsum(ctx, type, x, yarg, n, &s);                                     \
        if (st == RIDGE_OK) *out = (T)s;                                                       \
        return st;                                                                             \
    }
#define NOY
#define PUBLIC
#define DOTY(T) , const T *y
#define BF32 RIDGE_VEC_BLOCK_F32
#define BF64 RIDGE_VEC_BLOCK_F64
FSUM_API(PUBLIC, ridge_vec_sum_f32, float, 0, NOY, NULL, BF32, sum_f32(x, n))
FSUM_API(PUBLIC, ridge_vec_sumsq_f32, float, 1, NOY, x, BF32, dot_f32(x, x, n))
FSUM_API(PUBLIC, ridge_vec_sum_f64, double, 2, NOY, NULL, BF64, sum_f64(x, n))
FSUM_API(PUBLIC, ridge_vec_sumsq_f64, double, 3, NOY, x, BF64, dot_f64(x, x, n))
FSUM_API(static, dot_f32_checked, float, 1, DOTY(float), y, BF32, dot_f32(x, y, n))
FSUM_API(static, dot_f64_checked, double, 3, DOTY(double), y, BF64, dot_f64(x, y, n))

ridge_status ridge_vec_dot_f32(ridge_ctx *ctx, const float *x, const float *y, size_t n,
                               float *out)
{
    CHECK_CTX("ridge_vec_dot_f32");
    CHECK_PTR(x, "ridge_vec_dot_f32");
    CHECK_PTR(y, "ridge_vec_dot_f32");
    if (!out) return ridge_error(RIDGE_EINVAL, "ridge_vec_dot_f32: out is NULL");
    return dot_f32_checked(ctx, x, y, n, out);
}

ridge_status ridge_vec_dot_f64(ridge_ctx *ctx, const double *x, const double *y, size_t n,
                               double *out)
{
    CHECK_CTX("ridge_vec_dot_f64");
    CHECK_PTR(x, "ridge_vec_dot_f64");
    CHECK_PTR(y, "ridge_vec_dot_f64");
    if (!out) return ridge_error(RIDGE_EINVAL, "ridge_vec_dot_f64: out is NULL");
    return dot_f64_checked(ctx, x, y, n, out);
}

/* ---- exact integer sums ------------------------------------------------------------------- */

typedef struct isum_job {
    const ridge_vec_kernels *k;
    const void *x, *y;
    int type; /* 0 sum i32, 1 dot i32, 2 sum i64, 3 dot i64 (scalar: no vector 64x64 product) */
    ridge_i128 part[64];
} isum_job;

static ridge_i128 isum_run(const isum_job *j, size_t b, size_t e)
{
    switch (j->type) {
    case 0: return j->k->sum_i32((const int32_t *)j->x + b, e - b);
    case 1: return j->k->dot_i32((const int32_t *)j->x + b, (const int32_t *)j->y + b, e - b);
    case 2: return j->k->sum_i64((const int64_t *)j->x + b, e - b);
    default: {
        const int64_t *x = j->x, *y = j->y;
        ridge_i128 s = 0;
        for (size_t i = b; i < e; i++) {
            ridge_i128 p = (ridge_i128)x[i] * y[i];
            /* |p| < 2^126: the sum of up to 2^63 elements could still wrap; saturate at a
             * value far outside int64 so the overflow is reported */
            if ((s > 0 && p > ((ridge_i128)1 << 126) - s) ||
                (s < 0 && p < -((ridge_i128)1 << 126) - s))
                return s > 0 ? (ridge_i128)1 << 126 : -((ridge_i128)1 << 126);
            s += p;
        }
        return s;
    }
    }
}

static void isum_range(void *arg, size_t begin, size_t end, int ith)
{
    isum_job *j = arg;
    j->part[ith] = isum_run(j, begin, end);
}

static ridge_status isum(ridge_ctx *ctx, const char *what, int type, const void *x,
                         const void *y, size_t n, int64_t *out)
{
    isum_job j;
    j.k = K(ctx), j.x = x, j.y = y, j.type = type;
    ridge_i128 s = 0;
    if (use_threads(ctx, n, PAR_MIN_MEM) && ctx->threads <= 64) {
        for (int t = 0; t < ctx->threads; t++) j.part[t] = 0;
        ridge_parallel_for(ctx, n, PAR_GRAIN, isum_range, &j);
        for (int t = 0; t < ctx->threads; t++) s += j.part[t];
    } else {
        s = isum_run(&j, 0, n);
    }
    if (s > INT64_MAX || s < INT64_MIN)
        return ridge_error(RIDGE_EOVERFLOW, "%s: the result does not fit in int64", what);
    *out = (int64_t)s;
    return RIDGE_OK;
}

#define ISUM_API(SC, name, T, type, Y, yarg)                                                  \
    SC ridge_status name(ridge_ctx *ctx, const T *x Y, size_t n, int64_t *out)                    \
    {                                                                                          \
        CHECK_CTX(#name);                                                                      \
        CHECK_PTR(x, #name);                                                                   \
        CHECK_OUT(#name);                                                                      \
        if (type != 3 && n < PAR_MIN_MEM) { /* the common case: one direct kernel call */       \
            const ridge_vec_kernels *k = K(ctx);                                               \
            ridge_i128 s = type == 0   ? k->sum_i32((const void *)x, n)                        \
                           : type == 1 ? k->dot_i32((const void *)x, (const void *)(yarg), n)  \
                                       : k->sum_i64((const void *)x, n);                       \
            if (s > INT64_MAX || s < INT64_MIN)                                                \
                return ridge_error(RIDGE_EOVERFLOW, "%s: the result does not fit in int64",    \
                                   #name);                                                     \
            *out = (int64_t)s;                                                                 \
            return RIDGE_OK;                                                                   \
        }                                                                                      \
        return isum(ctx, #name, type, x, yarg, n, out);                                        \
    }
ISUM_API(PUBLIC, ridge_vec_sum_i32, int32_t, 0, NOY, x)
ISUM_API(PUBLIC, ridge_vec_sumsq_i32, int32_t, 1, NOY, x)
ISUM_API(PUBLIC, ridge_vec_sum_i64, int64_t, 2, NOY, x)
ISUM_API(PUBLIC, ridge_vec_sumsq_i64, int64_t, 3, NOY, x)
ISUM_API(static, dot_i32_checked, int32_t, 1, DOTY(int32_t), y)
ISUM_API(static, dot_i64_checked, int64_t, 3, DOTY(int64_t), y)

ridge_status ridge_vec_dot_i32(ridge_ctx *ctx, const int32_t *x, const int32_t *y, size_t n,
                               int64_t *out)
{
    CHECK_CTX("ridge_vec_dot_i32");
    CHECK_PTR(x, "ridge_vec_dot_i32");
    CHECK_PTR(y, "ridge_vec_dot_i32");
    if (!out) return ridge_error(RIDGE_EINVAL, "ridge_vec_dot_i32: out is NULL");
    return dot_i32_checked(ctx, x, y, n, out);
}

ridge_status ridge_vec_dot_i64(ridge_ctx *ctx, const int64_t *x, const int64_t *y, size_t n,
                               int64_t *out)
{
    CHECK_CTX("ridge_vec_dot_i64");
    CHECK_PTR(x, "ridge_vec_dot_i64");
    CHECK_PTR(y, "ridge_vec_dot_i64");
    if (!out) return ridge_error(RIDGE_EINVAL, "ridge_vec_dot_i64: out is NULL");
    return dot_i64_checked(ctx, x, y, n, out);
}

/* ---- mean ----------------------------------------------------------------------------------- */

ridge_status ridge_vec_mean_f32(ridge_ctx *ctx, const float *x, size_t n, float *out)
{
    CHECK_OUT("ridge_vec_mean_f32");
    CHECK_NONEMPTY("mean");
    CHECK_CTX("ridge_vec_mean_f32");
    CHECK_PTR(x, "ridge_vec_mean_f32");
    float s;
    ridge_status st = ridge_vec_sum_f32(ctx, x, n, &s);
    if (st == RIDGE_OK) *out = (float)((double)s / (double)n);
    return st;
}

ridge_status ridge_vec_mean_f64(ridge_ctx *ctx, const double *x, size_t n, double *out)
{
    CHECK_OUT("ridge_vec_mean_f64");
    CHECK_NONEMPTY("mean");
    double s;
    ridge_status st = ridge_vec_sum_f64(ctx, x, n, &s);
    if (st == RIDGE_OK) *out = s / (double)n;
    return st;
}

/* exact sum / n rounded once: the i128 sum is split so that hi + lo is exact in two doubles */
static double i128_div(ridge_i128 s, size_t n)
{
    ridge_i128 q = s / (ridge_i128)n, r = s % (ridge_i128)n;
    return (double)q + (double)r / (double)n;
}

#define IMEAN_API(name, T, ty)                                                              \
    ridge_status name(ridge_ctx *ctx, const T *x, size_t n, double *out)                       \
    {                                                                                          \
        CHECK_CTX(#name);                                                                      \
        CHECK_OUT(#name);                                                                      \
        CHECK_NONEMPTY("mean");                                                                \
        CHECK_PTR(x, #name);                                                                   \
        isum_job j;                                                                            \
        j.k = K(ctx), j.x = x, j.y = NULL, j.type = ty;                                        \
        *out = i128_div(isum_run(&j, 0, n), n);                                                \
        return RIDGE_OK;                                                                       \
    }
IMEAN_API(ridge_vec_mean_i32, int32_t, 0)
IMEAN_API(ridge_vec_mean_i64, int64_t, 2)

/* ---- min / max / argmin / argmax ---------------------------------------------------------- */

typedef struct mm_job {
    const ridge_vec_kernels *k;
    const void *x;
    int op; /* index into the kernel list below */
    union {
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
    } part[64];
    unsigned char have[64]; /* the thread got a non-empty block */
} mm_job;

#define MM_OPS(X)                                                                             \
    X(0, min_f32, f32, float)                                                                  \
    X(1, max_f32, f32, float)                                                                  \
    X(2, min_f64, f64, double)                                                                 \
    X(3, max_f64, f64, double)                                                                 \
    X(4, min_i32, i32, int32_t)                                                                \
    X(5, max_i32, i32, int32_t)                                                                \
    X(6, min_i64, i64, int64_t)                                                                \
    X(7, max_i64, i64, int64_t)

static void mm_range(void *arg, size_t b, size_t e, int ith)
{
    mm_job *j = arg;
    j->have[ith] = 1;
    switch (j->op) {
#define X(i, fn, f, T)                                                                        \
    case i: j->part[ith].f = j->k->fn((const T *)j->x + b, e - b); break;
        MM_OPS(X)
#undef X
    }
}

/* Runs the kernel on the whole span or per thread; the per-thread results are combined by
 * the same kernel (NaN and order semantics carry over). */
#define MM_API(i, fn, f, T)                                                                   \
    static T mm_##fn(ridge_ctx *ctx, const T *x, size_t n)                                     \
    {                                                                                          \
        const ridge_vec_kernels *k = K(ctx);                                                   \
        if (!use_threads(ctx, n, PAR_MIN_MEM) || ctx->threads > 64) return k->fn(x, n);        \
        mm_job j = {k, x, i, {{0}}, {0}};                                                      \
        ridge_parallel_for(ctx, n, PAR_GRAIN, mm_range, &j);                                   \
        size_t parts = 0;                                                                      \
        T v[64];                                                                               \
        for (int t = 0; t < ctx->threads; t++)                                                 \
            if (j.have[t]) v[parts++] = j.part[t].f;                                           \
        return k->fn(v, parts);                                                                \
    }                                                                                          \
    ridge_status ridge_vec_##fn(ridge_ctx *ctx, const T *x, size_t n, T *out)                  \
    {                                                                                          \
        CHECK_CTX("ridge_vec_" #fn);                                                           \
        CHECK_OUT("ridge_vec_" #fn);                                                           \
        CHECK_NONEMPTY(#fn);                                                                   \
        CHECK_PTR(x, "ridge_vec_" #fn);                                                        \
        *out = mm_##fn(ctx, x, n);                                                             \
        return RIDGE_OK;                                                                       \
    }                                                                                          \
    ridge_status ridge_vec_arg##fn(ridge_ctx *ctx, const T *x, size_t n, size_t *out)          \
    {                                                                                          \
        CHECK_CTX("ridge_vec_arg" #fn);                                                        \
        CHECK_OUT("ridge_vec_arg" #fn);                                                        \
        CHECK_NONEMPTY("arg" #fn);                                                             \
        CHECK_PTR(x, "ridge_vec_arg" #fn);                                                     \
        T m = mm_##fn(ctx, x, n);                                                              \
        *out = K(ctx)->find_##f(x, n, m);                                                      \
        return RIDGE_OK;                                                                       \
    }
MM_OPS(MM_API)

/* ---- elementwise -------------------------------------------------------------------------- */

typedef struct ew_job {
    const ridge_vec_kernels *k;
    int op;
    float *out;
    const float *a, *b, *c;
    float s, t;
    ridge_act act;
} ew_job;

enum { EW_ADD, EW_SUB, EW_MUL, EW_SCALE, EW_AXPY, EW_FMA, EW_CLAMP, EW_ACT, EW_ACT_BWD };

static void ew_range(void *arg, size_t i, size_t e, int ith)
{
    (void)ith;
    const ew_job *j = arg;
    size_t n = e - i;
    float *o = j->out + i;
    const float *a = j->a + i, *b = j->b ? j->b + i : NULL, *c = j->c ? j->c + i : NULL;
    switch (j->op) {
    case EW_ADD: j->k->add_f32(o, a, b, n); break;
    case EW_SUB: j->k->sub_f32(o, a, b, n); break;
    case EW_MUL: j->k->mul_f32(o, a, b, n); break;
    case EW_SCALE: j->k->scale_f32(o, a, j->s, n); break;
    case EW_AXPY: j->k->axpy_f32(o, j->s, a, n); break;
    case EW_FMA: j->k->fma_f32(o, a, b, c, n); break;
    case EW_CLAMP: j->k->clamp_f32(o, a, j->s, j->t, n); break;
    case EW_ACT: j->k->act[j->act](o, a, n, j->s); break;
    case EW_ACT_BWD: j->k->act_bwd[j->act](o, a, b, n, j->s); break;
    }
}

/* The threaded path, out of line so that a small call sets up no stack frame. */
static __attribute__((noinline)) ridge_status ew_par(ridge_ctx *ctx, ew_job j, size_t n)
{
    j.k = K(ctx);
    ridge_parallel_for(ctx, n, PAR_GRAIN, ew_range, &j);
    return RIDGE_OK;
}

/* Names the bad argument (out of line: the common path is one predicted branch). */
static __attribute__((noinline, cold)) ridge_status ew_bad(const char *what, const ridge_ctx *ctx,
                                                          size_t n, const void *out,
                                                          const void *a, const void *b,
                                                          const void *c)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", what);
    const char *which = !out ? "the output" : !a ? "the first input" : !b ? "the second input"
                                                                      : "the third input";
    (void)c;
    return ridge_error(RIDGE_EINVAL, "%s: %s is NULL with n = %zu", what, which, n);
}

#define EW_OK(o, a, b, c) (ctx && (!n || ((o) && (a) && (b) && (c))))

/* Elementwise entry point: check, then the kernel directly below the threading threshold. */
#define EW_API(name, PARAMS, o, a, b, c, PAR_MIN, CALL, JOB, PRE)                             \
    ridge_status name PARAMS                                                                   \
    {                                                                                          \
        if (__builtin_expect(!EW_OK(o, a, b, c), 0)) return ew_bad(#name, ctx, n, o, a, b, c); \
        PRE;                                                                                   \
        if (__builtin_expect(n >= PAR_MIN, 0) && ctx->threads > 1) {                           \
            ew_job j = JOB;                                                                    \
            return ew_par(ctx, j, n);                                                          \
        }                                                                                      \
        K(ctx)->CALL;                                                                          \
        return RIDGE_OK;                                                                       \
    }

/* Spans of up to 16 elements: a plain loop right here (the same IEEE operations, so the same
 * results as the kernels) costs less than reaching the kernel. Not for fma/axpy: without
 * -mfma in this file fmaf would be a libm call. */
#define SMALL(stmt)                                                                           \
    if (n <= 16) {                                                                             \
        for (size_t i = 0; i < n; i++) stmt;                                                   \
        return RIDGE_OK;                                                                       \
    }

#define P3 (ridge_ctx * ctx, float *z, const float *x, const float *y, size_t n)
EW_API(ridge_vec_add_f32, P3, z, x, y, x, PAR_MIN_MEM, add_f32(z, x, y, n),
       ((ew_job){.op = EW_ADD, .out = z, .a = x, .b = y}), SMALL(z[i] = x[i] + y[i]))
EW_API(ridge_vec_sub_f32, P3, z, x, y, x, PAR_MIN_MEM, sub_f32(z, x, y, n),
       ((ew_job){.op = EW_SUB, .out = z, .a = x, .b = y}), SMALL(z[i] = x[i] - y[i]))
EW_API(ridge_vec_mul_f32, P3, z, x, y, x, PAR_MIN_MEM, mul_f32(z, x, y, n),
       ((ew_job){.op = EW_MUL, .out = z, .a = x, .b = y}), SMALL(z[i] = x[i] * y[i]))
EW_API(ridge_vec_scale_f32, (ridge_ctx * ctx, float *y, const float *x, float a, size_t n), y, x,
       x, x, PAR_MIN_MEM, scale_f32(y, x, a, n),
       ((ew_job){.op = EW_SCALE, .out = y, .a = x, .s = a}), SMALL(y[i] = a * x[i]))
EW_API(ridge_vec_axpy_f32, (ridge_ctx * ctx, float *y, float a, const float *x, size_t n), y, x,
       x, x, PAR_MIN_MEM, axpy_f32(y, a, x, n), ((ew_job){.op = EW_AXPY, .out = y, .a = x, .s = a}), )
EW_API(ridge_vec_fma_f32,
       (ridge_ctx * ctx, float *w, const float *x, const float *y, const float *z, size_t n), w,
       x, y, z, PAR_MIN_MEM, fma_f32(w, x, y, z, n),
       ((ew_job){.op = EW_FMA, .out = w, .a = x, .b = y, .c = z}), )

#define CLAMP_PRE                                                                             \
    if (!(lo <= hi))                                                                           \
    return ridge_error(RIDGE_EINVAL, "ridge_vec_clamp_f32: lo (%g) > hi (%g) or NaN", (double)lo, \
                       (double)hi)
EW_API(ridge_vec_clamp_f32,
       (ridge_ctx * ctx, float *y, const float *x, float lo, float hi, size_t n), y, x, x, x,
       PAR_MIN_MEM, clamp_f32(y, x, lo, hi, n),
       ((ew_job){.op = EW_CLAMP, .out = y, .a = x, .s = lo, .t = hi}),
       CLAMP_PRE; SMALL(y[i] = x[i] != x[i] ? x[i] : x[i] < lo ? lo : x[i] > hi ? hi : x[i]))

/* ---- activations -------------------------------------------------------------------------- */

static const char *const act_names[RIDGE_ACT_COUNT] = {
    "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "gelu_erf", "silu", "exp", "log"};

const char *ridge_act_name(ridge_act act)
{
    return (unsigned)act < RIDGE_ACT_COUNT ? act_names[act] : "unknown";
}

static size_t act_par_min(ridge_act act)
{
    return act <= RIDGE_ACT_LEAKY_RELU ? PAR_MIN_MEM : PAR_MIN_ACT;
}

static ridge_status act_bad(const char *what, ridge_act act)
{
    return ridge_error(RIDGE_EINVAL, "%s: act = %d is not a ridge_act", what, (int)act);
}

ridge_status ridge_act_forward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *y,
                                   const float *x, size_t n)
{
    if (__builtin_expect(!EW_OK(y, x, x, x), 0))
        return ew_bad("ridge_act_forward_f32", ctx, n, y, x, x, x);
    if ((unsigned)act >= RIDGE_ACT_COUNT) return act_bad("ridge_act_forward_f32", act);
    if (__builtin_expect(n >= act_par_min(act), 0) && ctx->threads > 1)
        return ew_par(ctx, (ew_job){.op = EW_ACT, .out = y, .a = x, .s = alpha, .act = act}, n);
    K(ctx)->act[act](y, x, n, alpha);
    return RIDGE_OK;
}

ridge_status ridge_act_backward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *dx,
                                    const float *dy, const float *x, size_t n)
{
    if (__builtin_expect(!EW_OK(dx, dy, x, x), 0))
        return ew_bad("ridge_act_backward_f32", ctx, n, dx, dy, x, x);
    if ((unsigned)act >= RIDGE_ACT_COUNT) return act_bad("ridge_act_backward_f32", act);
    if (__builtin_expect(n >= act_par_min(act), 0) && ctx->threads > 1)
        return ew_par(ctx,
                      (ew_job){.op = EW_ACT_BWD, .out = dx, .a = dy, .b = x, .s = alpha, .act = act},
                      n);
    K(ctx)->act_bwd[act](dx, dy, x, n, alpha);
    return RIDGE_OK;
}

#define ACT_API(name, A)                                                                      \
    ridge_status ridge_##name##_f32(ridge_ctx *ctx, float *y, const float *x, size_t n)        \
    {                                                                                          \
        return ridge_act_forward_f32(ctx, A, 0.0f, y, x, n);                                   \
    }                                                                                          \
    ridge_status ridge_##name##_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,       \
                                             const float *x, size_t n)                         \
    {                                                                                          \
        return ridge_act_backward_f32(ctx, A, 0.0f, dx, dy, x, n);                             \
    }
ACT_API(relu, RIDGE_ACT_RELU)
ACT_API(sigmoid, RIDGE_ACT_SIGMOID)
ACT_API(tanh, RIDGE_ACT_TANH)
ACT_API(gelu, RIDGE_ACT_GELU)
ACT_API(gelu_erf, RIDGE_ACT_GELU_ERF)
ACT_API(silu, RIDGE_ACT_SILU)
ACT_API(exp, RIDGE_ACT_EXP)
ACT_API(log, RIDGE_ACT_LOG)

ridge_status ridge_leaky_relu_f32(ridge_ctx *ctx, float *y, const float *x, float alpha, size_t n)
{
    return ridge_act_forward_f32(ctx, RIDGE_ACT_LEAKY_RELU, alpha, y, x, n);
}

ridge_status ridge_leaky_relu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                           const float *x, float alpha, size_t n)
{
    return ridge_act_backward_f32(ctx, RIDGE_ACT_LEAKY_RELU, alpha, dx, dy, x, n);
}

/* ---- softmax ------------------------------------------------------------------------------ */

typedef struct sm_job {
    const ridge_vec_kernels *k;
    int op; /* 0 softmax, 1 log_softmax, 2 softmax bwd, 3 log_softmax bwd */
    float *out;
    const float *a, *b;
    size_t cols;
} sm_job;

static void sm_range(void *arg, size_t r0, size_t r1, int ith)
{
    (void)ith;
    const sm_job *j = arg;
    for (size_t r = r0; r < r1; r++) {
        size_t o = r * j->cols;
        switch (j->op) {
        case 0: j->k->softmax_row(j->out + o, j->a + o, j->cols); break;
        case 1: j->k->log_softmax_row(j->out + o, j->a + o, j->cols); break;
        case 2: j->k->softmax_bwd_row(j->out + o, j->a + o, j->b + o, j->cols); break;
        default: j->k->log_softmax_bwd_row(j->out + o, j->a + o, j->b + o, j->cols); break;
        }
    }
}

static ridge_status sm_run(ridge_ctx *ctx, const char *what, int op, float *out, const float *a,
                           const float *b, size_t rows, size_t cols)
{
    CHECK_CTX(what);
    size_t n;
    if (__builtin_mul_overflow(rows, cols, &n))
        return ridge_error(RIDGE_EOVERFLOW, "%s: rows (%zu) x cols (%zu) overflows", what, rows,
                           cols);
    if (rows && !cols) return ridge_error(RIDGE_EINVAL, "%s: cols = 0 with rows = %zu", what, rows);
    CHECK_PTR(out, what);
    CHECK_PTR(a, what);
    if (op >= 2) CHECK_PTR(b, what);
    sm_job j = {K(ctx), op, out, a, b, cols};
    if (use_threads(ctx, n, PAR_MIN_ACT) && rows > 1)
        ridge_parallel_for(ctx, rows, 1, sm_range, &j);
    else
        sm_range(&j, 0, rows, 0);
    return RIDGE_OK;
}

ridge_status ridge_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows, size_t cols)
{
    return sm_run(ctx, "ridge_softmax_f32", 0, y, x, NULL, rows, cols);
}

ridge_status ridge_log_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows,
                                   size_t cols)
{
    return sm_run(ctx, "ridge_log_softmax_f32", 1, y, x, NULL, rows, cols);
}

ridge_status ridge_softmax_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                        const float *y, size_t rows, size_t cols)
{
    return sm_run(ctx, "ridge_softmax_backward_f32", 2, dx, dy, y, rows, cols);
}

ridge_status ridge_log_softmax_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                            const float *y, size_t rows, size_t cols)
{
    return sm_run(ctx, "ridge_log_softmax_backward_f32", 3, dx, dy, y, rows, cols);
}
