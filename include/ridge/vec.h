/* ridge/vec.h: vector primitives: reductions, elementwise arithmetic, activations.
 *
 * Every call takes the context (for its ISA and thread pool) and works on contiguous spans.
 * Pointers need no particular alignment. n == 0 is valid everywhere (a no-op or an empty
 * reduction, see below); a NULL pointer with n > 0 is RIDGE_EINVAL. All calls are thread-safe
 * in the sense of core.h: one context is used by one thread at a time.
 *
 * Which kernels run: the context's ISA (ridge_ctx_isa: ref, avx2, avx512). An entry point
 * checks its arguments with one branch and jumps straight to the ISA's kernel (no stack frame
 * in between), and the kernels do spans of up to two vectors without a loop, so a call on 10
 * elements costs a few nanoseconds (docs/PERFORMANCE.md, `## vec`).
 * Spans of at least 256 Ki elements (32 Ki for the transcendental activations) are split over
 * the context's threads in contiguous blocks; results do not depend on the thread count.
 *
 * ---- reductions ----------------------------------------------------------------------------
 * sum, min, max, mean, argmin, argmax, dot (x . y), sumsq (x . x) over int32, int64, float,
 * double. Semantics:
 *  - Empty span: sum, dot, sumsq give 0; min, max, mean, argmin, argmax return RIDGE_EINVAL
 *    (their answer is undefined) and leave *out unchanged.
 *  - int32: sum, dot and sumsq accumulate exactly and return int64; dot and sumsq return
 *    RIDGE_EOVERFLOW if the exact result does not fit int64 (sum of int32 cannot overflow for
 *    n < 2^32). int64: sum, dot, sumsq are exact (128-bit accumulation) and return
 *    RIDGE_EOVERFLOW (with *out unchanged) if the exact result does not fit int64, even if a
 *    partial sum did not fit on the way. Integer results are identical for every ISA and
 *    thread count. mean of integers is the exact sum divided by n, within 1 ulp in double.
 *  - float/double min/max: NaN if any element is NaN; -0 and +0 compare equal (the sign of a
 *    zero result is unspecified). argmin/argmax: the index of the first element equal to the
 *    min/max (the first NaN if there is one).
 *  - float/double sum, dot, sumsq: the summation scheme is fixed and the same on every ISA
 *    and thread count, so results are bit-identical across them (the reference kernels
 *    implement the same scheme in scalar C). The span is cut into blocks of B elements
 *    (B = 2048 for float, 1024 for double). Within a block, element i goes to lane i mod L
 *    (L = 64 for float, 32 for double), each lane adds its elements in order (dot and sumsq
 *    with one fused multiply-add per element), and the lanes are folded pairwise
 *    (lane j + lane j+L/2, recursively). Block results are added in block order in double.
 *    Error bound, with u = 2^-24 (float) or 2^-53 (double) and S = sum of |x_i| (|x_i y_i|
 *    for dot):  |result - exact| <= 0.5 u |exact| + (B/L + log2 L) u S + n/B 2^-53 S
 *    i.e. about 38 u S for float and 37 u S for double, independent of n for practical n
 *    (a plain sequential loop's bound is (n-1) u S). mean = sum / n.
 *
 * ---- elementwise (float) -------------------------------------------------------------------
 * add, sub, mul: z = x op y; scale: y = a x; axpy: y = a x + y; fma: w = x y + z (one
 * rounding); clamp: y = min(max(x, lo), hi) (NaN stays NaN). Outputs may alias inputs exactly
 * (in place), but must not partially overlap them. Results are correctly rounded IEEE
 * operations, identical on every ISA.
 *
 * ---- activations (float) -------------------------------------------------------------------
 * Forward y = f(x), backward dx = dy * f'(x) (backward takes the forward INPUT x). In place
 * (y == x, dx == dy) is allowed. Accuracy of the vector kernels (AVX2 and AVX-512 share one
 * source but for AVX-512's tanh), maximum error against the exact function (double-precision
 * glibc libm), measured over every one of the 2^32 float inputs (test-vec --exhaustive,
 * 2026-12-01), where the result is a normal float:
 *     exp 1.01 ULP, log 0.83, tanh 0.95 (AVX-512: 0.76), sigmoid 2.40, silu 3.34,
 *     gelu (tanh form) 3.40, gelu (erf form) 2.81
 * and where the result is subnormal, at most 1.64 units of 2^-149 (exp and sigmoid 0.75).
 * Targets: exp and log <= 2 ULP, the others <= 4. The reference kernels (isa ref) compute in
 * double and round once. Gradients are accurate to a few ULP of the larger terms (tested
 * against the reference at 1e-5 relative).
 * NaN in gives NaN out; +-Inf and overflow/underflow behave as libm's expf/logf/tanhf
 * (exp(+Inf) = +Inf, exp(-Inf) = 0, log(0) = -Inf, log(x<0) = NaN, tanh(+-Inf) = +-1,
 * sigmoid(-Inf) = 0, silu(-Inf) = gelu(-Inf) = -0); subnormal inputs and outputs are handled
 * (no flush to zero). relu(NaN) = NaN; backward of relu/leaky relu at x = 0 uses slope 0
 * (relu) and alpha (leaky).
 * softmax / log_softmax: row-wise over (rows, cols) row-major contiguous, max-subtracted;
 * backward takes the forward OUTPUT y: softmax dx = y (dy - sum(dy y)); log_softmax
 * dx = dy - exp(y) sum(dy).
 */
#ifndef RIDGE_VEC_H
#define RIDGE_VEC_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- reductions ---------------------------------------------------------------------------- */

ridge_status ridge_vec_sum_i32(ridge_ctx *ctx, const int32_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_sum_i64(ridge_ctx *ctx, const int64_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_sum_f32(ridge_ctx *ctx, const float *x, size_t n, float *out);
ridge_status ridge_vec_sum_f64(ridge_ctx *ctx, const double *x, size_t n, double *out);

ridge_status ridge_vec_min_i32(ridge_ctx *ctx, const int32_t *x, size_t n, int32_t *out);
ridge_status ridge_vec_min_i64(ridge_ctx *ctx, const int64_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_min_f32(ridge_ctx *ctx, const float *x, size_t n, float *out);
ridge_status ridge_vec_min_f64(ridge_ctx *ctx, const double *x, size_t n, double *out);

ridge_status ridge_vec_max_i32(ridge_ctx *ctx, const int32_t *x, size_t n, int32_t *out);
ridge_status ridge_vec_max_i64(ridge_ctx *ctx, const int64_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_max_f32(ridge_ctx *ctx, const float *x, size_t n, float *out);
ridge_status ridge_vec_max_f64(ridge_ctx *ctx, const double *x, size_t n, double *out);

ridge_status ridge_vec_mean_i32(ridge_ctx *ctx, const int32_t *x, size_t n, double *out);
ridge_status ridge_vec_mean_i64(ridge_ctx *ctx, const int64_t *x, size_t n, double *out);
ridge_status ridge_vec_mean_f32(ridge_ctx *ctx, const float *x, size_t n, float *out);
ridge_status ridge_vec_mean_f64(ridge_ctx *ctx, const double *x, size_t n, double *out);

ridge_status ridge_vec_argmin_i32(ridge_ctx *ctx, const int32_t *x, size_t n, size_t *out);
ridge_status ridge_vec_argmin_i64(ridge_ctx *ctx, const int64_t *x, size_t n, size_t *out);
ridge_status ridge_vec_argmin_f32(ridge_ctx *ctx, const float *x, size_t n, size_t *out);
ridge_status ridge_vec_argmin_f64(ridge_ctx *ctx, const double *x, size_t n, size_t *out);

ridge_status ridge_vec_argmax_i32(ridge_ctx *ctx, const int32_t *x, size_t n, size_t *out);
ridge_status ridge_vec_argmax_i64(ridge_ctx *ctx, const int64_t *x, size_t n, size_t *out);
ridge_status ridge_vec_argmax_f32(ridge_ctx *ctx, const float *x, size_t n, size_t *out);
ridge_status ridge_vec_argmax_f64(ridge_ctx *ctx, const double *x, size_t n, size_t *out);

ridge_status ridge_vec_dot_i32(ridge_ctx *ctx, const int32_t *x, const int32_t *y, size_t n,
                               int64_t *out);
ridge_status ridge_vec_dot_i64(ridge_ctx *ctx, const int64_t *x, const int64_t *y, size_t n,
                               int64_t *out);
ridge_status ridge_vec_dot_f32(ridge_ctx *ctx, const float *x, const float *y, size_t n,
                               float *out);
ridge_status ridge_vec_dot_f64(ridge_ctx *ctx, const double *x, const double *y, size_t n,
                               double *out);

ridge_status ridge_vec_sumsq_i32(ridge_ctx *ctx, const int32_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_sumsq_i64(ridge_ctx *ctx, const int64_t *x, size_t n, int64_t *out);
ridge_status ridge_vec_sumsq_f32(ridge_ctx *ctx, const float *x, size_t n, float *out);
ridge_status ridge_vec_sumsq_f64(ridge_ctx *ctx, const double *x, size_t n, double *out);

/* ---- elementwise (float) ------------------------------------------------------------------- */

ridge_status ridge_vec_add_f32(ridge_ctx *ctx, float *z, const float *x, const float *y, size_t n);
ridge_status ridge_vec_sub_f32(ridge_ctx *ctx, float *z, const float *x, const float *y, size_t n);
ridge_status ridge_vec_mul_f32(ridge_ctx *ctx, float *z, const float *x, const float *y, size_t n);
/* y = a x */
ridge_status ridge_vec_scale_f32(ridge_ctx *ctx, float *y, const float *x, float a, size_t n);
/* y = a x + y */
ridge_status ridge_vec_axpy_f32(ridge_ctx *ctx, float *y, float a, const float *x, size_t n);
/* w = x y + z, fused (one rounding) */
ridge_status ridge_vec_fma_f32(ridge_ctx *ctx, float *w, const float *x, const float *y,
                               const float *z, size_t n);
/* y = min(max(x, lo), hi); RIDGE_EINVAL unless lo <= hi */
ridge_status ridge_vec_clamp_f32(ridge_ctx *ctx, float *y, const float *x, float lo, float hi,
                                 size_t n);

/* ---- activations (float) ------------------------------------------------------------------- */

typedef enum ridge_act {
    RIDGE_ACT_RELU = 0,
    RIDGE_ACT_LEAKY_RELU, /* x > 0 ? x : alpha x */
    RIDGE_ACT_SIGMOID,    /* 1 / (1 + e^-x) */
    RIDGE_ACT_TANH,
    RIDGE_ACT_GELU,       /* tanh form (GPT-2): x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    RIDGE_ACT_GELU_ERF,   /* x/2 (1 + erf(x / sqrt 2)) */
    RIDGE_ACT_SILU,       /* x sigmoid(x) */
    RIDGE_ACT_EXP,
    RIDGE_ACT_LOG,
    RIDGE_ACT_COUNT
} ridge_act;

/* "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "gelu_erf", "silu", "exp", "log". */
const char *ridge_act_name(ridge_act act);

/* y = f(x) over n elements; alpha is used by leaky relu only. y may equal x. */
ridge_status ridge_act_forward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *y,
                                   const float *x, size_t n);
/* dx = dy * f'(x); dx may equal dy. */
ridge_status ridge_act_backward_f32(ridge_ctx *ctx, ridge_act act, float alpha, float *dx,
                                    const float *dy, const float *x, size_t n);

/* Named forms of the two calls above. */
ridge_status ridge_relu_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_leaky_relu_f32(ridge_ctx *ctx, float *y, const float *x, float alpha, size_t n);
ridge_status ridge_sigmoid_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_tanh_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_gelu_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_gelu_erf_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_silu_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_exp_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);
ridge_status ridge_log_f32(ridge_ctx *ctx, float *y, const float *x, size_t n);

ridge_status ridge_relu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                     size_t n);
ridge_status ridge_leaky_relu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                           const float *x, float alpha, size_t n);
ridge_status ridge_sigmoid_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                        const float *x, size_t n);
ridge_status ridge_tanh_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                     size_t n);
ridge_status ridge_gelu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                     size_t n);
ridge_status ridge_gelu_erf_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                         const float *x, size_t n);
ridge_status ridge_silu_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                     size_t n);
ridge_status ridge_exp_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                    size_t n);
ridge_status ridge_log_backward_f32(ridge_ctx *ctx, float *dx, const float *dy, const float *x,
                                    size_t n);

/* Row-wise softmax / log-softmax of x (rows, cols) into y (rows, cols); y may equal x.
 * RIDGE_EINVAL if cols == 0 and rows > 0. */
ridge_status ridge_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows, size_t cols);
ridge_status ridge_log_softmax_f32(ridge_ctx *ctx, float *y, const float *x, size_t rows,
                                   size_t cols);
/* Backward from the forward output y (rows, cols) and dy; dx may equal dy. */
ridge_status ridge_softmax_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                        const float *y, size_t rows, size_t cols);
ridge_status ridge_log_softmax_backward_f32(ridge_ctx *ctx, float *dx, const float *dy,
                                            const float *y, size_t rows, size_t cols);

/* ---- introspection ------------------------------------------------------------------------- */

/* The vec kernels the context selects, e.g. "vec-avx2 (f32x8 math)"; for `ridge info`. */
const char *ridge_vec_describe(const ridge_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_VEC_H */
