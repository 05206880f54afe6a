/* ridge/gemm.h: single-precision matrix multiply (SGEMM), row-major, with fused epilogues.
 *
 *   C = act(alpha * op(A) op(B) + beta * C + bias) + residual
 *
 * op(A) is m x k and op(B) is k x n; every matrix is row-major with a leading dimension (the
 * distance in floats between two consecutive rows as stored). A stored matrix X that is
 * transposed (RIDGE_TRANS) is held as its transpose: op(A) = A^T with A stored k x m.
 *
 *   // y (B, 128) = relu(x (B, 784) W^T + b), W stored (128, 784) as in a dense layer
 *   ridge_epilogue e = {.bias_kind = RIDGE_BIAS_COL, .bias = b, .act = RIDGE_EPI_RELU};
 *   ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, B, 128, 784,
 *                  1.0f, x, 784, W, 784, 0.0f, y, 128, &e);
 *
 * Common rules for every call here:
 * - Sizes are size_t. A value above SIZE_MAX / 2 is rejected as "negative or too large", and
 *   so is any matrix whose extent (rows - 1) * ld + cols overflows in bytes: RIDGE_EINVAL with
 *   a message (ridge_last_error()). Leading dimensions must be >= max(1, stored columns).
 * - beta == 0 means "C is output only": C is never read (NaN or garbage in C does not leak).
 * - alpha == 0 or k == 0 means the product is not computed and A and B are not read (they may
 *   then be NULL); C becomes beta * C plus the epilogue.
 * - A, B (and bias, residual) must not overlap C, except residual == c with ldr == ldc (and,
 *   batched, residual_stride == stride_c): an in-place residual add, as in x = x + f(x).
 * - No alignment is required of any pointer; 64-byte aligned rows are faster.
 * - The caller owns every buffer. Results are deterministic: the same bits for the same
 *   inputs, ISA and thread count (and, for a given ISA, independent of the thread count).
 * - A context must not be used by two threads at once (core.h); the call uses the context's
 *   pool and scratch arena.
 */
#ifndef RIDGE_GEMM_H
#define RIDGE_GEMM_H

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ridge_trans {
    RIDGE_NO_TRANS = 0, /* op(X) = X */
    RIDGE_TRANS = 1,    /* op(X) = X^T */
} ridge_trans;

/* ---- epilogue ------------------------------------------------------------------------------ */

typedef enum ridge_bias_kind {
    RIDGE_BIAS_NONE = 0,
    RIDGE_BIAS_COL = 1, /* bias[j] added to column j: n floats (the usual dense-layer bias) */
    RIDGE_BIAS_ROW = 2, /* bias[i] added to row i: m floats (conv as W (Cout, K) x cols) */
} ridge_bias_kind;

/* The activation of the epilogue. (Named apart from vec.h's ridge_act, which has no "none"
 * and whose values differ.) */
typedef enum ridge_epi_act {
    RIDGE_EPI_NONE = 0,
    RIDGE_EPI_RELU = 1,      /* max(x, 0) */
    RIDGE_EPI_GELU_TANH = 2, /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as in GPT-2 */
    RIDGE_EPI_SIGMOID = 3,   /* 1 / (1 + exp(-x)) */
    RIDGE_EPI_TANH = 4,
} ridge_epi_act;

/* Applied in this order while the tile is in registers: bias, activation, residual.
 * A zero-initialized struct ({0}) is "no epilogue". */
typedef struct ridge_epilogue {
    ridge_bias_kind bias_kind;
    const float *bias;        /* n (COL) or m (ROW) floats; NULL iff bias_kind is NONE */
    ridge_epi_act act;
    const float *residual;    /* NULL: none; else an m x n matrix added after the activation */
    size_t ldr;               /* residual's leading dimension (>= n) */
    size_t residual_stride;   /* batched calls only: floats between two residual matrices */
} ridge_epilogue;

/* ---- calls --------------------------------------------------------------------------------- */

/* C (m, n) = alpha op(A) (m, k) op(B) (k, n) + beta C. */
ridge_status ridge_sgemm(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b,
                         size_t m, size_t n, size_t k,
                         float alpha, const float *a, size_t lda,
                         const float *b, size_t ldb,
                         float beta, float *c, size_t ldc);

/* As ridge_sgemm, then the epilogue (NULL: none). */
ridge_status ridge_sgemm_ex(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b,
                            size_t m, size_t n, size_t k,
                            float alpha, const float *a, size_t lda,
                            const float *b, size_t ldb,
                            float beta, float *c, size_t ldc,
                            const ridge_epilogue *epi);

/* `batch` independent products: matrix i of A starts at a + i * stride_a, and so on (a
 * stride may be 0 to share one matrix, e.g. the weights; C strides must keep the outputs
 * disjoint). The epilogue's bias is shared by every product; the residual of product i is at
 * residual + i * epi->residual_stride. Attention's Q K^T and P V are this call. Products too
 * small to split among the threads run whole, several at once; the bits are the same as
 * ridge_sgemm_ex on each product. */
ridge_status ridge_sgemm_batched(ridge_ctx *ctx, ridge_trans trans_a, ridge_trans trans_b,
                                 size_t batch, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, size_t stride_a,
                                 const float *b, size_t ldb, size_t stride_b,
                                 float beta, float *c, size_t ldc, size_t stride_c,
                                 const ridge_epilogue *epi);

/* ---- prepacked B --------------------------------------------------------------------------- */

/* A plan holds op(B) (k, n) packed in the panel order of the micro-kernel the context selects
 * (its ISA is fixed at creation), so repeated products with the same weights skip packing.
 * The plan owns a copy: B may be freed or changed afterwards. Executing only reads the plan,
 * so several contexts may execute one plan at once; update must not overlap an execute. */
typedef struct ridge_sgemm_plan ridge_sgemm_plan;

/* Packs op(B). *out is NULL on failure. Free with ridge_sgemm_plan_destroy. */
ridge_status ridge_sgemm_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                     const float *b, size_t ldb, ridge_sgemm_plan **out);

/* Repacks new values of the same shape and layout (weights after an optimizer step). */
ridge_status ridge_sgemm_plan_update(ridge_ctx *ctx, ridge_sgemm_plan *plan, const float *b,
                                     size_t ldb);

void ridge_sgemm_plan_destroy(ridge_sgemm_plan *plan); /* NULL is a no-op */

/* C (m, n) = epilogue(alpha op(A) (m, k) B_plan (k, n) + beta C), n and k from the plan. */
ridge_status ridge_sgemm_plan_execute(ridge_ctx *ctx, const ridge_sgemm_plan *plan,
                                      ridge_trans trans_a, size_t m,
                                      float alpha, const float *a, size_t lda,
                                      float beta, float *c, size_t ldc,
                                      const ridge_epilogue *epi);

/* ---- introspection ------------------------------------------------------------------------- */

/* The micro-kernel the context's ISA selects, e.g. "f32-gemm-6x16-avx2" (`ridge info`); with
 * AVX-512, where the kernel depends on the shape, the kernels and their rules. */
const char *ridge_gemm_describe(const ridge_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_GEMM_H */
