/* Vector float math on __m256 (AVX2 + FMA), for the vec kernels and for GEMM/convolution
 * epilogues: ridge_exp_f32x8, ridge_log_f32x8, ridge_tanh_f32x8, ridge_sigmoid_f32x8,
 * ridge_silu_f32x8, ridge_gelu_tanh_f32x8, ridge_gelu_erf_f32x8 and the gradients
 * ridge_<fn>_grad_f32x8 (f'(x)). Include it only from a file compiled with the AVX2 flags.
 * The bodies are math-template.h (shared with math-avx512.h); algorithms and accuracy there
 * and in include/ridge/vec.h. */
#ifndef RIDGE_VEC_MATH_AVX2_H
#define RIDGE_VEC_MATH_AVX2_H

#include <math.h>

#include "vec/simd-avx2.h"
#include "vec/math-template.h"
#include "vec/simd-undef.h"

#endif /* RIDGE_VEC_MATH_AVX2_H */
