/* GPT-2's layers, forward and backward (src/models/gpt2-layers.h).
 *
 * Matrix products go through ridge_sgemm (bias and residual fused into its epilogue); the rest
 * are row loops split over the pool, written so gcc vectorizes the inner loops. Reductions
 * over rows that produce parameter gradients (biases, layer-norm weights, embeddings) are
 * split over COLUMNS instead, each thread walking all rows in order for its columns: no
 * atomics, no per-thread partial sums, and bits independent of the thread count.
 * Attention is fused: causal, an online softmax over blocks of keys, so the forward pass keeps
 * only each query's log-sum-exp (not llm.c's two (T,T) tensors per layer and head: 2 x 604 MB
 * per sequence at T = 1024 for GPT-2 124M), and the backward pass recomputes the weights.
 */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "models/gpt2-kernels.h"
#include "models/gpt2-layers.h"
#include "ridge/gemm.h"
#include "ridge/gpt2.h"
#include "ridge/vec.h"

const char *ridge_gpt2_describe(const ridge_ctx *ctx)
{
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512: return "gpt2-avx512 (fused attention, softmax, adamw; f32x16)";
    case RIDGE_ISA_AVX2: return "gpt2-avx2 (fused attention, softmax, adamw; f32x8)";
    default: return "gpt2-ref (fused attention, softmax, adamw; scalar, libm)";
    }
}

/* The inner loops for the context's ISA (gpt2-kernels.h). */
static const gpt2_kernels *kernels(const ridge_ctx *ctx)
{
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512: return &ridge_gpt2_kernels__avx512;
    case RIDGE_ISA_AVX2: return &ridge_gpt2_kernels__avx2;
    default: return &ridge_gpt2_kernels__ref;
    }
}

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

static void ridge_gpt2_encoder_forward_untimed(ridge_ctx *ctx, float *out, const int *inp, const float *wte,
                                const float *wpe, size_t B, size_t T, size_t C)
{
    enc_job j = {.out = out, .wte = wte, .wpe = wpe, .inp = inp, .B = B, .T = T, .C = C};
    ridge_parallel_for(ctx, B * T, 1, enc_fwd_rows, &j);
}

/* ridge_gpt2_encoder_forward, recorded by the profiler as "gpt2.encoder.fwd". */
void ridge_gpt2_encoder_forward(ridge_ctx *ctx, float *out, const int *inp, const float *wte,
                                const float *wpe, size_t B, size_t T, size_t C)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_encoder_forward_untimed(ctx, out, inp, wte, wpe, B, T, C);
    RIDGE_PROF_END(ctx, t0, "gpt2.encoder.fwd", "", (double)B * T * C, 4.0 * (3.0 * B * T * C + (double)B * T), 4.0 * (3.0 * B * T * C), "%zux%zux%zu", B, T, C);
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

static void ridge_gpt2_encoder_backward_untimed(ridge_ctx *ctx, float *dwte, float *dwpe, const float *dout,
                                 const int *inp, size_t B, size_t T, size_t C)
{
    enc_job j = {.dwte = dwte, .dwpe = dwpe, .dout = dout, .inp = inp, .B = B, .T = T, .C = C};
    ridge_parallel_for(ctx, C, COL_GRAIN, enc_bwd_cols, &j);
}

/* ridge_gpt2_encoder_backward, recorded by the profiler as "gpt2.encoder.bwd". */
void ridge_gpt2_encoder_backward(ridge_ctx *ctx, float *dwte, float *dwpe, const float *dout,
                                 const int *inp, size_t B, size_t T, size_t C)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_encoder_backward_untimed(ctx, dwte, dwpe, dout, inp, B, T, C);
    RIDGE_PROF_END(ctx, t0, "gpt2.encoder.bwd", "", 2.0 * B * T * C, 4.0 * (5.0 * B * T * C), 4.0 * (3.0 * B * T * C), "%zux%zux%zu", B, T, C);
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

static void ridge_gpt2_layernorm_forward_untimed(ridge_ctx *ctx, float *out, float *mean, float *rstd,
                                  const float *inp, const float *w, const float *b, size_t N,
                                  size_t C)
{
    ln_job j = {.out = out, .mean = mean, .rstd = rstd, .inp = inp, .w = w, .b = b, .N = N, .C = C};
    ridge_parallel_for(ctx, N, 1, ln_fwd_rows, &j);
}

/* ridge_gpt2_layernorm_forward, recorded by the profiler as "layernorm.fwd". */
void ridge_gpt2_layernorm_forward(ridge_ctx *ctx, float *out, float *mean, float *rstd,
                                  const float *inp, const float *w, const float *b, size_t N,
                                  size_t C)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_layernorm_forward_untimed(ctx, out, mean, rstd, inp, w, b, N, C);
    RIDGE_PROF_END(ctx, t0, "layernorm.fwd", "", 7.0 * N * C, 4.0 * (2.0 * N * C + 2.0 * C + 2.0 * N), 4.0 * (2.0 * N * C), "%zux%zu", N, C);
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

static void ridge_gpt2_layernorm_backward_untimed(ridge_ctx *ctx, float *dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w,
                                   const float *mean, const float *rstd, size_t N, size_t C)
{
    ln_job j = {.dinp = dinp, .dw = dw, .db = db, .dout = dout, .inp = inp, .w = w,
                .cmean = mean, .crstd = rstd, .N = N, .C = C};
    ridge_parallel_for(ctx, N, 1, ln_bwd_rows, &j);
    ridge_parallel_for(ctx, C, COL_GRAIN, ln_bwd_cols, &j);
}

/* ridge_gpt2_layernorm_backward, recorded by the profiler as "layernorm.bwd". */
void ridge_gpt2_layernorm_backward(ridge_ctx *ctx, float *dinp, float *dw, float *db,
                                   const float *dout, const float *inp, const float *w,
                                   const float *mean, const float *rstd, size_t N, size_t C)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_layernorm_backward_untimed(ctx, dinp, dw, db, dout, inp, w, mean, rstd, N, C);
    RIDGE_PROF_END(ctx, t0, "layernorm.bwd", "", 12.0 * N * C, 4.0 * (4.0 * N * C + 4.0 * C + 2.0 * N), 4.0 * (4.0 * N * C), "%zux%zu", N, C);
}

/* ---- matmul ----------------------------------------------------------------------------- */

static ridge_status ridge_gpt2_matmul_forward_untimed(ridge_ctx *ctx, float *out, const float *inp,
                                       const float *w, const float *bias,
                                       const float *residual, size_t N, size_t C, size_t OC)
{
    ridge_epilogue e = {0};
    if (bias) e.bias_kind = RIDGE_BIAS_COL, e.bias = bias;
    if (residual) e.residual = residual, e.ldr = OC;
    return ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, N, OC, C, 1.0f, inp, C, w, C, 0.0f,
                          out, OC, &e);
}

/* ridge_gpt2_matmul_forward, recorded by the profiler as "matmul.fwd". */
ridge_status ridge_gpt2_matmul_forward(ridge_ctx *ctx, float *out, const float *inp,
                                       const float *w, const float *bias,
                                       const float *residual, size_t N, size_t C, size_t OC)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_gpt2_matmul_forward_untimed(ctx, out, inp, w, bias, residual, N, C, OC);
    RIDGE_PROF_END(ctx, t0, "matmul.fwd", "", 2.0 * N * C * OC, 4.0 * ((double)N * C + (double)C * OC + (double)N * OC * (residual ? 2 : 1)), 4.0 * ((double)N * C + (double)C * OC + (double)N * OC), "%zux%zux%zu", N, OC, C);
    return st;
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

static ridge_status ridge_gpt2_matmul_backward_untimed(ridge_ctx *ctx, float *dinp, float *dw, float *dbias,
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

/* ridge_gpt2_matmul_backward, recorded by the profiler as "matmul.bwd". */
ridge_status ridge_gpt2_matmul_backward(ridge_ctx *ctx, float *dinp, float *dw, float *dbias,
                                        const float *dout, const float *inp, const float *w,
                                        size_t N, size_t C, size_t OC)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_gpt2_matmul_backward_untimed(ctx, dinp, dw, dbias, dout, inp, w, N, C, OC);
    RIDGE_PROF_END(ctx, t0, "matmul.bwd", "", 4.0 * N * C * OC, 4.0 * (2.0 * N * OC + 2.0 * N * C + 3.0 * C * OC), 4.0 * ((double)N * C + (double)C * OC + (double)N * OC), "%zux%zux%zu", N, OC, C);
    return st;
}

/* ---- attention -------------------------------------------------------------------------- */

/* Keys are taken ATT_KB at a time: scores of a block, then the online-softmax update of the
 * running max, sum and output (the (T,T) weights are never stored). */
#define ATT_KB 32

static void att_fwd_ref(float *out, float *lse, const float *qkv, size_t T, size_t C, size_t hs)
{
    size_t C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs), s[ATT_KB];
    for (size_t t = 0; t < T; t++) {
        const float *q = qkv + t * C3;
        float *o = out + t * C, mx = -INFINITY, sum = 0.0f;
        for (size_t e = 0; e < hs; e++) o[e] = 0.0f;
        for (size_t u0 = 0; u0 <= t; u0 += ATT_KB) {
            size_t nb = RIDGE_MIN(ATT_KB, t + 1 - u0);
            float bm = -INFINITY;
            for (size_t u = 0; u < nb; u++) {
                const float *k = qkv + (u0 + u) * C3 + C;
                float d = 0.0f;
                for (size_t e = 0; e < hs; e++) d += q[e] * k[e];
                s[u] = d * scale;
                bm = s[u] > bm ? s[u] : bm;
            }
            float nm = bm > mx ? bm : mx, corr = expf(mx - nm), bs = 0.0f;
            for (size_t u = 0; u < nb; u++) bs += (s[u] = expf(s[u] - nm));
            sum = sum * corr + bs;
            for (size_t e = 0; e < hs; e++) o[e] *= corr;
            for (size_t u = 0; u < nb; u++) {
                const float *v = qkv + (u0 + u) * C3 + 2 * C;
                for (size_t e = 0; e < hs; e++) o[e] += s[u] * v[e];
            }
            mx = nm;
        }
        float inv = 1.0f / sum;
        for (size_t e = 0; e < hs; e++) o[e] *= inv;
        lse[t] = mx + logf(sum);
    }
}

/* Recomputes each weight p = exp(q.k scale - lse); with D = dout . out (= sum p d(p)):
 * dv += p dout, ds = p (dout . v - D) scale, dq += ds k, dk += ds q. */
static void att_bwd_ref(float *dqkv, const float *dout, const float *qkv, const float *out,
                        const float *lse, size_t T, size_t C, size_t hs)
{
    size_t C3 = 3 * C;
    float scale = 1.0f / sqrtf((float)hs);
    for (size_t t = 0; t < T; t++)
        for (size_t e = 0; e < hs; e++)
            dqkv[t * C3 + e] = dqkv[t * C3 + C + e] = dqkv[t * C3 + 2 * C + e] = 0.0f;
    for (size_t t = 0; t < T; t++) {
        const float *q = qkv + t * C3, *d = dout + t * C, *o = out + t * C;
        float D = 0.0f;
        for (size_t e = 0; e < hs; e++) D += d[e] * o[e];
        float *dq = dqkv + t * C3;
        for (size_t u = 0; u <= t; u++) {
            const float *k = qkv + u * C3 + C, *v = qkv + u * C3 + 2 * C;
            float *dk = dqkv + u * C3 + C, *dv = dqkv + u * C3 + 2 * C;
            float sc = 0.0f, da = 0.0f;
            for (size_t e = 0; e < hs; e++) {
                sc += q[e] * k[e];
                da += d[e] * v[e];
            }
            float pu = expf(sc * scale - lse[t]), ds = pu * (da - D) * scale;
            for (size_t e = 0; e < hs; e++) {
                dv[e] += pu * d[e];
                dq[e] += ds * k[e];
                dk[e] += ds * q[e];
            }
        }
    }
}

typedef struct att_job {
    const gpt2_kernels *k;
    float *out, *lse, *dqkv;
    const float *qkv, *cout, *clse, *dout;
    size_t T, C, NH;
} att_job;

/* One (b, h) per item: its q, k, v are hs-wide column slices of qkv's rows. */
static void att_fwd_heads(void *p, size_t i0, size_t i1, int ith)
{
    const att_job *j = p;
    size_t T = j->T, C = j->C, hs = C / j->NH;
    for (size_t i = i0; i < i1; i++) {
        size_t b = i / j->NH, h = i % j->NH;
        j->k->att_fwd(j->out + b * T * C + h * hs, j->lse + i * T,
                      j->qkv + b * T * 3 * C + h * hs, T, C, hs);
    }
}

static void ridge_gpt2_attention_forward_untimed(ridge_ctx *ctx, float *out, float *lse, const float *qkv,
                                  size_t B, size_t T, size_t C, size_t NH)
{
    att_job j = {.k = kernels(ctx), .out = out, .lse = lse, .qkv = qkv, .T = T, .C = C, .NH = NH};
    ridge_parallel_for(ctx, B * NH, 1, att_fwd_heads, &j);
}

/* ridge_gpt2_attention_forward, recorded by the profiler as "attention.fwd". */
void ridge_gpt2_attention_forward(ridge_ctx *ctx, float *out, float *lse, const float *qkv,
                                  size_t B, size_t T, size_t C, size_t NH)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_attention_forward_untimed(ctx, out, lse, qkv, B, T, C, NH);
    RIDGE_PROF_END(ctx, t0, "attention.fwd", "", 2.0 * B * T * T * C, 4.0 * (4.0 * B * T * C + (double)B * NH * T), 4.0 * (4.0 * B * T * C), "%zux%zux%zu h%zu", B, T, C, NH);
}

static void att_bwd_heads(void *p, size_t i0, size_t i1, int ith)
{
    const att_job *j = p;
    size_t T = j->T, C = j->C, hs = C / j->NH;
    for (size_t i = i0; i < i1; i++) {
        size_t b = i / j->NH, h = i % j->NH;
        j->k->att_bwd(j->dqkv + b * T * 3 * C + h * hs, j->dout + b * T * C + h * hs,
                      j->qkv + b * T * 3 * C + h * hs, j->cout + b * T * C + h * hs,
                      j->clse + i * T, T, C, hs);
    }
}

static void ridge_gpt2_attention_backward_untimed(ridge_ctx *ctx, float *dqkv, const float *dout,
                                   const float *qkv, const float *out, const float *lse,
                                   size_t B, size_t T, size_t C, size_t NH)
{
    att_job j = {.k = kernels(ctx), .dqkv = dqkv, .qkv = qkv, .cout = out, .clse = lse,
                 .dout = dout, .T = T, .C = C, .NH = NH};
    ridge_parallel_for(ctx, B * NH, 1, att_bwd_heads, &j);
}

/* ridge_gpt2_attention_backward, recorded by the profiler as "attention.bwd". */
void ridge_gpt2_attention_backward(ridge_ctx *ctx, float *dqkv, const float *dout,
                                   const float *qkv, const float *out, const float *lse,
                                   size_t B, size_t T, size_t C, size_t NH)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_attention_backward_untimed(ctx, dqkv, dout, qkv, out, lse, B, T, C, NH);
    RIDGE_PROF_END(ctx, t0, "attention.bwd", "", 4.0 * B * T * T * C, 4.0 * (8.0 * B * T * C + (double)B * NH * T), 4.0 * (8.0 * B * T * C), "%zux%zux%zu h%zu", B, T, C, NH);
}

/* ---- GELU (the vec family's) ------------------------------------------------------------- */

static ridge_status ridge_gpt2_gelu_forward_untimed(ridge_ctx *ctx, float *out, const float *inp, size_t n)
{
    return ridge_gelu_f32(ctx, out, inp, n);
}

/* ridge_gpt2_gelu_forward, recorded by the profiler as "gelu.fwd". */
ridge_status ridge_gpt2_gelu_forward(ridge_ctx *ctx, float *out, const float *inp, size_t n)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_gpt2_gelu_forward_untimed(ctx, out, inp, n);
    RIDGE_PROF_END(ctx, t0, "gelu.fwd", "", 15.0 * n, 8.0 * n, 8.0 * n, "%zu", n);
    return st;
}

static ridge_status ridge_gpt2_gelu_backward_untimed(ridge_ctx *ctx, float *dinp, const float *inp,
                                      const float *dout, size_t n)
{
    return ridge_gelu_backward_f32(ctx, dinp, dout, inp, n);
}

/* ridge_gpt2_gelu_backward, recorded by the profiler as "gelu.bwd". */
ridge_status ridge_gpt2_gelu_backward(ridge_ctx *ctx, float *dinp, const float *inp,
                                      const float *dout, size_t n)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_gpt2_gelu_backward_untimed(ctx, dinp, inp, dout, n);
    RIDGE_PROF_END(ctx, t0, "gelu.bwd", "", 20.0 * n, 12.0 * n, 12.0 * n, "%zu", n);
    return st;
}

/* ---- softmax + cross-entropy ------------------------------------------------------------ */

typedef struct ce_job {
    const gpt2_kernels *k;
    float *x, *losses;
    const int *targets;
    float dloss;
    size_t V, Vp;
} ce_job;

static void softmax_ref(float *x, size_t n)
{
    float mx = -INFINITY, sum = 0.0f;
    for (size_t i = 0; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    for (size_t i = 0; i < n; i++) sum += (x[i] = expf(x[i] - mx));
    float inv = 1.0f / sum;
    for (size_t i = 0; i < n; i++) x[i] *= inv;
}

static void ce_fwd_rows(void *p, size_t r0, size_t r1, int ith)
{
    const ce_job *j = p;
    for (size_t r = r0; r < r1; r++) {
        float *x = j->x + r * j->Vp;
        j->k->softmax(x, j->V);
        for (size_t i = j->V; i < j->Vp; i++) x[i] = 0.0f;
        if (j->targets) j->losses[r] = -logf(x[j->targets[r]]);
    }
}

static void ridge_gpt2_softmax_crossentropy_forward_untimed(ridge_ctx *ctx, float *x, float *losses,
                                             const int *targets, size_t N, size_t V, size_t Vp)
{
    ce_job j = {.k = kernels(ctx), .x = x, .losses = losses, .targets = targets, .V = V, .Vp = Vp};
    ridge_parallel_for(ctx, N, 1, ce_fwd_rows, &j);
}

/* ridge_gpt2_softmax_crossentropy_forward, recorded by the profiler as "softmax_xent.fwd". */
void ridge_gpt2_softmax_crossentropy_forward(ridge_ctx *ctx, float *x, float *losses,
                                             const int *targets, size_t N, size_t V, size_t Vp)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_softmax_crossentropy_forward_untimed(ctx, x, losses, targets, N, V, Vp);
    RIDGE_PROF_END(ctx, t0, "softmax_xent.fwd", "", 5.0 * N * V, 8.0 * N * Vp, 8.0 * N * Vp, "%zux%zu", N, V);
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

static void ridge_gpt2_softmax_crossentropy_backward_untimed(ridge_ctx *ctx, float *x, const int *targets,
                                              float dloss, size_t N, size_t V, size_t Vp)
{
    ce_job j = {.x = x, .targets = targets, .dloss = dloss, .V = V, .Vp = Vp};
    ridge_parallel_for(ctx, N, 1, ce_bwd_rows, &j);
}

/* ridge_gpt2_softmax_crossentropy_backward, recorded by the profiler as "softmax_xent.bwd". */
void ridge_gpt2_softmax_crossentropy_backward(ridge_ctx *ctx, float *x, const int *targets,
                                              float dloss, size_t N, size_t V, size_t Vp)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_softmax_crossentropy_backward_untimed(ctx, x, targets, dloss, N, V, Vp);
    RIDGE_PROF_END(ctx, t0, "softmax_xent.bwd", "", 2.0 * N * V, 8.0 * N * Vp, 8.0 * N * Vp, "%zux%zu", N, V);
}

/* ---- AdamW ------------------------------------------------------------------------------ */

static void adamw_ref(float *restrict p, const float *restrict g, float *restrict m,
                      float *restrict v, size_t n, const gpt2_adamw_args *a)
{
    for (size_t i = 0; i < n; i++) {
        float mi = a->b1 * m[i] + (1.0f - a->b1) * g[i];
        float vi = a->b2 * v[i] + (1.0f - a->b2) * g[i] * g[i];
        m[i] = mi;
        v[i] = vi;
        p[i] -= a->lr * ((mi / a->c1) / (sqrtf(vi / a->c2) + a->eps) + a->wd * p[i]);
    }
}

typedef struct adamw_job {
    const gpt2_kernels *k;
    float *p, *m, *v;
    const float *g;
    gpt2_adamw_args a;
} adamw_job;

static void adamw_range(void *arg, size_t i0, size_t i1, int ith)
{
    const adamw_job *j = arg;
    j->k->adamw(j->p + i0, j->g + i0, j->m + i0, j->v + i0, i1 - i0, &j->a);
}

static void ridge_gpt2_adamw_untimed(ridge_ctx *ctx, float *params, const float *grads, float *m, float *v,
                      size_t n, int t, float lr, float beta1, float beta2, float eps,
                      float weight_decay)
{
    adamw_job j = {kernels(ctx), params, m, v, grads,
                   {lr, beta1, beta2, eps, weight_decay, 1.0f - powf(beta1, (float)t),
                    1.0f - powf(beta2, (float)t)}};
    ridge_parallel_for(ctx, n, 4096, adamw_range, &j);
}

/* ridge_gpt2_adamw, recorded by the profiler as "adamw". */
void ridge_gpt2_adamw(ridge_ctx *ctx, float *params, const float *grads, float *m, float *v,
                      size_t n, int t, float lr, float beta1, float beta2, float eps,
                      float weight_decay)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_gpt2_adamw_untimed(ctx, params, grads, m, v, n, t, lr, beta1, beta2, eps, weight_decay);
    RIDGE_PROF_END(ctx, t0, "adamw", "", 12.0 * n, 28.0 * n, 16.0 * n, "%zu params", n);
}

const gpt2_kernels ridge_gpt2_kernels__ref = {softmax_ref, adamw_ref, att_fwd_ref, att_bwd_ref};
