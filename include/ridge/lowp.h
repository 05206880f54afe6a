/* ridge/lowp.h: low-precision matrix multiply: int8 x int8 -> int32 with a requantization
 * epilogue, bf16 x bf16 -> fp32, and fp32 <-> bf16 conversion.
 *
 *   // y (B, 128) u8 = requant(x (B, 784) u8 W^T), W (128, 784) int8 packed once
 *   ridge_qgemm_plan *w;
 *   ridge_qgemm_plan_create(ctx, RIDGE_TRANS, 128, 784, W, 784, &w);
 *   ridge_requant rq = {.out = RIDGE_LOWP_U8, .scale = s, .per_channel = 1, .bias = b32,
 *                       .out_zero_point = 0, .relu = 1};
 *   ridge_qgemm_plan_execute(ctx, w, RIDGE_LOWP_U8, B, x, 784, x_zero_point, y, 128, &rq);
 *
 * ---- int8 ------------------------------------------------------------------------------------
 * The product is exact integer arithmetic:
 *
 *   acc[i][j] = sum_p (A[i][p] - za) * B[p][j]            (A u8 or s8, B s8, za A's zero point)
 *
 * computed modulo 2^32 (two's complement wrap-around, as the vector adds do), so it is the
 * true sum whenever the true sum fits in int32. THE OVERFLOW BOUND: each term is at most
 * 255 * 128 = 32640 in magnitude ((A - za) in [-255, 255], B in [-128, 127]), so any inputs are
 * exact for k <= 65793 (= floor(2^31 / 32640)); symmetric s8 x s8 data (za = 0, terms at most
 * 128 * 128 = 16384) are exact for k <= 131071. Past the bound the result is the true sum
 * modulo 2^32, deterministically (the same bits on every ISA). The calls reject k > 2^31.
 *
 * How it is computed (docs/ARCHITECTURE.md, lowp): B is packed once in a plan in k-groups
 * interleaved per column (4 bytes per column per group: 4 int8 for VNNI's vpdpbusd, 2 int16
 * for AVX2's vpmaddwd), with its column sums. s8 A is shifted to u8 (A + 128) while it is
 * packed, and the shift is folded into the zero point (za + 128), whose contribution
 * za * colsum(B)[j] is subtracted in the epilogue: the "+128 compensation".
 *
 * The requantization epilogue (ridge_requant), per element, with x = acc + bias[j]:
 *   RIDGE_LOWP_S32: C = x                               (max(x, 0) with relu)
 *   RIDGE_LOWP_F32: C = (float)x * scale[j]             (then max(., 0) with relu)
 *   RIDGE_LOWP_U8 / S8: v = (float)x * scale[j] in fp32, clamped to [lo - zo, hi - zo] (lo
 *     raised to zo with relu; [lo, hi] = [0, 255] or [-128, 127]), rounded to nearest even,
 *     plus zo (out_zero_point): the saturating cast. Every ISA gives the same bits.
 * scale[j] is scale[0] when per_channel is 0 (per tensor). (float)x rounds to nearest even.
 *
 * ---- bf16 ------------------------------------------------------------------------------------
 * bf16 values are uint16_t holding the top half of an IEEE fp32. Products are exact in fp32;
 * the sums are fp32, so the result is within (k + 1) eps sum |a||b| of the exact one
 * (eps = 2^-24 relative, any summation order: vdpbf16ps sums pairs). The AVX512-BF16 kernel
 * treats denormal inputs and results as zero (vdpbf16ps's DAZ/FTZ); the AVX2 one does not.
 *
 * Common rules: sizes are size_t (a value above SIZE_MAX / 2 is a negative int: RIDGE_EINVAL);
 * row-major with leading dimensions in elements (>= max(1, stored columns)); op(B) is B (k, n)
 * or, with RIDGE_TRANS, B stored (n, k) as dense-layer weights are; A is always (m, k) row-
 * major. No pointer needs any alignment. Inputs must not overlap C. The caller owns every
 * buffer; a plan owns its packed copy of B (B may be freed after plan_create). Results are the
 * same bits for any thread count. A context is used by one thread at a time.
 */
#ifndef RIDGE_LOWP_H
#define RIDGE_LOWP_H

#include "ridge/core.h"
#include "ridge/conv.h" /* ridge_conv2d_desc, ridge_conv_algo */
#include "ridge/gemm.h" /* ridge_trans */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- int8 GEMM -------------------------------------------------------------------------------- */

typedef enum ridge_lowp_type {
    RIDGE_LOWP_S32 = 0, /* int32_t */
    RIDGE_LOWP_U8 = 1,  /* uint8_t */
    RIDGE_LOWP_S8 = 2,  /* int8_t */
    RIDGE_LOWP_F32 = 3, /* float */
} ridge_lowp_type;

/* How the int32 accumulator becomes C. A zeroed struct is "raw int32 output" (out = S32, no
 * bias). */
typedef struct ridge_requant {
    ridge_lowp_type out;     /* the type of C */
    const float *scale;      /* U8/S8/F32: n floats (per_channel) or 1, each finite and > 0 */
    int per_channel;         /* 1: scale[j] for column j; 0: scale[0] for all */
    const int32_t *bias;     /* NULL, or n int32 added to the accumulator (its scale) */
    int32_t out_zero_point;  /* U8: [0, 255]; S8: [-128, 127] */
    int relu;                /* clamp below at the zero point (U8/S8) or 0 (F32, S32) */
} ridge_requant;

/* B (op(B): k x n int8) packed for the context's int8 kernel, with its column sums. */
typedef struct ridge_qgemm_plan ridge_qgemm_plan;

/* Packs op(B) (B (k, n), or stored (n, k) with RIDGE_TRANS). *out is NULL on failure. The
 * plan's kernel (and so its ISA) is fixed here. Executing only reads the plan: several
 * contexts may execute one plan at once. Free with ridge_qgemm_plan_destroy. */
ridge_status ridge_qgemm_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                     const int8_t *b, size_t ldb, ridge_qgemm_plan **out);
void ridge_qgemm_plan_destroy(ridge_qgemm_plan *plan); /* NULL is a no-op */

/* C (m, n) = requant(sum_p (A[i][p] - a_zero_point) * B_plan[p][j]).
 * a_type is RIDGE_LOWP_U8 (a is uint8_t, a_zero_point in [0, 255]) or RIDGE_LOWP_S8 (a is
 * int8_t, a_zero_point in [-128, 127]). c has the type rq->out (rq NULL: int32), ldc in
 * elements. */
ridge_status ridge_qgemm_plan_execute(ridge_ctx *ctx, const ridge_qgemm_plan *plan,
                                      ridge_lowp_type a_type, size_t m, const void *a,
                                      size_t lda, int32_t a_zero_point, void *c, size_t ldc,
                                      const ridge_requant *rq);

/* One-shot forms (pack B, execute, free): C int32 (m, n) = (A - za) op(B). Use a plan when
 * B is reused. */
ridge_status ridge_gemm_u8s8s32(ridge_ctx *ctx, ridge_trans trans_b, size_t m, size_t n,
                                size_t k, const uint8_t *a, size_t lda, uint8_t a_zero_point,
                                const int8_t *b, size_t ldb, int32_t *c, size_t ldc);
ridge_status ridge_gemm_s8s8s32(ridge_ctx *ctx, ridge_trans trans_b, size_t m, size_t n,
                                size_t k, const int8_t *a, size_t lda, int8_t a_zero_point,
                                const int8_t *b, size_t ldb, int32_t *c, size_t ldc);

/* ---- int8 convolution ------------------------------------------------------------------------- */

/* An int8 2D convolution:
 *   y[img][oy][ox][o] = requant(sum_{ky,kx,c} (x[img][iy][ix][c] - zx) * W[o][c][ky][kx])
 * (c over the group of o: all of c_in for groups 1, channel o for depthwise) with the
 * ridge_requant epilogue of the int8 GEMM per output channel o (scale[o], bias[o]). Padding
 * taps hold zx, so they add nothing (the usual "pad with the zero point").
 * Supported: d->layout NHWC, groups 1 or depthwise (groups = c_in = c_out), any stride,
 * dilation and padding. The int32 bound is the GEMM's with k = (c_in / groups) * r * s.
 * Not supported, RIDGE_EUNSUPPORTED with the reason: other layouts, other groupings, and
 * Winograd, which does not compose with int8 (see ridge_qconv2d_plan_create). */
typedef struct ridge_qconv2d_plan ridge_qconv2d_plan;

/* Validates d, and packs the OIHW int8 weights (c_out x c_in/groups x r x s) once. algo:
 *   RIDGE_CONV_AUTO       depthwise for depthwise, pointwise where it applies, else direct
 *                         (im2col where the ISA has no int8 kernel: RIDGE_ISA_REF)
 *   RIDGE_CONV_IM2COL     lowered strips into the int8 GEMM (groups 1)
 *   RIDGE_CONV_POINTWISE  1x1, stride 1, no padding: the GEMM on x itself
 *   RIDGE_CONV_DIRECT     no lowering: the GEMM micro-kernel reads the windows of a
 *                         zero-point-padded copy of each image in place (groups 1)
 *   RIDGE_CONV_DEPTHWISE  depthwise, vectorized along the channels
 *   RIDGE_CONV_REF        the plain loops of ridge_qconv2d_forward_ref
 * RIDGE_CONV_WINOGRAD_* fails with RIDGE_EUNSUPPORTED: Winograd's weight transform G g G^T has
 * fractions (1/2, 1/4: not integers) and its input transform B^T d B sums up to 4 (F(2,3)) or
 * more taps with coefficients up to 5 (F(4,3)), so the transformed values no longer fit int8
 * and the products are not the convolution's integer products; it would need requantization in
 * the transformed domain, losing the exactness int8 GEMM has. Every algorithm gives the
 * reference's bits. */
ridge_status ridge_qconv2d_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                       const int8_t *weights, ridge_conv_algo algo,
                                       ridge_qconv2d_plan **out);
void ridge_qconv2d_plan_destroy(ridge_qconv2d_plan *plan); /* NULL is a no-op */
/* The algorithm the plan runs (AUTO resolved); RIDGE_CONV_AUTO for NULL. */
ridge_conv_algo ridge_qconv2d_plan_algo(const ridge_qconv2d_plan *plan);

/* y (n, oh, ow, c_out) NHWC, of type rq->out (rq NULL: int32) = the convolution of x (n, h, w,
 * c_in) NHWC, x_type RIDGE_LOWP_U8 or RIDGE_LOWP_S8, zero point zx. Allocates per call an im2col
 * strip of about 2 MiB, or (direct, depthwise) padded copies of the images of about 4 MiB (at
 * least one image) (RIDGE_ENOMEM if it cannot). x and y must not overlap. */
ridge_status ridge_qconv2d_forward(ridge_ctx *ctx, const ridge_qconv2d_plan *plan,
                                   ridge_lowp_type x_type, const void *x, int32_t zx, void *y,
                                   const ridge_requant *rq);

/* The same for the first n images only (1 <= n <= the plan's d->n): a plan made for the
 * largest batch serves the smaller ones (the weights do not depend on the batch). */
ridge_status ridge_qconv2d_forward_n(ridge_ctx *ctx, const ridge_qconv2d_plan *plan, size_t n,
                                     ridge_lowp_type x_type, const void *x, int32_t zx, void *y,
                                     const ridge_requant *rq);

/* The definition, as plain loops (wrap-around int32 sums, then the scalar requantization). */
ridge_status ridge_qconv2d_forward_ref(const ridge_conv2d_desc *d, ridge_lowp_type x_type,
                                       const void *x, int32_t zx, const int8_t *weights, void *y,
                                       const ridge_requant *rq);

/* ---- bf16 ------------------------------------------------------------------------------------- */

/* C (m, n) fp32 = A (m, k) op(B) (k, n) + beta C, A and B bf16, fp32 accumulation. beta == 0:
 * C is not read. k == 0: C = beta C. Packs B on every call: use a plan when B is reused. */
ridge_status ridge_gemm_bf16(ridge_ctx *ctx, ridge_trans trans_b, size_t m, size_t n, size_t k,
                             const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                             float beta, float *c, size_t ldc);

/* B (op(B): k x n bf16) packed once for the context's bf16 kernel, as for the int8 plan.
 * Executing only reads the plan. */
typedef struct ridge_bf16_plan ridge_bf16_plan;
ridge_status ridge_bf16_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                    const uint16_t *b, size_t ldb, ridge_bf16_plan **out);
void ridge_bf16_plan_destroy(ridge_bf16_plan *plan); /* NULL is a no-op */
/* C (m, n) fp32 = A (m, k) B_plan + beta C (beta == 0: C not read). */
ridge_status ridge_bf16_plan_execute(ridge_ctx *ctx, const ridge_bf16_plan *plan, size_t m,
                                     const uint16_t *a, size_t lda, float beta, float *c,
                                     size_t ldc);

/* fp32 -> bf16 rounding to nearest, ties to even; overflow rounds to +-inf; NaN stays NaN
 * (quieted, sign kept); subnormals are kept (no flush). dst may not overlap src. */
void ridge_f32_to_bf16(size_t n, const float *src, uint16_t *dst);
/* bf16 -> fp32, exact. */
void ridge_bf16_to_f32(size_t n, const uint16_t *src, float *dst);

/* One value each way (inline in the library; the same rounding). */
uint16_t ridge_bf16_from_f32(float x);
float ridge_bf16_to_f32_1(uint16_t h);

/* ---- introspection ---------------------------------------------------------------------------- */

/* The kernels the context selects: "u8s8-gemm-6x16c2-avx2, bf16-gemm-6x16-avx2" (ridge info). */
const char *ridge_lowp_describe(const ridge_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_LOWP_H */
