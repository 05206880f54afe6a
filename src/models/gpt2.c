/* GPT-2: the model, its forward and backward passes and AdamW (include/ridge/gpt2.h).
 *
 * Memory, as in llm.c: one allocation each for parameters, gradients, the two AdamW moments
 * and activations, with a table of views. Three departures from llm.c's activations, all exact:
 *  - the attention and MLP output projections add the residual in the GEMM's epilogue, so the
 *    stream is written once (llm.c keeps attproj/fcproj and adds them in a separate pass);
 *    their backward needs only d(residual), which is what the projection's gradient is;
 *  - logits, probabilities and their gradient share one (B,T,Vp) buffer, each overwriting the
 *    last, and the backward pass walks down the layers with one d(residual) buffer and three
 *    scratch buffers instead of a full copy of every activation's gradient;
 *  - attention is fused (gpt2-layers.c): per layer it keeps each query's log-sum-exp, not the
 *    (B,NH,T,T) scores and weights.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "models/gpt2-layers.h"
#include "ridge/gpt2.h"

enum {
    P_WTE, P_WPE, P_LN1W, P_LN1B, P_QKVW, P_QKVB, P_ATTPROJW, P_ATTPROJB,
    P_LN2W, P_LN2B, P_FCW, P_FCB, P_FCPROJW, P_FCPROJB, P_LNFW, P_LNFB
};

/* Views into the activations for the current (B,T). Per-layer tensors are (L, ...). */
typedef struct acts {
    float *encoded;                 /* (B,T,C) */
    float *ln1, *ln1_mean, *ln1_rstd; /* (L,B,T,C), (L,B,T), (L,B,T) */
    float *qkv;                     /* (L,B,T,3C) */
    float *atty;                    /* (L,B,T,C) */
    float *att_lse;                 /* (L,B,NH,T) attention log-sum-exp */
    float *residual2;               /* (L,B,T,C) */
    float *ln2, *ln2_mean, *ln2_rstd;
    float *fch, *fch_gelu;          /* (L,B,T,4C) */
    float *residual3;               /* (L,B,T,C) */
    float *lnf, *lnf_mean, *lnf_rstd;
    float *logits;                  /* (B,T,Vp): logits, then probs, then dlogits */
    float *losses;                  /* (B,T) */
    /* backward scratch */
    float *dres, *dsmall;           /* (B,T,C) */
    float *dqkv;                    /* (B,T,3C) */
    float *dbig;                    /* (B,T,4C) */
} acts;

struct ridge_gpt2 {
    ridge_ctx *ctx;
    ridge_gpt2_config cfg;
    size_t sizes[RIDGE_GPT2_NUM_TENSORS], nparams;
    float *params, *grads, *m, *v;
    float *p[RIDGE_GPT2_NUM_TENSORS], *g[RIDGE_GPT2_NUM_TENSORS];
    float *act_mem;
    size_t act_cap; /* floats in act_mem */
    acts a;
    int B, T;        /* shape of the last forward */
    int *tokens;     /* (2, cap) inputs and targets of the last forward */
    size_t tok_cap;
    int state;       /* 0 nothing, 1 probs valid, 2 probs valid and backward possible */
    int prof;        /* 1: time the parts into prof_ns */
    uint64_t prof_ns[2][RIDGE_GPT2_NUM_PARTS];
    ridge_gpt2_grads_ready_fn ready; /* the backward's hook (ridge_gpt2_set_grads_ready) */
    void *ready_arg;
};

/* Runs `call`, adding its time to part `k` of pass `dir` (0 forward, 1 backward) when the
 * profile is on. */
#define PROF(dir, k, call)                                                                    \
    do {                                                                                      \
        uint64_t t0_ = m->prof ? ridge_time_ns() : 0;                                         \
        call;                                                                                 \
        if (m->prof) m->prof_ns[dir][k] += ridge_time_ns() - t0_;                             \
    } while (0)

/* ---- creation ----------------------------------------------------------------------------- */

static void point(float **views, float *base, const size_t *sizes)
{
    for (int i = 0; i < RIDGE_GPT2_NUM_TENSORS; i++) {
        views[i] = base;
        base += sizes[i];
    }
}

ridge_status ridge_gpt2_create(ridge_ctx *ctx, const ridge_gpt2_config *cfg, ridge_gpt2 **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "gpt2: out is NULL");
    *out = NULL;
    if (!ctx) return ridge_error(RIDGE_EINVAL, "gpt2: ctx is NULL");
    ridge_gpt2 *m = calloc(1, sizeof *m);
    if (!m) return ridge_error(RIDGE_ENOMEM, "gpt2: out of memory");
    ridge_status st = ridge_gpt2_param_sizes(cfg, m->sizes, &m->nparams);
    if (st) {
        free(m);
        return st;
    }
    m->ctx = ctx;
    m->cfg = *cfg;
    m->params = ridge_calloc(m->nparams, sizeof(float));
    if (!m->params) {
        size_t n = m->nparams;
        free(m);
        return ridge_error(RIDGE_ENOMEM, "gpt2: no memory for %zu parameters", n);
    }
    point(m->p, m->params, m->sizes);
    *out = m;
    return RIDGE_OK;
}

ridge_status ridge_gpt2_load(ridge_ctx *ctx, const char *path, ridge_gpt2 **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "gpt2: out is NULL");
    *out = NULL;
    ridge_gpt2_config cfg;
    ridge_status st = ridge_llmc_model_read(path, &cfg, NULL, 0);
    ridge_gpt2 *m = NULL;
    if (!st) st = ridge_gpt2_create(ctx, &cfg, &m);
    if (!st) st = ridge_llmc_model_read(path, &cfg, m->params, m->nparams);
    if (st) {
        ridge_gpt2_destroy(m);
        return st;
    }
    *out = m;
    return RIDGE_OK;
}

ridge_status ridge_gpt2_save(const ridge_gpt2 *m, const char *path)
{
    if (!m) return ridge_error(RIDGE_EINVAL, "gpt2: model is NULL");
    return ridge_llmc_model_write(path, &m->cfg, m->params);
}

void ridge_gpt2_destroy(ridge_gpt2 *m)
{
    if (!m) return;
    ridge_free(m->params);
    ridge_free(m->grads);
    ridge_free(m->m);
    ridge_free(m->v);
    ridge_free(m->act_mem);
    free(m->tokens);
    free(m);
}

const ridge_gpt2_config *ridge_gpt2_get_config(const ridge_gpt2 *m)
{
    return &m->cfg;
}

float *ridge_gpt2_params(ridge_gpt2 *m, size_t *count)
{
    if (count) *count = m->nparams;
    return m->params;
}

float *ridge_gpt2_param_tensor(ridge_gpt2 *m, int i, size_t *count)
{
    if (i < 0 || i >= RIDGE_GPT2_NUM_TENSORS) return NULL;
    if (count) *count = m->sizes[i];
    return m->p[i];
}

float *ridge_gpt2_grads(ridge_gpt2 *m)
{
    return m->grads;
}

/* N(0, std) by Box-Muller over pairs of MT19937 uniforms. */
static void fill_normal(float *x, size_t n, float std, ridge_mt19937 *rng)
{
    for (size_t i = 0; i < n; i += 2) {
        float u1 = 1.0f - ridge_mt19937_f32(rng), u2 = ridge_mt19937_f32(rng); /* u1 in (0,1] */
        float r = sqrtf(-2.0f * logf(u1)) * std, th = 6.2831853071795864f * u2;
        x[i] = r * cosf(th);
        if (i + 1 < n) x[i + 1] = r * sinf(th);
    }
}

void ridge_gpt2_init_random(ridge_gpt2 *m, uint32_t seed)
{
    ridge_mt19937 rng;
    ridge_mt19937_seed(&rng, seed);
    const float std = 0.02f, res_std = 0.02f / sqrtf(2.0f * (float)m->cfg.num_layers);
    for (int i = 0; i < RIDGE_GPT2_NUM_TENSORS; i++) {
        float *x = m->p[i];
        size_t n = m->sizes[i];
        switch (i) {
        case P_WTE:
            n = (size_t)m->cfg.vocab_size * (size_t)m->cfg.channels;
            fill_normal(x, n, std, &rng);
            memset(x + n, 0, (m->sizes[i] - n) * sizeof *x); /* the padding rows */
            break;
        case P_WPE: case P_QKVW: case P_FCW: fill_normal(x, n, std, &rng); break;
        case P_ATTPROJW: case P_FCPROJW: fill_normal(x, n, res_std, &rng); break;
        case P_LN1W: case P_LN2W: case P_LNFW:
            for (size_t k = 0; k < n; k++) x[k] = 1.0f;
            break;
        default: memset(x, 0, n * sizeof *x); break; /* biases */
        }
    }
}

/* ---- activations ------------------------------------------------------------------------ */

/* Lays out the activation views for (B,T) from `base` (NULL: only count); returns floats. */
static size_t layout(acts *a, float *base, const ridge_gpt2_config *c, size_t B, size_t T)
{
    size_t L = (size_t)c->num_layers, C = (size_t)c->channels, NH = (size_t)c->num_heads;
    size_t N = B * T, off = 0;
#define TAKE(field, n)                                                                        \
    do {                                                                                      \
        a->field = base ? base + off : NULL;                                                  \
        off += ((n) + 15) & ~(size_t)15; /* keep every view 64-byte aligned */                \
    } while (0)
    TAKE(encoded, N * C);
    TAKE(ln1, L * N * C);
    TAKE(ln1_mean, L * N);
    TAKE(ln1_rstd, L * N);
    TAKE(qkv, L * N * 3 * C);
    TAKE(atty, L * N * C);
    TAKE(att_lse, L * B * NH * T);
    TAKE(residual2, L * N * C);
    TAKE(ln2, L * N * C);
    TAKE(ln2_mean, L * N);
    TAKE(ln2_rstd, L * N);
    TAKE(fch, L * N * 4 * C);
    TAKE(fch_gelu, L * N * 4 * C);
    TAKE(residual3, L * N * C);
    TAKE(lnf, N * C);
    TAKE(lnf_mean, N);
    TAKE(lnf_rstd, N);
    TAKE(logits, N * (size_t)c->padded_vocab_size);
    TAKE(losses, N);
    TAKE(dres, N * C);
    TAKE(dsmall, N * C);
    TAKE(dqkv, N * 3 * C);
    TAKE(dbig, N * 4 * C);
#undef TAKE
    return off;
}

static ridge_status prepare(ridge_gpt2 *m, int B, int T)
{
    size_t need = layout(&m->a, NULL, &m->cfg, (size_t)B, (size_t)T);
    if (need > m->act_cap) {
        ridge_free(m->act_mem);
        m->act_cap = 0;
        m->act_mem = ridge_malloc(need * sizeof(float));
        if (!m->act_mem)
            return ridge_error(RIDGE_ENOMEM, "gpt2: no memory for activations (%zu MiB at B=%d T=%d)",
                               need * sizeof(float) >> 20, B, T);
        m->act_cap = need;
    }
    layout(&m->a, m->act_mem, &m->cfg, (size_t)B, (size_t)T);
    size_t n = (size_t)B * (size_t)T;
    if (n > m->tok_cap) {
        free(m->tokens);
        m->tok_cap = 0;
        if (!(m->tokens = malloc(2 * n * sizeof *m->tokens)))
            return ridge_error(RIDGE_ENOMEM, "gpt2: out of memory");
        m->tok_cap = n;
    }
    return RIDGE_OK;
}

/* ---- forward ---------------------------------------------------------------------------- */

#define TRY(call)                                                                             \
    do {                                                                                      \
        ridge_status st_ = (call);                                                            \
        if (st_) return st_;                                                                  \
    } while (0)

ridge_status ridge_gpt2_forward(ridge_gpt2 *m, const int *inputs, const int *targets, int B,
                                int T, float *loss)
{
    if (!m || !inputs) return ridge_error(RIDGE_EINVAL, "gpt2 forward: model or inputs is NULL");
    const ridge_gpt2_config *c = &m->cfg;
    if (B <= 0 || T <= 0 || T > c->max_seq_len)
        return ridge_error(RIDGE_EINVAL, "gpt2 forward: B = %d, T = %d (need B >= 1, 1 <= T <= "
                           "max_seq_len = %d)", B, T, c->max_seq_len);
    size_t N = (size_t)B * (size_t)T;
    if (N > (size_t)INT32_MAX / 4)
        return ridge_error(RIDGE_EINVAL, "gpt2 forward: B*T = %zu is too large", N);
    for (size_t i = 0; i < N; i++) {
        if (inputs[i] < 0 || inputs[i] >= c->vocab_size)
            return ridge_error(RIDGE_EINVAL, "gpt2 forward: inputs[%zu] = %d outside the "
                               "vocabulary (%d)", i, inputs[i], c->vocab_size);
        if (targets && (targets[i] < 0 || targets[i] >= c->vocab_size))
            return ridge_error(RIDGE_EINVAL, "gpt2 forward: targets[%zu] = %d outside the "
                               "vocabulary (%d)", i, targets[i], c->vocab_size);
    }
    m->state = 0;
    TRY(prepare(m, B, T));
    m->B = B, m->T = T;
    memcpy(m->tokens, inputs, N * sizeof *inputs);
    if (targets) memcpy(m->tokens + N, targets, N * sizeof *targets);

    ridge_ctx *ctx = m->ctx;
    acts *a = &m->a;
    float *const *p = m->p;
    size_t C = (size_t)c->channels, NH = (size_t)c->num_heads, L = (size_t)c->num_layers;
    size_t Vp = (size_t)c->padded_vocab_size, V = (size_t)c->vocab_size;
    PROF(0, RIDGE_GPT2_ENCODER,
         ridge_gpt2_encoder_forward(ctx, a->encoded, inputs, p[P_WTE], p[P_WPE], B, T, C));
    for (size_t l = 0; l < L; l++) {
        const float *res = l == 0 ? a->encoded : a->residual3 + (l - 1) * N * C;
        float *ln1 = a->ln1 + l * N * C, *qkv = a->qkv + l * N * 3 * C;
        float *atty = a->atty + l * N * C, *res2 = a->residual2 + l * N * C;
        float *ln2 = a->ln2 + l * N * C, *fch = a->fch + l * N * 4 * C;
        float *fchg = a->fch_gelu + l * N * 4 * C, *res3 = a->residual3 + l * N * C;
        PROF(0, RIDGE_GPT2_LAYERNORM,
             ridge_gpt2_layernorm_forward(ctx, ln1, a->ln1_mean + l * N, a->ln1_rstd + l * N, res,
                                          p[P_LN1W] + l * C, p[P_LN1B] + l * C, N, C));
        PROF(0, RIDGE_GPT2_QKV,
             TRY(ridge_gpt2_matmul_forward(ctx, qkv, ln1, p[P_QKVW] + l * 3 * C * C,
                                           p[P_QKVB] + l * 3 * C, NULL, N, C, 3 * C)));
        PROF(0, RIDGE_GPT2_ATTENTION,
             ridge_gpt2_attention_forward(ctx, atty, a->att_lse + l * (size_t)B * NH * T, qkv, B,
                                          T, C, NH));
        PROF(0, RIDGE_GPT2_ATTPROJ,
             TRY(ridge_gpt2_matmul_forward(ctx, res2, atty, p[P_ATTPROJW] + l * C * C,
                                           p[P_ATTPROJB] + l * C, res, N, C, C)));
        PROF(0, RIDGE_GPT2_LAYERNORM,
             ridge_gpt2_layernorm_forward(ctx, ln2, a->ln2_mean + l * N, a->ln2_rstd + l * N, res2,
                                          p[P_LN2W] + l * C, p[P_LN2B] + l * C, N, C));
        PROF(0, RIDGE_GPT2_FC,
             TRY(ridge_gpt2_matmul_forward(ctx, fch, ln2, p[P_FCW] + l * 4 * C * C,
                                           p[P_FCB] + l * 4 * C, NULL, N, C, 4 * C)));
        PROF(0, RIDGE_GPT2_GELU, TRY(ridge_gpt2_gelu_forward(ctx, fchg, fch, N * 4 * C)));
        PROF(0, RIDGE_GPT2_FCPROJ,
             TRY(ridge_gpt2_matmul_forward(ctx, res3, fchg, p[P_FCPROJW] + l * 4 * C * C,
                                           p[P_FCPROJB] + l * C, res2, N, 4 * C, C)));
    }
    PROF(0, RIDGE_GPT2_LAYERNORM,
         ridge_gpt2_layernorm_forward(ctx, a->lnf, a->lnf_mean, a->lnf_rstd,
                                      a->residual3 + (L - 1) * N * C, p[P_LNFW], p[P_LNFB], N, C));
    PROF(0, RIDGE_GPT2_LMHEAD,
         TRY(ridge_gpt2_matmul_forward(ctx, a->logits, a->lnf, p[P_WTE], NULL, NULL, N, C, Vp)));
    PROF(0, RIDGE_GPT2_SOFTMAX_XENT,
         ridge_gpt2_softmax_crossentropy_forward(ctx, a->logits, a->losses, targets, N, V, Vp));
    if (targets) {
        float sum = 0.0f;
        for (size_t i = 0; i < N; i++)
            sum += a->losses[i];
        if (loss) *loss = sum / (float)N;
    } else if (loss) {
        *loss = -1.0f;
    }
    m->state = targets ? 2 : 1;
    return RIDGE_OK;
}

const float *ridge_gpt2_probs(const ridge_gpt2 *m) { return m && m->state ? m->a.logits : NULL; }

/* ---- backward --------------------------------------------------------------------------- */

ridge_status ridge_gpt2_zero_grad(ridge_gpt2 *m)
{
    if (!m) return ridge_error(RIDGE_EINVAL, "gpt2: model is NULL");
    if (!m->grads) {
        m->grads = ridge_calloc(m->nparams, sizeof(float));
        if (!m->grads)
            return ridge_error(RIDGE_ENOMEM, "gpt2: no memory for %zu gradients", m->nparams);
        point(m->g, m->grads, m->sizes);
    } else {
        memset(m->grads, 0, m->nparams * sizeof(float));
    }
    return RIDGE_OK;
}

void ridge_gpt2_set_grads_ready(ridge_gpt2 *m, ridge_gpt2_grads_ready_fn fn, void *arg)
{
    if (m) m->ready = fn, m->ready_arg = arg;
}

/* Hands the hook tensors [k0, k1) whole (layer < 0) or their slices of `layer`. */
static ridge_status grads_ready(ridge_gpt2 *m, int k0, int k1, int layer)
{
    if (!m->ready) return RIDGE_OK;
    float *ptr[RIDGE_GPT2_NUM_TENSORS];
    size_t len[RIDGE_GPT2_NUM_TENSORS], L = (size_t)m->cfg.num_layers;
    for (int k = k0; k < k1; k++) {
        len[k - k0] = layer < 0 ? m->sizes[k] : m->sizes[k] / L;
        ptr[k - k0] = m->g[k] + (layer < 0 ? 0 : (size_t)layer * len[k - k0]);
    }
    return m->ready(m->ready_arg, ptr, len, k1 - k0);
}

ridge_status ridge_gpt2_backward(ridge_gpt2 *m)
{
    if (!m) return ridge_error(RIDGE_EINVAL, "gpt2: model is NULL");
    if (m->state != 2)
        return ridge_error(RIDGE_EINVAL, "gpt2 backward: needs a forward pass with targets first");
    if (!m->grads) TRY(ridge_gpt2_zero_grad(m));
    m->state = 0;
    ridge_ctx *ctx = m->ctx;
    const ridge_gpt2_config *c = &m->cfg;
    acts *a = &m->a;
    float *const *p = m->p, *const *g = m->g;
    size_t B = (size_t)m->B, T = (size_t)m->T, N = B * T;
    size_t C = (size_t)c->channels, NH = (size_t)c->num_heads, L = (size_t)c->num_layers;
    size_t Vp = (size_t)c->padded_vocab_size, V = (size_t)c->vocab_size;
    const int *inputs = m->tokens, *targets = m->tokens + N;

    PROF(1, RIDGE_GPT2_SOFTMAX_XENT,
         ridge_gpt2_softmax_crossentropy_backward(ctx, a->logits, targets, 1.0f / (float)N, N, V,
                                                  Vp));
    PROF(1, RIDGE_GPT2_LMHEAD,
         TRY(ridge_gpt2_matmul_backward(ctx, a->dsmall, g[P_WTE], NULL, a->logits, a->lnf, p[P_WTE],
                                        N, C, Vp)));
    memset(a->dres, 0, N * C * sizeof(float));
    PROF(1, RIDGE_GPT2_LAYERNORM,
         ridge_gpt2_layernorm_backward(ctx, a->dres, g[P_LNFW], g[P_LNFB], a->dsmall,
                                       a->residual3 + (L - 1) * N * C, p[P_LNFW], a->lnf_mean,
                                       a->lnf_rstd, N, C));
    TRY(grads_ready(m, P_LNFW, P_LNFB + 1, -1));
    for (size_t l = L; l-- > 0;) {
        /* here dres = d residual3[l] */
        const float *res = l == 0 ? a->encoded : a->residual3 + (l - 1) * N * C;
        const float *ln1 = a->ln1 + l * N * C, *qkv = a->qkv + l * N * 3 * C;
        const float *atty = a->atty + l * N * C, *res2 = a->residual2 + l * N * C;
        const float *ln2 = a->ln2 + l * N * C, *fch = a->fch + l * N * 4 * C;
        const float *fchg = a->fch_gelu + l * N * 4 * C;
        PROF(1, RIDGE_GPT2_FCPROJ,
             TRY(ridge_gpt2_matmul_backward(ctx, a->dbig, g[P_FCPROJW] + l * 4 * C * C,
                                            g[P_FCPROJB] + l * C, a->dres, fchg,
                                            p[P_FCPROJW] + l * 4 * C * C, N, 4 * C, C)));
        PROF(1, RIDGE_GPT2_GELU, TRY(ridge_gpt2_gelu_backward(ctx, a->dbig, fch, a->dbig, N * 4 * C)));
        PROF(1, RIDGE_GPT2_FC,
             TRY(ridge_gpt2_matmul_backward(ctx, a->dsmall, g[P_FCW] + l * 4 * C * C,
                                            g[P_FCB] + l * 4 * C, a->dbig, ln2,
                                            p[P_FCW] + l * 4 * C * C, N, C, 4 * C)));
        PROF(1, RIDGE_GPT2_LAYERNORM,
             ridge_gpt2_layernorm_backward(ctx, a->dres, g[P_LN2W] + l * C, g[P_LN2B] + l * C,
                                           a->dsmall, res2, p[P_LN2W] + l * C, a->ln2_mean + l * N,
                                           a->ln2_rstd + l * N, N, C));
        /* dres = d residual2[l] */
        PROF(1, RIDGE_GPT2_ATTPROJ,
             TRY(ridge_gpt2_matmul_backward(ctx, a->dsmall, g[P_ATTPROJW] + l * C * C,
                                            g[P_ATTPROJB] + l * C, a->dres, atty,
                                            p[P_ATTPROJW] + l * C * C, N, C, C)));
        PROF(1, RIDGE_GPT2_ATTENTION,
             ridge_gpt2_attention_backward(ctx, a->dqkv, a->dsmall, qkv, atty,
                                           a->att_lse + l * B * NH * T, B, T, C, NH));
        PROF(1, RIDGE_GPT2_QKV,
             TRY(ridge_gpt2_matmul_backward(ctx, a->dsmall, g[P_QKVW] + l * 3 * C * C,
                                            g[P_QKVB] + l * 3 * C, a->dqkv, ln1,
                                            p[P_QKVW] + l * 3 * C * C, N, C, 3 * C)));
        PROF(1, RIDGE_GPT2_LAYERNORM,
             ridge_gpt2_layernorm_backward(ctx, a->dres, g[P_LN1W] + l * C, g[P_LN1B] + l * C,
                                           a->dsmall, res, p[P_LN1W] + l * C, a->ln1_mean + l * N,
                                           a->ln1_rstd + l * N, N, C));
        TRY(grads_ready(m, P_LN1W, P_FCPROJB + 1, (int)l));
    }
    PROF(1, RIDGE_GPT2_ENCODER,
         ridge_gpt2_encoder_backward(ctx, g[P_WTE], g[P_WPE], a->dres, inputs, B, T, C));
    return grads_ready(m, P_WTE, P_WPE + 1, -1);
}

/* ---- optimizer -------------------------------------------------------------------------- */

void ridge_gpt2_adamw_defaults(ridge_gpt2_adamw_opts *o)
{
    o->lr = 1e-4f;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->weight_decay = 0.0f;
}

ridge_status ridge_gpt2_adamw_moments(ridge_gpt2 *m, float **mom1, float **mom2)
{
    if (!m) return ridge_error(RIDGE_EINVAL, "gpt2: model is NULL");
    if (!m->m) {
        m->m = ridge_calloc(m->nparams, sizeof(float));
        m->v = ridge_calloc(m->nparams, sizeof(float));
        if (!m->m || !m->v) {
            ridge_free(m->m);
            ridge_free(m->v);
            m->m = m->v = NULL;
            return ridge_error(RIDGE_ENOMEM, "gpt2: no memory for the AdamW moments");
        }
    }
    if (mom1) *mom1 = m->m;
    if (mom2) *mom2 = m->v;
    return RIDGE_OK;
}

ridge_status ridge_gpt2_update(ridge_gpt2 *m, const ridge_gpt2_adamw_opts *o, int step)
{
    if (!m || !o) return ridge_error(RIDGE_EINVAL, "gpt2 update: NULL argument");
    if (!m->grads) return ridge_error(RIDGE_EINVAL, "gpt2 update: no gradients (run backward)");
    if (step < 1) return ridge_error(RIDGE_EINVAL, "gpt2 update: step = %d, counts from 1", step);
    TRY(ridge_gpt2_adamw_moments(m, NULL, NULL));
    PROF(1, RIDGE_GPT2_ADAMW,
         ridge_gpt2_adamw(m->ctx, m->params, m->grads, m->m, m->v, m->nparams, step, o->lr,
                          o->beta1, o->beta2, o->eps, o->weight_decay));
    return RIDGE_OK;
}

double ridge_gpt2_train_flops(const ridge_gpt2_config *c, int B, int T)
{
    double C = c->channels, L = c->num_layers, tokens = (double)B * T;
    double weights = L * 12.0 * C * C + (double)c->padded_vocab_size * C;
    /* attention: q k^T and att v, 2 T C multiply-adds per token per layer forward, x3 */
    return 6.0 * weights * tokens + 3.0 * 4.0 * L * C * T * tokens;
}

/* ---- profile ---------------------------------------------------------------------------- */

const char *ridge_gpt2_part_name(int part)
{
    static const char *const names[RIDGE_GPT2_NUM_PARTS] = {
        "encoder", "layernorm",  "matmul qkv",    "attention",     "matmul attproj", "matmul fc",
        "gelu",    "matmul fcproj", "matmul lm-head", "softmax+xent", "adamw"};
    return part >= 0 && part < RIDGE_GPT2_NUM_PARTS ? names[part] : "?";
}

void ridge_gpt2_profile_enable(ridge_gpt2 *m, int on)
{
    m->prof = on != 0;
    if (on) memset(m->prof_ns, 0, sizeof m->prof_ns);
}

void ridge_gpt2_profile_get(const ridge_gpt2 *m, double fwd[RIDGE_GPT2_NUM_PARTS],
                            double bwd[RIDGE_GPT2_NUM_PARTS])
{
    for (int k = 0; k < RIDGE_GPT2_NUM_PARTS; k++) {
        if (fwd) fwd[k] = (double)m->prof_ns[0][k] * 1e-9;
        if (bwd) bwd[k] = (double)m->prof_ns[1][k] * 1e-9;
    }
}

double ridge_gpt2_part_flops(const ridge_gpt2_config *c, int part, int B, int T)
{
    double C = c->channels, L = c->num_layers, N = (double)B * T;
    switch (part) {
    case RIDGE_GPT2_QKV: return 2.0 * N * C * 3 * C * L;
    case RIDGE_GPT2_ATTPROJ: return 2.0 * N * C * C * L;
    case RIDGE_GPT2_FC:
    case RIDGE_GPT2_FCPROJ: return 2.0 * N * C * 4 * C * L;
    case RIDGE_GPT2_LMHEAD: return 2.0 * N * C * c->padded_vocab_size;
    case RIDGE_GPT2_ATTENTION: return 4.0 * N * T * C * L;
    default: return 0.0;
    }
}
