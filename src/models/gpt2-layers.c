/* GPT-2's layers, forward and backward (src/models/gpt2-layers.h).
 *
 * Matrix products go through ridge_sgemm (bias and residual fused into its epilogue); the rest
 * are row loops split over the pool, written so gcc vectorizes the inner loops. Reductions
 * over rows that produce parameter gradients (biases, layer-norm weights, embeddings) are
 * split over COLUMNS instead, each thread walking all rows in order for its columns: no
 * atomics, no per-thread partial sums, and bits independent of the thread count.
 * Attention materializes the (T,T) weights per head as llm.c does; at GPT-2's T <= 1024 and
 * the small T of CPU training this costs little next to the matrix products.
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "models/gpt2-layers.h"
#include "ridge/gemm.h"

/* Column blocks for the column-split reductions: a multiple of a cache line of floats. */
#define COL_GRAIN 16

/* ---- encoder ---------------------------------------------------------------------------- */

typedef struct enc_job {
    float *out, *dwte, *dwpe;
    const float *wte, *wpe, *dout;
    const int *inp;
    size_t B, T, C;
} enc_job;

static void enc_fwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const enc_job *j = p;
    for (size_t r = r0; r < r1; r++) {
        const float *te = j->wte + (size_t)j->inp[r] * j->C, *pe = j->wpe + (r % j->T) * j->C;
        float *o = j->out + r * j->C;
        for (size_t c = 0; c < j->C; c++) o[c] = te[c] + pe[c];
    }
}

void ridge_gpt2_encoder_forward(ridge_ctx *ctx, float *out, const int *inp, const float *wte,
                                const float *wpe, size_t B, size_t T, size_t C)
{
    enc_job j = {.out = out, .wte = wte, .wpe = wpe, .inp = inp, .B = B, .T = T, .C = C};
    ridge_parallel_for(ctx, B * T, 1, enc_fwd_rows, &j);
}

static void enc_bwd_cols(void *p, size_t c0, size_t c1, int ith)
{
    const enc_job *j = p;
    for (size_t r = 0; r < j->B * j->T; r++) {
        const float *d = j->dout + r * j->C;
        float *te = j->dwte + (size_t)j->inp[r] * j->C, *pe = j->dwpe + (r % j->T) * j->C;
        for (size_t c = c0; c < c1; c++) {
            te[c] += d[c];
            pe[c] += d[c];
        }
    }
}

void ridge_gpt2_encoder_backward(ridge_ctx *ctx, float *dwte, float *dwpe, const float *dout,
                                 const int *inp, size_t B, size_t T, size_t C)
{
    enc_job j = {.dwte = dwte, .dwpe = dwpe, .dout = dout, .inp = inp, .B = B, .T = T, .C = C};
    ridge_parallel_for(ctx, C, COL_GRAIN, enc_bwd_cols, &j);
}

/* ---- layer norm ------------------------------------------------------------------------- */

typedef struct ln_job {
    float *out, *mean, *rstd, *dinp, *dw, *db;
    const float *inp, *w, *b, *dout, *cmean, *crstd;
    size_t N, C;
} ln_job;

static void ln_fwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const ln_job *j = p;
    size_t C = j->C;
    for (size_t r = r0; r < r1; r++) {
        const float *x = j->inp + r * C;
        float m = 0.0f;
        for (size_t c = 0; c < C; c++) m += x[c];
        m /= (float)C;
        float v = 0.0f;
        for (size_t c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
        v /= (float)C;
        float s = 1.0f / sqrtf(v + 1e-5f);
        float *o = j->out + r * C;
        for (size_t c = 0; c < C; c++) o[c] = (x[c] - m) * s * j->w[c] + j->b[c];
        j->mean[r] = m;
        j->rstd[r] = s;
    }
}

void ridge_gpt2_layernorm_forward(ridge_ctx *ctx, float *out, float *mean, float *rstd,
                                  const float *inp, const float *w, const float *b, size_t N,
                                  size_t C)
{
    ln_job j = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .w = w, .b = b, .N = N, .C = C};
    ridge_parallel_for(ctx, N, 1, ln_fwd_rows, &j);
}

/* dinp += rstd (w dout - mean(w dout) - norm mean(w dout norm)) per row */
static void ln_bwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const ln_job *j = p;
    size_t C = j->C;
    for (size_t r = r0; r < r1; r++) {
        const float *x = j->inp + r * C, *d = j->dout + r * C;
        float m = j->cmean[r], s = j->crstd[r];
        float dm = 0.0f, dnm = 0.0f;
        for (size_t c = 0; c < C; c++) {
            float dn = j->w[c] * d[c];
            dm += dn;
            dnm += dn * (x[c] - m) * s;
        }
        dm /= (float)C;
        dnm /= (float)C;
        float *di = j->dinp + r * C;
        for (size_t c = 0; c < C; c++)
            di[c] += (j->w[c] * d[c] - dm - (x[c] - m) * s * dnm) * s;
    }
}

static void ln_bwd_cols(void *p, size_t c0, size_t c1, int ith)
{
    const ln_job *j = p;
    size_t C = j->C;
    for (size_t r = 0; r < j->N; r++) {
        const float *x = j->inp + r * C, *d = j->dout + r * C;
        float m = j->cmean[r], s = j->crstd[r];
        for (size_t c = c0; c < c1; c++) {
            j->dw[c] += (x[c] - m) * s * d[c];
            j->db[c] += d[c];
        }
    }
}

void ridge_gpt2_layernorm_backward(ridge_ctx *ctx, float *dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w,
                                   const float *mean, const float *rstd, size_t N, size_t C)
{
    ln_job j = {.dinp = dinp, .dw = dw, .db = db, .dout = dout, .inp = inp, .w = w,
                .cmean = mean, .crstd = rstd, .N = N, .C = C};
    ridge_parallel_for(ctx, N, 1, ln_bwd_rows, &j);
    ridge_parallel_for(ctx, C, COL_GRAIN, ln_bwd_cols, &j);
}

/* ---- matmul ----------------------------------------------------------------------------- */

ridge_status ridge_gpt2_matmul_forward(ridge_ctx *ctx, float *out, const float *inp,
                                       const float *w, const float *bias,
                                       const float *residual, size_t N, size_t C, size_t OC)
{
    ridge_epilogue e = {0};
    if (bias) e.bias_kind = RIDGE_BIAS_COL, e.bias = bias;
    if (residual) e.residual = residual, e.ldr = OC;
    return ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, N, OC, C, 1.0f, inp, C, w, C, 0.0f,
                          out, OC, &e);
}

typedef struct colsum_job {
    float *db;
    const float *dout;
    size_t N, OC;
} colsum_job;

static void colsum_cols(void *p, size_t c0, size_t c1, int ith)
{
    const colsum_job *j = p;
    for (size_t r = 0; r < j->N; r++) {
        const float *d = j->dout + r * j->OC;
        for (size_t c = c0; c < c1; c++) j->db[c] += d[c];
    }
}

ridge_status ridge_gpt2_matmul_backward(ridge_ctx *ctx, float *dinp, float *dw, float *dbias,
                                        const float *dout, const float *inp, const float *w,
                                        size_t N, size_t C, size_t OC)
{
    ridge_status st = RIDGE_OK;
    if (dinp)
        st = ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, N, C, OC, 1.0f, dout, OC, w, C,
                         0.0f, dinp, C);
    if (!st)
        st = ridge_sgemm(ctx, RIDGE_TRANS, RIDGE_NO_TRANS, OC, C, N, 1.0f, dout, OC, inp, C,
                         1.0f, dw, C);
    if (!st && dbias) {
        colsum_job j = {dbias, dout, N, OC};
        ridge_parallel_for(ctx, OC, COL_GRAIN, colsum_cols, &j);
    }
    return st;
}

/* ---- attention -------------------------------------------------------------------------- */

typedef struct att_job {
    float *out, *att, *dqkv, *scratch;
    const float *qkv, *catt, *dout;
    size_t B, T, C, NH;
} att_job;

/* One (b, h) per item: its q, k, v are hs-wide column slices of qkv's rows. */
static void att_fwd_heads(void *p, size_t i0, size_t i1, int ith)
{
    const att_job *j = p;
    size_t T = j->T, C = j->C, C3 = 3 * C, hs = C / j->NH;
    float scale = 1.0f / sqrtf((float)hs);
    for (size_t i = i0; i < i1; i++) {
        size_t b = i / j->NH, h = i % j->NH;
        const float *base = j->qkv + b * T * C3 + h * hs;
        float *A = j->att + i * T * T;
        for (size_t t = 0; t < T; t++) {
            const float *q = base + t * C3;
            float *a = A + t * T, mx = -INFINITY;
            for (size_t t2 = 0; t2 <= t; t2++) {
                const float *k = base + t2 * C3 + C;
                float s = 0.0f;
                for (size_t e = 0; e < hs; e++) s += q[e] * k[e];
                a[t2] = s * scale;
                if (a[t2] > mx) mx = a[t2];
            }
            float sum = 0.0f;
            for (size_t t2 = 0; t2 <= t; t2++) sum += (a[t2] = expf(a[t2] - mx));
            float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
            for (size_t t2 = 0; t2 <= t; t2++) a[t2] *= inv;
            for (size_t t2 = t + 1; t2 < T; t2++) a[t2] = 0.0f;
            float *o = j->out + (b * T + t) * C + h * hs;
            for (size_t e = 0; e < hs; e++) o[e] = 0.0f;
            for (size_t t2 = 0; t2 <= t; t2++) {
                const float *v = base + t2 * C3 + 2 * C;
                for (size_t e = 0; e < hs; e++) o[e] += a[t2] * v[e];
            }
        }
    }
}

void ridge_gpt2_attention_forward(ridge_ctx *ctx, float *out, float *att, const float *qkv,
                                  size_t B, size_t T, size_t C, size_t NH)
{
    att_job j = {.out = out, .att = att, .qkv = qkv, .B = B, .T = T, .C = C, .NH = NH};
    ridge_parallel_for(ctx, B * NH, 1, att_fwd_heads, &j);
}

static void att_bwd_heads(void *p, size_t i0, size_t i1, int ith)
{
    const att_job *j = p;
    size_t T = j->T, C = j->C, C3 = 3 * C, hs = C / j->NH;
    float scale = 1.0f / sqrtf((float)hs);
    float *da = j->scratch + (size_t)ith * T; /* d(att) of one query row */
    for (size_t i = i0; i < i1; i++) {
        size_t b = i / j->NH, h = i % j->NH;
        const float *base = j->qkv + b * T * C3 + h * hs;
        float *dbase = j->dqkv + b * T * C3 + h * hs;
        for (size_t t = 0; t < T; t++)
            for (size_t e = 0; e < hs; e++)
                dbase[t * C3 + e] = dbase[t * C3 + C + e] = dbase[t * C3 + 2 * C + e] = 0.0f;
        const float *A = j->catt + i * T * T;
        for (size_t t = 0; t < T; t++) {
            const float *a = A + t * T, *dout = j->dout + (b * T + t) * C + h * hs;
            /* out_t = sum a[t2] v_t2: gradients to a and v */
            float dot = 0.0f;
            for (size_t t2 = 0; t2 <= t; t2++) {
                const float *v = base + t2 * C3 + 2 * C;
                float *dv = dbase + t2 * C3 + 2 * C, s = 0.0f;
                for (size_t e = 0; e < hs; e++) {
                    s += v[e] * dout[e];
                    dv[e] += a[t2] * dout[e];
                }
                da[t2] = s;
                dot += a[t2] * s;
            }
            /* softmax backward, then the scaled q.k products */
            const float *q = base + t * C3;
            float *dq = dbase + t * C3;
            for (size_t t2 = 0; t2 <= t; t2++) {
                float dp = a[t2] * (da[t2] - dot) * scale;
                const float *k = base + t2 * C3 + C;
                float *dk = dbase + t2 * C3 + C;
                for (size_t e = 0; e < hs; e++) {
                    dq[e] += dp * k[e];
                    dk[e] += dp * q[e];
                }
            }
        }
    }
}

void ridge_gpt2_attention_backward(ridge_ctx *ctx, float *dqkv, const float *dout,
                                   const float *qkv, const float *att, float *scratch, size_t B,
                                   size_t T, size_t C, size_t NH)
{
    att_job j = {.dqkv = dqkv, .scratch = scratch, .qkv = qkv, .catt = att, .dout = dout,
                 .B = B, .T = T, .C = C, .NH = NH};
    ridge_parallel_for(ctx, B * NH, 1, att_bwd_heads, &j);
}

/* ---- GELU ------------------------------------------------------------------------------- */

#define GELU_K 0.7978845608028654f /* sqrt(2/pi) */

typedef struct gelu_job {
    float *out;
    const float *inp, *dout;
} gelu_job;

static void gelu_fwd_range(void *p, size_t i0, size_t i1, int ith)
{
    const gelu_job *j = p;
    for (size_t i = i0; i < i1; i++) {
        float x = j->inp[i];
        j->out[i] = 0.5f * x * (1.0f + tanhf(GELU_K * (x + 0.044715f * x * x * x)));
    }
}

static void gelu_bwd_range(void *p, size_t i0, size_t i1, int ith)
{
    const gelu_job *j = p;
    for (size_t i = i0; i < i1; i++) {
        float x = j->inp[i];
        float u = GELU_K * (x + 0.044715f * x * x * x);
        float th = tanhf(u), sech2 = 1.0f - th * th;
        float g = 0.5f * (1.0f + th) + 0.5f * x * sech2 * GELU_K * (1.0f + 3.0f * 0.044715f * x * x);
        j->out[i] = g * j->dout[i];
    }
}

void ridge_gpt2_gelu_forward(ridge_ctx *ctx, float *out, const float *inp, size_t n)
{
    gelu_job j = {out, inp, NULL};
    ridge_parallel_for(ctx, n, 1024, gelu_fwd_range, &j);
}

void ridge_gpt2_gelu_backward(ridge_ctx *ctx, float *dinp, const float *inp, const float *dout,
                              size_t n)
{
    gelu_job j = {dinp, inp, dout};
    ridge_parallel_for(ctx, n, 1024, gelu_bwd_range, &j);
}

/* ---- softmax + cross-entropy ------------------------------------------------------------ */

typedef struct ce_job {
    float *x, *losses;
    const int *targets;
    float dloss;
    size_t V, Vp;
} ce_job;

static void ce_fwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const ce_job *j = p;
    for (size_t r = r0; r < r1; r++) {
        float *x = j->x + r * j->Vp, mx = -INFINITY, sum = 0.0f;
        for (size_t i = 0; i < j->V; i++) mx = x[i] > mx ? x[i] : mx;
        for (size_t i = 0; i < j->V; i++) sum += (x[i] = expf(x[i] - mx));
        float inv = 1.0f / sum;
        for (size_t i = 0; i < j->V; i++) x[i] *= inv;
        for (size_t i = j->V; i < j->Vp; i++) x[i] = 0.0f;
        if (j->targets) j->losses[r] = -logf(x[j->targets[r]]);
    }
}

void ridge_gpt2_softmax_crossentropy_forward(ridge_ctx *ctx, float *x, float *losses,
                                             const int *targets, size_t N, size_t V, size_t Vp)
{
    ce_job j = {.x = x, .losses = losses, .targets = targets, .V = V, .Vp = Vp};
    ridge_parallel_for(ctx, N, 1, ce_fwd_rows, &j);
}

static void ce_bwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const ce_job *j = p;
    for (size_t r = r0; r < r1; r++) {
        float *x = j->x + r * j->Vp, pt = x[j->targets[r]];
        for (size_t i = 0; i < j->V; i++) x[i] *= j->dloss;
        x[j->targets[r]] = (pt - 1.0f) * j->dloss;
        for (size_t i = j->V; i < j->Vp; i++) x[i] = 0.0f;
    }
}

void ridge_gpt2_softmax_crossentropy_backward(ridge_ctx *ctx, float *x, const int *targets,
                                              float dloss, size_t N, size_t V, size_t Vp)
{
    ce_job j = {.x = x, .targets = targets, .dloss = dloss, .V = V, .Vp = Vp};
    ridge_parallel_for(ctx, N, 1, ce_bwd_rows, &j);
}

/* ---- AdamW ------------------------------------------------------------------------------ */

typedef struct adamw_job {
    float *p, *m, *v;
    const float *g;
    float lr, b1, b2, eps, wd, c1, c2;
} adamw_job;

static void adamw_range(void *arg, size_t i0, size_t i1, int ith)
{
    const adamw_job *j = arg;
    for (size_t i = i0; i < i1; i++) {
        float g = j->g[i];
        float m = j->b1 * j->m[i] + (1.0f - j->b1) * g;
        float v = j->b2 * j->v[i] + (1.0f - j->b2) * g * g;
        j->m[i] = m;
        j->v[i] = v;
        float mh = m / j->c1, vh = v / j->c2;
        j->p[i] -= j->lr * (mh / (sqrtf(vh) + j->eps) + j->wd * j->p[i]);
    }
}

void ridge_gpt2_adamw(ridge_ctx *ctx, float *params, const float *grads, float *m, float *v,
                      size_t n, int t, float lr, float beta1, float beta2, float eps,
                      float weight_decay)
{
    adamw_job j = {params, m, v, grads, lr, beta1, beta2, eps, weight_decay,
                   1.0f - powf(beta1, (float)t), 1.0f - powf(beta2, (float)t)};
    ridge_parallel_for(ctx, n, 4096, adamw_range, &j);
}
