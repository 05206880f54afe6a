/* The training pooling loops, one template for every ISA: pool-ref.c, pool-avx2.c and
 * pool-avx512.c each define POOL_ISA and include this file, and differ only in the flags they
 * are compiled with (src/nn/sources.cmake). Per output pixel, a loop over the window's valid
 * cells (clamped: padding never exists) with the channel loop innermost, contiguous and
 * branch-free (selects), so that it vectorizes over the channels; every build gives the same
 * bits. */
#include <string.h>

#include "core/internal.h"
#include "nn/pool-internal.h"

#define POOL_CAT2(a, b) a##__##b
#define POOL_CAT(a, b) POOL_CAT2(a, b)

/* window rows [*a, *b) of output row i (likewise columns) */
static inline void window(int64_t i, int64_t stride, int64_t pad, int64_t k, int64_t n,
                          int64_t *a, int64_t *b)
{
    int64_t s = i * stride - pad;
    *a = RIDGE_MAX(s, 0);
    *b = RIDGE_MIN(s + k, n);
}

/* The windows tile the image: no padding, stride = window, so a cell has one window at most
 * and every window lies inside the image */
static inline int windows_tile(const ridge_pool2d_desc *d)
{
    return d->pad_top == 0 && d->pad_left == 0 && d->pad_bottom == 0 && d->pad_right == 0 &&
           d->stride_h == d->r && d->stride_w == d->s;
}

static inline float avg_scale(const ridge_pool2d_desc *d, int64_t h0, int64_t h1, int64_t w0,
                              int64_t w1)
{
    return 1.0f / (float)(d->count_pad ? d->r * d->s : (h1 - h0) * (w1 - w0));
}

/* Max over one window cell into (y, am): the cell wins when larger, or when it is NaN and y is
 * not (NaN propagates, the first NaN kept). */
static inline void max_cell(float *restrict y, int32_t *restrict am, const float *restrict xp,
                            int32_t o, int32_t C)
{
    /* 32-bit indices (an image's offsets are int32), so the offsets are one vector induction */
    for (int32_t c = 0; c < C; c++) {
        const float v = xp[c], m = y[c];
        const int take = (v > m) | ((v != v) & (m == m));
        y[c] = take ? v : m;
        am[c] = take ? o + c : am[c];
    }
}

/* Max pooling, 2 x 2 windows at stride 2 without padding (every CNN's): output row i of an
 * image, a window's four cells in one pass over the channels, 16 at a time in GCC vector
 * types (zmm, two ymm or SSE per ISA build), the max and the winner in registers, y and
 * argmax stored once; the cells in max_cell's order with its test, so the generic loop's
 * bits. The generic loop (four short vectorized loops per pixel, y and argmax read and
 * written back per cell) ran 64 x 28 x 28 x 32 at 22 GB/s on 1 thread (Zen 5); with the four
 * cells in one plain loop gcc did not vectorize it at all. */
typedef float pool_vf __attribute__((vector_size(64)));
typedef int32_t pool_vi __attribute__((vector_size(64)));
static const pool_vi pool_iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static inline __attribute__((always_inline)) void max_cell16(pool_vf *m, pool_vi *a,
                                                             const float *xp, int32_t o)
{
    pool_vf v;
    memcpy(&v, xp, sizeof v);
    const pool_vi take = (v > *m) | ((v != v) & (*m == *m));
    *m = (pool_vf)(((pool_vi)v & take) | ((pool_vi)*m & ~take));
    *a = ((pool_iota + o) & take) | (*a & ~take);
}

static void max2x2_row(const ridge_pool2d_desc *d, int64_t ow, const float *x, int64_t i,
                       float *restrict y, int32_t *restrict am)
{
    const int32_t C = (int32_t)d->c, W = (int32_t)d->w;
    for (int64_t j = 0; j < ow; j++, y += C, am += C) {
        const int32_t o0 = (int32_t)((2 * i * W + 2 * j) * C), o1 = o0 + C, o2 = o0 + W * C,
                      o3 = o2 + C;
        int32_t c = 0;
        for (; c + 16 <= C; c += 16) {
            pool_vf m;
            memcpy(&m, x + o0 + c, sizeof m);
            pool_vi a = pool_iota + (o0 + c);
            max_cell16(&m, &a, x + o1 + c, o1 + c);
            max_cell16(&m, &a, x + o2 + c, o2 + c);
            max_cell16(&m, &a, x + o3 + c, o3 + c);
            memcpy(y + c, &m, sizeof m);
            memcpy(am + c, &a, sizeof a);
        }
        for (; c < C; c++) {
            y[c] = x[o0 + c], am[c] = o0 + c;
            max_cell(y + c, am + c, x + o1 + c, o1 + c, 1);
            max_cell(y + c, am + c, x + o2 + c, o2 + c, 1);
            max_cell(y + c, am + c, x + o3 + c, o3 + c, 1);
        }
    }
}

void POOL_CAT(ridge_nn_pool_fwd_range, POOL_ISA)(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *p = arg;
    const ridge_pool2d_desc *d = p->d;
    const int64_t C = d->c;
    const int max2x2 = d->kind == RIDGE_POOL_MAX && d->r == 2 && d->s == 2 && windows_tile(d);
    (void)ith;
    for (size_t it = b; it < e; it++) { /* one output row */
        int64_t n = (int64_t)it / p->oh, i = (int64_t)it % p->oh, h0, h1;
        if (max2x2) {
            const int64_t off = ((n * p->oh + i) * p->ow) * C;
            max2x2_row(d, p->ow, p->in + n * d->h * d->w * C, i, p->out + off, p->argmax + off);
            continue;
        }
        window(i, d->stride_h, d->pad_top, d->r, d->h, &h0, &h1);
        const float *x = p->in + n * d->h * d->w * C;
        for (int64_t j = 0; j < p->ow; j++) {
            int64_t w0, w1;
            window(j, d->stride_w, d->pad_left, d->s, d->w, &w0, &w1);
            float *restrict y = p->out + ((n * p->oh + i) * p->ow + j) * C;
            if (d->kind == RIDGE_POOL_AVG) {
                for (int64_t c = 0; c < C; c++) y[c] = 0.0f;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        const float *restrict xp = x + (ih * d->w + iw) * C;
                        for (int64_t c = 0; c < C; c++) y[c] += xp[c];
                    }
                const float inv = avg_scale(d, h0, h1, w0, w1);
                for (int64_t c = 0; c < C; c++) y[c] *= inv;
                continue;
            }
            int32_t *restrict am = p->argmax + ((n * p->oh + i) * p->ow + j) * C;
            const int32_t first = (int32_t)((h0 * d->w + w0) * C);
            for (int32_t c = 0; c < (int32_t)C; c++) y[c] = x[first + c], am[c] = first + c;
            for (int64_t ih = h0; ih < h1; ih++)
                for (int64_t iw = w0; iw < w1; iw++) {
                    if (ih == h0 && iw == w0) continue;
                    const int32_t o = (int32_t)((ih * d->w + iw) * C);
                    max_cell(y, am, x + o, o, (int32_t)C);
                }
        }
    }
}

/* max_bwd_tiled's 2 x 2 windows: after the clearing, each cell of a window written once, dy
 * where it won (0 + dy) and 0 elsewhere, 16 channels at a time in vector types, without
 * reading dx back: the bits of the select below. In the CNN's training step on Zen 5 (2
 * threads), 64 x 28 x 28 x 32 took 0.31-0.34 ms against 0.45, 64 x 14 x 14 x 64 0.16 against
 * 0.20. Without the clearing, whose stores of whole lines skip reading them from memory,
 * the latter took 0.28. */
static void max_bwd_2x2(const ridge_pool2d_desc *d, int64_t oh, int64_t ow, float *dx,
                        const float *dy, const int32_t *am)
{
    const int32_t C = (int32_t)d->c, W = (int32_t)d->w;
    memset(dx, 0, (size_t)(d->h * d->w * C) * sizeof(float));
    for (int64_t i = 0; i < oh; i++) {
        for (int64_t j = 0; j < ow; j++) {
            const float *g = dy + (i * ow + j) * C;
            const int32_t *a = am + (i * ow + j) * C;
            const int32_t o[4] = {(int32_t)((2 * i * W + 2 * j) * C),
                                  (int32_t)((2 * i * W + 2 * j + 1) * C),
                                  (int32_t)(((2 * i + 1) * W + 2 * j) * C),
                                  (int32_t)(((2 * i + 1) * W + 2 * j + 1) * C)};
            int32_t c = 0;
            for (; c + 16 <= C; c += 16) {
                pool_vf gv;
                pool_vi av;
                memcpy(&gv, g + c, sizeof gv);
                memcpy(&av, a + c, sizeof av);
                gv += 0.0f;
                for (int k = 0; k < 4; k++) {
                    const pool_vf v = (pool_vf)((pool_vi)gv & (av == pool_iota + (o[k] + c)));
                    memcpy(dx + o[k] + c, &v, sizeof v);
                }
            }
            for (; c < C; c++)
                for (int k = 0; k < 4; k++)
                    dx[o[k] + c] = a[c] == o[k] + c ? 0.0f + g[c] : 0.0f;
        }
    }
}

/* Max pooling whose windows tile the image (no padding, stride = kernel): a cell has one
 * window at most, so the scatter below becomes, window by window, a vectorized select of dy
 * where the cell won (0 + dy, the scatter's bits) over the cleared image. Clearing first with
 * memset, rather than writing the zeros in the same pass, measured faster: its stores do not
 * read the lines they fill (28 x 28 x 32 at batch 64, 1 thread: 0.63-0.69 ms against
 * 0.82-1.01). */
static void max_bwd_tiled(const ridge_pool2d_desc *d, int64_t oh, int64_t ow, float *dx,
                          const float *dy, const int32_t *am)
{
    if (d->r == 2 && d->s == 2) {
        max_bwd_2x2(d, oh, ow, dx, dy, am);
        return;
    }
    const int64_t C = d->c, r = d->r, s = d->s;
    const int32_t C32 = (int32_t)C;
    memset(dx, 0, (size_t)(d->h * d->w * C) * sizeof(float));
    for (int64_t i = 0; i < oh; i++)
        for (int64_t j = 0; j < ow; j++) {
            const float *restrict g = dy + (i * ow + j) * C;
            const int32_t *restrict a = am + (i * ow + j) * C;
            for (int64_t ih = i * r; ih < i * r + r; ih++)
                for (int64_t iw = j * s; iw < j * s + s; iw++) {
                    const int32_t o = (int32_t)((ih * d->w + iw) * C);
                    float *restrict xp = dx + o;
                    for (int32_t c = 0; c < C32; c++) xp[c] = a[c] == o + c ? 0.0f + g[c] : xp[c];
                }
        }
}

void POOL_CAT(ridge_nn_pool_bwd_range, POOL_ISA)(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *p = arg;
    const ridge_pool2d_desc *d = p->d;
    const int64_t C = d->c, img = d->h * d->w * C, out = p->oh * p->ow * C;
    const int tiled = windows_tile(d);
    (void)ith;
    for (size_t n = b; n < e; n++) {
        float *dx = p->out + (int64_t)n * img;
        const float *dy = p->in + (int64_t)n * out;
        if (d->kind == RIDGE_POOL_MAX && tiled) {
            max_bwd_tiled(d, p->oh, p->ow, dx, dy, p->cargmax + (int64_t)n * out);
            continue;
        }
        memset(dx, 0, (size_t)img * sizeof(float));
        if (d->kind == RIDGE_POOL_MAX) {
            const int32_t *am = p->cargmax + (int64_t)n * out;
            for (int64_t q = 0; q < out; q++) dx[am[q]] += dy[q];
            continue;
        }
        for (int64_t i = 0; i < p->oh; i++) {
            int64_t h0, h1;
            window(i, d->stride_h, d->pad_top, d->r, d->h, &h0, &h1);
            for (int64_t j = 0; j < p->ow; j++) {
                int64_t w0, w1;
                window(j, d->stride_w, d->pad_left, d->s, d->w, &w0, &w1);
                const float inv = avg_scale(d, h0, h1, w0, w1);
                const float *restrict g = dy + (i * p->ow + j) * C;
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) {
                        float *restrict xp = dx + (ih * d->w + iw) * C;
                        for (int64_t c = 0; c < C; c++) xp[c] += g[c] * inv;
                    }
            }
        }
    }
}
