/* The vec family's reference kernels: plain scalar C, the definition of correct and the
 * fallback for CPUs without AVX2.
 *
 * The float sums implement the fixed scheme of include/ridge/vec.h literally (an array of
 * LANES partial sums, folded pairwise), so the vector kernels must match them bit for bit.
 * Activations are computed in double with libm and rounded once to float, which is what the
 * vector kernels' ULP errors are measured against. */
#include <math.h>
#include <string.h>

#include "vec/vec.h"

/* ---- float sums: the fixed lane scheme ---------------------------------------------------- */

#define REF_LANE_SUM(name, T, LANES, step)                                                    \
    static T name(const T *x, const T *y, size_t n)                                           \
    {                                                                                          \
        T acc[LANES];                                                                          \
        for (int l = 0; l < LANES; l++) acc[l] = 0;                                            \
        for (size_t i = 0; i < n; i++) {                               \
            T *a = &acc[i % LANES];                                                            \
            *a = step;                                                                         \
        }                                                                     \
        for (int half = LANES / 2; half >= 1; half /= 2)                                       \
            for (int l = 0; l < half; l++) acc[l] = acc[l] + acc[l + half];                    \
        return acc[0];                                                                         \
    }
REF_LANE_SUM(lanes_sum_f32, float, RIDGE_VEC_LANES_F32, *a + x[i])
REF_LANE_SUM(lanes_dot_f32, float, RIDGE_VEC_LANES_F32, fmaf(x[i], y[i], *a))
REF_LANE_SUM(lanes_sum_f64, double, RIDGE_VEC_LANES_F64, *a + x[i])
REF_LANE_SUM(lanes_dot_f64, double, RIDGE_VEC_LANES_F64, fma(x[i], y[i], *a))

/* the table's forms: one block into *out; mean = sum / n */
#define REF_TO(name, T, Y, expr)                                                              \
    static ridge_status name(RIDGE_VEC_CTX, const T *x Y, size_t n, T *out)                    \
    {                                                                                          \
        *out = expr;                                                                           \
        return RIDGE_OK;                                                                       \
    }
#define NOY
#define YF , const float *y
#define YD , const double *y
REF_TO(sum_f32_to, float, NOY, lanes_sum_f32(x, NULL, n))
REF_TO(dot_f32_to, float, YF, lanes_dot_f32(x, y, n))
REF_TO(sum_f64_to, double, NOY, lanes_sum_f64(x, NULL, n))
REF_TO(dot_f64_to, double, YD, lanes_dot_f64(x, y, n))
REF_TO(mean_f32_to, float, NOY, (float)((double)lanes_sum_f32(x, NULL, n) / (double)n))
REF_TO(mean_f64_to, double, NOY, lanes_sum_f64(x, NULL, n) / (double)n)

/* ---- integer sums (exact) ----------------------------------------------------------------- */

static ridge_i128 sum_i32(const int32_t *x, size_t n)
{
    ridge_i128 s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static ridge_i128 sum_i64(const int64_t *x, size_t n)
{
    ridge_i128 s = 0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return s;
}

static ridge_i128 dot_i32(const int32_t *x, const int32_t *y, size_t n)
{
    ridge_i128 s = 0;
    for (size_t i = 0; i < n; i++) s += (int64_t)x[i] * y[i];
    return s;
}

/* ---- min / max / find --------------------------------------------------------------------- */

/* Float: NaN if any element is NaN (x != x), else the least / greatest. */
#define REF_MINMAX(name, T, better)                                                           \
    static T name(const T *x, size_t n)                                                        \
    {                                                                                          \
        T m = x[0];                                                                            \
        for (size_t i = 0; i < n; i++) {                                                       \
            if (x[i] != x[i]) return x[i];                                                     \
            if (x[i] better m) m = x[i];                                                       \
        }                                                                                      \
        return m;                                                                              \
    }
REF_MINMAX(min_f32, float, <)
REF_MINMAX(max_f32, float, >)
REF_MINMAX(min_f64, double, <)
REF_MINMAX(max_f64, double, >)
REF_MINMAX(min_i32, int32_t, <)
REF_MINMAX(max_i32, int32_t, >)
REF_MINMAX(min_i64, int64_t, <)
REF_MINMAX(max_i64, int64_t, >)

#define REF_FIND(name, T)                                                                     \
    static size_t name(const T *x, size_t n, T v)                                              \
    {                                                                                          \
        int nan = v != v;                                                                      \
        for (size_t i = 0; i < n; i++)                                                         \
            if (nan ? x[i] != x[i] : x[i] == v) return i;                                      \
        return n;                                                                              \
    }
REF_FIND(find_f32, float)
REF_FIND(find_f64, double)
REF_FIND(find_i32, int32_t)
REF_FIND(find_i64, int64_t)

/* argmin / argmax: the first index of the min / max (the first NaN, if any) */
#define REF_ARG(i, fn, f, T)                                                                  \
    static size_t arg##fn(const T *x, size_t n) { return find_##f(x, n, fn(x, n)); }
RIDGE_VEC_MINMAX(REF_ARG)
#undef REF_ARG

#define RIDGE_VEC_SHORT_I32(n) 0
#define RIDGE_VEC_SHORT_I64(n) 0
#include "vec/vec-wrap.h"

/* ---- elementwise -------------------------------------------------------------------------- */

static ridge_status add_f32(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) z[i] = x[i] + y[i];
    return RIDGE_OK;
}
static ridge_status sub_f32(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) z[i] = x[i] - y[i];
    return RIDGE_OK;
}
static ridge_status mul_f32(RIDGE_VEC_CTX, float *z, const float *x, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++) z[i] = x[i] * y[i];
    return RIDGE_OK;
}
static ridge_status scale_f32(RIDGE_VEC_CTX, float *y, const float *x, float a, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = a * x[i];
    return RIDGE_OK;
}
static ridge_status axpy_f32(RIDGE_VEC_CTX, float *y, float a, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] = fmaf(a, x[i], y[i]);
    return RIDGE_OK;
}
static ridge_status fma_f32(RIDGE_VEC_CTX, float *w, const float *x, const float *y,
                            const float *z, size_t n)
{
    for (size_t i = 0; i < n; i++) w[i] = fmaf(x[i], y[i], z[i]);
    return RIDGE_OK;
}
static ridge_status clamp_f32(RIDGE_VEC_CTX, float *y, const float *x, float lo, float hi, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = v != v ? v : v < lo ? lo : v > hi ? hi : v;
    }
    return RIDGE_OK;
}

/* ---- activations -------------------------------------------------------------------------- */

#define SQRT_2_OVER_PI 0.79788456080286535588
#define INV_SQRT_2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

float ridge_act_ref(ridge_act act, float xf, float alpha)
{
    double x = xf;
    switch (act) {
    case RIDGE_ACT_RELU: return xf != xf ? xf : xf > 0 ? xf : 0.0f;
    case RIDGE_ACT_LEAKY_RELU: return xf > 0 ? xf : alpha * xf;
    case RIDGE_ACT_SIGMOID: return (float)(1.0 / (1.0 + exp(-x)));
    case RIDGE_ACT_TANH: return (float)tanh(x);
    case RIDGE_ACT_GELU: {
        /* x sigmoid(2u): the same function as x/2 (1 + tanh u), without the cancellation of
         * 1 + tanh u for x < 0; limits at +-Inf taken explicitly */
        if (isinf(x)) return x > 0 ? xf : -0.0f;
        double a = 2.0 * SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
        return (float)(x / (1.0 + exp(-a)));
    }
    case RIDGE_ACT_GELU_ERF:
        if (isinf(x)) return x > 0 ? xf : -0.0f;
        return (float)(0.5 * x * erfc(-x * INV_SQRT_2));
    case RIDGE_ACT_SILU:
        if (isinf(x)) return x > 0 ? xf : -0.0f;
        return (float)(x / (1.0 + exp(-x)));
    case RIDGE_ACT_EXP: return (float)exp(x);
    case RIDGE_ACT_LOG: return (float)log(x);
    default: return NAN;
    }
}

float ridge_act_grad_ref(ridge_act act, float xf, float alpha)
{
    double x = xf;
    switch (act) {
    case RIDGE_ACT_RELU: return xf > 0 ? 1.0f : 0.0f;
    case RIDGE_ACT_LEAKY_RELU: return xf > 0 ? 1.0f : alpha;
    case RIDGE_ACT_SIGMOID: {
        double s = 1.0 / (1.0 + exp(-x));
        return (float)(s * (1.0 - s));
    }
    case RIDGE_ACT_TANH: {
        double t = tanh(x);
        return (float)(1.0 - t * t);
    }
    case RIDGE_ACT_GELU: {
        double u = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x);
        double t = tanh(u);
        double du = SQRT_2_OVER_PI * (1.0 + 3.0 * 0.044715 * x * x);
        return (float)(0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du);
    }
    case RIDGE_ACT_GELU_ERF:
        return (float)(0.5 * erfc(-x * INV_SQRT_2) + x * INV_SQRT_2PI * exp(-0.5 * x * x));
    case RIDGE_ACT_SILU: {
        double s = 1.0 / (1.0 + exp(-x));
        return (float)(s * (1.0 + x * (1.0 - s)));
    }
    case RIDGE_ACT_EXP: return (float)exp(x);
    case RIDGE_ACT_LOG: return (float)(1.0 / x);
    default: return NAN;
    }
}

#define REF_ACT(a, name)                                                                      \
    static ridge_status act_##name(float *y, const float *x, size_t n, float alpha)            \
    {                                                                                          \
        for (size_t i = 0; i < n; i++) y[i] = ridge_act_ref(a, x[i], alpha);                   \
        return RIDGE_OK;                                                                       \
    }                                                                                          \
    static ridge_status act_bwd_##name(float *dx, const float *dy, const float *x, size_t n,   \
                                       float alpha)                                            \
    {                                                                                          \
        for (size_t i = 0; i < n; i++) dx[i] = dy[i] * ridge_act_grad_ref(a, x[i], alpha);     \
        return RIDGE_OK;                                                                       \
    }
REF_ACT(RIDGE_ACT_RELU, relu)
REF_ACT(RIDGE_ACT_LEAKY_RELU, leaky_relu)
REF_ACT(RIDGE_ACT_SIGMOID, sigmoid)
REF_ACT(RIDGE_ACT_TANH, tanh)
REF_ACT(RIDGE_ACT_GELU, gelu)
REF_ACT(RIDGE_ACT_GELU_ERF, gelu_erf)
REF_ACT(RIDGE_ACT_SILU, silu)
REF_ACT(RIDGE_ACT_EXP, exp)
REF_ACT(RIDGE_ACT_LOG, log)

/* ---- softmax rows ------------------------------------------------------------------------- */

static ridge_status softmax_row(float *y, const float *x, size_t n)
{
    float m = max_f32(x, n);
    double s = 0;
    for (size_t i = 0; i < n; i++) s += exp((double)x[i] - m);
    for (size_t i = 0; i < n; i++) y[i] = (float)(exp((double)x[i] - m) / s);
    return RIDGE_OK;
}

static ridge_status log_softmax_row(float *y, const float *x, size_t n)
{
    float m = max_f32(x, n);
    double s = 0;
    for (size_t i = 0; i < n; i++) s += exp((double)x[i] - m);
    double ls = log(s);
    for (size_t i = 0; i < n; i++) y[i] = (float)((double)x[i] - m - ls);
    return RIDGE_OK;
}

static ridge_status softmax_bwd_row(float *dx, const float *dy, const float *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)dy[i] * y[i];
    for (size_t i = 0; i < n; i++) dx[i] = (float)(y[i] * (dy[i] - s));
    return RIDGE_OK;
}

static ridge_status log_softmax_bwd_row(float *dx, const float *dy, const float *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += dy[i];
    for (size_t i = 0; i < n; i++) dx[i] = (float)(dy[i] - exp((double)y[i]) * s);
    return RIDGE_OK;
}

const ridge_vec_kernels ridge_vec_kernels_ref = {
    .name = "vec-ref",
    RIDGE_VEC_WRAPPED,
    .add_f32 = add_f32, .sub_f32 = sub_f32, .mul_f32 = mul_f32, .scale_f32 = scale_f32,
    .axpy_f32 = axpy_f32, .fma_f32 = fma_f32, .clamp_f32 = clamp_f32,
    .act = {act_relu, act_leaky_relu, act_sigmoid, act_tanh, act_gelu, act_gelu_erf, act_silu,
            act_exp, act_log},
    .act_bwd = {act_bwd_relu, act_bwd_leaky_relu, act_bwd_sigmoid, act_bwd_tanh, act_bwd_gelu,
                act_bwd_gelu_erf, act_bwd_silu, act_bwd_exp, act_bwd_log},
    .softmax_row = softmax_row, .log_softmax_row = log_softmax_row,
    .softmax_bwd_row = softmax_bwd_row, .log_softmax_bwd_row = log_softmax_bwd_row,
};
