/* The plain C loops `ridge bench vec` compares against: what a user writes, compiled as a user
 * would (the build's -O3, no -march, no -ffast-math: gcc vectorizes what it may with SSE2 and
 * leaves float reductions and calls to libm scalar). Kept in their own file so nothing of
 * ridge's (flags, inlining) leaks into them. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "vec-plain.h"

float plain_sum_f32(const float *x, size_t n)
{
    float s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
double plain_sum_f64(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
int64_t plain_sum_i32(const int32_t *x, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
int64_t plain_sum_i64(const int64_t *x, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}
float plain_min_f32(const float *x, size_t n)
{
    float m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] < m) m = x[i];
    return m;
}
float plain_max_f32(const float *x, size_t n)
{
    float m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}
int32_t plain_max_i32(const int32_t *x, size_t n)
{
    int32_t m = x[0];
    for (size_t i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    return m;
}
size_t plain_argmax_f32(const float *x, size_t n)
{
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > x[k]) k = i;
    return k;
}
float plain_dot_f32(const float *x, const float *y, size_t n)
{
    float s = 0;
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}
double plain_mean_f64(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s / (double)n;
}
void plain_add(float *z, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) z[i] = x[i] + y[i];
}
void plain_scale(float *y, const float *x, float a, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = a * x[i];
}
void plain_axpy(float *y, float a, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += a * x[i];
}
void plain_fma(float *w, const float *x, const float *y, const float *z, size_t n)
{
    for (size_t i = 0; i < n; i++) w[i] = x[i] * y[i] + z[i];
}
void plain_clamp(float *y, const float *x, float lo, float hi, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = x[i] < lo ? lo : x[i] > hi ? hi : x[i];
}
void plain_relu(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : 0;
}
void plain_exp(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = expf(x[i]);
}
void plain_log(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = logf(x[i]);
}
void plain_tanh(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
}
void plain_sigmoid(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
}
void plain_silu(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + expf(-x[i]));
}
void plain_gelu(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}
void plain_gelu_erf(float *y, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678f));
}
void plain_softmax(float *y, const float *x, size_t n)
{
    float m = x[0], s = 0;
    for (size_t i = 1; i < n; i++)
        if (x[i] > m) m = x[i];
    for (size_t i = 0; i < n; i++) s += y[i] = expf(x[i] - m);
    for (size_t i = 0; i < n; i++) y[i] /= s;
}
