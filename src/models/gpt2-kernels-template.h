/* GPT-2's non-GEMM inner loops, written once against the vec family's SIMD mapping (rv_*,
 * RV_W lanes) and vector math (RV_FN(exp)); expanded by gpt2-kernels-avx2.c and
 * gpt2-kernels-avx512.c. The algorithms are those of the reference table in gpt2-layers.c:
 *  softmax    max, then exp(x - max) summed in RV_W lanes (added in lane order), then scaled;
 *             the tail of a row goes through the same vector code on a padded copy.
 *  attention  per query row: scores by RV_W-lane dot products over the head size, the causal
 *             softmax above, the output as a sum of value rows kept in registers per block of
 *             RV_W channels. Backward recomputes nothing: it reads the stored weights.
 *  adamw      the reference's operations in its order, RV_W lanes at a time (rv_sqrt is the one
 *             name this file adds to the mapping, in the two ISA files).
 * Head sizes that are not a multiple of RV_W take a scalar tail.
 * Needs: GPT2_TABLE (the table's name) and the mapping and math included before it.
 */
#include <math.h>
#include <string.h>

#include "models/gpt2-kernels.h"

static inline float hsum(rv_f v)
{
    float t[RV_W], s = 0.0f;
    rv_store(t, v);
    for (int i = 0; i < RV_W; i++) s += t[i];
    return s;
}

static inline float hmax(rv_f v)
{
    float t[RV_W];
    rv_store(t, v);
    float s = t[0];
    for (int i = 1; i < RV_W; i++) s = t[i] > s ? t[i] : s;
    return s;
}

static inline float dot(const float *a, const float *b, size_t n)
{
    rv_f acc = rv_zero();
    size_t i = 0;
    for (; i + RV_W <= n; i += RV_W) acc = rv_fma(rv_load(a + i), rv_load(b + i), acc);
    float s = hsum(acc);
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* y += a x */
static inline void axpy(float *y, float a, const float *x, size_t n)
{
    rv_f va = rv_set1(a);
    size_t i = 0;
    for (; i + RV_W <= n; i += RV_W) rv_store(y + i, rv_fma(va, rv_load(x + i), rv_load(y + i)));
    for (; i < n; i++) y[i] += a * x[i];
}

static void softmax(float *x, size_t n)
{
    rv_f vmx = rv_set1(-INFINITY);
    size_t i = 0, full = n - n % RV_W;
    for (; i < full; i += RV_W) vmx = rv_max(rv_load(x + i), vmx);
    float mx = hmax(vmx);
    for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    rv_f vm = rv_set1(mx), vs = rv_zero();
    for (i = 0; i < full; i += RV_W) {
        rv_f e = RV_FN(exp)(rv_sub(rv_load(x + i), vm));
        rv_store(x + i, e);
        vs = rv_add(vs, e);
    }
    if (full < n) { /* the tail, padded with -inf (exp gives 0) */
        float t[RV_W];
        for (int k = 0; k < RV_W; k++) t[k] = full + k < n ? x[full + k] : -INFINITY;
        rv_f e = RV_FN(exp)(rv_sub(rv_load(t), vm));
        rv_store(t, e);
        vs = rv_add(vs, e);
        memcpy(x + full, t, (n - full) * sizeof *x);
    }
    rv_f inv = rv_set1(1.0f / hsum(vs));
    for (i = 0; i < full; i += RV_W) rv_store(x + i, rv_mul(rv_load(x + i), inv));
    float s = 1.0f / hsum(vs);
    for (; i < n; i++) x[i] *= s;
}

static void adamw(float *restrict p, const float *restrict g, float *restrict m,
                  float *restrict v, size_t n, const gpt2_adamw_args *a)
{
    const float b1 = a->b1, b2 = a->b2, lr = a->lr, eps = a->eps, wd = a->wd, c1 = a->c1,
                c2 = a->c2;
    const rv_f vb1 = rv_set1(b1), vb2 = rv_set1(b2), v1b1 = rv_set1(1.0f - b1),
               v1b2 = rv_set1(1.0f - b2), vlr = rv_set1(lr), veps = rv_set1(eps),
               vwd = rv_set1(wd), vc1 = rv_set1(c1), vc2 = rv_set1(c2);
    size_t i = 0;
    /* the same operations in the same order as the reference (no fused multiply-adds) */
    for (; i + RV_W <= n; i += RV_W) {
        rv_f gi = rv_load(g + i), pi = rv_load(p + i);
        rv_f mi = rv_add(rv_mul(vb1, rv_load(m + i)), rv_mul(v1b1, gi));
        rv_f vi = rv_add(rv_mul(vb2, rv_load(v + i)), rv_mul(rv_mul(v1b2, gi), gi));
        rv_store(m + i, mi);
        rv_store(v + i, vi);
        rv_f upd = rv_div(rv_div(mi, vc1), rv_add(rv_sqrt(rv_div(vi, vc2)), veps));
        rv_store(p + i, rv_sub(pi, rv_mul(vlr, rv_add(upd, rv_mul(vwd, pi)))));
    }
    for (; i < n; i++) {
        float mi = b1 * m[i] + (1.0f - b1) * g[i];
        float vi = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        p[i] -= lr * ((mi / c1) / (sqrtf(vi / c2) + eps) + wd * p[i]);
    }
}

static void att_fwd(float *out, float *att, const float *qkv, size_t T, size_t C, size_t hs)
{
    const size_t C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs);
    for (size_t t = 0; t < T; t++) {
        const float *q = qkv + t * C3;
        float *a = att + t * T;
        for (size_t u = 0; u <= t; u++) a[u] = dot(q, qkv + u * C3 + C, hs) * scale;
        softmax(a, t + 1);
        memset(a + t + 1, 0, (T - t - 1) * sizeof *a);
        float *o = out + t * C;
        size_t e = 0;
        for (; e + RV_W <= hs; e += RV_W) {
            rv_f acc = rv_zero();
            for (size_t u = 0; u <= t; u++)
                acc = rv_fma(rv_set1(a[u]), rv_load(qkv + u * C3 + 2 * C + e), acc);
            rv_store(o + e, acc);
        }
        for (; e < hs; e++) {
            float s = 0.0f;
            for (size_t u = 0; u <= t; u++) s += a[u] * qkv[u * C3 + 2 * C + e];
            o[e] = s;
        }
    }
}

static void att_bwd(float *dqkv, const float *dout, const float *qkv, const float *att,
                    float *da, size_t T, size_t C, size_t hs)
{
    const size_t C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs);
    for (size_t t = 0; t < T; t++)
        for (int part = 0; part < 3; part++) memset(dqkv + t * C3 + part * C, 0, hs * sizeof(float));
    for (size_t t = 0; t < T; t++) {
        const float *a = att + t * T, *d = dout + t * C, *q = qkv + t * C3;
        float sum = 0.0f;
        for (size_t u = 0; u <= t; u++) {
            da[u] = dot(qkv + u * C3 + 2 * C, d, hs);
            axpy(dqkv + u * C3 + 2 * C, a[u], d, hs);
            sum += a[u] * da[u];
        }
        float *dq = dqkv + t * C3;
        for (size_t u = 0; u <= t; u++) {
            float dp = a[u] * (da[u] - sum) * scale;
            axpy(dq, dp, qkv + u * C3 + C, hs);
            axpy(dqkv + u * C3 + C, dp, q, hs);
        }
    }
}

const gpt2_kernels GPT2_TABLE = {softmax, adamw, att_fwd, att_bwd};
