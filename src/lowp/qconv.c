/* int8 2D convolution, NHWC, four algorithms with one epilogue (the int8 GEMM's):
 *
 * - im2col: y (n*oh*ow, c_out) = im2col(x) (n*oh*ow, r*s*c_in) x W^T, W permuted once from
 *   OIHW to OHWI (c_out, r*s*c_in) and packed in a qgemm plan. NHWC makes each im2col row a run
 *   of r*s contiguous c_in-byte copies; padding taps are filled with the input zero point, so
 *   they contribute (zx - zx) * w = 0. Lowered in strips of rows (about 2 MiB) so that memory
 *   stays bounded for large images.
 * - pointwise: a 1x1, stride 1, unpadded convolution skips the lowering: x is already A.
 * - direct: no lowering. Each image is copied once into a buffer padded with the zero point
 *   (the kernel's A element format: int16 on AVX2, bytes for VNNI; s8 flipped to u8) and the
 *   direct micro-kernel (qconv-template.h) reads every window in place, with the OHWI weights
 *   (channels padded to the k-group) packed in a qgemm plan. The padded copy is (h + pads) x
 *   (w + pads) x c_in elements per image, against im2col's r*s-times larger lowered matrix.
 * - depthwise (groups = c_in = c_out): the same padded images; vectors along the channels.
 * Every algorithm's int32 sums are exact (modulo 2^32 past the bound), and the requantization
 * is the GEMM micro-kernel's epilogue, so all give the reference's bits. */
#include <stdlib.h>
#include <string.h>

#include "lowp/lowp-internal.h"

#define QCONV_STRIP_BYTES ((size_t)2 << 20)
#define QCONV_CHUNK_BYTES ((size_t)4 << 20) /* padded images built per pass (at least one) */

struct ridge_qconv2d_plan {
    ridge_conv2d_desc d;
    int64_t oh, ow;
    ridge_conv_algo algo;  /* REF, IM2COL, POINTWISE, DIRECT or DEPTHWISE */
    size_t k;              /* im2col: r * s * c_in */
    ridge_qgemm_plan *gemm; /* im2col, pointwise; direct (k = r * s * cpad) */
    const lowp_kernel *K;   /* direct, depthwise: NULL runs the reference loops */
    size_t cpad;            /* direct, depthwise: elements per pixel of the padded image */
    size_t eb;              /* bytes per element of the padded image */
    ptrdiff_t *toff;        /* direct, depthwise: byte offset of each tap in the padded image */
    int32_t *dw_w;          /* depthwise: int32 weights [r*s][cpad], zero past c */
    int32_t *dw_sum;        /* depthwise: per channel sum of the weights (cpad) */
    int8_t *wref;           /* REF, and direct / depthwise without a kernel: OIHW weights */
};

static int is_depthwise(const ridge_conv2d_desc *d)
{
    return d->groups == d->c_in && d->groups == d->c_out;
}

static ridge_status check_desc(const char *fn, const ridge_conv2d_desc *d, int64_t *oh,
                               int64_t *ow)
{
    if (!d) return ridge_error(RIDGE_EINVAL, "%s: desc is NULL", fn);
    ridge_status st = ridge_conv2d_desc_check(d, oh, ow);
    if (st) return st;
    if (d->layout != RIDGE_NHWC)
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: int8 convolution takes NHWC tensors, not %s",
                           fn, ridge_layout_name(d->layout));
    if (d->groups != 1 && !is_depthwise(d))
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: int8 convolution supports groups = 1 and depthwise (groups = c_in "
                           "= c_out) only (got groups %lld, c_in %lld, c_out %lld)", fn,
                           (long long)d->groups, (long long)d->c_in, (long long)d->c_out);
    return RIDGE_OK;
}

static int is_pointwise(const ridge_conv2d_desc *d)
{
    return d->groups == 1 && d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 &&
           d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
}

/* The algorithm for algo on d, or an error saying why it cannot run. AUTO: depthwise, else
 * pointwise where it applies, else direct where the ISA has an int8 kernel (im2col without
 * one). Direct ran 1.3-2.4x im2col on every 3x3 shape of `ridge bench lowp` (Zen 4, VNNI,
 * session 7; on Zen 3's AVX2 1.1-2.1x in noisy runs): it reads each window in place instead
 * of writing and re-reading an r*s-times larger lowered matrix. */
static ridge_status choose_algo(const char *fn, const ridge_conv2d_desc *d, ridge_conv_algo algo,
                                int have_kernel, ridge_conv_algo *out)
{
    const int dw = d->groups != 1;
    switch (algo) {
    case RIDGE_CONV_AUTO:
        *out = dw                ? RIDGE_CONV_DEPTHWISE
               : is_pointwise(d) ? RIDGE_CONV_POINTWISE
               : have_kernel     ? RIDGE_CONV_DIRECT
                                 : RIDGE_CONV_IM2COL;
        return RIDGE_OK;
    case RIDGE_CONV_REF: *out = algo; return RIDGE_OK;
    case RIDGE_CONV_IM2COL:
    case RIDGE_CONV_DIRECT:
        if (dw)
            return ridge_error(RIDGE_EUNSUPPORTED, "%s: %s takes groups = 1; use depthwise", fn,
                               ridge_conv_algo_name(algo));
        *out = algo;
        return RIDGE_OK;
    case RIDGE_CONV_POINTWISE:
        if (!is_pointwise(d))
            return ridge_error(RIDGE_EUNSUPPORTED, "%s: pointwise needs groups 1, a 1x1 kernel, "
                               "stride 1 and no padding", fn);
        *out = algo;
        return RIDGE_OK;
    case RIDGE_CONV_DEPTHWISE:
        if (!dw)
            return ridge_error(RIDGE_EUNSUPPORTED, "%s: depthwise needs groups = c_in = c_out", fn);
        *out = algo;
        return RIDGE_OK;
    case RIDGE_CONV_WINOGRAD_2X3:
    case RIDGE_CONV_WINOGRAD_4X3:
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "%s: Winograd does not compose with int8: its weight transform has "
                           "fractions (1/2, 1/4) and its input transform adds taps with "
                           "coefficients up to 5, so transformed values leave the int8 range "
                           "and the sums are no longer exact; use im2col or direct", fn);
    default:
        return ridge_error(RIDGE_EUNSUPPORTED, "%s: algorithm %d has no int8 version", fn,
                           (int)algo);
    }
}

/* Direct and depthwise: the padded image's geometry, tap offsets and weights for kernel K. */
static ridge_status plan_padded(ridge_ctx *ctx, ridge_qconv2d_plan *P, const int8_t *w)
{
    const ridge_conv2d_desc *d = &P->d;
    const lowp_kernel *K = P->K;
    const size_t co = (size_t)d->c_out, ci = (size_t)d->c_in, r = (size_t)d->r, s = (size_t)d->s;
    const size_t taps = r * s, wp = (size_t)(d->w + d->pad_left + d->pad_right);
    const int dw = P->algo == RIDGE_CONV_DEPTHWISE;
    P->eb = (size_t)K->elem_bits / 8;
    P->cpad = dw ? (ci + (size_t)K->nr - 1) / (size_t)K->nr * (size_t)K->nr
                 : (ci + (size_t)K->kg - 1) / (size_t)K->kg * (size_t)K->kg;
    if (!(P->toff = ridge_malloc(taps * sizeof *P->toff))) return RIDGE_ENOMEM;
    for (size_t y = 0; y < r; y++)
        for (size_t x = 0; x < s; x++)
            P->toff[y * s + x] = (ptrdiff_t)(((y * (size_t)d->dil_h) * wp + x * (size_t)d->dil_w) *
                                             P->cpad * P->eb);
    if (dw) { /* OIHW with I = 1: w[c][ky][kx] -> [tap][c] */
        P->dw_w = ridge_calloc(taps * P->cpad, sizeof(int32_t));
        P->dw_sum = ridge_calloc(P->cpad, sizeof(int32_t));
        if (!P->dw_w || !P->dw_sum) return RIDGE_ENOMEM;
        for (size_t c = 0; c < ci; c++)
            for (size_t t = 0; t < taps; t++) {
                P->dw_w[t * P->cpad + c] = w[c * taps + t];
                P->dw_sum[c] = (int32_t)((uint32_t)P->dw_sum[c] + (uint32_t)w[c * taps + t]);
            }
        return RIDGE_OK;
    }
    /* OIHW -> OHWI with channels padded to cpad (zero weights): the GEMM B the kernel reads */
    const size_t kk = taps * P->cpad;
    int8_t *ohwi = ridge_calloc(co * kk, 1);
    if (!ohwi) return RIDGE_ENOMEM;
    for (size_t o = 0; o < co; o++)
        for (size_t c = 0; c < ci; c++)
            for (size_t t = 0; t < taps; t++)
                ohwi[o * kk + t * P->cpad + c] = w[(o * ci + c) * taps + t];
    ridge_status st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, co, kk, ohwi, kk, &P->gemm);
    ridge_free(ohwi);
    return st;
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
    if (st || (st = choose_algo(fn, d, algo, lowp_select_i8(ctx) != NULL, &algo))) return st;
    ridge_qconv2d_plan *P = ridge_calloc(1, sizeof *P);
    if (!P) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    P->d = *d, P->oh = oh, P->ow = ow, P->algo = algo;
    const size_t co = (size_t)d->c_out, ci = (size_t)d->c_in, r = (size_t)d->r, s = (size_t)d->s;
    const size_t wn = co * (ci / (size_t)d->groups) * r * s;
    if (algo == RIDGE_CONV_DIRECT || algo == RIDGE_CONV_DEPTHWISE) P->K = lowp_select_i8(ctx);
    if (algo == RIDGE_CONV_REF || ((algo == RIDGE_CONV_DIRECT || algo == RIDGE_CONV_DEPTHWISE) && !P->K)) {
        if (!(P->wref = ridge_malloc(wn))) goto err_nomem;
        memcpy(P->wref, weights, wn);
    } else if (P->K) {
        if ((st = plan_padded(ctx, P, weights))) goto err;
    } else {
        /* im2col, pointwise: OIHW -> OHWI, row o of B^T is (ky, kx, c) as an NHWC im2col row */
        P->k = r * s * ci;
        int8_t *ohwi = ridge_malloc(co * P->k);
        if (!ohwi) goto err_nomem;
        for (size_t o = 0; o < co; o++)
            for (size_t c = 0; c < ci; c++)
                for (size_t y = 0; y < r; y++)
                    for (size_t x = 0; x < s; x++)
                        ohwi[o * P->k + (y * s + x) * ci + c] = weights[((o * ci + c) * r + y) * s + x];
        st = ridge_qgemm_plan_create(ctx, RIDGE_TRANS, co, P->k, ohwi, P->k, &P->gemm);
        ridge_free(ohwi);
        if (st) goto err;
    }
    *out = P;
    return RIDGE_OK;
err_nomem:
    st = RIDGE_ENOMEM;
err:
    ridge_qconv2d_plan_destroy(P);
    return st == RIDGE_ENOMEM ? ridge_error(st, "%s: out of memory for the weights", fn) : st;
}

void ridge_qconv2d_plan_destroy(ridge_qconv2d_plan *P)
{
    if (!P) return;
    ridge_qgemm_plan_destroy(P->gemm);
    ridge_free(P->toff);
    ridge_free(P->dw_w);
    ridge_free(P->dw_sum);
    ridge_free(P->wref);
    ridge_free(P);
}

ridge_conv_algo ridge_qconv2d_plan_algo(const ridge_qconv2d_plan *P)
{
    return P ? P->algo : RIDGE_CONV_AUTO;
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

/* ---- direct and depthwise on zero-point-padded images -------------------------------------- */

typedef struct padded_job {
    const ridge_qconv2d_plan *P;
    const uint8_t *x;      /* the chunk's first image */
    uint8_t flip, zpad;    /* s8 input: 0x80 (to u8); the padding's (flipped) value */
    uint8_t *buf;          /* the chunk's padded images */
    size_t img_bytes;
    char *y;               /* the chunk's first output image */
    size_t esz, pixels;    /* output pixels in the chunk */
    qgemm_tile tile;
} padded_job;

/* Images [b, e) of the chunk into their padded copies: the zero point around, the values
 * (flipped, widened to the kernel's element) inside, zeros in the padded channels. */
static void pad_images(void *arg, size_t b, size_t e, int ith)
{
    const padded_job *J = arg;
    const ridge_qconv2d_plan *P = J->P;
    const ridge_conv2d_desc *d = &P->d;
    const size_t ci = (size_t)d->c_in, cp = P->cpad, eb = P->eb;
    const size_t hp = (size_t)(d->h + d->pad_top + d->pad_bottom);
    const size_t wp = (size_t)(d->w + d->pad_left + d->pad_right);
    for (size_t img = b; img < e; img++) {
        uint8_t *dst = J->buf + img * J->img_bytes;
        const uint8_t *src = J->x + img * (size_t)(d->h * d->w) * ci;
        for (size_t py = 0; py < hp; py++)
            for (size_t px = 0; px < wp; px++) {
                uint8_t *o = dst + (py * wp + px) * cp * eb;
                int64_t iy = (int64_t)py - d->pad_top, ix = (int64_t)px - d->pad_left;
                const uint8_t *in = iy >= 0 && iy < d->h && ix >= 0 && ix < d->w
                                        ? src + ((size_t)iy * (size_t)d->w + (size_t)ix) * ci
                                        : NULL;
                if (eb == 1) {
                    if (in) for (size_t c = 0; c < ci; c++) o[c] = in[c] ^ J->flip;
                    else memset(o, J->zpad, ci);
                    memset(o + ci, 0, cp - ci);
                } else {
                    int16_t *o16 = (int16_t *)(void *)o;
                    for (size_t c = 0; c < ci; c++) o16[c] = in ? (uint8_t)(in[c] ^ J->flip) : J->zpad;
                    for (size_t c = ci; c < cp; c++) o16[c] = 0;
                }
            }
    }
}

/* Tiles [b, e) of MR consecutive output pixels of the chunk (pixels run across rows and
 * images: each has its own window pointer, and consecutive pixels are consecutive rows of
 * y), by NR-channel blocks: the kernel's sums, then the GEMM micro-kernel's epilogue. */
static void padded_tiles(void *arg, size_t b, size_t e, int ith)
{
    const padded_job *J = arg;
    const ridge_qconv2d_plan *P = J->P;
    const ridge_conv2d_desc *d = &P->d;
    const lowp_kernel *K = P->K;
    const size_t MR = (size_t)K->mr, NR = (size_t)K->nr, co = (size_t)d->c_out;
    const size_t wp = (size_t)(d->w + d->pad_left + d->pad_right), ow = (size_t)P->ow;
    const size_t per_img = (size_t)P->oh * ow, pix = P->cpad * P->eb; /* bytes per pixel */
    const int dw = P->algo == RIDGE_CONV_DEPTHWISE;
    int32_t part[QCONV_MAX_MR * 32]; /* MR x NR, NR <= 32 */
    const uint8_t *win[QCONV_MAX_MR];
    qconv_args a = {.toff = P->toff, .taps = (int)(d->r * d->s), .cg = P->cpad / (size_t)K->kg,
                    .wstride = P->cpad, .part = part};
    for (size_t tile = b; tile < e; tile++) {
        const size_t p0 = tile * MR, mr = RIDGE_MIN(MR, J->pixels - p0);
        for (size_t i = 0; i < MR; i++) {
            const size_t p = p0 + (i < mr ? i : 0), img = p / per_img;
            const size_t oy = p % per_img / ow, ox = p % per_img % ow;
            win[i] = J->buf + img * J->img_bytes +
                     (oy * (size_t)d->stride_h * wp + ox * (size_t)d->stride_w) * pix;
        }
        for (size_t j = 0; j < co; j += NR) {
            for (size_t i = 0; i < MR; i++) a.x[i] = win[i] + (dw ? j * P->eb : 0);
            if (dw) {
                a.w = P->dw_w + j;
                K->dwconv(&a);
            } else {
                a.w = (const int32_t *)(const void *)(P->gemm->packed + (j / NR) * P->gemm->panel_bytes);
                K->dconv(&a);
            }
            qgemm_tile t = lowp_qtile_at(&J->tile, j);
            K->ukernel(0, NULL, NULL, part, 0, 1, J->y + (p0 * co + j) * J->esz, co, mr,
                       RIDGE_MIN(NR, co - j), &t);
        }
    }
}

static ridge_status forward_padded(ridge_ctx *ctx, const ridge_qconv2d_plan *P, int s8,
                                   const void *x, int32_t zx, void *y, const ridge_requant *rq,
                                   size_t esz)
{
    const ridge_conv2d_desc *d = &P->d;
    const size_t hp = (size_t)(d->h + d->pad_top + d->pad_bottom);
    const size_t wp = (size_t)(d->w + d->pad_left + d->pad_right);
    const size_t img_bytes = hp * wp * P->cpad * P->eb, n = (size_t)d->n;
    const size_t chunk = RIDGE_MIN(n, RIDGE_MAX(QCONV_CHUNK_BYTES / img_bytes, 1u));
    uint8_t *buf = ridge_malloc(chunk * img_bytes);
    if (!buf)
        return ridge_error(RIDGE_ENOMEM, "qconv2d_forward: out of memory for %zu padded images "
                           "of %zu bytes", chunk, img_bytes);
    /* s8 is flipped to u8 (x + 128), which moves the zero point by 128, as in the GEMM */
    const int32_t za = s8 ? zx + 128 : zx;
    padded_job J = {.P = P, .flip = s8 ? 0x80 : 0, .zpad = (uint8_t)za, .buf = buf,
                    .img_bytes = img_bytes, .esz = esz,
                    .tile = lowp_qtile(rq, P->algo == RIDGE_CONV_DEPTHWISE ? P->dw_sum
                                                                           : P->gemm->colsum, za)};
    const size_t in_img = (size_t)(d->h * d->w * d->c_in), out_img = (size_t)(P->oh * P->ow * d->c_out);
    for (size_t i0 = 0; i0 < n; i0 += chunk) {
        const size_t ni = RIDGE_MIN(chunk, n - i0);
        J.x = (const uint8_t *)x + i0 * in_img;
        J.y = (char *)y + i0 * out_img * esz;
        J.pixels = ni * (size_t)(P->oh * P->ow);
        ridge_parallel_for(ctx, ni, 1, pad_images, &J);
        ridge_parallel_for(ctx, (J.pixels + (size_t)P->K->mr - 1) / (size_t)P->K->mr, 1,
                           padded_tiles, &J);
    }
    ridge_free(buf);
    return RIDGE_OK;
}

ridge_status ridge_qconv2d_forward(ridge_ctx *ctx, const ridge_qconv2d_plan *P,
                                   ridge_lowp_type x_type, const void *x, int32_t zx, void *y,
                                   const ridge_requant *rq)
{
    return ridge_qconv2d_forward_n(ctx, P, P ? (size_t)P->d.n : 0, x_type, x, zx, y, rq);
}

ridge_status ridge_qconv2d_forward_n(ridge_ctx *ctx, const ridge_qconv2d_plan *plan, size_t n,
                                     ridge_lowp_type x_type, const void *x, int32_t zx, void *y,
                                     const ridge_requant *rq)
{
    const char *fn = "qconv2d_forward";
    if (!ctx || !plan || !x || !y)
        return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn,
                           !ctx ? "ctx" : !plan ? "plan" : !x ? "x" : "y");
    if (n < 1 || n > (size_t)plan->d.n)
        return ridge_error(RIDGE_EINVAL, "%s: %zu images; the plan takes 1 to %lld", fn, n,
                           (long long)plan->d.n);
    /* the plan for n images: only the batch differs, which nothing in it depends on */
    ridge_qconv2d_plan Pn = *plan;
    Pn.d.n = (int64_t)n;
    const ridge_qconv2d_plan *P = &Pn;
    const ridge_conv2d_desc *d = &P->d;
    size_t rows = (size_t)(d->n * P->oh * P->ow), co = (size_t)d->c_out;
    static const ridge_requant raw = {0};
    if (!rq) rq = &raw;
    size_t esz = rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8 ? 1 : 4;
    if (P->algo == RIDGE_CONV_POINTWISE) /* x (n*h*w, c_in) is the GEMM's A */
        return ridge_qgemm_plan_execute(ctx, P->gemm, x_type, rows, x, P->k, zx, y, co, rq);
    if (x_type != RIDGE_LOWP_U8 && x_type != RIDGE_LOWP_S8)
        return ridge_error(RIDGE_EINVAL, "%s: x_type (%d) is neither RIDGE_LOWP_U8 nor "
                           "RIDGE_LOWP_S8", fn, (int)x_type);
    if ((x_type == RIDGE_LOWP_U8 && (zx < 0 || zx > 255)) ||
        (x_type == RIDGE_LOWP_S8 && (zx < -128 || zx > 127)))
        return ridge_error(RIDGE_EINVAL, "%s: x zero point (%d) is outside the range of %s", fn,
                           (int)zx, x_type == RIDGE_LOWP_U8 ? "uint8" : "int8");
    ridge_status st = lowp_check_requant(fn, rq, co);
    if (st) return st;
    if (P->wref) return ridge_qconv2d_forward_ref(d, x_type, x, zx, P->wref, y, rq);
    if (P->K) {
        uint64_t t0 = RIDGE_PROF_START(ctx);
        st = forward_padded(ctx, P, x_type == RIDGE_LOWP_S8, x, zx, y, rq, esz);
        double macs = (double)rows * (double)co * (double)(d->c_in / d->groups) * (double)(d->r * d->s);
        double bytes = (double)(d->n * d->h * d->w * d->c_in) + (double)rows * (double)co * (double)esz;
        RIDGE_PROF_END(ctx, t0, "qconv2d", P->algo == RIDGE_CONV_DIRECT ? "direct" : "depthwise",
                       2.0 * macs, bytes, bytes, "%lldx%lldx%lldx%lld-%lld", (long long)d->n,
                       (long long)d->h, (long long)d->w, (long long)d->c_in, (long long)d->c_out);
        return st;
    }
    size_t strip = RIDGE_MAX(QCONV_STRIP_BYTES / P->k, 16u);
    strip = RIDGE_MIN(strip, rows);
    uint8_t *cols = ridge_malloc(strip * P->k);
    if (!cols) return ridge_error(RIDGE_ENOMEM, "%s: out of memory for a %zu x %zu im2col strip",
                                  fn, strip, P->k);
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
                    const int64_t cig = d->c_in / d->groups, c0 = o / (d->c_out / d->groups) * cig;
                    uint32_t acc = 0;
                    for (int64_t c = 0; c < cig; c++)
                        for (int64_t ky = 0; ky < d->r; ky++)
                            for (int64_t kx = 0; kx < d->s; kx++) {
                                int64_t iy = oy * d->stride_h - d->pad_top + ky * d->dil_h;
                                int64_t ix = ox * d->stride_w - d->pad_left + kx * d->dil_w;
                                if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w) continue;
                                size_t xi = (size_t)(((img * d->h + iy) * d->w + ix) * d->c_in + c0 + c);
                                int32_t xv = x_type == RIDGE_LOWP_U8 ? ((const uint8_t *)x)[xi]
                                                                     : ((const int8_t *)x)[xi];
                                int32_t wv = w[((o * cig + c) * d->r + ky) * d->s + kx];
                                acc += (uint32_t)((xv - zx) * wv);
                            }
                    if (rq->bias) acc += (uint32_t)rq->bias[o];
                    size_t yi = (size_t)(((img * oh + oy) * ow + ox) * d->c_out + o);
                    qgemm_finish_scalar(rq, (size_t)o, (int32_t)acc, (char *)y + yi * esz);
                }
    return RIDGE_OK;
}
