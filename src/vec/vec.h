/* The vec family's internal interface: one table of kernels per ISA (vec-ref.c, vec-avx2.c,
 * vec-avx512.c), picked by vec.c from ridge_ctx_isa(). Kernels work on one contiguous range
 * and know nothing of threads; vec.c validates arguments, splits large spans over the pool
 * and combines the partial results. */
#ifndef RIDGE_VEC_INTERNAL_H
#define RIDGE_VEC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/vec.h"

/* The fixed float summation scheme (include/ridge/vec.h): blocks of BLOCK elements, element i
 * of a block in lane i mod LANES, lanes folded pairwise. Every ISA implements exactly this,
 * so the block sums are bit-identical across ISAs. */
#define RIDGE_VEC_BLOCK_F32 2048
#define RIDGE_VEC_LANES_F32 64
#define RIDGE_VEC_BLOCK_F64 1024
#define RIDGE_VEC_LANES_F64 32

typedef __int128 ridge_i128;

/* The min/max kernels, in the order of the minmax/argminmax arrays below: X(index, kernel,
 * find kernel's type suffix, element type). */
#define RIDGE_VEC_MINMAX(X)                                                                   \
    X(0, min_f32, f32, float)                                                                  \
    X(1, max_f32, f32, float)                                                                  \
    X(2, min_f64, f64, double)                                                                 \
    X(3, max_f64, f64, double)                                                                 \
    X(4, min_i32, i32, int32_t)                                                                \
    X(5, max_i32, i32, int32_t)                                                                \
    X(6, min_i64, i64, int64_t)                                                                \
    X(7, max_i64, i64, int64_t)

/* Kernels that an entry point may hand a whole call to return ridge_status (RIDGE_OK unless
 * said), so that the entry point ends in a tail call: a small call then costs the argument
 * checks, one indirect jump and the work, with no stack frame in between. Those take the
 * entry point's ctx first (RIDGE_VEC_CTX, unused; callers other than an entry point pass
 * NULL), so that the entry point's arguments are already in the kernel's registers and the
 * tail call moves none (measured: about 10% of a 10-element call). */
#define RIDGE_VEC_CTX const ridge_ctx *ctx __attribute__((unused))
typedef struct ridge_vec_kernels {
    const char *name; /* "vec-avx2" */
    /* one block (n <= RIDGE_VEC_BLOCK_*) of the fixed scheme into *out; dot uses
     * fma(x, y, acc); mean is that sum / n (n >= 1) */
    ridge_status (*sum_f32)(RIDGE_VEC_CTX, const float *x, size_t n, float *out);
    ridge_status (*dot_f32)(RIDGE_VEC_CTX, const float *x, const float *y, size_t n, float *out);
    ridge_status (*sum_f64)(RIDGE_VEC_CTX, const double *x, size_t n, double *out);
    ridge_status (*dot_f64)(RIDGE_VEC_CTX, const double *x, const double *y, size_t n, double *out);
    ridge_status (*mean_f32)(RIDGE_VEC_CTX, const float *x, size_t n, float *out);
    ridge_status (*mean_f64)(RIDGE_VEC_CTX, const double *x, size_t n, double *out);
    /* exact integer sums of any n */
    ridge_i128 (*sum_i32)(const int32_t *x, size_t n);
    ridge_i128 (*sum_i64)(const int64_t *x, size_t n);
    ridge_i128 (*dot_i32)(const int32_t *x, const int32_t *y, size_t n);
    /* the same into *out, or RIDGE_EOVERFLOW (ridge_vec_overflow(what)) if it is not an int64 */
    ridge_status (*sum_i32_to)(RIDGE_VEC_CTX, const int32_t *x, size_t n, int64_t *out,
                               const char *what);
    ridge_status (*sum_i64_to)(RIDGE_VEC_CTX, const int64_t *x, size_t n, int64_t *out,
                               const char *what);
    ridge_status (*dot_i32_to)(RIDGE_VEC_CTX, const int32_t *x, const int32_t *y, size_t n,
                               int64_t *out, const char *what);
    /* n >= 1; float ones return NaN if any element is NaN */
    float (*min_f32)(const float *x, size_t n);
    float (*max_f32)(const float *x, size_t n);
    double (*min_f64)(const double *x, size_t n);
    double (*max_f64)(const double *x, size_t n);
    int32_t (*min_i32)(const int32_t *x, size_t n);
    int32_t (*max_i32)(const int32_t *x, size_t n);
    int64_t (*min_i64)(const int64_t *x, size_t n);
    int64_t (*max_i64)(const int64_t *x, size_t n);
    /* the same (RIDGE_VEC_MINMAX order) into *out, and the index of the first element equal
     * to it (argmin/argmax); x and out point to the kernel's element type */
    ridge_status (*minmax[8])(RIDGE_VEC_CTX, const void *x, size_t n, void *out);
    ridge_status (*argminmax[8])(RIDGE_VEC_CTX, const void *x, size_t n, size_t *out);
    /* the index of the first element == v (the first NaN if v is NaN), or n if none */
    size_t (*find_f32)(const float *x, size_t n, float v);
    size_t (*find_f64)(const double *x, size_t n, double v);
    size_t (*find_i32)(const int32_t *x, size_t n, int32_t v);
    size_t (*find_i64)(const int64_t *x, size_t n, int64_t v);
    /* elementwise, float */
    ridge_status (*add_f32)(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n);
    ridge_status (*sub_f32)(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n);
    ridge_status (*mul_f32)(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n);
    ridge_status (*scale_f32)(RIDGE_VEC_CTX, float *y, const float *x, float a, size_t n);
    ridge_status (*axpy_f32)(RIDGE_VEC_CTX, float *y, float a, const float *x, size_t n);
    ridge_status (*fma_f32)(RIDGE_VEC_CTX, float *w, const float *x, const float *y,
                            const float *z, size_t n);
    ridge_status (*clamp_f32)(RIDGE_VEC_CTX, float *y, const float *x, float lo, float hi,
                              size_t n);
    /* activations: y = f(x), dx = dy f'(x); alpha for leaky relu */
    ridge_status (*act[RIDGE_ACT_COUNT])(float *y, const float *x, size_t n, float alpha);
    ridge_status (*act_bwd[RIDGE_ACT_COUNT])(float *dx, const float *dy, const float *x,
                                             size_t n, float alpha);
    /* one row of n >= 1 */
    ridge_status (*softmax_row)(float *y, const float *x, size_t n);
    ridge_status (*log_softmax_row)(float *y, const float *x, size_t n);
    ridge_status (*softmax_bwd_row)(float *dx, const float *dy, const float *y, size_t n);
    ridge_status (*log_softmax_bwd_row)(float *dx, const float *dy, const float *y, size_t n);
} ridge_vec_kernels;

extern const ridge_vec_kernels ridge_vec_kernels_ref;
extern const ridge_vec_kernels ridge_vec_kernels_avx2;
extern const ridge_vec_kernels ridge_vec_kernels_avx512;

/* The kernels that the entry points of vec.c hand a whole call to, also as named functions of
 * the AVX2 and AVX-512 files (aliases of their table entries, defined by vec-template.h):
 * ridge_vec_<entry>__avx2. An entry point jumps to them directly (a compare on ctx->isa and a
 * direct jump) instead of loading the table and jumping through it: the indirect jump and the
 * two dependent loads before it cost about 15% of a 10-element call (docs/PERFORMANCE.md, vec,
 * session 4). X(entry, table member, kernel in the including file); hidden, so that the shared
 * library calls them directly too, not through the PLT. */
#define RIDGE_VEC_DIRECT(X)                                                                   \
    X(sum_f32, sum_f32, sum_f32_to)                                                            \
    X(dot_f32, dot_f32, dot_f32_to)                                                            \
    X(sum_f64, sum_f64, sum_f64_to)                                                            \
    X(dot_f64, dot_f64, dot_f64_to)                                                            \
    X(mean_f32, mean_f32, mean_f32_to)                                                         \
    X(mean_f64, mean_f64, mean_f64_to)                                                         \
    X(sum_i32_to, sum_i32_to, sum_i32_to)                                                      \
    X(sum_i64_to, sum_i64_to, sum_i64_to)                                                      \
    X(dot_i32_to, dot_i32_to, dot_i32_to)                                                      \
    X(min_f32, minmax[0], min_f32_to)                                                          \
    X(max_f32, minmax[1], max_f32_to)                                                          \
    X(min_f64, minmax[2], min_f64_to)                                                          \
    X(max_f64, minmax[3], max_f64_to)                                                          \
    X(min_i32, minmax[4], min_i32_to)                                                          \
    X(max_i32, minmax[5], max_i32_to)                                                          \
    X(min_i64, minmax[6], min_i64_to)                                                          \
    X(max_i64, minmax[7], max_i64_to)                                                          \
    X(argmin_f32, argminmax[0], argmin_f32_to)                                                 \
    X(argmax_f32, argminmax[1], argmax_f32_to)                                                 \
    X(argmin_f64, argminmax[2], argmin_f64_to)                                                 \
    X(argmax_f64, argminmax[3], argmax_f64_to)                                                 \
    X(argmin_i32, argminmax[4], argmin_i32_to)                                                 \
    X(argmax_i32, argminmax[5], argmax_i32_to)                                                 \
    X(argmin_i64, argminmax[6], argmin_i64_to)                                                 \
    X(argmax_i64, argminmax[7], argmax_i64_to)                                                 \
    X(add_f32, add_f32, add_f32)                                                               \
    X(sub_f32, sub_f32, sub_f32)                                                               \
    X(mul_f32, mul_f32, mul_f32)                                                               \
    X(scale_f32, scale_f32, scale_f32)                                                         \
    X(axpy_f32, axpy_f32, axpy_f32)                                                            \
    X(fma_f32, fma_f32, fma_f32)                                                               \
    X(clamp_f32, clamp_f32, clamp_f32)                                                         \
    X(softmax_row, softmax_row, softmax_row)                                                   \
    X(log_softmax_row, log_softmax_row, log_softmax_row)                                       \
    X(softmax_bwd_row, softmax_bwd_row, softmax_bwd_row)                                       \
    X(log_softmax_bwd_row, log_softmax_bwd_row, log_softmax_bwd_row)
#define RIDGE_VEC_KTYPE(member) __typeof__(*((const ridge_vec_kernels *)0)->member)
#define RIDGE_VEC_DECLARE(e, member, k)                                                       \
    __attribute__((visibility("hidden"))) extern RIDGE_VEC_KTYPE(member) ridge_vec_##e##__avx2; \
    __attribute__((visibility("hidden"))) extern RIDGE_VEC_KTYPE(member) ridge_vec_##e##__avx512;
RIDGE_VEC_DIRECT(RIDGE_VEC_DECLARE)
#undef RIDGE_VEC_DECLARE

/* The table for an ISA (ref for anything unknown). */
const ridge_vec_kernels *ridge_vec_kernels_for(ridge_isa isa);

/* RIDGE_EOVERFLOW with "<what>: the result does not fit in int64" (vec.c). */
ridge_status ridge_vec_overflow(const char *what);

/* Scalar references of the activations (double precision inside), also used by tests. */
float ridge_act_ref(ridge_act act, float x, float alpha);
float ridge_act_grad_ref(ridge_act act, float x, float alpha);

#endif /* RIDGE_VEC_INTERNAL_H */
