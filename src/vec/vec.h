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

/* The table for an ISA (ref for anything unknown). */
const ridge_vec_kernels *ridge_vec_kernels_for(ridge_isa isa);

/* RIDGE_EOVERFLOW with "<what>: the result does not fit in int64" (vec.c). */
ridge_status ridge_vec_overflow(const char *what);

/* Scalar references of the activations (double precision inside), also used by tests. */
float ridge_act_ref(ridge_act act, float x, float alpha);
float ridge_act_grad_ref(ridge_act act, float x, float alpha);

#endif /* RIDGE_VEC_INTERNAL_H */
