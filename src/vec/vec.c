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

/* The table of an ISA. A context's isa is checked and resolved to ref, avx2 or avx512 when it
 * is created, so an entry point finds its kernels with one indexed load and no test. */
static const ridge_vec_kernels *const tables[] = {&ridge_vec_kernels_ref, &ridge_vec_kernels_avx2,
                                                  &ridge_vec_kernels_avx512};

const ridge_vec_kernels *ridge_vec_kernels_for(ridge_isa isa)
{
    return tables[(unsigned)isa <= RIDGE_ISA_AVX512 ? (unsigned)isa : 0];
}

static inline const ridge_vec_kernels *K(const ridge_ctx *ctx) { return tables[ctx->isa]; }

/* return the kernel `e` (src/vec/vec.h, RIDGE_VEC_DIRECT; table entry `member`) of ctx's ISA
 * applied to ARGS: for AVX2 and AVX-512 a compare and a direct tail jump, not the table's
 * indirect one (docs/PERFORMANCE.md, vec, session 4). AVX-512, the project's machine kind, is
 * tested first: on Zen 4, a 10-element sum and axpy ran 1.12-1.15x faster so, while AVX2
 * (forced on the same machine) lost 1.16x on the sum (docs/PERFORMANCE.md, session 8). */
#define KCALL(ctx, e, member, ARGS)                                                           \
    do {                                                                                       \
        if (__builtin_expect((ctx)->isa == RIDGE_ISA_AVX512, 1))                               \
            return ridge_vec_##e##__avx512 ARGS;                                               \
        if ((ctx)->isa == RIDGE_ISA_AVX2) return ridge_vec_##e##__avx2 ARGS;                   \
        return ridge_vec_kernels_ref.member ARGS;                                              \
    } while (0)

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

/* The shape of every entry point: one predicted branch over all the argument checks (this
 * function, out of line, then names the bad argument), the threaded or multi-block path out
 * of line, and otherwise a tail call to the kernel, so that a small call sets up no stack
 * frame: checks, one indexed load, one indirect jump and the work (docs/PERFORMANCE.md). */
#define UNLIKELY(c) __builtin_expect(!!(c), 0)
/* NULL tests combined without branches (| not ||), so the checks are one branch */
#define NUL(p) ((p) == NULL)
/* whether any of three pointers is NULL: the least of them as integers is 0 (two compares and
 * conditional moves, fewer instructions than three tests combined) */
static inline int any_null3(const void *a, const void *b, const void *c)
{
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b, z = (uintptr_t)c;
    x = y < x ? y : x;
    return (z < x ? z : x) == 0;
}

static __attribute__((noinline, cold)) ridge_status bad_args(const char *what, int nonempty,
                                                            const ridge_ctx *ctx, size_t n,
                                                            const void *out, const void *a,
                                                            const void *b)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", what);
    if (nonempty && n == 0)
        return ridge_error(RIDGE_EINVAL, "%s: an empty span (n = 0) has no result", what);
    const char *which = !out ? "the output" : !a ? "the first input" : !b ? "the second input"
                                                                      : "the third input";
    return ridge_error(RIDGE_EINVAL, "%s: %s is NULL with n = %zu", what, which, n);
}

ridge_status ridge_vec_overflow(const char *what)
{
    return ridge_error(RIDGE_EOVERFLOW, "%s: the result does not fit in int64", what);
}

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
    float f;
    double d;
    switch (j->type) {
    case 0: j->k->sum_f32(NULL, (const float *)j->x + i, len, &f); return f;
    case 1:
        j->k->dot_f32(NULL, (const float *)j->x + i, (const float *)j->y + i, len, &f);
        return f;
    case 2: j->k->sum_f64(NULL, (const double *)j->x + i, len, &d); return d;
    default:
        j->k->dot_f64(NULL, (const double *)j->x + i, (const double *)j->y + i, len, &d);
        return d;
    }
}

static void fsum_range(void *arg, size_t begin, size_t end, int ith)
{
    (void)ith;
    fsum_job *j = arg;
    for (size_t b = begin; b < end; b++) j->partial[b] = block_sum(j, b);
}

/* The fixed scheme: block sums (bit-identical on every ISA) added in block order in double. */
static __attribute__((noinline)) ridge_status fsum(ridge_ctx *ctx, int type, const void *x,
                                                  const void *y, size_t n, double *out)
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

static __attribute__((noinline)) ridge_status fsum_f32(ridge_ctx *ctx, int type, const float *x,
                                                      const float *y, size_t n, float *out,
                                                      int mean)
{
    double s;
    ridge_status st = fsum(ctx, type, x, y, n, &s);
    if (st == RIDGE_OK) *out = mean ? (float)((double)(float)s / (double)n) : (float)s;
    return st;
}

static __attribute__((noinline)) ridge_status fsum_f64(ridge_ctx *ctx, int type, const double *x,
                                                      const double *y, size_t n, double *out,
                                                      int mean)
{
    ridge_status st = fsum(ctx, type, x, y, n, out);
    if (st == RIDGE_OK && mean) *out /= (double)n;
    return st;
}

/* Spans of 1 .. one block (up to 2048 floats / 1024 doubles) with valid pointers pass one
 * branch (n - 1 < BLOCK also rules out n = 0) and tail-call the kernel; everything else (the
 * errors, n = 0, longer spans) goes to name_slow, which takes the same arguments, so that it is
 * reached by a tail call too and the entry point has no stack frame. mean: n > 0. */
#define FSUM_API(name, T, F, type, mean, Y, YF, ybad, yarg, kern, KARGS)                      \
    static __attribute__((noinline)) ridge_status name##_slow(ridge_ctx *ctx, const T *x Y,    \
                                                            size_t n, T *out)                  \
    {                                                                                          \
        if (NUL(ctx) | NUL(out) | (mean && !n) | ((NUL(x) ybad) & (n != 0)))                   \
            return bad_args(#name, mean, ctx, n, out, x, yarg);                                \
        if (n <= BLOCK_##F) return K(ctx)->kern KARGS;                                         \
        return fsum_##F(ctx, type, x, yarg, n, out, mean);                                     \
    }                                                                                          \
    ridge_status name(ridge_ctx *ctx, const T *x Y, size_t n, T *out)                          \
    {                                                                                          \
        if (UNLIKELY(any_null3(ctx, out, x) ybad | (n - 1 >= BLOCK_##F)))                      \
            return name##_slow(ctx, x YF, n, out);                                             \
        KCALL(ctx, kern, kern, KARGS);                                                         \
    }
#define BLOCK_f32 RIDGE_VEC_BLOCK_F32
#define BLOCK_f64 RIDGE_VEC_BLOCK_F64
#define NOY
#define DOTY(T) , const T *y
#define YF , y
#define YBAD | NUL(y)
FSUM_API(ridge_vec_sum_f32, float, f32, 0, 0, NOY, NOY, , x, sum_f32, (ctx, x, n, out))
FSUM_API(ridge_vec_sumsq_f32, float, f32, 1, 0, NOY, NOY, , x, dot_f32, (ctx, x, x, n, out))
FSUM_API(ridge_vec_dot_f32, float, f32, 1, 0, DOTY(float), YF, YBAD, y, dot_f32,
         (ctx, x, y, n, out))
FSUM_API(ridge_vec_mean_f32, float, f32, 0, 1, NOY, NOY, , x, mean_f32, (ctx, x, n, out))
FSUM_API(ridge_vec_sum_f64, double, f64, 2, 0, NOY, NOY, , x, sum_f64, (ctx, x, n, out))
FSUM_API(ridge_vec_sumsq_f64, double, f64, 3, 0, NOY, NOY, , x, dot_f64, (ctx, x, x, n, out))
FSUM_API(ridge_vec_dot_f64, double, f64, 3, 0, DOTY(double), YF, YBAD, y, dot_f64,
         (ctx, x, y, n, out))
FSUM_API(ridge_vec_mean_f64, double, f64, 2, 1, NOY, NOY, , x, mean_f64, (ctx, x, n, out))

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

static ridge_i128 isum_any(ridge_ctx *ctx, int type, const void *x, const void *y, size_t n)
{
    isum_job j;
    j.k = K(ctx), j.x = x, j.y = y, j.type = type;
    if (!use_threads(ctx, n, PAR_MIN_MEM) || ctx->threads > 64) return isum_run(&j, 0, n);
    ridge_i128 s = 0;
    for (int t = 0; t < ctx->threads; t++) j.part[t] = 0;
    ridge_parallel_for(ctx, n, PAR_GRAIN, isum_range, &j);
    for (int t = 0; t < ctx->threads; t++) s += j.part[t];
    return s;
}

static __attribute__((noinline)) ridge_status isum(ridge_ctx *ctx, const char *what, int type,
                                                  const void *x, const void *y, size_t n,
                                                  int64_t *out)
{
    ridge_i128 s = isum_any(ctx, type, x, y, n);
    if (s > INT64_MAX || s < INT64_MIN) return ridge_vec_overflow(what);
    *out = (int64_t)s;
    return RIDGE_OK;
}

/* Spans of 1 .. below the threading threshold with valid pointers are one branch and a tail
 * call of the kernel (CALL, a statement); the rest (errors, n = 0, threads) goes to name_slow,
 * with the same arguments (FSUM_API). int64 products have no kernel: their CALL is name_slow too. */
#define ISUM_API(name, T, type, Y, YF, ybad, yarg, CALL)                                      \
    static __attribute__((noinline)) ridge_status name##_slow(ridge_ctx *ctx, const T *x Y,    \
                                                            size_t n, int64_t *out)            \
    {                                                                                          \
        if (NUL(ctx) | NUL(out) | ((NUL(x) ybad) & (n != 0)))                                  \
            return bad_args(#name, 0, ctx, n, out, x, yarg);                                   \
        return isum(ctx, #name, type, x, yarg, n, out);                                        \
    }                                                                                          \
    ridge_status name(ridge_ctx *ctx, const T *x Y, size_t n, int64_t *out)                    \
    {                                                                                          \
        if (UNLIKELY(any_null3(ctx, out, x) ybad | (n - 1 >= PAR_MIN_MEM - 1)))                \
            return name##_slow(ctx, x YF, n, out);                                             \
        CALL;                                                                                  \
    }
ISUM_API(ridge_vec_sum_i32, int32_t, 0, NOY, NOY, , x,
         KCALL(ctx, sum_i32_to, sum_i32_to, (ctx, x, n, out, "ridge_vec_sum_i32")))
ISUM_API(ridge_vec_sumsq_i32, int32_t, 1, NOY, NOY, , x,
         KCALL(ctx, dot_i32_to, dot_i32_to, (ctx, x, x, n, out, "ridge_vec_sumsq_i32")))
ISUM_API(ridge_vec_dot_i32, int32_t, 1, DOTY(int32_t), YF, YBAD, y,
         KCALL(ctx, dot_i32_to, dot_i32_to, (ctx, x, y, n, out, "ridge_vec_dot_i32")))
ISUM_API(ridge_vec_sum_i64, int64_t, 2, NOY, NOY, , x,
         KCALL(ctx, sum_i64_to, sum_i64_to, (ctx, x, n, out, "ridge_vec_sum_i64")))
ISUM_API(ridge_vec_sumsq_i64, int64_t, 3, NOY, NOY, , x,
         return ridge_vec_sumsq_i64_slow(ctx, x, n, out))
ISUM_API(ridge_vec_dot_i64, int64_t, 3, DOTY(int64_t), YF, YBAD, y,
         return ridge_vec_dot_i64_slow(ctx, x, y, n, out))

/* exact sum / n rounded once: the i128 sum is split so that hi + lo is exact in two doubles */
static double i128_div(ridge_i128 s, size_t n)
{
    ridge_i128 q = s / (ridge_i128)n, r = s % (ridge_i128)n;
    return (double)q + (double)r / (double)n;
}

#define IMEAN_API(name, T, type)                                                              \
    ridge_status name(ridge_ctx *ctx, const T *x, size_t n, double *out)                       \
    {                                                                                          \
        if (UNLIKELY(NUL(ctx) | NUL(out) | (n == 0) | NUL(x)))                                 \
            return bad_args(#name, 1, ctx, n, out, x, x);                                   \
        *out = i128_div(isum_any(ctx, type, x, NULL, n), n);                                   \
        return RIDGE_OK;                                                                       \
    }
IMEAN_API(ridge_vec_mean_i32, int32_t, 0)
IMEAN_API(ridge_vec_mean_i64, int64_t, 2)

/* ---- min / max / argmin / argmax ---------------------------------------------------------- */

typedef struct mm_job {
    const ridge_vec_kernels *k;
    const void *x;
    int op; /* RIDGE_VEC_MINMAX index */
    union {
        float f32;
        double f64;
        int32_t i32;
        int64_t i64;
    } part[64];
    unsigned char have[64]; /* the thread got a non-empty block */
} mm_job;

static void mm_range(void *arg, size_t b, size_t e, int ith)
{
    mm_job *j = arg;
    j->have[ith] = 1;
    switch (j->op) {
#define X(i, fn, f, T)                                                                        \
    case i: j->part[ith].f = j->k->fn((const T *)j->x + b, e - b); break;
        RIDGE_VEC_MINMAX(X)
#undef X
    }
}

/* The threaded path: the per-thread results are combined by the same kernel (NaN and order
 * semantics carry over); argmin/argmax then find the first index of the result. */
#define MM_API(i, fn, f, T)                                                                   \
    static __attribute__((noinline)) ridge_status mm_##fn(ridge_ctx *ctx, const T *x, size_t n, \
                                                         T *out, size_t *idx)                  \
    {                                                                                          \
        const ridge_vec_kernels *k = K(ctx);                                                   \
        mm_job j = {k, x, i, {{0}}, {0}};                                                      \
        ridge_parallel_for(ctx, n, PAR_GRAIN, mm_range, &j);                                   \
        size_t parts = 0;                                                                      \
        T v[64];                                                                               \
        for (int t = 0; t < ctx->threads; t++)                                                 \
            if (j.have[t]) v[parts++] = j.part[t].f;                                           \
        T m = k->fn(v, parts);                                                                 \
        if (out) *out = m;                                                                     \
        if (idx) *idx = k->find_##f(x, n, m);                                                  \
        return RIDGE_OK;                                                                       \
    }                                                                                          \
    static __attribute__((noinline)) ridge_status fn##_slow(ridge_ctx *ctx, const T *x,        \
                                                          size_t n, T *out, size_t *idx,       \
                                                          const char *what)                    \
    {                                                                                          \
        void *o = idx ? (void *)idx : (void *)out;                                             \
        if (NUL(ctx) | NUL(o) | (n == 0) | NUL(x)) return bad_args(what, 1, ctx, n, o, x, x);  \
        if (n >= PAR_MIN_MEM && ctx->threads > 1 && ctx->threads <= 64)                        \
            return mm_##fn(ctx, x, n, out, idx);                                               \
        if (idx) return K(ctx)->argminmax[i](ctx, x, n, idx);                                  \
        return K(ctx)->minmax[i](ctx, x, n, out);                                              \
    }                                                                                          \
    /* one branch for the checks and n < the threading threshold, else fn_slow (FSUM_API) */  \
    ridge_status ridge_vec_##fn(ridge_ctx *ctx, const T *x, size_t n, T *out)                  \
    {                                                                                          \
        if (UNLIKELY(NUL(ctx) | NUL(out) | NUL(x) | (n - 1 >= PAR_MIN_MEM - 1)))               \
            return fn##_slow(ctx, x, n, out, NULL, "ridge_vec_" #fn);                          \
        KCALL(ctx, fn, minmax[i], (ctx, x, n, out));                                           \
    }                                                                                          \
    ridge_status ridge_vec_arg##fn(ridge_ctx *ctx, const T *x, size_t n, size_t *out)          \
    {                                                                                          \
        if (UNLIKELY(NUL(ctx) | NUL(out) | NUL(x) | (n - 1 >= PAR_MIN_MEM - 1)))               \
            return fn##_slow(ctx, x, n, NULL, out, "ridge_vec_arg" #fn);                       \
        KCALL(ctx, arg##fn, argminmax[i], (ctx, x, n, out));                                   \
    }
RIDGE_VEC_MINMAX(MM_API)

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
    case EW_ADD: j->k->add_f32(NULL, o, a, b, n); break;
    case EW_SUB: j->k->sub_f32(NULL, o, a, b, n); break;
    case EW_MUL: j->k->mul_f32(NULL, o, a, b, n); break;
    case EW_SCALE: j->k->scale_f32(NULL, o, a, j->s, n); break;
    case EW_AXPY: j->k->axpy_f32(NULL, o, j->s, a, n); break;
    case EW_FMA: j->k->fma_f32(NULL, o, a, b, c, n); break;
    case EW_CLAMP: j->k->clamp_f32(NULL, o, a, j->s, j->t, n); break;
    case EW_ACT: j->k->act[j->act](o, a, n, j->s); break;
    case EW_ACT_BWD: j->k->act_bwd[j->act](o, a, b, n, j->s); break;
    }
}

static ridge_status ew_par(ridge_ctx *ctx, ew_job *j, size_t n)
{
    j->k = K(ctx);
    ridge_parallel_for(ctx, n, PAR_GRAIN, ew_range, j);
    return RIDGE_OK;
}

/* Elementwise entry point: valid pointers, 1 <= n < the threading threshold and PRE (a
 * condition on the other arguments) pass one branch and tail-call the kernel; the rest goes to
 * name_slow (same parameters, so a tail call too): the errors, then n = 0 or one thread
 * (kernel) or the threaded path. */
#define EW_API(name, PARAMS, ARGS, o, a, b, c, CALL, KARGS, JOB, PRE, PRE_ERR)                \
    static __attribute__((noinline)) ridge_status name##_slow PARAMS                           \
    {                                                                                          \
        if (NUL(ctx) | ((n != 0) & (NUL(o) | NUL(a) | NUL(b) | NUL(c))))                       \
            return bad_args(#name, 0, ctx, n, o, a, b);                                        \
        if (!(PRE)) return PRE_ERR;                                                            \
        if (n >= PAR_MIN_MEM && ctx->threads > 1) {                                            \
            ew_job j = JOB;                                                                    \
            return ew_par(ctx, &j, n);                                                         \
        }                                                                                      \
        return K(ctx)->CALL KARGS;                                                             \
    }                                                                                          \
    ridge_status name PARAMS                                                                   \
    {                                                                                          \
        if (UNLIKELY(NUL(ctx) | NUL(o) | NUL(a) | NUL(b) | NUL(c) |                            \
                     (n - 1 >= PAR_MIN_MEM - 1) | !(PRE)))                                     \
            return name##_slow ARGS;                                                           \
        KCALL(ctx, CALL, CALL, KARGS);                                                         \
    }

#define P3 (ridge_ctx * ctx, float *z, const float *x, const float *y, size_t n)
#define A3 (ctx, z, x, y, n)
EW_API(ridge_vec_add_f32, P3, A3, z, x, y, x, add_f32, (ctx, z, x, y, n),
       ((ew_job){.op = EW_ADD, .out = z, .a = x, .b = y}), 1, RIDGE_OK)
EW_API(ridge_vec_sub_f32, P3, A3, z, x, y, x, sub_f32, (ctx, z, x, y, n),
       ((ew_job){.op = EW_SUB, .out = z, .a = x, .b = y}), 1, RIDGE_OK)
EW_API(ridge_vec_mul_f32, P3, A3, z, x, y, x, mul_f32, (ctx, z, x, y, n),
       ((ew_job){.op = EW_MUL, .out = z, .a = x, .b = y}), 1, RIDGE_OK)
EW_API(ridge_vec_scale_f32, (ridge_ctx * ctx, float *y, const float *x, float a, size_t n),
       (ctx, y, x, a, n), y, x, x, x, scale_f32, (ctx, y, x, a, n),
       ((ew_job){.op = EW_SCALE, .out = y, .a = x, .s = a}), 1, RIDGE_OK)
EW_API(ridge_vec_axpy_f32, (ridge_ctx * ctx, float *y, float a, const float *x, size_t n),
       (ctx, y, a, x, n), y, x, x, x, axpy_f32, (ctx, y, a, x, n),
       ((ew_job){.op = EW_AXPY, .out = y, .a = x, .s = a}), 1, RIDGE_OK)
EW_API(ridge_vec_fma_f32,
       (ridge_ctx * ctx, float *w, const float *x, const float *y, const float *z, size_t n),
       (ctx, w, x, y, z, n), w, x, y, z, fma_f32, (ctx, w, x, y, z, n),
       ((ew_job){.op = EW_FMA, .out = w, .a = x, .b = y, .c = z}), 1, RIDGE_OK)

#define CLAMP_ERR                                                                             \
    ridge_error(RIDGE_EINVAL, "ridge_vec_clamp_f32: lo (%g) > hi (%g) or NaN", (double)lo,     \
                (double)hi)
EW_API(ridge_vec_clamp_f32,
       (ridge_ctx * ctx, float *y, const float *x, float lo, float hi, size_t n),
       (ctx, y, x, lo, hi, n), y, x, x, x, clamp_f32, (ctx, y, x, lo, hi, n),
       ((ew_job){.op = EW_CLAMP, .out = y, .a = x, .s = lo, .t = hi}), lo <= hi, CLAMP_ERR)

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

static __attribute__((noinline, cold)) ridge_status act_bad(const char *what, ridge_ctx *ctx,
                                                           ridge_act act, size_t n, float *out,
                                                           const float *a, const float *b)
{
    if (ctx && (unsigned)act >= RIDGE_ACT_COUNT)
        return ridge_error(RIDGE_EINVAL, "%s: act = %d is not a ridge_act", what, (int)act);
    return bad_args(what, 0, ctx, n, out, a, b);
}

/* The threaded path of both directions: b is NULL forward (out = f(a)), x backward
 * (out = a f'(b)). */
static __attribute__((noinline)) ridge_status act_par(ridge_ctx *ctx, ridge_act act, float alpha,
                                                     float *out, const float *a, const float *b,
                                                     size_t n)
{
    ew_job j = {.op = b ? EW_ACT_BWD : EW_ACT, .out = out, .a = a, .b = b, .s = alpha, .act = act};
    return ew_par(ctx, &j, n);
}

/* Inlined into every named entry point, where act is a constant. */
static inline ridge_status act_fwd(const char *what, ridge_ctx *ctx, ridge_act act, float alpha,
                                   float *y, const float *x, size_t n)
{
    if (UNLIKELY(NUL(ctx) | ((unsigned)act >= RIDGE_ACT_COUNT) | ((n != 0) & (NUL(y) | NUL(x)))))
        return act_bad(what, ctx, act, n, y, x, x);
    if (UNLIKELY(n >= act_par_min(act)) && ctx->threads > 1)
        return act_par(ctx, act, alpha, y, x, NULL, n);
    return K(ctx)->act[act](y, x, n, alpha);
}

static inline ridge_status act_bwd(const char *what, ridge_ctx *ctx, ridge_act act, float alpha,
                                   float *dx, const float *dy, const float *x, size_t n)
{
    if (UNLIKELY(NUL(ctx) | ((unsigned)act >= RIDGE_ACT_COUNT) |
                 ((n != 0) & (NUL(dx) | NUL(dy) | NUL(x)))))
        return act_bad(what, ctx, act, n, dx, dy, x);
    if (UNLIKELY(n >= act_par_min(act)) && ctx->threads > 1)
        return act_par(ctx, act, alpha, dx, dy, x, n);
    return K(ctx)->act_bwd[act](dx, dy, x, n, alpha);
}

ridge_status ridge_act_forward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *y,
                                   const float *x, size_t n)
{
    return act_fwd("ridge_act_forward_f32", ctx, act, alpha, y, x, n);
}

ridge_status ridge_act_backward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *dx,
                                    const float *dy, const float *x, size_t n)
{
    return act_bwd("ridge_act_backward_f32", ctx, act, alpha, dx, dy, x, n);
}

#define ACT_API(name, A)                                                                      \
    ridge_status ridge_##name##_f32(ridge_ctx *ctx, float *y, const float *x, size_t n)        \
    {                                                                                          \
        return act_fwd("ridge_" #name "_f32", ctx, A, 0.0f, y, x, n);                          \
    }                                                                                          \
    ridge_status ridge_##name##_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,       \
                                             const float *x, size_t n)                         \
    {                                                                                          \
        return act_bwd("ridge_" #name "_backward_f32", ctx, A, 0.0f, dx, dy, x, n);            \
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
    return act_fwd("ridge_leaky_relu_f32", ctx, RIDGE_ACT_LEAKY_RELU, alpha, y, x, n);
}

ridge_status ridge_leaky_relu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                           const float *x, float alpha, size_t n)
{
    return act_bwd("ridge_leaky_relu_backward_f32", ctx, RIDGE_ACT_LEAKY_RELU, alpha, dx, dy, x,
                   n);
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

static __attribute__((noinline)) ridge_status sm_rows(ridge_ctx *ctx, int op, float *out,
                                                     const float *a, const float *b, size_t rows,
                                                     size_t cols)
{
    sm_job j = {K(ctx), op, out, a, b, cols};
    if (use_threads(ctx, rows * cols, PAR_MIN_ACT) && rows > 1)
        ridge_parallel_for(ctx, rows, 1, sm_range, &j);
    else
        sm_range(&j, 0, rows, 0);
    return RIDGE_OK;
}

static __attribute__((noinline, cold)) ridge_status sm_bad(const char *what, ridge_ctx *ctx,
                                                          float *out, const float *a,
                                                          const float *b, size_t rows,
                                                          size_t cols)
{
    size_t n;
    if (ctx && __builtin_mul_overflow(rows, cols, &n))
        return ridge_error(RIDGE_EOVERFLOW, "%s: rows (%zu) x cols (%zu) overflows", what, rows,
                           cols);
    if (ctx && rows && !cols)
        return ridge_error(RIDGE_EINVAL, "%s: cols = 0 with rows = %zu", what, rows);
    return bad_args(what, 0, ctx, rows * cols, out, a, b);
}

/* A single row (the common case of a small call) is one kernel call. b: the second input of
 * the backward ops (op >= 2), else a. */
static inline ridge_status sm_run(ridge_ctx *ctx, const char *what, int op, float *out,
                                  const float *a, const float *b, size_t rows, size_t cols)
{
    size_t n;
    if (UNLIKELY(NUL(ctx) | __builtin_mul_overflow(rows, cols, &n) | ((rows != 0) & (cols == 0)) |
                 ((n != 0) & (NUL(out) | NUL(a) | NUL(b)))))
        return sm_bad(what, ctx, out, a, b, rows, cols);
    if (rows == 1) {
        switch (op) {
        case 0: KCALL(ctx, softmax_row, softmax_row, (out, a, cols));
        case 1: KCALL(ctx, log_softmax_row, log_softmax_row, (out, a, cols));
        case 2: KCALL(ctx, softmax_bwd_row, softmax_bwd_row, (out, a, b, cols));
        default: KCALL(ctx, log_softmax_bwd_row, log_softmax_bwd_row, (out, a, b, cols));
        }
    }
    return sm_rows(ctx, op, out, a, b, rows, cols);
}

ridge_status ridge_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows, size_t cols)
{
    return sm_run(ctx, "ridge_softmax_f32", 0, y, x, x, rows, cols);
}

ridge_status ridge_log_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows,
                                   size_t cols)
{
    return sm_run(ctx, "ridge_log_softmax_f32", 1, y, x, x, rows, cols);
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
