/* Post-training int8 quantization of an MLP (ridge/quant.h): calibration with the fp32 model,
 * per-channel weight quantization, int8 inference on the int8 GEMM with the requantizing
 * epilogue, and the int8 checkpoint. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/checkpoint.h"
#include "quant/quant-internal.h"

#define QMLP_BATCH 256 /* rows per forward chunk (calibration and evaluation) */

typedef struct qlayer {
    quant_layer q;     /* rows = out, cols = in */
    ridge_qgemm_plan *plan;
} qlayer;

struct ridge_qmlp {
    ridge_mlp_config cfg;
    qlayer L[RIDGE_MLP_MAX_LAYERS];
    size_t cap;        /* rows the buffers hold */
    uint8_t *act[2];   /* ping-pong hidden activations (cap, max width) */
    float *logits;     /* (cap, classes) */
};

void ridge_qmlp_destroy(ridge_qmlp *q)
{
    if (!q) return;
    for (int l = 0; l < q->cfg.nlayers; l++) {
        quant_layer_free(&q->L[l].q);
        ridge_qgemm_plan_destroy(q->L[l].plan);
    }
    ridge_free(q->act[0]);
    ridge_free(q->act[1]);
    ridge_free(q->logits);
    ridge_free(q);
}

const ridge_mlp_config *ridge_qmlp_config(const ridge_qmlp *q) { return q ? &q->cfg : NULL; }

/* Allocates a model of cfg's shape (arrays zeroed, no plans). */
static ridge_status qmlp_alloc(const ridge_mlp_config *cfg, ridge_qmlp **out)
{
    ridge_qmlp *q = ridge_calloc(1, sizeof *q);
    if (!q) return ridge_error(RIDGE_ENOMEM, "qmlp: out of memory");
    q->cfg = *cfg;
    size_t wmax = 0;
    for (int l = 0; l < cfg->nlayers; l++) {
        wmax = RIDGE_MAX(wmax, cfg->sizes[l + 1]);
        if (quant_layer_alloc(&q->L[l].q, cfg->sizes[l + 1], cfg->sizes[l])) goto err_nomem;
    }
    q->cap = QMLP_BATCH;
    q->act[0] = ridge_malloc(q->cap * wmax);
    q->act[1] = ridge_malloc(q->cap * wmax);
    q->logits = ridge_malloc(q->cap * cfg->sizes[cfg->nlayers] * sizeof(float));
    if (!q->act[0] || !q->act[1] || !q->logits) goto err_nomem;
    *out = q;
    return RIDGE_OK;
err_nomem:
    ridge_qmlp_destroy(q);
    return ridge_error(RIDGE_ENOMEM, "qmlp: out of memory for the model");
}

/* The requantization scales and the GEMM plans, from the quantized weights and ranges. */
static ridge_status qmlp_build(ridge_ctx *ctx, ridge_qmlp *q)
{
    for (int l = 0; l < q->cfg.nlayers; l++) {
        quant_layer *L = &q->L[l].q;
        ridge_status st = quant_layer_finish(L, l == q->cfg.nlayers - 1);
        if (st) return st;
        st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, L->rows, L->cols, L->wq, L->cols,
                                     &q->L[l].plan);
        if (st) return st;
    }
    return RIDGE_OK;
}

/* ---- quantization ------------------------------------------------------------------------------ */

ridge_status ridge_qmlp_quantize(ridge_ctx *ctx, const ridge_mlp *m, const uint8_t *images,
                                 size_t n, ridge_qmlp **out)
{
    const char *fn = "qmlp_quantize";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx || !m || !images || n == 0)
        return ridge_error(RIDGE_EINVAL, "%s: %s", fn,
                           !ctx ? "ctx is NULL" : !m ? "model is NULL" : !images ? "images is NULL"
                                                                                   : "no calibration images");
    const ridge_mlp_config *cfg = &m->cfg;
    ridge_status st = ridge_mlp_config_check(cfg);
    if (st) return st;
    if (cfg->act != RIDGE_EPI_RELU && cfg->act != RIDGE_EPI_NONE)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: the hidden activation must be relu or none for int8 (its output "
                           "range must map onto u8 without a lookup table)", fn);
    ridge_qmlp *q;
    if ((st = qmlp_alloc(cfg, &q))) return st;
    const int nl = cfg->nlayers;
    const float inv_std = 1.0f / cfg->in_std;

    /* calibration: the fp32 forward on the images, each hidden output's range */
    size_t wmax = 0;
    for (int l = 0; l <= nl; l++) wmax = RIDGE_MAX(wmax, cfg->sizes[l]);
    float *buf[2] = {ridge_malloc(QMLP_BATCH * wmax * sizeof(float)),
                     ridge_malloc(QMLP_BATCH * wmax * sizeof(float))};
    double lo[RIDGE_MLP_MAX_LAYERS] = {0}, hi[RIDGE_MLP_MAX_LAYERS] = {0}; /* include 0 */
    if (!buf[0] || !buf[1]) {
        st = ridge_error(RIDGE_ENOMEM, "%s: out of memory for calibration", fn);
        goto done;
    }
    for (size_t r0 = 0; r0 < n && !st; r0 += QMLP_BATCH) {
        size_t B = RIDGE_MIN((size_t)QMLP_BATCH, n - r0), in0 = cfg->sizes[0];
        for (size_t i = 0; i < B * in0; i++)
            buf[0][i] = ((float)images[r0 * in0 + i] / 255.0f - cfg->in_mean) * inv_std;
        for (int l = 0; l < nl - 1 && !st; l++) { /* the hidden layers */
            ridge_epilogue e = {.bias_kind = RIDGE_BIAS_COL, .bias = m->b[l], .act = cfg->act};
            float *x = buf[l & 1], *y = buf[(l + 1) & 1];
            st = ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, B, cfg->sizes[l + 1],
                                cfg->sizes[l], 1.0f, x, cfg->sizes[l], m->w[l], cfg->sizes[l],
                                0.0f, y, cfg->sizes[l + 1], &e);
            for (size_t i = 0; i < B * cfg->sizes[l + 1]; i++) {
                lo[l] = RIDGE_MIN(lo[l], (double)y[i]);
                hi[l] = RIDGE_MAX(hi[l], (double)y[i]);
            }
        }
    }
    if (st) goto done;

    for (int l = 0; l < nl; l++) {
        quant_layer *L = &q->L[l].q;
        /* input quantization: raw pixels for layer 0, the previous layer's output after */
        if (l == 0) L->in_scale = inv_std / 255.0f, L->in_zp = 0;
        else L->in_scale = q->L[l - 1].q.out_scale, L->in_zp = q->L[l - 1].q.out_zp;
        if (l < nl - 1) quant_range_u8(lo[l], hi[l], &L->out_scale, &L->out_zp);
        /* the input normalization's mean, folded into layer 0's bias */
        quant_layer_quantize(L, m->w[l], m->b[l], l == 0 ? -(double)cfg->in_mean * inv_std : 0.0);
    }
    st = qmlp_build(ctx, q);
done:
    ridge_free(buf[0]);
    ridge_free(buf[1]);
    if (st) ridge_qmlp_destroy(q);
    else *out = q;
    return st;
}

/* ---- inference --------------------------------------------------------------------------------- */

/* Rows [0, B) of the chunk at images, B <= cap: logits into q->logits. */
static ridge_status qmlp_chunk(ridge_ctx *ctx, ridge_qmlp *q, const uint8_t *images, size_t B)
{
    const int nl = q->cfg.nlayers;
    const uint8_t *x = images;
    for (int l = 0; l < nl; l++) {
        const quant_layer *L = &q->L[l].q;
        const int last = l == nl - 1;
        const ridge_requant rq = quant_layer_requant(L, last, q->cfg.act == RIDGE_EPI_RELU);
        void *y = last ? (void *)q->logits : (void *)q->act[l & 1];
        ridge_status st = ridge_qgemm_plan_execute(ctx, q->L[l].plan, RIDGE_LOWP_U8, B, x, L->cols,
                                                   L->in_zp, y, L->rows, &rq);
        if (st) return st;
        x = q->act[l & 1];
    }
    return RIDGE_OK;
}

ridge_status ridge_qmlp_forward(ridge_ctx *ctx, ridge_qmlp *q, const uint8_t *images, size_t B,
                                const float **logits)
{
    if (!ctx || !q || !images || !logits)
        return ridge_error(RIDGE_EINVAL, "qmlp_forward: NULL argument");
    if (B == 0 || B > q->cap)
        return ridge_error(RIDGE_EINVAL, "qmlp_forward: B (%zu) must be in [1, %zu]", B, q->cap);
    ridge_status st = qmlp_chunk(ctx, q, images, B);
    *logits = st ? NULL : q->logits;
    return st;
}

ridge_status ridge_qmlp_evaluate(ridge_ctx *ctx, ridge_qmlp *q, const uint8_t *images,
                                 const uint8_t *labels, size_t n, double *loss, size_t *correct)
{
    if (!ctx || !q || (n && (!images || !labels)))
        return ridge_error(RIDGE_EINVAL, "qmlp_evaluate: NULL argument");
    const size_t in = q->cfg.sizes[0], C = q->cfg.sizes[q->cfg.nlayers];
    double sum = 0;
    size_t right = 0;
    for (size_t r0 = 0; r0 < n; r0 += q->cap) {
        size_t B = RIDGE_MIN(q->cap, n - r0);
        ridge_status st = qmlp_chunk(ctx, q, images + r0 * in, B);
        if (st || (st = quant_score(q->logits, labels + r0, B, C, r0, &sum, &right))) return st;
    }
    if (loss) *loss = n ? sum / (double)n : 0.0;
    if (correct) *correct = right;
    return RIDGE_OK;
}

/* ---- the checkpoint ---------------------------------------------------------------------------- */

/* 256-byte header: the frame (models/checkpoint.h), u32 nlayers at 16, u32 sizes[17] at 20
 * (unused ones 0), u32 activation at 88, f32 input mean and std at 92, zeros after 100. Body,
 * per layer: f32 in_scale, u32 in_zp, f32 out_scale, u32 out_zp, f32 w_scale[out],
 * i32 bias[out], i8 weights[out][in]. */
static const ckpt_format qmlp_format = {"RIDGEQ8M", "int8 MLP checkpoint", 2, 256, 100, 0};

static uint64_t qmlp_body_bytes(const ridge_mlp_config *c)
{
    uint64_t sz = 0;
    for (int l = 0; l < c->nlayers; l++) sz += quant_layer_bytes(c->sizes[l + 1], c->sizes[l]);
    return sz;
}

ridge_status ridge_qmlp_save(const ridge_qmlp *q, const char *path)
{
    if (!q || !path) return ridge_error(RIDGE_EINVAL, "qmlp_save: NULL argument");
    unsigned char h[256];
    ckpt_header_init(&qmlp_format, h);
    ckpt_put32(h + 16, (uint32_t)q->cfg.nlayers);
    for (int l = 0; l <= q->cfg.nlayers; l++) ckpt_put32(h + 20 + 4 * l, (uint32_t)q->cfg.sizes[l]);
    ckpt_put32(h + 88, (uint32_t)q->cfg.act);
    ckpt_putf(h + 92, q->cfg.in_mean);
    ckpt_putf(h + 96, q->cfg.in_std);
    const size_t size = (size_t)qmlp_body_bytes(&q->cfg);
    unsigned char *buf = malloc(size), *p = buf;
    if (!buf) return ridge_error(RIDGE_ENOMEM, "qmlp_save: out of memory");
    for (int l = 0; l < q->cfg.nlayers; l++) p = quant_layer_put(&q->L[l].q, p);
    const ridge_file_part part = {buf, size};
    ridge_status st = ckpt_write(path, "qmlp_save", &qmlp_format, h, &part, 1);
    free(buf);
    return st;
}

ridge_status ridge_qmlp_load(ridge_ctx *ctx, const char *path, ridge_qmlp **out)
{
    if (!out || !path || !ctx) return ridge_error(RIDGE_EINVAL, "qmlp_load: NULL argument");
    *out = NULL;
    unsigned char h[256];
    FILE *f;
    uint64_t fsize;
    ridge_status st = ckpt_open(path, &qmlp_format, h, &f, &fsize);
    if (st) return st;
    unsigned char *buf = NULL;
    ridge_qmlp *q = NULL;
    ridge_mlp_config cfg = {0};
    const uint32_t nl = ckpt_get32(h + 16);
    int bad = nl < 1 || nl > RIDGE_MLP_MAX_LAYERS;
    cfg.nlayers = bad ? 1 : (int)nl;
    for (int l = 0; l <= RIDGE_MLP_MAX_LAYERS; l++) {
        const uint32_t v = ckpt_get32(h + 20 + 4 * l);
        bad |= l <= cfg.nlayers ? v < 1 || v > RIDGE_MLP_MAX_WIDTH : v != 0;
        cfg.sizes[l] = l <= cfg.nlayers ? v : 0;
    }
    cfg.act = (ridge_epi_act)ckpt_get32(h + 88);
    cfg.in_mean = ckpt_getf(h + 92), cfg.in_std = ckpt_getf(h + 96);
    if (bad || ridge_mlp_config_check(&cfg) ||
        (cfg.act != RIDGE_EPI_RELU && cfg.act != RIDGE_EPI_NONE)) {
        st = ridge_error(RIDGE_EFORMAT, "%s: the header's sizes, activation or normalization "
                         "are invalid", path);
        goto done;
    }
    const uint64_t body = qmlp_body_bytes(&cfg);
    if ((st = ckpt_check_size(path, &qmlp_format, fsize, body)) || (st = qmlp_alloc(&cfg, &q)))
        goto done;
    if (!(buf = malloc((size_t)body))) {
        st = ridge_error(RIDGE_ENOMEM, "%s: out of memory for %llu bytes", path,
                         (unsigned long long)body);
        goto done;
    }
    const ckpt_part part = {buf, (size_t)body};
    if ((st = ckpt_read_body(f, path, &qmlp_format, h, &part, 1))) goto done;
    const unsigned char *p = buf;
    for (int l = 0; l < cfg.nlayers && p; l++) p = quant_layer_get(&q->L[l].q, p, l == cfg.nlayers - 1);
    if (!p) {
        st = ridge_error(RIDGE_EFORMAT, "%s: a layer's scales or zero points are invalid", path);
        goto done;
    }
    if ((st = qmlp_build(ctx, q)) == RIDGE_EOVERFLOW) /* scales that cannot be used */
        st = ckpt_with_path(RIDGE_EFORMAT, path);
done:
    fclose(f);
    free(buf);
    if (st) ridge_qmlp_destroy(q);
    else *out = q;
    return st;
}
