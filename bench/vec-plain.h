/* The plain C loops of bench/vec-plain.c (see there). */
#ifndef RIDGE_VEC_PLAIN_H
#define RIDGE_VEC_PLAIN_H

#include <stddef.h>
#include <stdint.h>

float plain_sum_f32(const float *x, size_t n);
double plain_sum_f64(const double *x, size_t n);
int64_t plain_sum_i32(const int32_t *x, size_t n);
int64_t plain_sum_i64(const int64_t *x, size_t n);
float plain_min_f32(const float *x, size_t n);
float plain_max_f32(const float *x, size_t n);
int32_t plain_max_i32(const int32_t *x, size_t n);
size_t plain_argmax_f32(const float *x, size_t n);
float plain_dot_f32(const float *x, const float *y, size_t n);
double plain_mean_f64(const double *x, size_t n);
void plain_add(float *z, const float *x, const float *y, size_t n);
void plain_scale(float *y, const float *x, float a, size_t n);
void plain_axpy(float *y, float a, const float *x, size_t n);
void plain_fma(float *w, const float *x, const float *y, const float *z, size_t n);
void plain_clamp(float *y, const float *x, float lo, float hi, size_t n);
void plain_relu(float *y, const float *x, size_t n);
void plain_exp(float *y, const float *x, size_t n);
void plain_log(float *y, const float *x, size_t n);
void plain_tanh(float *y, const float *x, size_t n);
void plain_sigmoid(float *y, const float *x, size_t n);
void plain_silu(float *y, const float *x, size_t n);
void plain_gelu(float *y, const float *x, size_t n);
void plain_gelu_erf(float *y, const float *x, size_t n);
void plain_softmax(float *y, const float *x, size_t n);

#endif /* RIDGE_VEC_PLAIN_H */
