/* int8 2D convolution as the int8 GEMM: y (n*oh*ow, c_out) = im2col(x) (n*oh*ow, r*s*c_in)
 * x W^T, with W permuted once from OIHW to OHWI (c_out, r*s*c_in) and packed in a qgemm plan.
 * NHWC makes each im2col row a run of r*s contiguous c_in-byte copies; padding taps are
 * filled with the input zero point, so they contribute (zx - zx) * w = 0. The lowering goes
 * in strips of rows (about 2 MiB) so that memory stays bounded for large images. A 1x1,
 * stride 1, unpadded convolution skips the lowering: x is already the GEMM's A. */
#include <stdlib.h>
#include <string.h>

#include "lowp/lowp-internal.h"

#define QCONV_STRIP_BYTES ((size_t)2 << 20)

struct ridge_qconv2d_plan {
    ridge_conv2d_desc d;
    int64_t oh, ow;
    size_t k;              /* r * s * c_in */
    int pointwise;         /* 1x1, stride 1, no padding: no lowering */
    ridge_qgemm_plan *gemm;
};

static ridge_status check_desc(const char *fn, const ridge_conv2d_desc *d, int64_t *oh,
                               int64_t *ow)
{
    if (!d) return ridge_error(RIDGE_EINVAL, "%s: desc is NULL", fn);
    ridge_status st = ridge_conv2d_desc_check(d, oh, ow);
    if (st) return st;
    if (d->layout != RIDGE_NHWC)
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: int8 convolution takes NHWC tensors, not %s",
                           fn, ridge_layout_name(d->layout));
    if (d->groups != 1)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: int8 convolution supports groups = 1 only (got %lld; grouped and "
                           "depthwise int8 are not implemented)", fn, (long long)d->groups);
    return RIDGE_OK;
}

static int is_pointwise(const ridge_conv2d_desc *d)
{
    return d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 && d->pad_top == 0 &&
           d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
}

ridge_status ridge_qconv2d_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                       const int8_t *weights, ridge_conv_algo algo,
                                       ridge_qconv2d_plan **out)
{
    const char *fn = "qconv2d_plan_create";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx || !weights)
        return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, ctx ? "weights" : "ctx");
    int64_t oh, ow;
    ridge_status st = check_desc(fn, d, &oh, &ow);
    if (st) return st;
    switch (algo) {
    case RIDGE_CONV_AUTO:
    case RIDGE_CONV_IM2COL: break;
    case RIDGE_CONV_POINTWISE:
        if (!is_pointwise(d))
            return ridge_error(RIDGE_EUNSUPPORTED,
                               "%s: pointwise needs a 1x1 kernel, stride 1 and no padding", fn);
        break;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3:
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: Winograd does not compose with int8: its weight transform has "
                           "fractions (1/2, 1/4) and its input transform adds taps with "
                           "coefficients up to 5, so transformed values leave the int8 range "
                           "and the sums are no longer exact; use im2col", fn);
    default:
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: the %s algorithm has no int8 version; use im2col",
                           fn, ridge_conv_algo_name(algo));
    }
    ridge_qconv2d_plan *P = ridge_calloc(1, sizeof *P);
    if (!P) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    P->d = *d, P->oh = oh, P->ow = ow;
    P->k = (size_t)(d->r * d->s * d->c_in);
    P->pointwise = is_pointwise(d);
    /* OIHW -> OHWI: row o of B^T is (ky, kx, c), matching an NHWC im2col row */
    size_t co = (size_t)d->c_out, ci = (size_t)d->c_in, r = (size_t)d->r, s = (size_t)d->s;
    int8_t *ohwi = ridge_malloc(co * P->k);
    if (!ohwi) {
        ridge_free(P);
        return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu x %zu weights", fn, co, P->k);
    }
    for (size_t o = 0; o < co; o++)
        for (size_t c = 0; c < ci; c++)
            for (size_t y = 0; y < r; y++)
                for (size_t x = 0; x < s; x++)
                    ohwi[o * P->k + (y * s + x) * ci + c] = weights[((o * ci + c) * r + y) * s + x];
    st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, co, P->k, ohwi, P->k, &P->gemm);
    ridge_free(ohwi);
    if (st) {
        ridge_free(P);
        return st;
    }
    *out = P;
    return RIDGE_OK;
}

void ridge_qconv2d_plan_destroy(ridge_qconv2d_plan *P)
{
    if (!P) return;
    ridge_qgemm_plan_destroy(P->gemm);
    ridge_free(P);
}

/* Rows [r0, r1) of im2col(x) (1-byte elements), k bytes each, padding = zx. */
static void im2col_rows(const ridge_qconv2d_plan *P, const uint8_t *x, uint8_t zx, size_t r0,
                        size_t r1, uint8_t *dst)
{
    const ridge_conv2d_desc *d = &P->d;
    const size_t ci = (size_t)d->c_in, per_img = (size_t)(P->oh * P->ow);
    for (size_t row = r0; row < r1; row++, dst += P->k) {
        size_t img = row / per_img, pix = row % per_img;
        int64_t oy = (int64_t)(pix / (size_t)P->ow), ox = (int64_t)(pix % (size_t)P->ow);
        uint8_t *t = dst;
        for (int64_t ky = 0; ky < d->r; ky++) {
            int64_t iy = oy * d->stride_h - d->pad_top + ky * d->dil_h;
            for (int64_t kx = 0; kx < d->s; kx++, t += ci) {
                int64_t ix = ox * d->stride_w - d->pad_left + kx * d->dil_w;
                if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w) memset(t, zx, ci);
                else memcpy(t, x + ((img * (size_t)d->h + (size_t)iy) * (size_t)d->w + (size_t)ix) * ci, ci);
            }
        }
    }
}

typedef struct im2col_job {
    const ridge_qconv2d_plan *P;
    const uint8_t *x;
    uint8_t zx;
    size_t r0;
    uint8_t *cols;
} im2col_job;

static void im2col_range(void *arg, size_t b, size_t e, int ith)
{
    const im2col_job *j = arg;
    im2col_rows(j->P, j->x, j->zx, j->r0 + b, j->r0 + e, j->cols + b * j->P->k);
}

ridge_status ridge_qconv2d_forward(ridge_ctx *ctx, const ridge_qconv2d_plan *P,
                                   ridge_lowp_type x_type, const void *x, int32_t zx, void *y,
                                   const ridge_requant *rq)
{
    const char *fn = "qconv2d_forward";
    if (!ctx || !P || !x || !y)
        return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn,
                           !ctx ? "ctx" : !P ? "plan" : !x ? "x" : "y");
    const ridge_conv2d_desc *d = &P->d;
    size_t rows = (size_t)(d->n * P->oh * P->ow), co = (size_t)d->c_out;
    size_t esz = rq && (rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8) ? 1 : 4;
    if (P->pointwise) /* x (n*h*w, c_in) is the GEMM's A */
        return ridge_qgemm_plan_execute(ctx, P->gemm, x_type, rows, x, P->k, zx, y, co, rq);
    if ((x_type == RIDGE_LOWP_U8 && (zx < 0 || zx > 255)) ||
        (x_type == RIDGE_LOWP_S8 && (zx < -128 || zx > 127)))
        return ridge_error(RIDGE_EINVAL, "%s: x zero point (%d) is outside the range of %s", fn,
                           (int)zx, x_type == RIDGE_LOWP_U8 ? "uint8" : "int8");
    size_t strip = RIDGE_MAX(QCONV_STRIP_BYTES / P->k, 16u);
    strip = RIDGE_MIN(strip, rows);
    uint8_t *cols = ridge_malloc(strip * P->k);
    if (!cols) return ridge_error(RIDGE_ENOMEM, "%s: out of memory for a %zu x %zu im2col strip",
                                  fn, strip, P->k);
    ridge_status st = RIDGE_OK;
    for (size_t r0 = 0; r0 < rows && !st; r0 += strip) {
        size_t r1 = RIDGE_MIN(rows, r0 + strip);
        im2col_job j = {P, x, (uint8_t)zx, r0, cols};
        ridge_parallel_for(ctx, r1 - r0, 16, im2col_range, &j);
        st = ridge_qgemm_plan_execute(ctx, P->gemm, x_type, r1 - r0, cols, P->k, zx,
                                      (char *)y + r0 * co * esz, co, rq);
    }
    ridge_free(cols);
    return st;
}

ridge_status ridge_qconv2d_forward_ref(const ridge_conv2d_desc *d, ridge_lowp_type x_type,
                                       const void *x, int32_t zx, const int8_t *w, void *y,
                                       const ridge_requant *rq)
{
    const char *fn = "qconv2d_forward_ref";
    int64_t oh, ow;
    ridge_status st = check_desc(fn, d, &oh, &ow);
    if (st) return st;
    if (!x || !w || !y) return ridge_error(RIDGE_EINVAL, "%s: a tensor is NULL", fn);
    static const ridge_requant raw = {0};
    if (!rq) rq = &raw;
    size_t esz = rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8 ? 1 : 4;
    for (int64_t img = 0; img < d->n; img++)
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++)
                for (int64_t o = 0; o < d->c_out; o++) {
                    uint32_t acc = 0;
                    for (int64_t c = 0; c < d->c_in; c++)
                        for (int64_t ky = 0; ky < d->r; ky++)
                            for (int64_t kx = 0; kx < d->s; kx++) {
                                int64_t iy = oy * d->stride_h - d->pad_top + ky * d->dil_h;
                                int64_t ix = ox * d->stride_w - d->pad_left + kx * d->dil_w;
                                if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w) continue;
                                size_t xi = (size_t)(((img * d->h + iy) * d->w + ix) * d->c_in + c);
                                int32_t xv = x_type == RIDGE_LOWP_U8 ? ((const uint8_t *)x)[xi]
                                                                     : ((const int8_t *)x)[xi];
                                int32_t wv = w[((o * d->c_in + c) * d->r + ky) * d->s + kx];
                                acc += (uint32_t)((xv - zx) * wv);
                            }
                    if (rq->bias) acc += (uint32_t)rq->bias[o];
                    size_t yi = (size_t)(((img * oh + oy) * ow + ox) * d->c_out + o);
                    qgemm_finish_scalar(rq, (size_t)o, (int32_t)acc, (char *)y + yi * esz);
                }
    return RIDGE_OK;
}
