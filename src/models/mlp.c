/* The MLP classifier: model allocation (llm.c style: one block each for parameters,
 * gradients and optimizer state, with views), the training step, epochs and evaluation.
 *
 * Step: h[0] = x; h[l+1] = act(h[l] W_l^T + b_l) (dense, fused epilogue), dropout into hd[l]
 * when training with dropout; softmax cross-entropy writes dlogits into g[0]; the backward
 * runs the layers in reverse, ping-ponging g[0] and g[1]; then one optimizer update over the
 * whole parameter block (models/trainer.c, which also runs the epochs and the evaluation).
 * Checkpoints are in mlp-checkpoint.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "models/mlp-internal.h"
#include "models/trainer.h"

ridge_status ridge_mlp_config_check(const ridge_mlp_config *c)
{
    if (!c) return ridge_error(RIDGE_EINVAL, "mlp: config is NULL");
    if (c->nlayers < 1 || c->nlayers > RIDGE_MLP_MAX_LAYERS)
        return ridge_error(RIDGE_EINVAL, "mlp: %d dense layers, expected 1..%d", c->nlayers,
                           RIDGE_MLP_MAX_LAYERS);
    for (int l = 0; l <= c->nlayers; l++)
        if (c->sizes[l] < 1 || c->sizes[l] > RIDGE_MLP_MAX_WIDTH)
            return ridge_error(RIDGE_EINVAL, "mlp: layer size %d is %zu, expected 1..%d", l,
                               c->sizes[l], RIDGE_MLP_MAX_WIDTH);
    if (c->act != RIDGE_EPI_NONE && c->act != RIDGE_EPI_RELU && c->act != RIDGE_EPI_TANH &&
        c->act != RIDGE_EPI_SIGMOID)
        return ridge_error(RIDGE_EINVAL, "mlp: activation %s not supported (relu, tanh, "
                           "sigmoid, none)", ridge_nn_act_name(c->act));
    if (!(c->dropout >= 0 && c->dropout < 1))
        return ridge_error(RIDGE_EINVAL, "mlp: dropout %g not in [0, 1)", c->dropout);
    if (!isfinite(c->in_mean) || !(c->in_std > 0 && isfinite(c->in_std)))
        return ridge_error(RIDGE_EINVAL, "mlp: input normalization mean %g, std %g", c->in_mean,
                           c->in_std);
    return RIDGE_OK;
}

ridge_status mlp_layout(const ridge_mlp_config *c, size_t *sizes, size_t *offs, size_t *total)
{
    for (int l = 0; l < c->nlayers; l++) {
        sizes[2 * l] = c->sizes[l] * c->sizes[l + 1]; /* <= 2^40: no overflow */
        sizes[2 * l + 1] = c->sizes[l + 1];
    }
    return ridge_params_layout(sizes, 2 * (size_t)c->nlayers, offs, total);
}

static size_t max_width(const ridge_mlp_config *c)
{
    size_t w = 0;
    for (int l = 0; l <= c->nlayers; l++) w = RIDGE_MAX(w, c->sizes[l]);
    return w;
}

/* Grows the activation buffers to hold B rows. */
static ridge_status reserve(ridge_mlp *m, size_t B)
{
    if (B <= m->cap) return RIDGE_OK;
    const ridge_mlp_config *c = &m->cfg;
    const int L = c->nlayers;
    size_t sizes[2 * RIDGE_MLP_MAX_LAYERS + 3], offs[2 * RIDGE_MLP_MAX_LAYERS + 3], total, n = 0;
    ridge_status st;
    for (int l = 1; l <= L; l++)
        if ((st = ridge_size_mul(B, c->sizes[l], "mlp: activations", &sizes[n++]))) return st;
    for (int l = 1; l < L; l++) sizes[n++] = c->dropout > 0 ? sizes[l - 1] : 0;
    if ((st = ridge_size_mul(B, max_width(c), "mlp: gradients", &sizes[n]))) return st;
    sizes[n + 1] = sizes[n];
    n += 2;
    if ((st = ridge_params_layout(sizes, n, offs, &total))) return st;
    float *a = ridge_malloc(total * sizeof(float));
    if (!a) return ridge_error(RIDGE_ENOMEM, "mlp: cannot allocate activations for batch %zu", B);
    ridge_free(m->acts);
    m->acts = a;
    m->cap = B;
    n = 0;
    for (int l = 1; l <= L; l++) m->h[l] = a + offs[n++];
    for (int l = 1; l < L; l++, n++) m->hd[l] = c->dropout > 0 ? a + offs[n] : m->h[l];
    m->g[0] = a + offs[n];
    m->g[1] = a + offs[n + 1];
    return RIDGE_OK;
}

ridge_status ridge_mlp_create(const ridge_mlp_config *cfg, const ridge_optim_config *opt,
                              size_t batch, uint64_t seed, ridge_mlp **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "mlp_create: out is NULL");
    *out = NULL;
    ridge_status st = ridge_mlp_config_check(cfg);
    if (st || (st = ridge_optim_config_check(opt))) return st;
    if (batch < 1 || batch > (1u << 24))
        return ridge_error(RIDGE_EINVAL, "mlp: batch %zu, expected 1..%u", batch, 1u << 24);
    const int L = cfg->nlayers;
    size_t sizes[2 * RIDGE_MLP_MAX_LAYERS], offs[2 * RIDGE_MLP_MAX_LAYERS], total;
    if ((st = mlp_layout(cfg, sizes, offs, &total))) return st;
    ridge_mlp *m = calloc(1, sizeof *m);
    if (!m) return ridge_error(RIDGE_ENOMEM, "mlp: out of memory");
    m->cfg = *cfg;
    m->opt = *opt;
    m->batch = batch;
    m->seed = seed;
    m->nparams = total;
    m->nstate = ridge_optim_state_per_param(opt) * total;
    m->params = ridge_calloc(total, sizeof(float));
    m->grads = ridge_calloc(total, sizeof(float));
    m->state = m->nstate ? ridge_calloc(m->nstate, sizeof(float)) : NULL;
    if (!m->params || !m->grads || (m->nstate && !m->state)) {
        ridge_mlp_destroy(m);
        return ridge_error(RIDGE_ENOMEM, "mlp: cannot allocate %zu parameters", total);
    }
    ridge_rng rng;
    ridge_rng_seed(&rng, seed);
    for (int l = 0; l < L; l++) {
        m->w[l] = m->params + offs[2 * l];
        m->b[l] = m->params + offs[2 * l + 1];
        m->dw[l] = m->grads + offs[2 * l];
        m->db[l] = m->grads + offs[2 * l + 1];
        const float bound = 1.0f / sqrtf((float)cfg->sizes[l]);
        for (size_t i = 0; i < sizes[2 * l]; i++)
            m->w[l][i] = (2 * ridge_rng_uniform(&rng) - 1) * bound;
        for (size_t i = 0; i < sizes[2 * l + 1]; i++)
            m->b[l][i] = (2 * ridge_rng_uniform(&rng) - 1) * bound;
    }
    *out = m;
    return RIDGE_OK;
}

void ridge_mlp_destroy(ridge_mlp *m)
{
    if (!m) return;
    ridge_free(m->params);
    ridge_free(m->grads);
    ridge_free(m->state);
    ridge_free(m->acts);
    free(m);
}

/* Runs the layers on B rows; with `train`, applies dropout (seeded by the step). */
static ridge_status forward(ridge_ctx *ctx, ridge_mlp *m, const float *x, size_t B, int train)
{
    const ridge_mlp_config *c = &m->cfg;
    ridge_status st = reserve(m, B);
    if (st) return st;
    const float *in = x;
    for (int l = 0; l < c->nlayers; l++) {
        const int hidden = l + 1 < c->nlayers;
        if ((st = ridge_dense_forward(ctx, m->h[l + 1], in, m->w[l], m->b[l], B, c->sizes[l],
                                      c->sizes[l + 1], hidden ? c->act : RIDGE_EPI_NONE)))
            return st;
        in = m->h[l + 1];
        if (hidden && train && c->dropout > 0) {
            uint64_t offset = (m->step * RIDGE_MLP_MAX_LAYERS + (uint64_t)l) << 32;
            if ((st = ridge_dropout_forward(ctx, m->hd[l + 1], in, B * c->sizes[l + 1],
                                            c->dropout, m->seed, offset)))
                return st;
            in = m->hd[l + 1];
        }
    }
    return RIDGE_OK;
}

ridge_status ridge_mlp_forward(ridge_ctx *ctx, ridge_mlp *m, const float *x, size_t B,
                               const float **logits)
{
    if (!ctx || !m || !x || !logits || !B)
        return ridge_error(RIDGE_EINVAL, "mlp_forward: NULL argument or B == 0");
    ridge_status st = forward(ctx, m, x, B, 0);
    *logits = st ? NULL : m->h[m->cfg.nlayers];
    return st;
}

/* Forward (with dropout) and backward of B rows into m->grads. */
static ridge_status gradients(ridge_ctx *ctx, void *model, const float *x, const int32_t *y,
                              size_t B, float *loss)
{
    ridge_mlp *m = model;
    if (!ctx || !m || !x || !y || !loss || !B)
        return ridge_error(RIDGE_EINVAL, "mlp_train_step: NULL argument or B == 0");
    const ridge_mlp_config *c = &m->cfg;
    const int L = c->nlayers;
    const int drop = c->dropout > 0;
    *loss = 0;
    ridge_status st = forward(ctx, m, x, B, 1);
    if (st) return st;
    st = ridge_softmax_xent(ctx, loss, m->g[0], NULL, m->h[L], y, B, c->sizes[L]);
    if (st == RIDGE_EINVAL && !isfinite(*loss))
        return ridge_error(RIDGE_EINVAL, "mlp: the loss is %g at step %llu (diverged: lower "
                           "--lr)", *loss, (unsigned long long)m->step);
    if (st) return st;
    int cur = 0;
    for (int l = L - 1; l >= 0; l--) {
        const int hidden = l + 1 < L;
        const float *in = l == 0 ? x : drop ? m->hd[l] : m->h[l];
        float *dx = l == 0 ? NULL : m->g[cur ^ 1];
        if ((st = ridge_dense_backward(ctx, dx, m->dw[l], m->db[l], m->g[cur], in, m->w[l],
                                       m->h[l + 1], B, c->sizes[l], c->sizes[l + 1],
                                       hidden ? c->act : RIDGE_EPI_NONE)))
            return st;
        if (dx && drop) {
            uint64_t offset = (m->step * RIDGE_MLP_MAX_LAYERS + (uint64_t)(l - 1)) << 32;
            if ((st = ridge_dropout_backward(ctx, dx, dx, B * c->sizes[l], c->dropout, m->seed,
                                             offset)))
                return st;
        }
        cur ^= 1;
    }
    return RIDGE_OK;
}

static ridge_status forward_logits(ridge_ctx *ctx, void *m, const float *x, size_t B,
                                   const float **logits)
{
    return ridge_mlp_forward(ctx, m, x, B, logits);
}

/* The model as the shared training loops see it (models/trainer.h). */
static model_trainer trainer(ridge_mlp *m)
{
    model_trainer t = {.name = "mlp", .model = m, .gradients = gradients,
                       .forward = forward_logits, .eval_batch = 500};
    if (!m) return t;
    t.opt = &m->opt, t.params = m->params, t.grads = m->grads, t.state = m->state;
    t.nparams = m->nparams, t.step = &m->step, t.epoch = &m->epoch, t.seed = m->seed;
    t.batch = m->batch, t.D = m->cfg.sizes[0], t.classes = m->cfg.sizes[m->cfg.nlayers];
    t.in_mean = m->cfg.in_mean, t.in_std = m->cfg.in_std, t.dp = &m->dp;
    return t;
}

ridge_status ridge_mlp_train_step(ridge_ctx *ctx, ridge_mlp *m, const float *x,
                                  const int32_t *y, size_t B, float *loss)
{
    model_trainer t = trainer(m);
    return model_train_step(ctx, &t, x, y, B, loss);
}

ridge_status ridge_mlp_train_epoch(ridge_ctx *ctx, ridge_mlp *m, const uint8_t *images,
                                   const uint8_t *labels, size_t n, ridge_mlp_progress_fn fn,
                                   void *arg, double *mean_loss)
{
    model_trainer t = trainer(m);
    return model_train_epoch(ctx, &t, images, labels, n, fn, arg, mean_loss);
}

ridge_status ridge_mlp_evaluate(ridge_ctx *ctx, ridge_mlp *m, const uint8_t *images,
                                const uint8_t *labels, size_t n, double *loss, size_t *correct,
                                uint64_t *confusion)
{
    model_trainer t = trainer(m);
    return model_evaluate(ctx, &t, images, labels, n, loss, correct, confusion);
}
