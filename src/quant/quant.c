/* The pieces of post-training quantization both quantized models use (quant-internal.h). */
#include <math.h>
#include <string.h>

#include "models/checkpoint.h"
#include "quant/quant-internal.h"

ridge_status quant_layer_alloc(quant_layer *L, size_t rows, size_t cols)
{
    L->rows = rows, L->cols = cols;
    L->wq = ridge_calloc(rows * cols, 1);
    L->w_scale = ridge_calloc(rows, sizeof(float));
    L->bias = ridge_calloc(rows, sizeof(int32_t));
    L->rq_scale = ridge_calloc(rows, sizeof(float));
    if (!L->wq || !L->w_scale || !L->bias || !L->rq_scale)
        return ridge_error(RIDGE_ENOMEM, "quant: out of memory for a %zu x %zu layer", rows, cols);
    return RIDGE_OK;
}

void quant_layer_free(quant_layer *L)
{
    ridge_free(L->wq);
    ridge_free(L->w_scale);
    ridge_free(L->bias);
    ridge_free(L->rq_scale);
}

void quant_layer_quantize(quant_layer *L, const float *w, const float *b, double shift)
{
    for (size_t o = 0; o < L->rows; o++) {
        const float *r = w + o * L->cols;
        double amax = 0, rowsum = 0;
        for (size_t i = 0; i < L->cols; i++) amax = RIDGE_MAX(amax, fabs((double)r[i]));
        const float s = amax > 0 ? (float)(amax / 127.0) : 1.0f;
        L->w_scale[o] = s;
        for (size_t i = 0; i < L->cols; i++) {
            double v = nearbyint((double)r[i] / s);
            L->wq[o * L->cols + i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
            rowsum += r[i];
        }
        const double q = nearbyint((b[o] + shift * rowsum) / ((double)L->in_scale * s));
        L->bias[o] = (int32_t)(q > INT32_MAX ? INT32_MAX : q < INT32_MIN ? INT32_MIN : q);
    }
}

ridge_status quant_layer_finish(quant_layer *L, int last)
{
    for (size_t o = 0; o < L->rows; o++) {
        /* each factor is positive and finite (checked on load), their product and quotient
         * need not be: a scale of 0 or infinity would load but never run */
        L->rq_scale[o] = L->in_scale * L->w_scale[o] / (last ? 1.0f : L->out_scale);
        if (!(L->rq_scale[o] > 0) || !isfinite(L->rq_scale[o]))
            return ridge_error(RIDGE_EOVERFLOW, "output %zu: the requantization scale %g x %g / "
                               "%g is not a positive finite float", o, L->in_scale,
                               L->w_scale[o], last ? 1.0f : L->out_scale);
    }
    return RIDGE_OK;
}

ridge_requant quant_layer_requant(const quant_layer *L, int last, int relu)
{
    return (ridge_requant){.out = last ? RIDGE_LOWP_F32 : RIDGE_LOWP_U8, .scale = L->rq_scale,
                           .per_channel = 1, .bias = L->bias,
                           .out_zero_point = last ? 0 : L->out_zp, .relu = !last && relu};
}

void quant_range_u8(double lo, double hi, float *scale, int32_t *zp)
{
    lo = RIDGE_MIN(lo, 0.0), hi = RIDGE_MAX(hi, 0.0);
    const double range = hi - lo;
    *scale = range > 0 ? (float)(range / 255.0) : 1.0f;
    const double z = nearbyint(-lo / *scale);
    *zp = (int32_t)(z < 0 ? 0 : z > 255 ? 255 : z);
}

uint64_t quant_layer_bytes(uint64_t rows, uint64_t cols) { return 16 + rows * 8 + rows * cols; }

unsigned char *quant_layer_put(const quant_layer *L, unsigned char *p)
{
    ckpt_putf(p, L->in_scale), ckpt_put32(p + 4, (uint32_t)L->in_zp);
    ckpt_putf(p + 8, L->out_scale), ckpt_put32(p + 12, (uint32_t)L->out_zp);
    p += 16;
    for (size_t o = 0; o < L->rows; o++, p += 4) ckpt_putf(p, L->w_scale[o]);
    for (size_t o = 0; o < L->rows; o++, p += 4) ckpt_put32(p, (uint32_t)L->bias[o]);
    memcpy(p, L->wq, L->rows * L->cols);
    return p + L->rows * L->cols;
}

static int bad_scale(float s) { return !(s > 0) || !isfinite(s); }
static int bad_zp(int32_t z) { return z < 0 || z > 255; }

const unsigned char *quant_layer_get(quant_layer *L, const unsigned char *p, int last)
{
    L->in_scale = ckpt_getf(p), L->in_zp = (int32_t)ckpt_get32(p + 4);
    L->out_scale = ckpt_getf(p + 8), L->out_zp = (int32_t)ckpt_get32(p + 12);
    p += 16;
    int bad = bad_scale(L->in_scale) || bad_zp(L->in_zp) ||
              (!last && (bad_scale(L->out_scale) || bad_zp(L->out_zp)));
    for (size_t o = 0; o < L->rows; o++, p += 4) bad |= bad_scale(L->w_scale[o] = ckpt_getf(p));
    for (size_t o = 0; o < L->rows; o++, p += 4) L->bias[o] = (int32_t)ckpt_get32(p);
    memcpy(L->wq, p, L->rows * L->cols);
    return bad ? NULL : p + L->rows * L->cols;
}

ridge_status quant_score(const float *logits, const uint8_t *labels, size_t B, size_t C,
                         size_t first, double *loss_sum, size_t *right)
{
    for (size_t i = 0; i < B; i++) {
        const float *z = logits + i * C;
        const size_t y = labels[i];
        if (y >= C)
            return ridge_error(RIDGE_EINVAL, "label %zu of image %zu >= %zu classes", y,
                               first + i, C);
        size_t best = 0;
        double zmax = z[0], s = 0;
        for (size_t c = 1; c < C; c++) {
            if (z[c] > z[best]) best = c;
            zmax = RIDGE_MAX(zmax, (double)z[c]);
        }
        for (size_t c = 0; c < C; c++) s += exp((double)z[c] - zmax);
        *loss_sum += log(s) + zmax - (double)z[y];
        *right += best == y;
    }
    return RIDGE_OK;
}
