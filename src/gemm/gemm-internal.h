/* Internal to the gemm family: the problem description every path shares, the scalar
 * epilogue, and the reference. */
#ifndef RIDGE_GEMM_INTERNAL_H
#define RIDGE_GEMM_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "core/internal.h"
#include "ridge/gemm.h"

/* One product C = epi(alpha op(A) op(B) + beta C), validated. Transposes are folded into
 * strides (BLIS style): element (i, p) of op(A) is a[i * a_rs + p * a_cs], element (p, j) of
 * op(B) is b[p * b_rs + j * b_cs]. k == 0 means "no product" (alpha == 0 is mapped to it). */
typedef struct gemm_problem {
    size_t m, n, k;
    float alpha, beta;
    const float *a;
    size_t a_rs, a_cs;
    const float *b;
    size_t b_rs, b_cs;
    float *c;
    size_t ldc;
    ridge_epilogue epi; /* bias_kind NONE, act NONE, residual NULL: nothing */
} gemm_problem;

/* The activations in float, the definitions every vector variant must match. ReLU keeps NaN
 * and -0 (as max(0, x) with x second does in SIMD). */
static inline float gemm_act_scalar(ridge_act act, float x)
{
    switch (act) {
    case RIDGE_ACT_NONE: return x;
    case RIDGE_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case RIDGE_ACT_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case RIDGE_ACT_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case RIDGE_ACT_TANH: return tanhf(x);
    }
    return x;
}

/* The finishing step for one element (i, j) whose raw product sum is `acc`:
 * alpha * acc + beta * C (C not read when beta == 0), bias, activation, residual. */
static inline float gemm_finish_scalar(const gemm_problem *p, size_t i, size_t j, float acc)
{
    float *c = &p->c[i * p->ldc + j];
    float v = p->k ? p->alpha * acc : 0.0f;
    if (p->beta != 0.0f) v += p->beta * *c;
    if (p->epi.bias_kind == RIDGE_BIAS_COL) v += p->epi.bias[j];
    else if (p->epi.bias_kind == RIDGE_BIAS_ROW) v += p->epi.bias[i];
    v = gemm_act_scalar(p->epi.act, v);
    if (p->epi.residual) v += p->epi.residual[i * p->epi.ldr + j];
    return v;
}

/* gemm-ref.c: the plain scalar reference over rows [i0, i1) and columns [j0, j1) of C,
 * accumulating in float in k order. */
void ridge_f32_gemm__ref(const gemm_problem *p, size_t i0, size_t i1, size_t j0, size_t j1);

#endif /* RIDGE_GEMM_INTERNAL_H */
