/* Vector float math on __m512 (AVX-512 F/DQ), for the vec kernels and for GEMM/convolution
 * epilogues: ridge_exp_f32x16, ridge_log_f32x16, ridge_tanh_f32x16, ridge_sigmoid_f32x16,
 * ridge_silu_f32x16, ridge_gelu_tanh_f32x16, ridge_gelu_erf_f32x16 and the gradients
 * ridge_<fn>_grad_f32x16 (f'(x)). Include it only from a file compiled with the AVX-512 flags.
 * The bodies are math-template.h (shared with math-avx2.h); algorithms and accuracy there
 * and in include/ridge/vec.h. */
#ifndef RIDGE_VEC_MATH_AVX512_H
#define RIDGE_VEC_MATH_AVX512_H

#include <math.h>

#include "vec/simd-avx512.h"
#include "vec/math-template.h"
#include "vec/simd-undef.h"

#endif /* RIDGE_VEC_MATH_AVX512_H */
