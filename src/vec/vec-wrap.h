/* The status-returning forms of the value kernels, written once for vec-ref.c and
 * vec-template.h: the including file defines static sum_i32, sum_i64, dot_i32 (exact,
 * ridge_i128), min_f32 ... max_i64, argmin_f32 ... argmax_i64 and find_f32 ... find_i64; this
 * file adds the forms that write through a pointer and return ridge_status, which the entry
 * points of vec.c tail-call
 * (src/vec/vec.h), and RIDGE_VEC_WRAPPED, the table entries of the reductions (the including
 * file also defines the float sums' sum_f32_to ... dot_f64_to, mean_f32_to, mean_f64_to).
 * No include guard. */
#include <stdint.h>

#include "core/internal.h"

static inline ridge_status i128_to(ridge_i128 s, int64_t *out, const char *what)
{
    if (s > INT64_MAX || s < INT64_MIN) return ridge_vec_overflow(what);
    *out = (int64_t)s;
    return RIDGE_OK;
}
/* RIDGE_VEC_SHORT_I32(n) / _I64(n): the including file's sum kernel does spans this short
 * without a call (then the wrapper below has no stack frame either), through
 * RIDGE_VEC_SUM_I64_SHORT_TO(x, n, out, what) for int64 (default: the i128 kernel); longer
 * ones go through an out-of-line wrapper. */
#ifndef RIDGE_VEC_SUM_I64_SHORT_TO
#define RIDGE_VEC_SUM_I64_SHORT_TO(x, n, out, what) i128_to(sum_i64(x, n), out, what)
#endif
#define RIDGE_VEC_INT_TO(name, T, SHORT, SHORT_TO, Y, YA)                                     \
    static RIDGE_NOIPA ridge_status name##_long_to( /* noipa: keep ctx (vec.h) */              \
        RIDGE_VEC_CTX, const T *x Y, size_t n, int64_t *out, const char *what)                 \
    {                                                                                          \
        return i128_to(name(x YA, n), out, what);                                              \
    }                                                                                          \
    static ridge_status name##_to(RIDGE_VEC_CTX, const T *x Y, size_t n, int64_t *out,         \
                                  const char *what)                                            \
    {                                                                                          \
        if (!(SHORT)) return name##_long_to(ctx, x YA, n, out, what);                          \
        return SHORT_TO;                                                                       \
    }
#define RIDGE_VEC_NOY
#define RIDGE_VEC_Y , const int32_t *y
#define RIDGE_VEC_YA , y
RIDGE_VEC_INT_TO(sum_i32, int32_t, RIDGE_VEC_SHORT_I32(n), i128_to(sum_i32(x, n), out, what),
                 RIDGE_VEC_NOY, RIDGE_VEC_NOY)
RIDGE_VEC_INT_TO(sum_i64, int64_t, RIDGE_VEC_SHORT_I64(n),
                 RIDGE_VEC_SUM_I64_SHORT_TO(x, n, out, what), RIDGE_VEC_NOY, RIDGE_VEC_NOY)
RIDGE_VEC_INT_TO(dot_i32, int32_t, 0, i128_to(dot_i32(x, y, n), out, what), RIDGE_VEC_Y,
                 RIDGE_VEC_YA)
#undef RIDGE_VEC_INT_TO

/* RIDGE_VEC_ARG_SHORT(T, n): the including file's argmin/argmax of spans this short make no
 * call, and the longer ones are a tail call of its arg<fn>_other_to (so that the short path
 * has no stack frame); default: one path. */
#ifdef RIDGE_VEC_ARG_SHORT
#define RIDGE_VEC_ARG_TO(fn, T)                                                               \
    if (!__builtin_expect(RIDGE_VEC_ARG_SHORT(T, n), 1)) return arg##fn##_other_to(ctx, x, n, out);
#else
#define RIDGE_VEC_ARG_TO(fn, T)
#endif
#define RIDGE_VEC_MINMAX_TO(i, fn, f, T)                                                      \
    static ridge_status fn##_to(RIDGE_VEC_CTX, const void *x, size_t n, void *out)             \
    {                                                                                          \
        *(T *)out = fn((const T *)x, n);                                                       \
        return RIDGE_OK;                                                                       \
    }                                                                                          \
    static ridge_status arg##fn##_to(RIDGE_VEC_CTX, const void *x, size_t n, size_t *out)      \
    {                                                                                          \
        RIDGE_VEC_ARG_TO(fn, T)                                                                \
        *out = arg##fn((const T *)x, n);                                                       \
        return RIDGE_OK;                                                                       \
    }
RIDGE_VEC_MINMAX(RIDGE_VEC_MINMAX_TO)
#undef RIDGE_VEC_MINMAX_TO

#define RIDGE_VEC_MINMAX_FN(i, fn, f, T) fn##_to,
#define RIDGE_VEC_ARGMINMAX_FN(i, fn, f, T) arg##fn##_to,
#define RIDGE_VEC_WRAPPED                                                                     \
    .sum_f32 = sum_f32_to, .dot_f32 = dot_f32_to, .sum_f64 = sum_f64_to,                      \
    .dot_f64 = dot_f64_to, .mean_f32 = mean_f32_to, .mean_f64 = mean_f64_to,                   \
    .sum_i32 = sum_i32, .sum_i64 = sum_i64, .dot_i32 = dot_i32, .sum_i32_to = sum_i32_to,      \
    .sum_i64_to = sum_i64_to, .dot_i32_to = dot_i32_to, .min_f32 = min_f32,                    \
    .max_f32 = max_f32, .min_f64 = min_f64, .max_f64 = max_f64, .min_i32 = min_i32,            \
    .max_i32 = max_i32, .min_i64 = min_i64, .max_i64 = max_i64,                                \
    .minmax = {RIDGE_VEC_MINMAX(RIDGE_VEC_MINMAX_FN)},                                         \
    .argminmax = {RIDGE_VEC_MINMAX(RIDGE_VEC_ARGMINMAX_FN)}, .find_f32 = find_f32,             \
    .find_f64 = find_f64, .find_i32 = find_i32, .find_i64 = find_i64
