/* Post-training int8 quantization of a CNN (ridge/quant.h): batch norms folded into the layer
 * before them, per-channel int8 weights, u8 activations with per-tensor ranges from the fp32
 * model on calibration images; inference on the int8 convolution and GEMM with the
 * requantizing epilogue, pooling on u8; the int8 CNN checkpoint.
 *
 * Why pooling can stay in u8: the quantization q = round(x / s) + z is monotone (s > 0), so
 * the max of the q is the q of the max, exactly; an average of q is the q of the average up to
 * the rounding of the result (half a step). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/checkpoint.h"
#include "quant/quant-internal.h"

#define QCNN_BATCH 128 /* images per forward chunk */

typedef struct qcnn_layer {
    ridge_cnn_kind kind;   /* CONV, MAXPOOL, AVGPOOL or DENSE: batch norms are folded away */
    int src, bn;           /* the fp32 layer, and the batch norm folded into it (-1: none) */
    int64_t h, w, c;       /* input, per image, NHWC */
    int64_t oh, ow, oc;    /* output */
    int64_t k, stride;     /* conv, pooling */
    int relu;
    size_t nw;             /* conv: oc x c x k x k (OIHW); dense: oc x (h w c) */
    quant_layer q;         /* conv and dense: rows oc, cols nw / oc */
    ridge_qconv2d_plan *conv;
    ridge_qgemm_plan *gemm;
} qcnn_layer;

struct ridge_qcnn {
    ridge_cnn_config cfg;
    int nl;
    qcnn_layer L[RIDGE_CNN_MAX_LAYERS];
    size_t cap, classes;
    uint8_t *act[2];  /* ping-pong activations (cap, the largest tensor) */
    float *logits;    /* (cap, classes) */
};

static int has_weights(const qcnn_layer *L)
{
    return L->kind == RIDGE_CNN_CONV || L->kind == RIDGE_CNN_DENSE;
}

void ridge_qcnn_destroy(ridge_qcnn *q)
{
    if (!q) return;
    for (int l = 0; l < q->nl; l++) {
        qcnn_layer *L = &q->L[l];
        quant_layer_free(&L->q);
        ridge_qconv2d_plan_destroy(L->conv);
        ridge_qgemm_plan_destroy(L->gemm);
    }
    ridge_free(q->act[0]);
    ridge_free(q->act[1]);
    ridge_free(q->logits);
    ridge_free(q);
}

const ridge_cnn_config *ridge_qcnn_config(const ridge_qcnn *q) { return q ? &q->cfg : NULL; }

/* The quantized layers of cfg (validated): shapes, folding, sizes; nothing allocated. */
static ridge_status qcnn_layers(const char *fn, const ridge_cnn_config *cfg, ridge_qcnn *q)
{
    ridge_status st = ridge_cnn_config_check(cfg);
    if (st) return st;
    int64_t h = cfg->in_h, w = cfg->in_w, c = cfg->in_c;
    q->nl = 0;
    for (int l = 0; l < cfg->nlayers; l++) {
        const ridge_cnn_layer *S = &cfg->layers[l];
        if (S->kind == RIDGE_CNN_BN)
            return ridge_error(RIDGE_EUNSUPPORTED, "%s: layer %d: int8 needs every batch norm "
                               "right after a conv or dense layer without activation, to fold "
                               "it into that layer", fn, l);
        qcnn_layer *L = &q->L[q->nl++];
        memset(L, 0, sizeof *L);
        L->kind = S->kind, L->src = l, L->bn = -1;
        L->h = h, L->w = w, L->c = c, L->k = S->k, L->stride = S->stride;
        L->relu = S->act == RIDGE_EPI_RELU;
        const ridge_cnn_layer *next = l + 1 < cfg->nlayers ? &cfg->layers[l + 1] : NULL;
        if (has_weights(L) && next && next->kind == RIDGE_CNN_BN && S->act == RIDGE_EPI_NONE) {
            L->bn = ++l;
            L->relu = next->act == RIDGE_EPI_RELU;
        }
        switch (S->kind) {
        case RIDGE_CNN_CONV:
            L->oh = (h - 1) / S->stride + 1, L->ow = (w - 1) / S->stride + 1, L->oc = S->out;
            L->nw = (size_t)(S->out * c * S->k * S->k);
            break;
        case RIDGE_CNN_DENSE:
            L->oh = L->ow = 1, L->oc = S->out;
            L->nw = (size_t)(S->out * h * w * c);
            break;
        default: /* pooling */
            L->oh = (h - S->k) / S->stride + 1, L->ow = (w - S->k) / S->stride + 1, L->oc = c;
            break;
        }
        h = L->oh, w = L->ow, c = L->oc;
    }
    q->classes = (size_t)c;
    return RIDGE_OK;
}

/* Allocates q's arrays and buffers for its layers (zeroed, no plans). */
static ridge_status qcnn_alloc(ridge_qcnn *q)
{
    size_t amax = (size_t)(q->cfg.in_h * q->cfg.in_w * q->cfg.in_c);
    for (int l = 0; l < q->nl; l++) {
        qcnn_layer *L = &q->L[l];
        amax = RIDGE_MAX(amax, (size_t)(L->oh * L->ow * L->oc));
        if (has_weights(L) && quant_layer_alloc(&L->q, (size_t)L->oc, L->nw / (size_t)L->oc))
            goto err_nomem;
    }
    q->cap = QCNN_BATCH;
    q->act[0] = ridge_malloc(q->cap * amax);
    q->act[1] = ridge_malloc(q->cap * amax);
    q->logits = ridge_malloc(q->cap * q->classes * sizeof(float));
    if (!q->act[0] || !q->act[1] || !q->logits) goto err_nomem;
    return RIDGE_OK;
err_nomem:
    return ridge_error(RIDGE_ENOMEM, "qcnn: out of memory for the model");
}

static ridge_conv2d_desc qcnn_conv_desc(const qcnn_layer *L, size_t B)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = (int64_t)B, d.c_in = L->c, d.h = L->h, d.w = L->w, d.c_out = L->oc;
    d.r = d.s = L->k;
    d.stride_h = d.stride_w = L->stride;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = L->k / 2;
    d.layout = RIDGE_NHWC;
    return d;
}

/* The requantization scales and the plans, from the quantized weights and ranges. */
static ridge_status qcnn_build(ridge_ctx *ctx, ridge_qcnn *q)
{
    for (int l = 0; l < q->nl; l++) {
        qcnn_layer *L = &q->L[l];
        if (!has_weights(L)) continue;
        ridge_status st = quant_layer_finish(&L->q, l == q->nl - 1);
        if (st) return st;
        if (L->kind == RIDGE_CNN_CONV) {
            ridge_conv2d_desc d = qcnn_conv_desc(L, q->cap);
            /* direct: no lowered copy of the input (measured faster on the CNN's 3x3 layers) */
            st = ridge_qconv2d_plan_create(ctx, &d, L->q.wq, RIDGE_CONV_DIRECT, &L->conv);
        } else {
            st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, L->q.rows, L->q.cols, L->q.wq,
                                         L->q.cols, &L->gemm);
        }
        if (st) return st;
    }
    return RIDGE_OK;
}

/* ---- inference ---------------------------------------------------------------------------- */

typedef struct pool_job {
    const qcnn_layer *L;
    const uint8_t *x;
    uint8_t *y;
} pool_job;

/* Images [b, e): max or average (rounded half up) over each window, NHWC, no padding. The max
 * runs on the bytes in place in the output (vectorized along the channels); the average sums
 * in uint32 in strips of channels. */
static void pool_u8(void *arg, size_t b, size_t e, int ith)
{
    const pool_job *J = arg;
    const qcnn_layer *L = J->L;
    const size_t c = (size_t)L->c, k = (size_t)L->k, cnt = k * k, s = (size_t)L->stride;
    const size_t w = (size_t)L->w, ow = (size_t)L->ow;
    uint32_t acc[256];
    for (size_t img = b; img < e; img++) {
        const uint8_t *x = J->x + img * (size_t)(L->h * L->w) * c;
        uint8_t *y = J->y + img * (size_t)(L->oh * L->ow) * c;
        for (size_t oy = 0; oy < (size_t)L->oh; oy++)
            for (size_t ox = 0; ox < ow; ox++) {
                const uint8_t *win = x + (oy * s * w + ox * s) * c;
                uint8_t *o = y + (oy * ow + ox) * c;
                if (L->kind == RIDGE_CNN_MAXPOOL) {
                    memcpy(o, win, c);
                    for (size_t t = 1; t < cnt; t++) {
                        const uint8_t *p = win + ((t / k) * w + t % k) * c;
                        for (size_t i = 0; i < c; i++) o[i] = o[i] > p[i] ? o[i] : p[i];
                    }
                    continue;
                }
                for (size_t c0 = 0; c0 < c; c0 += 256) {
                    const size_t nc = RIDGE_MIN((size_t)256, c - c0);
                    memset(acc, 0, nc * sizeof acc[0]);
                    for (size_t t = 0; t < cnt; t++) {
                        const uint8_t *p = win + ((t / k) * w + t % k) * c + c0;
                        for (size_t i = 0; i < nc; i++) acc[i] += p[i];
                    }
                    for (size_t i = 0; i < nc; i++) o[c0 + i] = (uint8_t)((acc[i] + cnt / 2) / cnt);
                }
            }
    }
}

/* B <= cap images: logits into q->logits. */
static ridge_status qcnn_chunk(ridge_ctx *ctx, ridge_qcnn *q, const uint8_t *images, size_t B)
{
    const uint8_t *x = images;
    for (int l = 0; l < q->nl; l++) {
        const qcnn_layer *L = &q->L[l];
        const int last = l == q->nl - 1;
        uint8_t *y = q->act[l & 1];
        ridge_status st = RIDGE_OK;
        if (has_weights(L)) {
            const ridge_requant rq = quant_layer_requant(&L->q, last, L->relu);
            void *out = last ? (void *)q->logits : (void *)y;
            if (L->kind == RIDGE_CNN_CONV)
                st = ridge_qconv2d_forward_n(ctx, L->conv, B, RIDGE_LOWP_U8, x, L->q.in_zp, out, &rq);
            else
                st = ridge_qgemm_plan_execute(ctx, L->gemm, RIDGE_LOWP_U8, B, x, L->q.cols,
                                              L->q.in_zp, out, L->q.rows, &rq);
        } else {
            pool_job J = {L, x, y};
            ridge_parallel_for(ctx, B, 1, pool_u8, &J);
        }
        if (st) return st;
        x = y;
    }
    return RIDGE_OK;
}

ridge_status ridge_qcnn_forward(ridge_ctx *ctx, ridge_qcnn *q, const uint8_t *images, size_t B,
                                const float **logits)
{
    if (!ctx || !q || !images || !logits)
        return ridge_error(RIDGE_EINVAL, "qcnn_forward: NULL argument");
    if (B == 0 || B > q->cap)
        return ridge_error(RIDGE_EINVAL, "qcnn_forward: B (%zu) must be in [1, %zu]", B, q->cap);
    ridge_status st = qcnn_chunk(ctx, q, images, B);
    *logits = st ? NULL : q->logits;
    return st;
}

ridge_status ridge_qcnn_evaluate(ridge_ctx *ctx, ridge_qcnn *q, const uint8_t *images,
                                 const uint8_t *labels, size_t n, double *loss, size_t *correct)
{
    if (!ctx || !q || (n && (!images || !labels)))
        return ridge_error(RIDGE_EINVAL, "qcnn_evaluate: NULL argument");
    const size_t in = (size_t)(q->cfg.in_h * q->cfg.in_w * q->cfg.in_c);
    double sum = 0;
    size_t right = 0;
    for (size_t r0 = 0; r0 < n; r0 += q->cap) {
        const size_t B = RIDGE_MIN(q->cap, n - r0);
        ridge_status st = qcnn_chunk(ctx, q, images + r0 * in, B);
        if (st || (st = quant_score(q->logits, labels + r0, B, q->classes, r0, &sum, &right)))
            return st;
    }
    if (loss) *loss = n ? sum / (double)n : 0.0;
    if (correct) *correct = right;
    return RIDGE_OK;
}

/* ---- quantization --------------------------------------------------------------------------- */

ridge_status ridge_qcnn_quantize(ridge_ctx *ctx, ridge_cnn *m, const uint8_t *images, size_t n,
                                 ridge_qcnn **out)
{
    const char *fn = "qcnn_quantize";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx || !m || !images || n == 0)
        return ridge_error(RIDGE_EINVAL, "%s: %s", fn,
                           !ctx ? "ctx is NULL" : !m ? "model is NULL" : !images ? "images is NULL"
                                                                                   : "no calibration images");
    ridge_qcnn *q = ridge_calloc(1, sizeof *q);
    if (!q) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    q->cfg = m->cfg;
    const ridge_cnn_config *cfg = &q->cfg;
    ridge_status st = qcnn_layers(fn, cfg, q);
    if (st || (st = qcnn_alloc(q))) goto done;

    /* calibration: the fp32 inference (batch norms folded, as here) on the images, and the
     * range of each quantized layer's output (for a folded pair, the batch norm's) */
    const size_t in = (size_t)(cfg->in_h * cfg->in_w * cfg->in_c);
    const float inv_std = 1.0f / cfg->in_std;
    double lo[RIDGE_CNN_MAX_LAYERS] = {0}, hi[RIDGE_CNN_MAX_LAYERS] = {0};
    float *x = ridge_malloc(QCNN_BATCH * in * sizeof(float));
    if (!x) {
        st = ridge_error(RIDGE_ENOMEM, "%s: out of memory for calibration", fn);
        goto done;
    }
    for (size_t r0 = 0; r0 < n && !st; r0 += QCNN_BATCH) {
        const size_t B = RIDGE_MIN((size_t)QCNN_BATCH, n - r0);
        for (size_t i = 0; i < B * in; i++)
            x[i] = ((float)images[r0 * in + i] / 255.0f - cfg->in_mean) * inv_std;
        const float *logits;
        if ((st = ridge_cnn_forward(ctx, m, x, B, &logits))) break;
        for (int l = 0; l < q->nl; l++) {
            const qcnn_layer *L = &q->L[l];
            if (!has_weights(L)) continue;
            const float *y = m->act[(L->bn >= 0 ? L->bn : L->src) + 1];
            for (size_t i = 0; i < B * (size_t)(L->oh * L->ow * L->oc); i++) {
                lo[l] = RIDGE_MIN(lo[l], (double)y[i]);
                hi[l] = RIDGE_MAX(hi[l], (double)y[i]);
            }
        }
    }
    ridge_free(x);
    if (st) goto done;

    /* the input: raw pixels, scale 1 / (255 std), zero point 255 mean rounded (so that the
     * zero-point padding is the normalized 0 up to the rounding); the rest of the mean,
     * shift = (zp / 255 - mean) / std per input value, goes into the first weighted layer's
     * bias (pooling carries it unchanged) */
    float in_scale = inv_std / 255.0f;
    int32_t in_zp = (int32_t)RIDGE_MIN(255.0, RIDGE_MAX(0.0, nearbyint(255.0 * cfg->in_mean)));
    double shift = ((double)in_zp / 255.0 - cfg->in_mean) * inv_std;
    for (int l = 0; l < q->nl; l++) {
        qcnn_layer *L = &q->L[l];
        if (!has_weights(L)) continue; /* pooling keeps its input's quantization */
        const size_t oc = L->q.rows, per = L->q.cols;
        float *w = ridge_malloc(L->nw * sizeof(float)), *b = ridge_malloc(oc * sizeof(float));
        if (!w || !b) {
            ridge_free(w), ridge_free(b);
            st = ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
            goto done;
        }
        memcpy(w, m->w[L->src], L->nw * sizeof(float));
        memcpy(b, m->b[L->src], oc * sizeof(float));
        const int bn = L->bn;
        if (bn >= 0)
            st = ridge_conv2d_fold_bn((int64_t)oc, (int64_t)per, w, b, m->w[bn], m->b[bn],
                                      m->run_mean[bn], m->run_var[bn], cfg->bn_eps);
        L->q.in_scale = in_scale, L->q.in_zp = in_zp;
        if (!st) quant_layer_quantize(&L->q, w, b, shift);
        ridge_free(w), ridge_free(b);
        if (st) goto done;
        shift = 0;
        if (l < q->nl - 1) quant_range_u8(lo[l], hi[l], &L->q.out_scale, &L->q.out_zp);
        in_scale = L->q.out_scale, in_zp = L->q.out_zp;
    }
    st = qcnn_build(ctx, q);
done:
    if (st) ridge_qcnn_destroy(q);
    else *out = q;
    return st;
}

/* ---- the checkpoint ---------------------------------------------------------------------- */

/* 512-byte header: the frame (models/checkpoint.h), u32 in_h, in_w, in_c at 16, f32 input mean
 * and std at 28, zeros to 256, the fp32 model's architecture string (with its batch norms) at
 * 256. Body, per conv and dense layer in order: f32 in_scale, u32 in_zp, f32 out_scale, u32
 * out_zp, f32 w_scale[oc], i32 bias[oc], i8 weights[nw] (OIHW or (oc, in)). */
static const ckpt_format qcnn_format = {"RIDGEQ8C", "int8 CNN checkpoint", 1, 512, 36, 256};

/* Body bytes for q's layers (saturating: a hostile header cannot wrap it). */
static uint64_t qcnn_body_bytes(const ridge_qcnn *q)
{
    uint64_t sz = 0;
    for (int l = 0; l < q->nl; l++) {
        const qcnn_layer *L = &q->L[l];
        if (has_weights(L)) sz += quant_layer_bytes((uint64_t)L->oc, L->nw / (uint64_t)L->oc);
        if (sz > (UINT64_C(1) << 61)) return UINT64_MAX;
    }
    return sz;
}

ridge_status ridge_qcnn_save(const ridge_qcnn *q, const char *path)
{
    if (!q || !path) return ridge_error(RIDGE_EINVAL, "qcnn_save: NULL argument");
    unsigned char h[512];
    ckpt_header_init(&qcnn_format, h);
    ridge_status st = ridge_cnn_arch_format(&q->cfg, (char *)h + 256, RIDGE_CNN_ARCH_MAX);
    if (st) return st;
    ckpt_put32(h + 16, (uint32_t)q->cfg.in_h);
    ckpt_put32(h + 20, (uint32_t)q->cfg.in_w);
    ckpt_put32(h + 24, (uint32_t)q->cfg.in_c);
    ckpt_putf(h + 28, q->cfg.in_mean);
    ckpt_putf(h + 32, q->cfg.in_std);
    const size_t size = (size_t)qcnn_body_bytes(q);
    unsigned char *buf = malloc(size ? size : 1), *p = buf;
    if (!buf) return ridge_error(RIDGE_ENOMEM, "qcnn_save: out of memory");
    for (int l = 0; l < q->nl; l++)
        if (has_weights(&q->L[l])) p = quant_layer_put(&q->L[l].q, p);
    const ridge_file_part part = {buf, size};
    st = ckpt_write(path, "qcnn_save", &qcnn_format, h, &part, 1);
    free(buf);
    return st;
}

ridge_status ridge_qcnn_load(ridge_ctx *ctx, const char *path, ridge_qcnn **out)
{
    if (!out || !path || !ctx) return ridge_error(RIDGE_EINVAL, "qcnn_load: NULL argument");
    *out = NULL;
    unsigned char h[512];
    FILE *f;
    uint64_t fsize;
    ridge_status st = ckpt_open(path, &qcnn_format, h, &f, &fsize);
    if (st) return st;
    unsigned char *buf = NULL;
    ridge_qcnn *q = ridge_calloc(1, sizeof *q);
    if (!q) {
        st = ridge_error(RIDGE_ENOMEM, "qcnn_load: out of memory");
        goto done;
    }
    ridge_cnn_config_init(&q->cfg);
    q->cfg.in_h = ckpt_get32(h + 16), q->cfg.in_w = ckpt_get32(h + 20);
    q->cfg.in_c = ckpt_get32(h + 24);
    q->cfg.in_mean = ckpt_getf(h + 28), q->cfg.in_std = ckpt_getf(h + 32);
    if (ridge_cnn_arch_parse((const char *)h + 256, &q->cfg) ||
        qcnn_layers("qcnn_load", &q->cfg, q)) {
        st = ckpt_with_path(RIDGE_EFORMAT, path);
        goto done;
    }
    const uint64_t body = qcnn_body_bytes(q);
    if ((st = ckpt_check_size(path, &qcnn_format, fsize, body))) goto done;
    if ((st = qcnn_alloc(q))) goto done;
    if (!(buf = malloc(body ? (size_t)body : 1))) {
        st = ridge_error(RIDGE_ENOMEM, "%s: out of memory for %llu bytes", path,
                         (unsigned long long)body);
        goto done;
    }
    const ckpt_part part = {buf, (size_t)body};
    if ((st = ckpt_read_body(f, path, &qcnn_format, h, &part, 1))) goto done;
    const unsigned char *p = buf;
    const quant_layer *prev = NULL; /* each layer's input must be the one before's output */
    for (int l = 0; l < q->nl; l++) {
        qcnn_layer *L = &q->L[l];
        if (!has_weights(L)) continue;
        p = quant_layer_get(&L->q, p, l == q->nl - 1);
        if (!p || (prev && (L->q.in_scale != prev->out_scale || L->q.in_zp != prev->out_zp))) {
            st = ridge_error(RIDGE_EFORMAT, "%s: layer %d: a scale or zero point is invalid "
                             "(or does not chain with the layer before)", path, L->src);
            goto done;
        }
        prev = &L->q;
    }
    if ((st = qcnn_build(ctx, q)) == RIDGE_EOVERFLOW) /* scales that cannot be used */
        st = ckpt_with_path(RIDGE_EFORMAT, path);
done:
    fclose(f);
    free(buf);
    if (st) ridge_qcnn_destroy(q);
    else *out = q;
    return st;
}
