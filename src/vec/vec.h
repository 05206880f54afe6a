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

typedef struct ridge_vec_kernels {
    const char *name; /* "vec-avx2" */
    /* one block (n <= RIDGE_VEC_BLOCK_*) of the fixed scheme; dot uses fma(x, y, acc) */
    float (*sum_f32)(const float *x, size_t n);
    float (*dot_f32)(const float *x, const float *y, size_t n);
    double (*sum_f64)(const double *x, size_t n);
    double (*dot_f64)(const double *x, const double *y, size_t n);
    /* exact integer sums of any n */
    ridge_i128 (*sum_i32)(const int32_t *x, size_t n);
    ridge_i128 (*sum_i64)(const int64_t *x, size_t n);
    ridge_i128 (*dot_i32)(const int32_t *x, const int32_t *y, size_t n);
    /* n >= 1; float ones return NaN if any element is NaN */
    float (*min_f32)(const float *x, size_t n);
    float (*max_f32)(const float *x, size_t n);
    double (*min_f64)(const double *x, size_t n);
    double (*max_f64)(const double *x, size_t n);
    int32_t (*min_i32)(const int32_t *x, size_t n);
    int32_t (*max_i32)(const int32_t *x, size_t n);
    int64_t (*min_i64)(const int64_t *x, size_t n);
    int64_t (*max_i64)(const int64_t *x, size_t n);
    /* the index of the first element == v (the first NaN if v is NaN), or n if none */
    size_t (*find_f32)(const float *x, size_t n, float v);
    size_t (*find_f64)(const double *x, size_t n, double v);
    size_t (*find_i32)(const int32_t *x, size_t n, int32_t v);
    size_t (*find_i64)(const int64_t *x, size_t n, int64_t v);
    /* elementwise, float */
    void (*add_f32)(float *z, const float *x, const float *y, size_t n);
    void (*sub_f32)(float *z, const float *x, const float *y, size_t n);
    void (*mul_f32)(float *z, const float *x, const float *y, size_t n);
    void (*scale_f32)(float *y, const float *x, float a, size_t n);
    void (*axpy_f32)(float *y, float a, const float *x, size_t n);
    void (*fma_f32)(float *w, const float *x, const float *y, const float *z, size_t n);
    void (*clamp_f32)(float *y, const float *x, float lo, float hi, size_t n);
    /* activations: y = f(x), dx = dy f'(x); alpha for leaky relu */
    void (*act[RIDGE_ACT_COUNT])(float *y, const float *x, size_t n, float alpha);
    void (*act_bwd[RIDGE_ACT_COUNT])(float *dx, const float *dy, const float *x, size_t n,
                                     float alpha);
    /* one row of n >= 1 */
    void (*softmax_row)(float *y, const float *x, size_t n);
    void (*log_softmax_row)(float *y, const float *x, size_t n);
    void (*softmax_bwd_row)(float *dx, const float *dy, const float *y, size_t n);
    void (*log_softmax_bwd_row)(float *dx, const float *dy, const float *y, size_t n);
} ridge_vec_kernels;

extern const ridge_vec_kernels ridge_vec_kernels_ref;
extern const ridge_vec_kernels ridge_vec_kernels_avx2;
extern const ridge_vec_kernels ridge_vec_kernels_avx512;

/* The table for an ISA (ref for anything unknown). */
const ridge_vec_kernels *ridge_vec_kernels_for(ridge_isa isa);

/* Scalar references of the activations (double precision inside), also used by tests. */
float ridge_act_ref(ridge_act act, float x, float alpha);
float ridge_act_grad_ref(ridge_act act, float x, float alpha);

#endif /* RIDGE_VEC_INTERNAL_H */
