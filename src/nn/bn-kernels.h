/* The batch-norm loops, one template for every ISA: bn-ref.c, bn-avx2.c and bn-avx512.c each
 * define BN_ISA and include this file, and differ only in the flags they are compiled with
 * (src/nn/sources.cmake), as the optimizer loops do. The channels are the vectorized
 * dimension (16 at a time: one AVX-512 vector, two AVX2 ones) and every channel's sums run over
 * the rows in the same order at any width; the build is ISO C (no FMA contraction), so the
 * three builds give the same bits.
 *
 * The statistics make one pass over x: each block of BN_BLOCK rows is summed (its mean), then
 * its squared deviations from that mean are summed while the block is still in L1, and the
 * block is merged into the running mean and M2 in double (Chan, Golub and LeVeque's update:
 * M2 += q + delta^2 n_a n_b / (n_a + n_b)). Deviations from a block's own mean do not cancel
 * the way E[x^2] - E[x]^2 does, so this keeps the two-pass method's accuracy with one read of
 * x instead of two. The float sums are of x minus a shift (the range's first row), so that a
 * mean far from zero (1000 +- 1) does not take the sums' digits. */
#include "nn/bn-internal.h"

#define BN_CAT2(a, b) a##__##b
#define BN_CAT(a, b) BN_CAT2(a, b)
#define BN_G 16 /* channels per group */

#define BN_INLINE static inline __attribute__((always_inline))

/* Sum s of x - sft and squared deviations q from its mean bm = s / (re - rb), channels [c0, c0
 * + cn) over rows [rb, re). cn is the constant BN_G on the hot path, so s and q live in
 * registers. */
BN_INLINE void bn_block_stats(const float *restrict x, size_t C, size_t c0, const size_t cn,
                              size_t rb, size_t re, const float *restrict sft, float *s,
                              float *q, float *bm)
{
    for (size_t j = 0; j < cn; j++) s[j] = 0.0f, q[j] = 0.0f;
    for (size_t r = rb; r < re; r++)
        for (size_t j = 0; j < cn; j++) s[j] += x[r * C + c0 + j] - sft[j];
    const float inv = 1.0f / (float)(re - rb);
    for (size_t j = 0; j < cn; j++) bm[j] = s[j] * inv;
    for (size_t r = rb; r < re; r++)
        for (size_t j = 0; j < cn; j++) {
            const float t = (x[r * C + c0 + j] - sft[j]) - bm[j];
            q[j] += t * t;
        }
}

void BN_CAT(ridge_f32_bn_stats, BN_ISA)(const float *restrict x, size_t C, size_t r0, size_t r1,
                                        double *restrict mean, double *restrict m2)
{
    /* mean holds the mean of x - shift until the end */
    for (size_t c = 0; c < C; c++) mean[c] = 0.0, m2[c] = 0.0;
    const float *sft = x + r0 * C;
    size_t n = 0;
    for (size_t rb = r0; rb < r1; rb += BN_BLOCK) {
        const size_t re = rb + BN_BLOCK < r1 ? rb + BN_BLOCK : r1, nb = re - rb;
        const double wb = (double)nb / (double)(n + nb), nwb = (double)n * wb;
        for (size_t c0 = 0; c0 < C; c0 += BN_G) {
            float s[BN_G], q[BN_G], bm[BN_G];
            const size_t cn = C - c0 < BN_G ? C - c0 : BN_G;
            if (cn == BN_G) bn_block_stats(x, C, c0, BN_G, rb, re, sft + c0, s, q, bm);
            else bn_block_stats(x, C, c0, cn, rb, re, sft + c0, s, q, bm);
            for (size_t j = 0; j < cn; j++) {
                const double d = (double)bm[j] - mean[c0 + j];
                mean[c0 + j] += d * wb;
                m2[c0 + j] += (double)q[j] + d * d * nwb;
            }
        }
        n += nb;
    }
    for (size_t c = 0; c < C; c++) mean[c] += (double)sft[c];
}

/* Per block: float sums of g and g xhat, xhat = (x - mean) rstd, g = dy (relu: dy where y > 0,
 * else 0, written back to dy), added into double s0, s1. */
BN_INLINE void bn_block_grad(float *restrict dy, const float *restrict y,
                             const float *restrict x, size_t C, size_t c0, const size_t cn,
                             size_t rb, size_t re, const float *restrict m,
                             const float *restrict rs, float *f0, float *f1)
{
    for (size_t j = 0; j < cn; j++) f0[j] = 0.0f, f1[j] = 0.0f;
    for (size_t r = rb; r < re; r++)
        for (size_t j = 0; j < cn; j++) {
            const size_t i = r * C + c0 + j;
            float g = dy[i];
            if (y) g = dy[i] = g * (y[i] > 0.0f ? 1.0f : 0.0f); /* as ridge_relu_backward_f32 */
            f0[j] += g;
            f1[j] += g * ((x[i] - m[j]) * rs[j]);
        }
}

void BN_CAT(ridge_f32_bn_grad_sums, BN_ISA)(float *restrict dy, const float *restrict y,
                                            const float *restrict x, size_t C, size_t r0,
                                            size_t r1, const float *restrict mean,
                                            const float *restrict rstd, double *restrict s0,
                                            double *restrict s1)
{
    for (size_t c = 0; c < C; c++) s0[c] = 0.0, s1[c] = 0.0;
    for (size_t rb = r0; rb < r1; rb += BN_BLOCK) {
        const size_t re = rb + BN_BLOCK < r1 ? rb + BN_BLOCK : r1;
        for (size_t c0 = 0; c0 < C; c0 += BN_G) {
            float f0[BN_G], f1[BN_G];
            const size_t cn = C - c0 < BN_G ? C - c0 : BN_G;
            if (cn == BN_G && y)
                bn_block_grad(dy, y, x, C, c0, BN_G, rb, re, mean + c0, rstd + c0, f0, f1);
            else if (cn == BN_G)
                bn_block_grad(dy, NULL, x, C, c0, BN_G, rb, re, mean + c0, rstd + c0, f0, f1);
            else bn_block_grad(dy, y, x, C, c0, cn, rb, re, mean + c0, rstd + c0, f0, f1);
            for (size_t j = 0; j < cn; j++) s0[c0 + j] += f0[j], s1[c0 + j] += f1[j];
        }
    }
}

/* y = x sc + sh per channel (relu: then max with 0, NaN to 0), rows [r0, r1) */
void BN_CAT(ridge_f32_bn_apply, BN_ISA)(const float *restrict x, float *restrict y, size_t C,
                                        size_t r0, size_t r1, const float *restrict sc,
                                        const float *restrict sh, int relu)
{
    if (relu)
        for (size_t r = r0; r < r1; r++)
            for (size_t c = 0; c < C; c++) {
                const float v = x[r * C + c] * sc[c] + sh[c];
                y[r * C + c] = v > 0.0f ? v : 0.0f;
            }
    else
        for (size_t r = r0; r < r1; r++)
            for (size_t c = 0; c < C; c++) y[r * C + c] = x[r * C + c] * sc[c] + sh[c];
}

/* dx = k dy + u x + v per channel, rows [r0, r1); dx may be dy */
void BN_CAT(ridge_f32_bn_dx, BN_ISA)(const float *dy, const float *restrict x, float *dx,
                                     size_t C, size_t r0, size_t r1, const float *restrict k,
                                     const float *restrict u, const float *restrict v)
{
    for (size_t r = r0; r < r1; r++) {
        const float *g = dy + r * C, *xr = x + r * C;
        float *o = dx + r * C;
        for (size_t c = 0; c < C; c++) o[c] = k[c] * g[c] + u[c] * xr[c] + v[c];
    }
}
