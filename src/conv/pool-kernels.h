/* The pooling loops of ridge_pool2d_forward, one template for every ISA: pool-ref.c,
 * pool-avx2.c and pool-avx512.c each define POOL_ISA and POOL_VBYTES (the vector width gcc
 * gets in GCC's vector types: 16, 32, 64 bytes) and include this file, compiled with their ISA's
 * flags (src/conv/sources.cmake). Every build takes the window's taps in the same order, so
 * they give the same bits. */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "conv/pool-internal.h"

#define POOL_CAT2(a, b) a##__##b
#define POOL_CAT(a, b) POOL_CAT2(a, b)

/* Valid taps [*k0, *k1) of a window starting at `start` over an input of n. */
static inline void valid(int64_t start, int64_t n, int64_t K, int64_t *k0, int64_t *k1)
{
    *k0 = start >= 0 ? 0 : -start;
    *k1 = n - start < K ? n - start : K;
}

/* The output pixels [*lo, *hi) of a row whose window lies wholly inside the input row */
static inline void pool_interior(const ridge_pool2d_desc *d, int64_t ow, int64_t *lo,
                                 int64_t *hi)
{
    const int64_t sw = d->stride_w, pl = d->pad_left, last = d->w - d->s + pl;
    *lo = RIDGE_MIN((pl + sw - 1) / sw, ow);
    *hi = RIDGE_MAX(*lo, RIDGE_MIN(last >= 0 ? last / sw + 1 : 0, ow));
}

/* The average's factor for a window of rows x cols valid taps */
static inline float pool_scale(const ridge_pool2d_desc *d, int64_t rows, int64_t cols)
{
    return 1.0f / (float)(d->count_pad ? d->r * d->s : rows * cols);
}

/* acc combined with v in scalar code: the max (v > acc ? v : acc) or the sum */
static inline float pool_add1(float acc, float v, int is_max)
{
    return is_max ? (v > acc ? v : acc) : acc + v;
}

/* pool_vfL and pool_viL: vectors of L floats and L ints, L = 4 and each power of two up to the
 * ISA's width; pool_addL: acc combined with v, the max (v > acc ? v : acc, as the scalar loops
 * test) or the sum. GCC's vector types: gcc's own vectorizer left the max's select scalar. */
#define POOL_VEC(L)                                                                              \
    typedef float pool_vf##L __attribute__((vector_size(4 * L)));                                \
    typedef int32_t pool_vi##L __attribute__((vector_size(4 * L)));                              \
    static inline __attribute__((always_inline)) pool_vf##L pool_add##L(pool_vf##L acc,          \
                                                                        pool_vf##L v, int is_max) \
    {                                                                                            \
        if (!is_max) return acc + v;                                                             \
        const pool_vi##L take = v > acc;                                                         \
        return (pool_vf##L)(((pool_vi##L)v & take) | ((pool_vi##L)acc & ~take));                \
    }
POOL_VEC(4)
#if POOL_VBYTES >= 32
POOL_VEC(8)
#endif
#if POOL_VBYTES >= 64
POOL_VEC(16)
#endif
#define POOL_VL (POOL_VBYTES / 4)
/* the ISA's own vector */
#if POOL_VL == 16
#define pool_vf pool_vf16
#define pool_add pool_add16
#elif POOL_VL == 8
#define pool_vf pool_vf8
#define pool_add pool_add8
#else
#define pool_vf pool_vf4
#define pool_add pool_add4
#endif
/* channels per pass over a pixel's window: 4 of the ISA's vectors (64 with AVX-512) */
#define POOL_C (4 * POOL_VL)

/* NV vectors over the window's valid taps [r0, r1) x [s0, s1), vector k's window at t + k *
 * xk, stored to y + k * yk: NV vectors of one pixel's channels (xk = yk = POOL_VL), or one
 * vector of NV pixels. The NV accumulators stay in registers across the taps, independent
 * chains. */
static inline __attribute__((always_inline)) void
pool_vectors(const pool_args *a, const float *t, ptrdiff_t xk, int64_t r0, int64_t r1, int64_t s0,
             int64_t s1, const int NV, float scale, float *y, ptrdiff_t yk)
{
    const int is_max = a->d->kind == RIDGE_POOL_MAX;
    pool_vf acc[4], v;
    for (int k = 0; k < NV; k++) acc[k] = is_max ? (pool_vf){0} - FLT_MAX : (pool_vf){0};
    for (int64_t r = r0; r < r1; r++)
        for (int64_t s = s0; s < s1; s++) {
            const float *p = t + r * a->xv.sh + s * a->xv.sw;
            for (int k = 0; k < NV; k++) {
                memcpy(&v, p + k * xk, sizeof v);
                acc[k] = pool_add(acc[k], v, is_max);
            }
        }
    for (int k = 0; k < NV; k++) {
        if (!is_max) acc[k] *= scale;
        memcpy(y + k * yk, &acc[k], sizeof v);
    }
}

/* m <= POOL_C contiguous channels: whole vectors, then the rest one by one */
static inline void pool_channels(const pool_args *a, const float *t, int64_t r0, int64_t r1,
                                 int64_t s0, int64_t s1, int64_t m, float scale, float *y)
{
    switch (m / POOL_VL) {
    case 4: pool_vectors(a, t, POOL_VL, r0, r1, s0, s1, 4, scale, y, POOL_VL); break;
    case 3: pool_vectors(a, t, POOL_VL, r0, r1, s0, s1, 3, scale, y, POOL_VL); break;
    case 2: pool_vectors(a, t, POOL_VL, r0, r1, s0, s1, 2, scale, y, POOL_VL); break;
    case 1: pool_vectors(a, t, POOL_VL, r0, r1, s0, s1, 1, scale, y, POOL_VL); break;
    default: break;
    }
    const int is_max = a->d->kind == RIDGE_POOL_MAX;
    for (int64_t c = m / POOL_VL * POOL_VL; c < m; c++) {
        float acc = is_max ? -FLT_MAX : 0.0f;
        for (int64_t r = r0; r < r1; r++)
            for (int64_t s = s0; s < s1; s++) {
                acc = pool_add1(acc, t[r * a->xv.sh + s * a->xv.sw + c], is_max);
            }
        y[c] = is_max ? acc : acc * scale;
    }
}

/* One output pixel of a row of NHWC or NCHW16c, every channel of its block: its valid taps,
 * up to POOL_C channels a pass */
static inline __attribute__((always_inline)) void
pool_pixel_channels(const pool_args *a, ptrdiff_t xrow, float *yrow,
                                       int64_t r0, int64_t r1, int64_t nc, int64_t ow)
{
    const ridge_pool2d_desc *d = a->d;
    int64_t iw0 = ow * d->stride_w - d->pad_left, s0, s1;
    valid(iw0, d->w, d->s, &s0, &s1);
    const float scale = pool_scale(d, r1 - r0, s1 - s0);
    /* the window origin may lie in the padding: only valid taps are addressed */
    const float *t = a->x + xrow + iw0 * a->xv.sw;
    float *y = yrow + ow * a->yv.sw;
    for (int64_t c0 = 0; c0 < nc; c0 += POOL_C)
        pool_channels(a, t + c0, r0, r1, s0, s1, RIDGE_MIN(POOL_C, nc - c0), scale, y + c0);
}

/* pixels a pass where one vector holds a pixel's channels (NCHW16c blocks with AVX-512) */
#define POOL_Q 4

/* NHWC and NCHW16c: channels contiguous in runs (the whole pixel, or blocks of 16), so each
 * window tap is a vector operation over up to POOL_C channels; where a block is one vector,
 * the row's interior pixels go POOL_Q at a time. Parallel over (image, output row). */
void POOL_CAT(ridge_conv_pool_rows, POOL_ISA)(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *a = arg;
    const ridge_pool2d_desc *d = a->d;
    const int64_t cblk = a->xv.cblk, nblk = (d->c + cblk - 1) / cblk;
    const int64_t sw = d->stride_w, pl = d->pad_left, OW = a->ow;
    int64_t ilo, ihi;
    pool_interior(d, OW, &ilo, &ihi);
    (void)ith;
    for (size_t row = b; row < e; row++) {
        int64_t n = (int64_t)row / a->oh, oh = (int64_t)row % a->oh;
        int64_t ih0 = oh * d->stride_h - d->pad_top, r0, r1;
        valid(ih0, d->h, d->r, &r0, &r1);
        const float full = pool_scale(d, r1 - r0, d->s);
        for (int64_t cb = 0; cb < nblk; cb++) {
            const int64_t nc = d->c - cb * cblk < cblk ? d->c - cb * cblk : cblk;
            const ptrdiff_t xrow = n * a->xv.sn + cb * a->xv.scb + ih0 * a->xv.sh;
            float *yrow = a->y + n * a->yv.sn + cb * a->yv.scb + oh * a->yv.sh;
            /* the pixels [q0, q1) in blocks of POOL_Q, the others one by one */
            const int64_t q0 = nc == POOL_VL ? ilo : 0;
            const int64_t q1 = nc == POOL_VL ? ilo + (ihi - ilo) / POOL_Q * POOL_Q : 0;
            for (int64_t ow = 0; ow < OW;) {
                if (ow >= q0 && ow < q1) {
                    pool_vectors(a, a->x + xrow + (ow * sw - pl) * a->xv.sw, sw * a->xv.sw, r0,
                                 r1, 0, d->s, POOL_Q, full, yrow + ow * a->yv.sw, a->yv.sw);
                    ow += POOL_Q;
                } else {
                    pool_pixel_channels(a, xrow, yrow, r0, r1, nc, ow++);
                }
            }
        }
    }
}

/* NCHW: one output row of one channel's plane per item. The pixels whose window lies inside
 * the row go in vectors at stride 1 and 2 (pool_span), or POOL_P at a time with one scalar
 * accumulator each; the border pixels one by one over their valid taps (pool_pixel). Which
 * path takes a pixel does not depend on the ISA, and each path takes the taps in one order,
 * so every build gives the same bits. */
#define POOL_P 8
/* pool_block_L: the L pixels [ow, ow + L) of an NCHW row, their windows inside the row, in one
 * vector of L lanes; x at the first window's first tap in row r = 0. Stride 2 takes the even
 * lanes of a vector at the tap and the odd lanes of one L - 1 further, so it reads nothing past
 * the last pixel's window. */
#define POOL_BLOCK(L, ...)                                                                       \
    static inline __attribute__((always_inline)) void pool_block_##L(                            \
        const pool_args *a, const float *x, int64_t r0, int64_t r1, float scale, float *y,        \
        const int64_t sw)                                                                        \
    {                                                                                            \
        const int64_t W = a->d->w, S = a->d->s;                                                  \
        const int is_max = a->d->kind == RIDGE_POOL_MAX;                                         \
        pool_vf##L acc = is_max ? (pool_vf##L){0} - FLT_MAX : (pool_vf##L){0}, v, v2;            \
        for (int64_t r = r0; r < r1; r++)                                                        \
            for (int64_t s = 0; s < S; s++) {                                                    \
                memcpy(&v, x + r * W + s, sizeof v);                                             \
                if (sw == 2) {                                                                   \
                    memcpy(&v2, x + r * W + s + L - 1, sizeof v2);                               \
                    v = __builtin_shuffle(v, v2, (pool_vi##L){__VA_ARGS__});                      \
                }                                                                                \
                acc = pool_add##L(acc, v, is_max);                                               \
            }                                                                                    \
        if (!is_max) acc *= scale;                                                               \
        memcpy(y, &acc, sizeof acc);                                                             \
    }
POOL_BLOCK(4, 0, 2, 5, 7)
#if POOL_VL >= 8
POOL_BLOCK(8, 0, 2, 4, 6, 9, 11, 13, 15)
#endif
#if POOL_VL >= 16
POOL_BLOCK(16, 0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31)
#endif

/* One NCHW pixel over its valid taps, in two 4-lane vectors (a global pooling's long window
 * is not one dependent chain): each window row's columns 8 at a time, then 4 into the first,
 * then the last 1 to 3 into the second; the lanes combined at the end. A window of whole rows
 * is one run of columns. */
static inline float pool_pixel(const pool_args *a, const float *x, int64_t ih0, int64_t r0,
                               int64_t r1, int64_t ow)
{
    const ridge_pool2d_desc *d = a->d;
    const int is_max = d->kind == RIDGE_POOL_MAX;
    int64_t iw0 = ow * d->stride_w - d->pad_left, s0, s1;
    valid(iw0, d->w, d->s, &s0, &s1);
    const float scale = pool_scale(d, r1 - r0, s1 - s0);
    const float *xw = x + ih0 * d->w + iw0;
    if (s1 - s0 == d->w) s1 += (r1 - r0 - 1) * d->w, r1 = r0 + 1;
    const float id = is_max ? -FLT_MAX : 0.0f;
    pool_vf4 acc0 = {id, id, id, id}, acc1 = acc0, v;
    for (int64_t r = r0; r < r1; r++) {
        const float *xr = xw + r * d->w;
        int64_t s = s0;
        for (; s + 8 <= s1; s += 8) {
            memcpy(&v, xr + s, sizeof v), acc0 = pool_add4(acc0, v, is_max);
            memcpy(&v, xr + s + 4, sizeof v), acc1 = pool_add4(acc1, v, is_max);
        }
        if (s + 4 <= s1) memcpy(&v, xr + s, sizeof v), acc0 = pool_add4(acc0, v, is_max), s += 4;
        if (s < s1) {
            v = (pool_vf4){xr[s], s + 1 < s1 ? xr[s + 1] : id, s + 2 < s1 ? xr[s + 2] : id, id};
            acc1 = pool_add4(acc1, v, is_max);
        }
    }
    v = pool_add4(acc0, acc1, is_max);
    const float t = pool_add1(pool_add1(v[0], v[1], is_max), pool_add1(v[2], v[3], is_max), is_max);
    return is_max ? t : t * scale;
}

/* The pixels [lo, hi) of an NCHW row at stride 1 or 2, hi - lo >= 4, their windows inside the
 * row: blocks of the widest vector that fits, the last one ending at hi (overlapping the one
 * before; a pixel computed twice gets the same value). */
static inline void pool_span(const pool_args *a, const float *x, int64_t r0, int64_t r1,
                             float scale, int64_t lo, int64_t hi, float *y)
{
    const int64_t sw = a->d->stride_w, pl = a->d->pad_left;
#define POOL_SPAN(L)                                                                             \
    if (hi - lo >= L) {                                                                          \
        for (int64_t o = lo; o < hi; o += L) {                                                   \
            const int64_t q = RIDGE_MIN(o, hi - L);                                              \
            if (sw == 2) pool_block_##L(a, x + q * 2 - pl, r0, r1, scale, y + q, 2);             \
            else pool_block_##L(a, x + q - pl, r0, r1, scale, y + q, 1);                          \
        }                                                                                        \
        return;                                                                                  \
    }
#if POOL_VL >= 16
    POOL_SPAN(16)
#endif
#if POOL_VL >= 8
    POOL_SPAN(8)
#endif
    POOL_SPAN(4)
#undef POOL_SPAN
}

void POOL_CAT(ridge_conv_pool_nchw_rows, POOL_ISA)(void *arg, size_t b, size_t e, int ith)
{
    const pool_args *a = arg;
    const ridge_pool2d_desc *d = a->d;
    const int is_max = d->kind == RIDGE_POOL_MAX;
    const int64_t H = d->h, W = d->w, S = d->s, sw = d->stride_w, pl = d->pad_left, OW = a->ow;
    int64_t ilo, ihi;
    pool_interior(d, OW, &ilo, &ihi);
    (void)ith;
    int64_t plane = (int64_t)b / a->oh, oh = (int64_t)b % a->oh;
    for (size_t item = b; item < e; item++, oh = oh + 1 == a->oh ? 0 : oh + 1, plane += !oh) {
        const float *x = a->x + plane * H * W;
        float *y = a->y + (int64_t)item * OW;
        int64_t ih0 = oh * d->stride_h - d->pad_top, r0, r1;
        valid(ih0, H, d->r, &r0, &r1);
        const float scale = pool_scale(d, r1 - r0, S);
        int64_t ow = 0;
        for (; ow < ilo; ow++) y[ow] = pool_pixel(a, x, ih0, r0, r1, ow);
        if (sw <= 2 && ihi - ilo >= 4) {
            pool_span(a, x + ih0 * W, r0, r1, scale, ilo, ihi, y);
            ow = ihi;
        }
        for (; ow + POOL_P <= ihi; ow += POOL_P) {
            float acc[POOL_P];
            for (int k = 0; k < POOL_P; k++) acc[k] = is_max ? -FLT_MAX : 0.0f;
            for (int64_t r = r0; r < r1; r++) {
                const float *xr = x + (ih0 + r) * W + ow * sw - pl;
                for (int64_t s = 0; s < S; s++)
                    for (int k = 0; k < POOL_P; k++)
                        acc[k] = pool_add1(acc[k], xr[k * sw + s], is_max);
            }
            for (int k = 0; k < POOL_P; k++) y[ow + k] = is_max ? acc[k] : acc[k] * scale;
        }
        for (; ow < OW; ow++) y[ow] = pool_pixel(a, x, ih0, r0, r1, ow);
    }
}
