/* Post-training int8 quantization of an MLP (ridge/quant.h): calibration with the fp32 model,
 * per-channel weight quantization, int8 inference on the int8 GEMM with the requantizing
 * epilogue, and the int8 checkpoint. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "ridge/quant.h"

#define QMLP_MAGIC "RIDGEQ8M"
#define QMLP_VERSION 1u
#define QMLP_BATCH 256 /* rows per forward chunk (calibration and evaluation) */

typedef struct qlayer {
    size_t in, out;
    int8_t *wq;        /* (out, in) */
    float *w_scale;    /* (out) */
    int32_t *bias;     /* (out), at the accumulator's scale in_scale * w_scale[o] */
    float in_scale, out_scale; /* out_*: hidden layers (u8 output); unused by the last */
    int32_t in_zp, out_zp;
    float *rq_scale;   /* (out): in_scale w_scale[o] / out_scale, or in_scale w_scale[o] */
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
        ridge_free(q->L[l].wq);
        ridge_free(q->L[l].w_scale);
        ridge_free(q->L[l].bias);
        ridge_free(q->L[l].rq_scale);
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
        qlayer *L = &q->L[l];
        L->in = cfg->sizes[l], L->out = cfg->sizes[l + 1];
        wmax = RIDGE_MAX(wmax, L->out);
        L->wq = ridge_calloc(L->in * L->out, 1);
        L->w_scale = ridge_calloc(L->out, sizeof(float));
        L->bias = ridge_calloc(L->out, sizeof(int32_t));
        L->rq_scale = ridge_calloc(L->out, sizeof(float));
        if (!L->wq || !L->w_scale || !L->bias || !L->rq_scale) goto err_nomem;
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
        qlayer *L = &q->L[l];
        int last = l == q->cfg.nlayers - 1;
        for (size_t o = 0; o < L->out; o++) {
            /* each factor is positive and finite, their product and quotient need not be */
            L->rq_scale[o] = L->in_scale * L->w_scale[o] / (last ? 1.0f : L->out_scale);
            if (!(L->rq_scale[o] > 0) || !isfinite(L->rq_scale[o]))
                return ridge_error(RIDGE_EOVERFLOW, "layer %d, output %zu: the requantization "
                                   "scale %g x %g / %g is not a positive finite float", l, o,
                                   L->in_scale, L->w_scale[o], last ? 1.0f : L->out_scale);
        }
        ridge_status st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, L->out, L->in, L->wq, L->in,
                                                  &L->plan);
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
        qlayer *L = &q->L[l];
        /* input quantization: raw pixels for layer 0, the previous layer's output after */
        if (l == 0) L->in_scale = inv_std / 255.0f, L->in_zp = 0;
        else L->in_scale = q->L[l - 1].out_scale, L->in_zp = q->L[l - 1].out_zp;
        if (l < nl - 1) { /* u8 output over [lo, hi], which contains 0 */
            double range = hi[l] - lo[l];
            L->out_scale = range > 0 ? (float)(range / 255.0) : 1.0f;
            double zp = nearbyint(-lo[l] / L->out_scale);
            L->out_zp = (int32_t)(zp < 0 ? 0 : zp > 255 ? 255 : zp);
        }
        for (size_t o = 0; o < L->out; o++) {
            const float *w = m->w[l] + o * L->in;
            double amax = 0, rowsum = 0;
            for (size_t i = 0; i < L->in; i++) amax = RIDGE_MAX(amax, fabs((double)w[i]));
            float s = amax > 0 ? (float)(amax / 127.0) : 1.0f;
            L->w_scale[o] = s;
            for (size_t i = 0; i < L->in; i++) {
                double v = nearbyint((double)w[i] / s);
                L->wq[o * L->in + i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
                rowsum += w[i];
            }
            /* the input normalization's mean, folded into layer 0's bias */
            double b = m->b[l][o] - (l == 0 ? (double)cfg->in_mean * inv_std * rowsum : 0.0);
            double bq = nearbyint(b / ((double)L->in_scale * s));
            L->bias[o] = (int32_t)(bq > INT32_MAX ? INT32_MAX : bq < INT32_MIN ? INT32_MIN : bq);
        }
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
        qlayer *L = &q->L[l];
        int last = l == nl - 1;
        ridge_requant rq = {.out = last ? RIDGE_LOWP_F32 : RIDGE_LOWP_U8, .scale = L->rq_scale,
                            .per_channel = 1, .bias = L->bias,
                            .out_zero_point = last ? 0 : L->out_zp,
                            .relu = !last && q->cfg.act == RIDGE_EPI_RELU};
        void *y = last ? (void *)q->logits : (void *)q->act[l & 1];
        ridge_status st = ridge_qgemm_plan_execute(ctx, L->plan, RIDGE_LOWP_U8, B, x, L->in,
                                                   L->in_zp, y, L->out, &rq);
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
        if (st) return st;
        for (size_t i = 0; i < B; i++) {
            const float *z = q->logits + i * C;
            size_t y = labels[r0 + i], best = 0;
            if (y >= C)
                return ridge_error(RIDGE_EINVAL, "qmlp_evaluate: label %zu of image %zu >= %zu classes",
                                   y, r0 + i, C);
            double zmax = z[0], s = 0;
            for (size_t c = 1; c < C; c++) {
                if (z[c] > z[best]) best = c;
                zmax = RIDGE_MAX(zmax, (double)z[c]);
            }
            for (size_t c = 0; c < C; c++) s += exp((double)z[c] - zmax);
            sum += log(s) + zmax - (double)z[y];
            right += best == y;
        }
    }
    if (loss) *loss = n ? sum / (double)n : 0.0;
    if (correct) *correct = right;
    return RIDGE_OK;
}

/* ---- the checkpoint ---------------------------------------------------------------------------- */

/* Little-endian writer/reader over a byte buffer; the reader fails on a short buffer. */
typedef struct wcur { unsigned char *p; } wcur;
static void w32(wcur *w, uint32_t v)
{
    for (int i = 0; i < 4; i++) *w->p++ = (unsigned char)(v >> (8 * i));
}
static void w64(wcur *w, uint64_t v)
{
    for (int i = 0; i < 8; i++) *w->p++ = (unsigned char)(v >> (8 * i));
}
static void wf(wcur *w, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    w32(w, u);
}

typedef struct rcur { const unsigned char *p, *end; } rcur;
static int r32(rcur *r, uint32_t *v)
{
    if (r->end - r->p < 4) return -1;
    *v = 0;
    for (int i = 0; i < 4; i++) *v |= (uint32_t)*r->p++ << (8 * i);
    return 0;
}
static int r64(rcur *r, uint64_t *v)
{
    uint32_t lo, hi;
    if (r32(r, &lo) || r32(r, &hi)) return -1;
    *v = lo | (uint64_t)hi << 32;
    return 0;
}
static int rf(rcur *r, float *f)
{
    uint32_t u;
    if (r32(r, &u)) return -1;
    memcpy(f, &u, 4);
    return 0;
}

/* The file's size for this architecture (header, layers, CRC). */
static size_t qmlp_file_size(const ridge_mlp_config *c)
{
    size_t sz = 8 + 4 + 4 + 8 * (size_t)(c->nlayers + 1) + 4 + 4 + 4;
    for (int l = 0; l < c->nlayers; l++)
        sz += 16 + c->sizes[l + 1] * 8 + c->sizes[l] * c->sizes[l + 1];
    return sz + 4;
}

ridge_status ridge_qmlp_save(const ridge_qmlp *q, const char *path)
{
    if (!q || !path) return ridge_error(RIDGE_EINVAL, "qmlp_save: NULL argument");
    size_t size = qmlp_file_size(&q->cfg);
    unsigned char *buf = malloc(size);
    if (!buf) return ridge_error(RIDGE_ENOMEM, "qmlp_save: out of memory");
    wcur w = {buf};
    memcpy(w.p, QMLP_MAGIC, 8), w.p += 8;
    w32(&w, QMLP_VERSION);
    w32(&w, (uint32_t)q->cfg.nlayers);
    for (int l = 0; l <= q->cfg.nlayers; l++) w64(&w, q->cfg.sizes[l]);
    w32(&w, (uint32_t)q->cfg.act);
    wf(&w, q->cfg.in_mean);
    wf(&w, q->cfg.in_std);
    for (int l = 0; l < q->cfg.nlayers; l++) {
        const qlayer *L = &q->L[l];
        wf(&w, L->in_scale);
        w32(&w, (uint32_t)L->in_zp);
        wf(&w, L->out_scale);
        w32(&w, (uint32_t)L->out_zp);
        for (size_t o = 0; o < L->out; o++) wf(&w, L->w_scale[o]);
        for (size_t o = 0; o < L->out; o++) w32(&w, (uint32_t)L->bias[o]);
        memcpy(w.p, L->wq, L->in * L->out), w.p += L->in * L->out;
    }
    w32(&w, ridge_crc32(0, buf, size - 4));
    const ridge_file_part part = {buf, size};
    ridge_status st = ridge_file_write_atomic(path, "qmlp_save", &part, 1);
    free(buf);
    return st;
}

ridge_status ridge_qmlp_load(ridge_ctx *ctx, const char *path, ridge_qmlp **out)
{
    if (!out || !path || !ctx) return ridge_error(RIDGE_EINVAL, "qmlp_load: NULL argument");
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ridge_error(RIDGE_EIO, "%s: cannot open: %s", path, strerror(errno));
    unsigned char head[8 + 4 + 4 + 8 * (RIDGE_MLP_MAX_LAYERS + 1) + 12];
    size_t got = fread(head, 1, sizeof head, f);
    rcur r = {head, head + got};
    ridge_mlp_config cfg = {0};
    uint32_t version = 0, nl = 0, act = 0;
    if (got < 16 || memcmp(head, QMLP_MAGIC, 8)) {
        fclose(f);
        return ridge_error(RIDGE_EFORMAT, "%s: not an int8 MLP checkpoint (magic is not %s)", path,
                           QMLP_MAGIC);
    }
    r.p += 8;
    r32(&r, &version), r32(&r, &nl);
    if (version != QMLP_VERSION || nl < 1 || nl > RIDGE_MLP_MAX_LAYERS) {
        fclose(f);
        return ridge_error(RIDGE_EFORMAT, "%s: %s (%u) is not supported", path,
                           version != QMLP_VERSION ? "version" : "layer count",
                           version != QMLP_VERSION ? version : nl);
    }
    cfg.nlayers = (int)nl;
    int bad = 0;
    for (uint32_t l = 0; l <= nl; l++) {
        uint64_t s = 0;
        bad |= r64(&r, &s) || s < 1 || s > RIDGE_MLP_MAX_WIDTH;
        cfg.sizes[l] = (size_t)s;
    }
    bad |= r32(&r, &act) || rf(&r, &cfg.in_mean) || rf(&r, &cfg.in_std);
    cfg.act = (ridge_epi_act)act;
    if (bad || ridge_mlp_config_check(&cfg) ||
        (cfg.act != RIDGE_EPI_RELU && cfg.act != RIDGE_EPI_NONE)) {
        fclose(f);
        return ridge_error(RIDGE_EFORMAT, "%s: the header's sizes, activation or normalization "
                                          "are invalid", path);
    }
    /* the file must be as long as the header implies before anything that size is allocated
     * (a 100-byte header may claim 16 layers of 2^20 x 2^20 weights) */
    size_t size = qmlp_file_size(&cfg);
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || (uint64_t)sb.st_size != (uint64_t)size) {
        fclose(f);
        return ridge_error(RIDGE_EFORMAT, "%s: %lld bytes, expected %zu for this architecture",
                           path, (long long)sb.st_size, size);
    }
    unsigned char *buf = malloc(size + 1);
    if (!buf) {
        fclose(f);
        return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu bytes", path, size);
    }
    rewind(f);
    size_t len = fread(buf, 1, size + 1, f);
    fclose(f);
    ridge_status st = RIDGE_OK;
    ridge_qmlp *q = NULL;
    if (len != size) {
        st = ridge_error(RIDGE_EFORMAT, "%s: %zu bytes, expected %zu for this architecture", path,
                         len, size);
        goto done;
    }
    r = (rcur){buf + size - 4, buf + size};
    uint32_t crc;
    r32(&r, &crc);
    if (crc != ridge_crc32(0, buf, size - 4)) {
        st = ridge_error(RIDGE_EFORMAT, "%s: CRC mismatch (the file is corrupt)", path);
        goto done;
    }
    if ((st = qmlp_alloc(&cfg, &q))) goto done;
    r = (rcur){buf + 8 + 4 + 4 + 8 * (size_t)(nl + 1) + 12, buf + size - 4}; /* the layers */
    for (int l = 0; l < cfg.nlayers && !bad; l++) {
        qlayer *L = &q->L[l];
        uint32_t zi = 0, zo = 0;
        bad |= rf(&r, &L->in_scale) || r32(&r, &zi) || rf(&r, &L->out_scale) || r32(&r, &zo);
        L->in_zp = (int32_t)zi, L->out_zp = (int32_t)zo;
        bad |= !(L->in_scale > 0) || !isfinite(L->in_scale) || L->in_zp < 0 || L->in_zp > 255;
        if (l < cfg.nlayers - 1)
            bad |= !(L->out_scale > 0) || !isfinite(L->out_scale) || L->out_zp < 0 || L->out_zp > 255;
        for (size_t o = 0; o < L->out && !bad; o++)
            bad |= rf(&r, &L->w_scale[o]) || !(L->w_scale[o] > 0) || !isfinite(L->w_scale[o]);
        for (size_t o = 0; o < L->out && !bad; o++) {
            uint32_t b = 0;
            bad |= r32(&r, &b);
            L->bias[o] = (int32_t)b;
        }
        if (!bad && (size_t)(r.end - r.p) >= L->in * L->out) {
            memcpy(L->wq, r.p, L->in * L->out);
            r.p += L->in * L->out;
        } else {
            bad = 1;
        }
    }
    if (bad) {
        st = ridge_error(RIDGE_EFORMAT, "%s: a layer's scales or zero points are invalid", path);
        goto done;
    }
    if ((st = qmlp_build(ctx, q)) == RIDGE_EOVERFLOW) { /* scales that cannot be used */
        char why[256];
        snprintf(why, sizeof why, "%s", ridge_last_error());
        st = ridge_error(RIDGE_EFORMAT, "%s: %s", path, why);
    }
done:
    free(buf);
    if (st) ridge_qmlp_destroy(q);
    else *out = q;
    return st;
}
