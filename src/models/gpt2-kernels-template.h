/* GPT-2's non-GEMM inner loops, written once against the vec family's SIMD mapping (rv_*,
 * RV_W lanes) and vector math (RV_FN(exp)); expanded by gpt2-kernels-avx2.c and
 * gpt2-kernels-avx512.c. The algorithms are those of the reference table in gpt2-layers.c:
 *  softmax    max, then exp(x - max) summed in RV_W lanes (added in lane order), then scaled;
 *             the tail of a row goes through the same vector code on a padded copy.
 *  attention  fused and causal, per query row: scores of a block of ATT_KB keys by RV_W-lane
 *             dot products, the online-softmax update (running max, sum, output rescaled),
 *             the output kept in registers per RV_W channels; only the row's log-sum-exp is
 *             stored. Backward recomputes each block's weights from it.
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

#define ATT_KB 32 /* keys per block of the online softmax (a multiple of RV_W) */

static void att_fwd(float *out, float *lse, const float *qkv, size_t T, size_t C, size_t hs)
{
    const size_t C3 = 3 * C, nv = hs / RV_W;
    const float scale = 1.0f / sqrtf((float)hs);
    float s[ATT_KB];
    for (size_t t = 0; t < T; t++) {
        const float *q = qkv + t * C3;
        float *o = out + t * C, mx = -INFINITY, sum = 0.0f;
        memset(o, 0, hs * sizeof *o);
        for (size_t u0 = 0; u0 <= t; u0 += ATT_KB) {
            size_t nb = t + 1 - u0 < ATT_KB ? t + 1 - u0 : ATT_KB;
            float bm = -INFINITY;
            for (size_t u = 0; u < nb; u++) {
                s[u] = dot(q, qkv + (u0 + u) * C3 + C, hs) * scale;
                bm = s[u] > bm ? s[u] : bm;
            }
            float nm = bm > mx ? bm : mx, corr = expf(mx - nm);
            /* p = exp(s - nm), in vectors; the block's tail padded with -inf (p = 0) */
            for (size_t u = nb; u < (nb + RV_W - 1) / RV_W * RV_W; u++) s[u] = -INFINITY;
            rv_f vbs = rv_zero(), vnm = rv_set1(nm);
            for (size_t u = 0; u < nb; u += RV_W) {
                rv_f e = RV_FN(exp)(rv_sub(rv_load(s + u), vnm));
                rv_store(s + u, e);
                vbs = rv_add(vbs, e);
            }
            sum = sum * corr + hsum(vbs);
            rv_f vc = rv_set1(corr);
            for (size_t e = 0; e < nv; e++) {
                rv_f acc = rv_mul(rv_load(o + e * RV_W), vc);
                for (size_t u = 0; u < nb; u++)
                    acc = rv_fma(rv_set1(s[u]), rv_load(qkv + (u0 + u) * C3 + 2 * C + e * RV_W),
                                 acc);
                rv_store(o + e * RV_W, acc);
            }
            for (size_t e = nv * RV_W; e < hs; e++) {
                float a = o[e] * corr;
                for (size_t u = 0; u < nb; u++) a += s[u] * qkv[(u0 + u) * C3 + 2 * C + e];
                o[e] = a;
            }
            mx = nm;
        }
        float inv = 1.0f / sum;
        for (size_t e = 0; e < hs; e++) o[e] *= inv;
        lse[t] = mx + logf(sum);
    }
}

static void att_bwd(float *dqkv, const float *dout, const float *qkv, const float *out,
                    const float *lse, size_t T, size_t C, size_t hs)
{
    const size_t C3 = 3 * C;
    const float scale = 1.0f / sqrtf((float)hs);
    float s[ATT_KB], da[ATT_KB];
    for (size_t t = 0; t < T; t++)
        for (int part = 0; part < 3; part++) memset(dqkv + t * C3 + part * C, 0, hs * sizeof(float));
    for (size_t t = 0; t < T; t++) {
        const float *q = qkv + t * C3, *d = dout + t * C;
        const float D = dot(d, out + t * C, hs);
        float *dq = dqkv + t * C3;
        for (size_t u0 = 0; u0 <= t; u0 += ATT_KB) {
            size_t nb = t + 1 - u0 < ATT_KB ? t + 1 - u0 : ATT_KB;
            for (size_t u = 0; u < nb; u++) {
                s[u] = dot(q, qkv + (u0 + u) * C3 + C, hs) * scale - lse[t];
                da[u] = dot(d, qkv + (u0 + u) * C3 + 2 * C, hs);
            }
            for (size_t u = nb; u < (nb + RV_W - 1) / RV_W * RV_W; u++) s[u] = -INFINITY;
            for (size_t u = 0; u < nb; u += RV_W) rv_store(s + u, RV_FN(exp)(rv_load(s + u)));
            for (size_t u = 0; u < nb; u++) {
                const size_t row = (u0 + u) * C3;
                float ds = s[u] * (da[u] - D) * scale;
                axpy(dqkv + row + 2 * C, s[u], d, hs);
                axpy(dq, ds, qkv + row + C, hs);
                axpy(dqkv + row + C, ds, q, hs);
            }
        }
    }
}

const gpt2_kernels GPT2_TABLE = {softmax, adamw, att_fwd, att_bwd};
