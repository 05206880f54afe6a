/* The CNN classifier: architecture strings, model allocation (one block each for parameters,
 * gradients, optimizer state and batch-norm running statistics, with views), the training
 * step, epochs and evaluation. Checkpoints are in cnn-checkpoint.c.
 *
 * Step: act[0] = x (B, H, W, C) NHWC; act[l+1] = layer l (act[l]); softmax cross-entropy
 * writes dlogits into g[0]; the backward runs the layers in reverse, ping-ponging g[0] and
 * g[1] (activations' derivatives are fused into the layer backward that follows them); then
 * one optimizer update over the whole parameter block (models/trainer.c, which also runs the
 * epochs and the evaluation). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "models/cnn-internal.h"
#include "models/trainer.h"

/* ---- configuration --------------------------------------------------------------------------- */

void ridge_cnn_config_init(ridge_cnn_config *c)
{
    memset(c, 0, sizeof *c);
    c->in_h = c->in_w = 28;
    c->in_c = 1;
    c->in_mean = 0.2860f;
    c->in_std = 0.3530f;
    c->bn_eps = 1e-5f;
    c->bn_momentum = 0.1f;
}

static int parse_int(const char **s, int64_t *v)
{
    char *end;
    long long x = strtoll(*s, &end, 10);
    if (end == *s || x < 1 || x > (1 << 20)) return 0;
    *s = end;
    *v = x;
    return 1;
}

static ridge_status parse_token(const char *t, ridge_cnn_config *c)
{
    ridge_cnn_layer L = {0};
    const char *s = t;
    int ok = 0;
    if (!strcmp(t, "relu")) {
        if (c->nlayers == 0)
            return ridge_error(RIDGE_EINVAL, "cnn arch: 'relu' needs a layer before it");
        ridge_cnn_layer *p = &c->layers[c->nlayers - 1];
        if (p->kind == RIDGE_CNN_MAXPOOL || p->kind == RIDGE_CNN_AVGPOOL ||
            p->act != RIDGE_EPI_NONE)
            return ridge_error(RIDGE_EINVAL, "cnn arch: 'relu' must follow a conv, bn or dense "
                               "layer without an activation");
        p->act = RIDGE_EPI_RELU;
        return RIDGE_OK;
    }
    if (c->nlayers == RIDGE_CNN_MAX_LAYERS)
        return ridge_error(RIDGE_EINVAL, "cnn arch: more than %d layers", RIDGE_CNN_MAX_LAYERS);
    if (!strcmp(t, "bn")) {
        L.kind = RIDGE_CNN_BN;
        ok = 1;
    } else if (!strncmp(t, "conv", 4)) {
        int64_t k2;
        s += 4;
        L.kind = RIDGE_CNN_CONV;
        L.stride = 1;
        ok = parse_int(&s, &L.k) && *s++ == 'x' && parse_int(&s, &k2) && k2 == L.k;
        if (ok && *s == 's') s++, ok = parse_int(&s, &L.stride);
        ok = ok && *s++ == '-' && parse_int(&s, &L.out) && *s == 0 && L.k % 2 == 1;
    } else if (!strncmp(t, "maxpool", 7) || !strncmp(t, "avgpool", 7)) {
        L.kind = t[0] == 'm' ? RIDGE_CNN_MAXPOOL : RIDGE_CNN_AVGPOOL;
        s += 7;
        ok = parse_int(&s, &L.k);
        L.stride = L.k;
        if (ok && *s == 's') s++, ok = parse_int(&s, &L.stride);
        ok = ok && *s == 0;
    } else if (!strncmp(t, "dense-", 6)) {
        L.kind = RIDGE_CNN_DENSE;
        s += 6;
        ok = parse_int(&s, &L.out) && *s == 0;
    }
    if (!ok)
        return ridge_error(RIDGE_EINVAL, "cnn arch: cannot read layer '%s' (expected convKxK-C "
                           "(odd K), convKxKsS-C, bn, relu, maxpoolK[sS], avgpoolK[sS], dense-N)",
                           t);
    c->layers[c->nlayers++] = L;
    return RIDGE_OK;
}

ridge_status ridge_cnn_arch_parse(const char *arch, ridge_cnn_config *c)
{
    if (!arch || !c) return ridge_error(RIDGE_EINVAL, "cnn arch: NULL argument");
    if (strlen(arch) >= RIDGE_CNN_ARCH_MAX)
        return ridge_error(RIDGE_EINVAL, "cnn arch: longer than %d characters",
                           RIDGE_CNN_ARCH_MAX - 1);
    char buf[RIDGE_CNN_ARCH_MAX];
    strcpy(buf, arch);
    c->nlayers = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        ridge_status st = parse_token(t, c);
        if (st) return st;
    }
    if (c->nlayers == 0) return ridge_error(RIDGE_EINVAL, "cnn arch: no layers in '%s'", arch);
    return RIDGE_OK;
}

ridge_status ridge_cnn_arch_format(const ridge_cnn_config *c, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (int l = 0; l < c->nlayers; l++) {
        const ridge_cnn_layer *L = &c->layers[l];
        char t[64];
        switch (L->kind) {
        case RIDGE_CNN_CONV:
            if (L->stride == 1)
                snprintf(t, sizeof t, "conv%lldx%lld-%lld", (long long)L->k, (long long)L->k,
                         (long long)L->out);
            else
                snprintf(t, sizeof t, "conv%lldx%llds%lld-%lld", (long long)L->k, (long long)L->k,
                         (long long)L->stride, (long long)L->out);
            break;
        case RIDGE_CNN_BN: snprintf(t, sizeof t, "bn"); break;
        case RIDGE_CNN_MAXPOOL:
        case RIDGE_CNN_AVGPOOL:
            if (L->stride == L->k)
                snprintf(t, sizeof t, "%spool%lld", L->kind == RIDGE_CNN_MAXPOOL ? "max" : "avg",
                         (long long)L->k);
            else
                snprintf(t, sizeof t, "%spool%llds%lld",
                         L->kind == RIDGE_CNN_MAXPOOL ? "max" : "avg", (long long)L->k,
                         (long long)L->stride);
            break;
        default: snprintf(t, sizeof t, "dense-%lld", (long long)L->out); break;
        }
        if (L->act == RIDGE_EPI_RELU) strcat(t, ",relu");
        int w = snprintf(buf + n, len - n, "%s%s", l ? "," : "", t);
        if (w < 0 || (size_t)w >= len - n)
            return ridge_error(RIDGE_EINVAL, "cnn arch: string longer than %zu bytes", len - 1);
        n += (size_t)w;
    }
    return RIDGE_OK;
}

/* a * b * c * d, or -1 if any step overflows int64 (hostile checkpoint headers; fuzzed) */
static int64_t mul4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r) || __builtin_mul_overflow(r, c, &r) ||
        __builtin_mul_overflow(r, d, &r))
        return -1;
    return r;
}

/* Shapes after each layer into h/w/c[0..nlayers]; parameter and buffer sizes per layer. */
static ridge_status shapes(const ridge_cnn_config *c, int64_t *h, int64_t *w, int64_t *ch,
                           size_t *wsz, size_t *bsz, size_t *rsz)
{
    h[0] = c->in_h, w[0] = c->in_w, ch[0] = c->in_c;
    for (int l = 0; l < c->nlayers; l++) {
        const ridge_cnn_layer *L = &c->layers[l];
        int64_t H = h[l], W = w[l], C = ch[l];
        wsz[l] = bsz[l] = rsz[l] = 0;
        if (L->act != RIDGE_EPI_NONE && L->act != RIDGE_EPI_RELU)
            return ridge_error(RIDGE_EINVAL, "cnn: layer %d: activation must be none or relu", l);
        switch (L->kind) {
        case RIDGE_CNN_CONV:
            if (L->k < 1 || L->k % 2 == 0 || L->stride < 1 || L->out < 1)
                return ridge_error(
                    RIDGE_EINVAL, "cnn: layer %d: conv %lldx%lld stride %lld to %lld", l,
                    (long long)L->k, (long long)L->k, (long long)L->stride, (long long)L->out);
            h[l + 1] = (H - 1) / L->stride + 1, w[l + 1] = (W - 1) / L->stride + 1;
            ch[l + 1] = L->out;
            if (mul4(L->out, C, L->k, L->k) < 0)
                return ridge_error(RIDGE_EINVAL, "cnn: layer %d: conv weights overflow", l);
            wsz[l] = (size_t)(L->out * C * L->k * L->k), bsz[l] = (size_t)L->out;
            break;
        case RIDGE_CNN_BN:
            h[l + 1] = H, w[l + 1] = W, ch[l + 1] = C;
            wsz[l] = bsz[l] = rsz[l] = (size_t)C;
            break;
        case RIDGE_CNN_MAXPOOL:
        case RIDGE_CNN_AVGPOOL:
            if (L->act != RIDGE_EPI_NONE || L->k < 1 || L->stride < 1 || L->k > H || L->k > W)
                return ridge_error(RIDGE_EINVAL, "cnn: layer %d: pool %lld on %lldx%lld", l,
                                   (long long)L->k, (long long)H, (long long)W);
            h[l + 1] = (H - L->k) / L->stride + 1, w[l + 1] = (W - L->k) / L->stride + 1;
            ch[l + 1] = C;
            break;
        case RIDGE_CNN_DENSE:
            if (L->out < 1)
                return ridge_error(RIDGE_EINVAL, "cnn: layer %d: dense to %lld", l,
                                   (long long)L->out);
            h[l + 1] = w[l + 1] = 1, ch[l + 1] = L->out;
            if (mul4(L->out, H, W, C) < 0)
                return ridge_error(RIDGE_EINVAL, "cnn: layer %d: dense weights overflow", l);
            wsz[l] = (size_t)(L->out * H * W * C), bsz[l] = (size_t)L->out;
            break;
        default: return ridge_error(RIDGE_EINVAL, "cnn: layer %d: kind %d", l, (int)L->kind);
        }
        const int64_t outn = mul4(h[l + 1], w[l + 1], ch[l + 1], 1);
        if (outn < 0 || outn > (1 << 26))
            return ridge_error(RIDGE_EINVAL, "cnn: layer %d: output of %lld floats per image", l,
                               (long long)outn);
    }
    return RIDGE_OK;
}

ridge_status ridge_cnn_config_check(const ridge_cnn_config *c)
{
    if (!c) return ridge_error(RIDGE_EINVAL, "cnn: config is NULL");
    if (c->nlayers < 1 || c->nlayers > RIDGE_CNN_MAX_LAYERS)
        return ridge_error(RIDGE_EINVAL, "cnn: %d layers, expected 1..%d", c->nlayers,
                           RIDGE_CNN_MAX_LAYERS);
    const int64_t in = mul4(c->in_h, c->in_w, c->in_c, 1);
    if (c->in_h < 1 || c->in_w < 1 || c->in_c < 1 || in < 0 || in > (1 << 24))
        return ridge_error(RIDGE_EINVAL, "cnn: input %lldx%lldx%lld", (long long)c->in_h,
                           (long long)c->in_w, (long long)c->in_c);
    if (!isfinite(c->in_mean) || !(c->in_std > 0 && isfinite(c->in_std)))
        return ridge_error(RIDGE_EINVAL, "cnn: input normalization mean %g, std %g", c->in_mean,
                           c->in_std);
    if (!(c->bn_eps > 0) || !(c->bn_momentum >= 0 && c->bn_momentum <= 1))
        return ridge_error(RIDGE_EINVAL, "cnn: bn eps %g, momentum %g", c->bn_eps, c->bn_momentum);
    const ridge_cnn_layer *last = &c->layers[c->nlayers - 1];
    if (last->kind != RIDGE_CNN_DENSE || last->act != RIDGE_EPI_NONE)
        return ridge_error(RIDGE_EINVAL, "cnn: the last layer must be a dense layer without "
                           "activation (its units are the classes)");
    int64_t h[RIDGE_CNN_MAX_LAYERS + 1], w[RIDGE_CNN_MAX_LAYERS + 1], ch[RIDGE_CNN_MAX_LAYERS + 1];
    size_t a[RIDGE_CNN_MAX_LAYERS], b[RIDGE_CNN_MAX_LAYERS], r[RIDGE_CNN_MAX_LAYERS];
    return shapes(c, h, w, ch, a, b, r);
}

ridge_status cnn_layout(const ridge_cnn_config *c, size_t *poffs, size_t *ptotal, size_t *roffs,
                        size_t *rtotal)
{
    int64_t h[RIDGE_CNN_MAX_LAYERS + 1], w[RIDGE_CNN_MAX_LAYERS + 1], ch[RIDGE_CNN_MAX_LAYERS + 1];
    size_t ws[RIDGE_CNN_MAX_LAYERS], bs[RIDGE_CNN_MAX_LAYERS], rs[RIDGE_CNN_MAX_LAYERS];
    ridge_status st = ridge_cnn_config_check(c);
    if (st || (st = shapes(c, h, w, ch, ws, bs, rs))) return st;
    size_t psz[2 * RIDGE_CNN_MAX_LAYERS], rsz[2 * RIDGE_CNN_MAX_LAYERS];
    for (int l = 0; l < c->nlayers; l++) {
        psz[2 * l] = ws[l], psz[2 * l + 1] = bs[l];
        rsz[2 * l] = rsz[2 * l + 1] = rs[l];
    }
    if ((st = ridge_params_layout(psz, 2 * (size_t)c->nlayers, poffs, ptotal))) return st;
    return ridge_params_layout(rsz, 2 * (size_t)c->nlayers, roffs, rtotal);
}

/* ---- allocation ------------------------------------------------------------------------------ */

ridge_status ridge_cnn_create(const ridge_cnn_config *cfg, const ridge_optim_config *opt,
                              size_t batch, uint64_t seed, ridge_cnn **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "cnn_create: out is NULL");
    *out = NULL;
    size_t poffs[2 * RIDGE_CNN_MAX_LAYERS], roffs[2 * RIDGE_CNN_MAX_LAYERS], np, nr;
    ridge_status st = cnn_layout(cfg, poffs, &np, roffs, &nr);
    if (st || (st = ridge_optim_config_check(opt))) return st;
    if (batch < 1 || batch > (1u << 20))
        return ridge_error(RIDGE_EINVAL, "cnn: batch %zu, expected 1..%u", batch, 1u << 20);
    ridge_cnn *m = calloc(1, sizeof *m);
    if (!m) return ridge_error(RIDGE_ENOMEM, "cnn: out of memory");
    m->cfg = *cfg;
    m->opt = *opt;
    m->batch = batch;
    m->seed = seed;
    m->nparams = np;
    m->nbuffers = nr;
    m->nstate = ridge_optim_state_per_param(opt) * np;
    m->params = ridge_calloc(np, sizeof(float));
    m->grads = ridge_calloc(np, sizeof(float));
    m->buffers = ridge_calloc(nr ? nr : 1, sizeof(float));
    m->state = m->nstate ? ridge_calloc(m->nstate, sizeof(float)) : NULL;
    if (!m->params || !m->grads || !m->buffers || (m->nstate && !m->state)) {
        ridge_cnn_destroy(m);
        return ridge_error(RIDGE_ENOMEM, "cnn: cannot allocate %zu parameters", np);
    }
    size_t ws[RIDGE_CNN_MAX_LAYERS], bs[RIDGE_CNN_MAX_LAYERS], rs[RIDGE_CNN_MAX_LAYERS];
    shapes(cfg, m->h, m->wd, m->c, ws, bs, rs);
    m->classes = (size_t)m->c[cfg->nlayers];
    ridge_rng rng;
    ridge_rng_seed(&rng, seed);
    for (int l = 0; l < cfg->nlayers; l++) {
        const ridge_cnn_layer *L = &cfg->layers[l];
        m->w[l] = m->params + poffs[2 * l], m->b[l] = m->params + poffs[2 * l + 1];
        m->dw[l] = m->grads + poffs[2 * l], m->db[l] = m->grads + poffs[2 * l + 1];
        if (L->kind == RIDGE_CNN_BN) {
            m->run_mean[l] = m->buffers + roffs[2 * l];
            m->run_var[l] = m->buffers + roffs[2 * l + 1];
            for (size_t i = 0; i < ws[l]; i++) m->w[l][i] = 1.0f, m->run_var[l][i] = 1.0f;
            continue;
        }
        if (!ws[l]) continue;
        const float bound = 1.0f / sqrtf((float)(ws[l] / bs[l])); /* 1/sqrt(fan_in) */
        for (size_t i = 0; i < ws[l]; i++) m->w[l][i] = (2 * ridge_rng_uniform(&rng) - 1) * bound;
        for (size_t i = 0; i < bs[l]; i++) m->b[l][i] = (2 * ridge_rng_uniform(&rng) - 1) * bound;
    }
    *out = m;
    return RIDGE_OK;
}

void ridge_cnn_destroy(ridge_cnn *m)
{
    if (!m) return;
    ridge_free(m->params);
    ridge_free(m->grads);
    ridge_free(m->state);
    ridge_free(m->buffers);
    ridge_free(m->work);
    free(m);
}

/* Grows the work buffers to hold B images. */
static ridge_status reserve(ridge_cnn *m, size_t B)
{
    if (B <= m->cap) return RIDGE_OK;
    const ridge_cnn_config *c = &m->cfg;
    const int L = c->nlayers;
    size_t sizes[4 * RIDGE_CNN_MAX_LAYERS + 8], offs[4 * RIDGE_CNN_MAX_LAYERS + 8], total, n = 0;
    size_t gmax = (size_t)(m->h[0] * m->wd[0] * m->c[0]), fw = 1, fb = 1;
    ridge_status st;
    for (int l = 1; l <= L; l++) {
        size_t per = (size_t)(m->h[l] * m->wd[l] * m->c[l]);
        gmax = RIDGE_MAX(gmax, per);
        if ((st = ridge_size_mul(B, per, "cnn: activations", &sizes[n++]))) return st;
    }
    for (int l = 0; l < L; l++) {
        const ridge_cnn_layer *ly = &c->layers[l];
        size_t per = (size_t)(m->h[l + 1] * m->wd[l + 1] * m->c[l + 1]);
        sizes[n++] = ly->kind == RIDGE_CNN_MAXPOOL ? B * per : 0;              /* argmax */
        sizes[n++] = ly->kind == RIDGE_CNN_BN ? 2 * (size_t)m->c[l] : 0;      /* mean, rstd */
        if (ly->kind == RIDGE_CNN_CONV) {
            fw = RIDGE_MAX(fw, (size_t)(ly->out * m->c[l] * ly->k * ly->k));
            fb = RIDGE_MAX(fb, (size_t)ly->out);
        }
    }
    if ((st = ridge_size_mul(B, gmax, "cnn: gradients", &sizes[n]))) return st;
    sizes[n + 1] = sizes[n];
    sizes[n + 2] = fw, sizes[n + 3] = fb;
    n += 4;
    if ((st = ridge_params_layout(sizes, n, offs, &total))) return st;
    float *a = ridge_malloc(total * sizeof(float));
    if (!a) return ridge_error(RIDGE_ENOMEM, "cnn: cannot allocate activations for batch %zu", B);
    ridge_free(m->work);
    m->work = a;
    m->cap = B;
    n = 0;
    for (int l = 1; l <= L; l++) m->act[l] = a + offs[n++];
    for (int l = 0; l < L; l++) {
        m->argmax[l] = (int32_t *)(a + offs[n++]);
        m->bn_mean[l] = a + offs[n++];
        m->bn_rstd[l] = m->bn_mean[l] + m->c[l];
    }
    m->g[0] = a + offs[n], m->g[1] = a + offs[n + 1];
    m->fold_w = a + offs[n + 2], m->fold_b = a + offs[n + 3];
    return RIDGE_OK;
}

/* ---- forward and backward -------------------------------------------------------------------- */

static ridge_conv2d_desc conv_desc(const ridge_cnn *m, int l, size_t B)
{
    const ridge_cnn_layer *L = &m->cfg.layers[l];
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = (int64_t)B, d.c_in = m->c[l], d.h = m->h[l], d.w = m->wd[l];
    d.c_out = L->out, d.r = d.s = L->k;
    d.stride_h = d.stride_w = L->stride;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = L->k / 2;
    d.layout = RIDGE_NHWC;
    return d;
}

static ridge_pool2d_desc pool_desc(const ridge_cnn *m, int l, size_t B)
{
    const ridge_cnn_layer *L = &m->cfg.layers[l];
    ridge_pool2d_desc d = {.n = (int64_t)B, .c = m->c[l], .h = m->h[l], .w = m->wd[l],
                           .r = L->k, .s = L->k, .stride_h = L->stride, .stride_w = L->stride,
                           .kind = L->kind == RIDGE_CNN_MAXPOOL ? RIDGE_POOL_MAX : RIDGE_POOL_AVG,
                           .layout = RIDGE_NHWC};
    return d;
}

/* mpi: with data parallelism, batch norms take their statistics over the whole batch */
static ridge_sum_f64_fn bn_sum(const ridge_cnn *m)
{
    return m->dp.nranks > 1 ? m->dp.sum_f64 : NULL;
}

static ridge_status forward(ridge_ctx *ctx, ridge_cnn *m, const float *x, size_t B, int train)
{
    const ridge_cnn_config *c = &m->cfg;
    ridge_status st = reserve(m, B);
    if (st) return st;
    m->act[0] = (float *)x;
    for (int l = 0; l < c->nlayers; l++) {
        const ridge_cnn_layer *L = &c->layers[l];
        const float *in = m->act[l];
        float *out = m->act[l + 1];
        const size_t rows = B * (size_t)(m->h[l] * m->wd[l]);
        switch (L->kind) {
        case RIDGE_CNN_CONV: {
            ridge_conv2d_desc d = conv_desc(m, l, B);
            const ridge_cnn_layer *next = l + 1 < c->nlayers ? &c->layers[l + 1] : NULL;
            if (!train && next && next->kind == RIDGE_CNN_BN && L->act == RIDGE_EPI_NONE) {
                /* inference: the batch norm folded into this convolution */
                size_t per = (size_t)(m->c[l] * L->k * L->k);
                memcpy(m->fold_w, m->w[l], (size_t)L->out * per * sizeof(float));
                memcpy(m->fold_b, m->b[l], (size_t)L->out * sizeof(float));
                if ((st = ridge_conv2d_fold_bn(L->out, (int64_t)per, m->fold_w, m->fold_b,
                                               m->w[l + 1], m->b[l + 1], m->run_mean[l + 1],
                                               m->run_var[l + 1], c->bn_eps)))
                    return st;
                if ((st = ridge_conv_layer_forward(ctx, m->act[l + 2], in, m->fold_w, m->fold_b,
                                                   &d, next->act)))
                    return st;
                l++;
                continue;
            }
            st = ridge_conv_layer_forward(ctx, out, in, m->w[l], m->b[l], &d, L->act);
            break;
        }
        case RIDGE_CNN_BN:
            st = train ? ridge_batchnorm_forward_train_sync(
                             ctx, out, m->bn_mean[l], m->bn_rstd[l], m->run_mean[l],
                             m->run_var[l], in, m->w[l], m->b[l], rows, (size_t)m->c[l],
                             c->bn_eps, c->bn_momentum, L->act, bn_sum(m))
                       : ridge_batchnorm_forward_infer(ctx, out, in, m->w[l], m->b[l],
                                                       m->run_mean[l], m->run_var[l], rows,
                                                       (size_t)m->c[l], c->bn_eps, L->act);
            break;
        case RIDGE_CNN_MAXPOOL:
        case RIDGE_CNN_AVGPOOL: {
            ridge_pool2d_desc d = pool_desc(m, l, B);
            /* training keeps max pooling's winners for the backward */
            st = train && L->kind == RIDGE_CNN_MAXPOOL
                     ? ridge_pool2d_forward_argmax(ctx, &d, in, out, m->argmax[l])
                     : ridge_pool2d_forward(ctx, &d, in, out);
            break;
        }
        default:
            st = ridge_dense_forward(ctx, out, in, m->w[l], m->b[l], B,
                                     (size_t)(m->h[l] * m->wd[l] * m->c[l]), (size_t)L->out,
                                     L->act);
            break;
        }
        if (st) return st;
    }
    return RIDGE_OK;
}

ridge_status ridge_cnn_forward(ridge_ctx *ctx, ridge_cnn *m, const float *x, size_t B,
                               const float **logits)
{
    if (!ctx || !m || !x || !logits || !B)
        return ridge_error(RIDGE_EINVAL, "cnn_forward: NULL argument or B == 0");
    ridge_status st = forward(ctx, m, x, B, 0);
    *logits = st ? NULL : m->act[m->cfg.nlayers];
    return st;
}

ridge_status ridge_cnn_gradients(ridge_ctx *ctx, ridge_cnn *m, const float *x,
                                 const int32_t *y, size_t B, float *loss)
{
    if (!ctx || !m || !x || !y || !loss || !B)
        return ridge_error(RIDGE_EINVAL, "cnn_train_step: NULL argument or B == 0");
    const ridge_cnn_config *c = &m->cfg;
    const int L = c->nlayers;
    *loss = 0;
    ridge_status st = forward(ctx, m, x, B, 1);
    if (st) return st;
    st = ridge_softmax_xent(ctx, loss, m->g[0], NULL, m->act[L], y, B, m->classes);
    if (st == RIDGE_EINVAL && !isfinite(*loss))
        return ridge_error(RIDGE_EINVAL, "cnn: the loss is %g at step %llu (diverged: lower "
                           "--lr)", *loss, (unsigned long long)m->step);
    if (st) return st;
    int cur = 0;
    for (int l = L - 1; l >= 0; l--) {
        const ridge_cnn_layer *ly = &c->layers[l];
        float *dy = m->g[cur], *dx = m->g[cur ^ 1];
        const int first = l == 0;
        switch (ly->kind) {
        case RIDGE_CNN_CONV: {
            ridge_conv2d_desc d = conv_desc(m, l, B);
            st = ridge_conv_layer_backward(ctx, first ? NULL : dx, m->dw[l], m->db[l], dy,
                                           m->act[l], m->w[l], m->act[l + 1], &d, ly->act);
            break;
        }
        case RIDGE_CNN_BN:
            st = ridge_batchnorm_backward_sync(ctx, dx, m->dw[l], m->db[l], dy, m->act[l],
                                               m->act[l + 1], m->bn_mean[l], m->bn_rstd[l],
                                               m->w[l], B * (size_t)(m->h[l] * m->wd[l]),
                                               (size_t)m->c[l], ly->act, bn_sum(m));
            break;
        case RIDGE_CNN_MAXPOOL:
        case RIDGE_CNN_AVGPOOL: {
            ridge_pool2d_desc d = pool_desc(m, l, B);
            if (!first) st = ridge_pool2d_backward(ctx, &d, dx, dy, m->argmax[l]);
            break;
        }
        default:
            st = ridge_dense_backward(ctx, first ? NULL : dx, m->dw[l], m->db[l], dy, m->act[l],
                                      m->w[l], m->act[l + 1], B,
                                      (size_t)(m->h[l] * m->wd[l] * m->c[l]), (size_t)ly->out,
                                      ly->act);
            break;
        }
        if (st) return st;
        cur ^= 1;
    }
    return RIDGE_OK;
}

static ridge_status gradients(ridge_ctx *ctx, void *m, const float *x, const int32_t *y,
                              size_t B, float *loss)
{
    return ridge_cnn_gradients(ctx, m, x, y, B, loss);
}

static ridge_status forward_logits(ridge_ctx *ctx, void *m, const float *x, size_t B,
                                   const float **logits)
{
    return ridge_cnn_forward(ctx, m, x, B, logits);
}

/* ---- steps, epochs and evaluation: the loops shared with the MLP (models/trainer.c) -------- */

static model_trainer trainer(ridge_cnn *m)
{
    model_trainer t = {.name = "cnn", .model = m, .gradients = gradients,
                       .forward = forward_logits};
    if (!m) return t;
    t.opt = &m->opt, t.params = m->params, t.grads = m->grads, t.state = m->state;
    t.nparams = m->nparams, t.step = &m->step, t.epoch = &m->epoch, t.seed = m->seed;
    t.batch = m->batch, t.eval_batch = RIDGE_MAX(m->batch, 256);
    t.D = (size_t)(m->cfg.in_h * m->cfg.in_w * m->cfg.in_c), t.classes = m->classes;
    t.in_mean = m->cfg.in_mean, t.in_std = m->cfg.in_std, t.dp = &m->dp;
    return t;
}

ridge_status ridge_cnn_train_step(ridge_ctx *ctx, ridge_cnn *m, const float *x,
                                  const int32_t *y, size_t B, float *loss)
{
    model_trainer t = trainer(m);
    return model_train_step(ctx, &t, x, y, B, loss);
}

ridge_status ridge_cnn_train_epoch(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images,
                                   const uint8_t *labels, size_t n, ridge_cnn_progress_fn fn,
                                   void *arg, double *mean_loss)
{
    model_trainer t = trainer(m);
    return model_train_epoch(ctx, &t, images, labels, n, fn, arg, mean_loss);
}

ridge_status ridge_cnn_evaluate(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images,
                                const uint8_t *labels, size_t n, double *loss, size_t *correct,
                                uint64_t *confusion)
{
    model_trainer t = trainer(m);
    return model_evaluate(ctx, &t, images, labels, n, loss, correct, confusion);
}
