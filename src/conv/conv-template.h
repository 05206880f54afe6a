/* The conv kernels, written once. Each ISA file defines the thin vector mapping below and
 * then includes this header, so the AVX2 build's passing tests validate the logic the AVX-512
 * build shares (only the mapping differs):
 *
 *   VF             vector type of VL floats           VZERO()          all zero
 *   VLOAD(p)       unaligned load                     VSTORE(p, v)     unaligned store
 *   VSTREAM(p, v)  aligned non-temporal store (the portable file: a store)
 *   VBCAST(p)      broadcast *p                       VFMA(a, b, c)    a * b + c
 *   VADD(a, b)     a + b                              VMAX(a, b)       lane max
 *   VSUB(a, b)     a - b                              VSET1(f)         all lanes f
 *   VMUL(a, b)     a * b                              VFNMA(a, b, c)   c - a * b
 *   KNAME          the kernel table's symbol          KNAME_STR, KISA  its name and ISA
 *   VPIN(v)        optional: keeps v in a register, so the compiler does not fold its load
 *                  into each FMA that uses it (default: nothing)
 *
 * Micro-kernel (row): MR = 6 output pixels x NR = 2 vectors of output channels, 12 vector
 * accumulators (AVX2 6x16: 12 of 16 ymm, AVX-512 6x32: 12 of 32 zmm), enough independent FMA
 * chains to cover the 4-cycle FMA latency on two pipes. The reduction runs over the window's
 * valid taps and the group's input channels, so the input is read in place (no im2col, no
 * padded copy). Per reduction step: 2 weight vectors, 6 broadcasts, 12 FMAs.
 *
 * Depthwise (dw_row, NHWC / NCHW16c): 3x3 windows (stride 1 or 2), and windows 4 to 7 wide
 * (dw_row_wide), in blocks of 14 pixels x 1 vector of channels, one window row's weight
 * vectors in registers at a time; whole rows with their border pixels (the first and last
 * blocks skip the columns outside the input), and, cached, each block down up to 8 rows of a
 * call (conv_dw_args.nrows, depthwise_range); other border pixels and other windows loop over
 * their valid taps, 4 pixels x 1 vector; channels past the last full vector go scalar.
 * dwp_row (NCHW): one plane row, vectors of output pixels, the column taps as shifted loads.
 *
 * Winograd transforms: per vector of channels, the 1D transform of Lavin & Gray written out
 * (B^T, A^T of F(2,3) and F(4,3)) applied to columns and then rows through a small stack
 * tile; the last channels that do not fill a vector go through the generic matrix loops. The
 * output transform stores straight into y with the epilogue. The backward's dw adds the dy
 * transform of F(4,3) transposed (A dy A^T) and the dwt tile (MR input x NR output channels,
 * the pixels as the reduction: the micro-kernel's loop with the roles of pixels and channels
 * swapped).
 *
 * FFT (conv-fft-template.h): 2D real FFTs of tiles and the per-frequency complex channel
 * reduction, vectorized across channels. */
#include <string.h>

#ifndef VPIN
#define VPIN(v) ((void)0)
#endif

#define MR 6
#define NR (2 * VL)

static inline VF act_apply(VF v, int act)
{
    return act ? VMAX(v, VZERO()) : v;
}

static inline float act_scalar(float v, int act)
{
    return act && !(v > 0.0f) ? 0.0f : v; /* NaN -> 0, as VMAX(v, 0) does */
}

/* The contiguous-channel store of rows [0, mr): bias, residual, activation as flags that are
 * compile-time constants on AVX2 (store_tile), so a full tile's 12 stores are straight-line
 * code (with a short reduction, e.g. the c_in = 1 first layer's 9 taps, a store loop
 * re-reading the arguments and branching per row took a large share of the tile). */
static inline __attribute__((always_inline)) void store_rows(const conv_row_args *a, int64_t p0,
                                                             const int mr, VF acc[MR][2],
                                                             const int act, const int has_res,
                                                             const int nt)
{
    const VF b0 = VLOAD(a->bias), b1 = VLOAD(a->bias + VL);
    const ptrdiff_t yps = a->yps, o0 = a->yo + p0 * yps + a->yco[0],
                    o1 = a->yo + p0 * yps + a->yco[VL];
    float *y = a->y;
    const float *res = a->res;
#pragma GCC unroll 6
    for (int p = 0; p < mr; p++) {
        VF v0 = VADD(acc[p][0], b0), v1 = VADD(acc[p][1], b1);
        if (has_res) {
            v0 = VADD(v0, VLOAD(res + o0 + p * yps));
            v1 = VADD(v1, VLOAD(res + o1 + p * yps));
        }
        if (nt) {
            VSTREAM(y + o0 + p * yps, act_apply(v0, act));
            VSTREAM(y + o1 + p * yps, act_apply(v1, act));
        } else {
            VSTORE(y + o0 + p * yps, act_apply(v0, act));
            VSTORE(y + o1 + p * yps, act_apply(v1, act));
        }
    }
}

/* Stores rows [0, mr) of a tile with the epilogue. acc[p][0..NR) holds the raw sums. */
static inline __attribute__((always_inline)) void store_tile(const conv_row_args *a, int64_t p0,
                                                             const int mr, VF acc[MR][2])
{
    if (a->yfast) {
#ifdef CONV_ROW_PAIR
        /* AVX-512, 24 accumulators: one copy with the flags read at run time. With the eight
         * below, gcc kept three of the 6 x 64 tile's accumulators on the stack inside its hot
         * loop (first 7x7 0.94-1.01x; this way 1.01x, and pointwise 64 1.05x) */
        store_rows(a, p0, mr, acc, a->act != 0, a->res != NULL, a->nt != 0);
#else
        /* AVX2, 12 accumulators: a copy per flag combination (runtime flags: the first 7x7
         * layer 0.86-0.95x) */
        switch ((a->act ? 1 : 0) + (a->res ? 2 : 0) + (a->nt ? 4 : 0)) {
        case 0: store_rows(a, p0, mr, acc, 0, 0, 0); break;
        case 1: store_rows(a, p0, mr, acc, 1, 0, 0); break;
        case 2: store_rows(a, p0, mr, acc, 0, 1, 0); break;
        case 3: store_rows(a, p0, mr, acc, 1, 1, 0); break;
        case 4: store_rows(a, p0, mr, acc, 0, 0, 1); break;
        case 5: store_rows(a, p0, mr, acc, 1, 0, 1); break;
        case 6: store_rows(a, p0, mr, acc, 0, 1, 1); break;
        default: store_rows(a, p0, mr, acc, 1, 1, 1); break;
        }
#endif
        return;
    }
    float *y = a->y;
    float t[2 * VL];
    /* unrolled, so that acc is indexed by constants only and stays in registers on the fast
     * path above (a loop here had gcc keep all of acc on the stack: every full 6 x 64 tile
     * spilled its 24 accumulators and reloaded them to store) */
#pragma GCC unroll 6
    for (int p = 0; p < mr; p++) {
        ptrdiff_t o = a->yo + (p0 + p) * a->yps;
        VSTORE(t, acc[p][0]);
        VSTORE(t + VL, acc[p][1]);
        for (int j = 0; j < a->nco; j++) {
            float v = t[j] + a->bias[j];
            if (a->res) v += a->res[o + a->yco[j]];
            y[o + a->yco[j]] = act_scalar(v, a->act);
        }
    }
}

/* One reduction step of tile_core: pixels xk + {0, 1, 2} xps and xk3 + {0, 1, 2} xps */
static inline __attribute__((always_inline)) void tile_step(VF c[MR][4], const float *xk,
                                                            const float *xk3, ptrdiff_t xps,
                                                            const float *w, ptrdiff_t wd,
                                                            const int nb)
{
    const float *xp[MR] = {xk, xk + xps, xk + 2 * xps, xk3, xk3 + xps, xk3 + 2 * xps};
    VF wv[4];
    wv[0] = VLOAD(w), wv[1] = VLOAD(w + VL);
    if (nb == 2) wv[2] = VLOAD(w + wd), wv[3] = VLOAD(w + wd + VL);
#pragma GCC unroll 6
    for (int p = 0; p < MR; p++) {
        const VF t = VBCAST(xp[p]);
#pragma GCC unroll 4
        for (int j = 0; j < 2 * nb; j++) c[p][j] = VFMA(t, wv[j], c[p][j]);
    }
}

/* A full tile of MR pixels: the hot loop, for nb = 1 channel block (a) or nb = 2 adjacent
 * blocks (a, then b, whose packed weights follow a's at the same offsets: CONV_ROW_PAIR).
 * With `unit` the channel offsets are 0..kc-1 (NHWC rows reduced as one run, im2col,
 * Winograd's products): no table load per step, and the broadcasts' addresses step by one
 * float. Two blocks at once (AVX-512: 24 of 32 zmm as accumulators) load 4 weight vectors and
 * 6 broadcasts per 24 FMAs, where two passes of one block load 4 and 12; each input pixel is
 * read once for both, and the tile's fixed cost (zeroing, epilogue) is spread over twice the
 * FMAs. */
static inline __attribute__((always_inline)) void tile_core(const conv_row_args *a,
                                                            const conv_row_args *b, int64_t p0,
                                                            const int unit, const int nb)
{
    VF c[MR][4]; /* nb = 1: columns 2 and 3 stay zero and are not stored (dead code) */
#pragma GCC unroll 6
    for (int p = 0; p < MR; p++) c[p][0] = c[p][1] = c[p][2] = c[p][3] = VZERO();
    const ptrdiff_t xps = a->xps, wd = nb == 2 ? b->w - a->w : 0;
    const int64_t kc = a->kc;
    /* the tile's output lines, for writing, while the FMAs run: y (3.2 MB for the first 7x7
     * layer) has often left the caches since it was last written, and each store would wait
     * on its line (1 thread, scripts/conv-ab.c: the first 7x7 layer 1.01-1.09x, direct 3x3
     * 64 1.03x, pointwise 0.99-1.02x; 2 threads, conv-ab-threads.c: 0.99-1.00x). Not when
     * y is streamed past the caches (nt): its stores take no line, and fetching one is waste.
     * Nor for pointwise (pfx), whose loop already prefetches the next tile's input: without
     * these, 64 -> 64 56x56 1.01-1.02x, 128 28x28, 256 14x14 and batch 8 1.01-1.02x (Zen 5,
     * 1 thread, conv-ab.c, both orders; 2 threads too noisy to call) */
    if (a->yfast && !a->nt && !a->pfx) {
#pragma GCC unroll 6
        for (int p = 0; p < MR; p++) {
            float *yp = a->y + a->yo + (p0 + p) * a->yps;
            __builtin_prefetch(yp + a->yco[0], 1);
            __builtin_prefetch(yp + a->yco[VL], 1);
            if (nb == 2) {
                __builtin_prefetch(yp + b->yco[0], 1);
                __builtin_prefetch(yp + b->yco[VL], 1);
            }
        }
    }
    const ptrdiff_t *coff = a->coff;
    for (int r = a->r0; r < a->r1; r++) {
        for (int s = a->s0; s < a->s1; s++) {
            const float *x = a->xb + (a->xo + p0 * xps + a->roff[r] + a->soff[s]);
            const float *w = a->w + ((int64_t)r * a->S + s) * kc * NR;
            /* two row pointers (pixels 0 and 3), so each broadcast is one address mode */
            const float *x3 = x + 3 * xps;
            /* pointwise: the next tile's MR pixels (MR kc floats from x + MR xps), half a line
             * a step, so that they wait in L1 instead of the tile waiting on them (Intel Xeon,
             * scripts/conv-ab.c, 64 -> 64 56x56: 1.10x at batch 1, 1.25x at batch 8, 1.18x
             * on 2 threads; 256 -> 256 at batch 8 1.03x; the fused separable block 1.00x) */
            const float *pf = a->pfx ? x + MR * xps : NULL;
            /* one block unrolled by 4: fewer pointer and counter updates per 12 FMAs
             * (pointwise 64 1.02-1.10x, the 7x7 first layer 1.01-1.07x in scripts/conv-ab; 8
             * no better); two blocks by 2 (4 measured no better) */
            if (nb == 1) {
#pragma GCC unroll 4
                for (int64_t k = 0; k < kc; k++, w += NR) {
                    if (pf) __builtin_prefetch(pf + 8 * k);
                    tile_step(c, unit ? x + k : x + coff[k], unit ? x3 + k : x3 + coff[k], xps, w,
                              wd, nb);
                }
            } else {
#pragma GCC unroll 2
                for (int64_t k = 0; k < kc; k++, w += NR) {
                    if (pf) __builtin_prefetch(pf + 8 * k);
                    tile_step(c, unit ? x + k : x + coff[k], unit ? x3 + k : x3 + coff[k], xps, w,
                              wd, nb);
                }
            }
        }
    }
    VF ca[MR][2], cb[MR][2];
#pragma GCC unroll 6
    for (int p = 0; p < MR; p++)
        ca[p][0] = c[p][0], ca[p][1] = c[p][1], cb[p][0] = c[p][2], cb[p][1] = c[p][3];
    store_tile(a, p0, MR, ca);
    if (nb == 2) store_tile(b, p0, MR, cb);
}

static void tile_full(const conv_row_args *a, int64_t p0) { tile_core(a, a, p0, 0, 1); }
static void tile_full_unit(const conv_row_args *a, int64_t p0) { tile_core(a, a, p0, 1, 1); }

/* mr < MR pixels (the row's last tile): one function per mr, so the accumulators stay in
 * registers. */
static inline __attribute__((always_inline)) void tile_n(const conv_row_args *a, int64_t p0,
                                                         const int mr)
{
    VF acc[MR][2];
    for (int p = 0; p < mr; p++) acc[p][0] = acc[p][1] = VZERO();
    for (int r = a->r0; r < a->r1; r++) {
        for (int s = a->s0; s < a->s1; s++) {
            const float *x = a->xb + (a->xo + p0 * a->xps + a->roff[r] + a->soff[s]);
            const float *w = a->w + ((int64_t)r * a->S + s) * a->kc * NR;
            for (int64_t k = 0; k < a->kc; k++, w += NR) {
                VF b0 = VLOAD(w), b1 = VLOAD(w + VL);
                for (int p = 0; p < mr; p++) {
                    VF t = VBCAST(x + p * a->xps + a->coff[k]);
                    acc[p][0] = VFMA(t, b0, acc[p][0]);
                    acc[p][1] = VFMA(t, b1, acc[p][1]);
                }
            }
        }
    }
    store_tile(a, p0, mr, acc);
}

/* One pixel (a row's tail, or a border pixel with its own window range): the reduction is
 * split over 4 accumulator pairs so it is not bound by the FMA latency. */
static void tile_1(const conv_row_args *a, int64_t p0)
{
    VF c0 = VZERO(), c1 = VZERO(), d0 = VZERO(), d1 = VZERO();
    VF e0 = VZERO(), e1 = VZERO(), f0 = VZERO(), f1 = VZERO();
    const int64_t kc = a->kc;
    const ptrdiff_t *coff = a->coff;
    for (int r = a->r0; r < a->r1; r++) {
        for (int s = a->s0; s < a->s1; s++) {
            const float *x = a->xb + (a->xo + p0 * a->xps + a->roff[r] + a->soff[s]);
            const float *w = a->w + ((int64_t)r * a->S + s) * kc * NR;
            int64_t k = 0;
            for (; k + 4 <= kc; k += 4, w += 4 * NR) {
                VF t0 = VBCAST(x + coff[k]), t1 = VBCAST(x + coff[k + 1]);
                VF t2 = VBCAST(x + coff[k + 2]), t3 = VBCAST(x + coff[k + 3]);
                c0 = VFMA(t0, VLOAD(w), c0), c1 = VFMA(t0, VLOAD(w + VL), c1);
                d0 = VFMA(t1, VLOAD(w + NR), d0), d1 = VFMA(t1, VLOAD(w + NR + VL), d1);
                e0 = VFMA(t2, VLOAD(w + 2 * NR), e0), e1 = VFMA(t2, VLOAD(w + 2 * NR + VL), e1);
                f0 = VFMA(t3, VLOAD(w + 3 * NR), f0), f1 = VFMA(t3, VLOAD(w + 3 * NR + VL), f1);
            }
            for (; k < kc; k++, w += NR) {
                VF t = VBCAST(x + coff[k]);
                c0 = VFMA(t, VLOAD(w), c0), c1 = VFMA(t, VLOAD(w + VL), c1);
            }
        }
    }
    VF acc[MR][2];
    acc[0][0] = VADD(VADD(c0, d0), VADD(e0, f0));
    acc[0][1] = VADD(VADD(c1, d1), VADD(e1, f1));
    store_tile(a, p0, 1, acc);
}

static void tile_part(const conv_row_args *a, int64_t p0, int mr)
{
    switch (mr) {
    case 1:
        if (a->one_chain) tile_n(a, p0, 1);
        else tile_1(a, p0);
        break;
    case 2: tile_n(a, p0, 2); break;
    case 3: tile_n(a, p0, 3); break;
    case 4: tile_n(a, p0, 4); break;
    default: tile_n(a, p0, 5); break;
    }
}

/* Pixels [0, mr) along a row, each with its own column taps [ps0[p], ps1[p]) (a row's border
 * pixels; a->s0, a->s1 span them all), for nb = 1 channel block (a) or 2 (a, then b, as in
 * tile_core): the tile runs every tap in [s0, s1), and a pixel reads zeros (a->zx) for the
 * taps outside its own, so it reads the weights once with its neighbours instead of alone.
 * Each pixel's valid terms go into one chain per accumulator in the order of tile_core and
 * tile_n (r, s, k); the zeros add +0 or -0 to a sum that starts at +0 and never becomes -0
 * (x + -x is +0), so they change no bit (with finite weights: an infinite one times a zero
 * is NaN, as on a padded copy): a pixel gets the same y here as in a vertical run of
 * tile_core, whichever way the rows were split between threads. */
static inline __attribute__((always_inline)) void tile_masked(const conv_row_args *a,
                                                              const conv_row_args *b,
                                                              const int mr, const int nb)
{
    VF c[MR][4];
#pragma GCC unroll 6
    for (int p = 0; p < mr; p++) c[p][0] = c[p][1] = c[p][2] = c[p][3] = VZERO();
    const ptrdiff_t wd = nb == 2 ? b->w - a->w : 0;
    for (int r = a->r0; r < a->r1; r++) {
        for (int s = a->s0; s < a->s1; s++) {
            const float *xp[MR];
#pragma GCC unroll 6
            for (int p = 0; p < mr; p++)
                xp[p] = s >= a->ps0[p] && s < a->ps1[p]
                            ? a->xb + (a->xo + p * a->xps + a->roff[r] + a->soff[s])
                            : a->zx;
            const float *w = a->w + ((int64_t)r * a->S + s) * a->kc * NR;
            for (int64_t k = 0; k < a->kc; k++, w += NR) {
                VF wv[4];
                wv[0] = VLOAD(w), wv[1] = VLOAD(w + VL);
                if (nb == 2) wv[2] = VLOAD(w + wd), wv[3] = VLOAD(w + wd + VL);
#pragma GCC unroll 6
                for (int p = 0; p < mr; p++) {
                    const VF t = VBCAST(xp[p] + k);
#pragma GCC unroll 4
                    for (int j = 0; j < 2 * nb; j++) c[p][j] = VFMA(t, wv[j], c[p][j]);
                }
            }
        }
    }
    VF ca[MR][2], cb[MR][2];
#pragma GCC unroll 6
    for (int p = 0; p < mr; p++)
        ca[p][0] = c[p][0], ca[p][1] = c[p][1], cb[p][0] = c[p][2], cb[p][1] = c[p][3];
    store_tile(a, 0, mr, ca);
    if (nb == 2) store_tile(b, 0, mr, cb);
}

/* tile_masked for a->npix pixels, one function per count (the accumulators in registers) */
static inline __attribute__((always_inline)) void row_masked_n(const conv_row_args *a,
                                                               const conv_row_args *b,
                                                               const int nb)
{
    switch (a->npix) {
    case 1: tile_masked(a, b, 1, nb); break;
    case 2: tile_masked(a, b, 2, nb); break;
    case 3: tile_masked(a, b, 3, nb); break;
    case 4: tile_masked(a, b, 4, nb); break;
    case 5: tile_masked(a, b, 5, nb); break;
    default: tile_masked(a, b, 6, nb); break;
    }
}

static void conv_row_masked(const conv_row_args *a) { row_masked_n(a, a, 1); }

#ifdef CONV_ROW_PAIR
/* conv_row_masked on blocks a and b at once (b: a's pixels, taps and geometry) */
static void conv_row_masked_pair(const conv_row_args *a, const conv_row_args *b)
{
    row_masked_n(a, b, 2);
}
#endif

#ifdef CONV_SMALL_REDUCTION
/* Rows whose reduction has at most SK_MAX steps (a c_in = 1 first layer: 3 x 3 taps = 9). A
 * tile's fixed cost (its setup, the loops over taps, zeroing, the epilogue) is then as large
 * as its FMAs, so the whole row runs with the weights in registers (2 vectors per step: 18 of
 * 32 zmm) and 4 pixels at a time (8 accumulators), each step one broadcast per pixel at the
 * step's precomputed input offset. */
#define SK_MAX 9
#define SK_P 4

/* np pixels from p0, step j at input offset off[j]. EDGE (a constant: no test is left in the
 * loops) for a group at a row's border, as row_edges runs them: bit 0, pixel 0 is the row's
 * first column and has no step with j % 3 == 0 (the column left of the input); bit 1, pixel
 * np - 1 is the last column and has no step with j % 3 == 2. Each pixel's other steps go into
 * its chains in the same order, so it sums as a border column's run of tile_n does. */
static inline __attribute__((always_inline)) void sk_pixels(const conv_row_args *a, int64_t p0,
                                                            const int np, const int T,
                                                            const ptrdiff_t *off,
                                                            const VF *w0, const VF *w1,
                                                            const int EDGE)
{
    VF acc[MR][2];
#pragma GCC unroll 4
    for (int q = 0; q < np; q++) acc[q][0] = acc[q][1] = VZERO();
    const float *x = a->xb + (a->xo + p0 * a->xps);
#pragma GCC unroll 9
    for (int j = 0; j < T; j++) {
        const float *xj = x + off[j];
#pragma GCC unroll 4
        for (int q = 0; q < np; q++) {
            if (((EDGE & 1) && q == 0 && j % 3 == 0) || ((EDGE & 2) && q == np - 1 && j % 3 == 2))
                continue;
            const VF t = VBCAST(xj + q * a->xps);
            acc[q][0] = VFMA(t, w0[j], acc[q][0]);
            acc[q][1] = VFMA(t, w1[j], acc[q][1]);
        }
    }
    store_tile(a, p0, np, acc);
}

/* The tail group of np (1-4) pixels at p, EDGE as in sk_pixels */
#define SK_TAIL(np, EDGE)                                                                          \
    do {                                                                                           \
        switch (np) {                                                                              \
        case 4: sk_pixels(a, p, 4, T, off, w0, w1, EDGE); break;                                   \
        case 3: sk_pixels(a, p, 3, T, off, w0, w1, EDGE); break;                                   \
        case 2: sk_pixels(a, p, 2, T, off, w0, w1, EDGE); break;                                   \
        case 1: sk_pixels(a, p, 1, T, off, w0, w1, EDGE); break;                                   \
        default: break;                                                                            \
        }                                                                                          \
    } while (0)

/* The row in groups of SK_P pixels. With EDGES (a constant), a->edge says which of the row's
 * ends are the image's border columns (row_edges): the first group (a->npix > SK_P) and the
 * last then leave out the steps of the columns outside the input. */
static inline __attribute__((always_inline)) void sk_row(const conv_row_args *a,
                                                         const ptrdiff_t *off,
                                                         const float *const *wp, const int T,
                                                         const int EDGES)
{
    VF w0[SK_MAX], w1[SK_MAX];
#pragma GCC unroll 9
    for (int j = 0; j < T; j++) w0[j] = VLOAD(wp[j]), w1[j] = VLOAD(wp[j] + VL);
    int64_t p = 0;
    const int edge = EDGES ? a->edge : 0;
    const int64_t last = (a->npix - 1) / SK_P * SK_P; /* the last group's first pixel */
    if (edge & 1) sk_pixels(a, 0, SK_P, T, off, w0, w1, 1), p = SK_P;
    for (; p < last; p += SK_P) sk_pixels(a, p, SK_P, T, off, w0, w1, 0);
    if (edge & 2) SK_TAIL(a->npix - p, 2);
    else SK_TAIL(a->npix - p, 0);
}
#undef SK_TAIL

/* The reduction's steps of a row, T of them if T <= SK_MAX (else T alone): each step's input
 * offset and weights, in the order (r, s, k). */
static int64_t sk_steps(const conv_row_args *a, ptrdiff_t *off, const float **wp)
{
    const int64_t T = (int64_t)(a->r1 - a->r0) * (a->s1 - a->s0) * a->kc;
    if (T > SK_MAX || T <= 0) return T;
    int j = 0;
    for (int r = a->r0; r < a->r1; r++)
        for (int s = a->s0; s < a->s1; s++)
            for (int64_t k = 0; k < a->kc; k++, j++) {
                off[j] = a->roff[r] + a->soff[s] + (a->cunit ? k : a->coff[k]);
                wp[j] = a->w + (((int64_t)r * a->S + s) * a->kc + k) * NR;
            }
    return T;
}

/* The row if its reduction has at most SK_MAX steps (returns 1), else 0. */
static int conv_row_small(const conv_row_args *a)
{
    ptrdiff_t off[SK_MAX];
    const float *wp[SK_MAX];
    switch (sk_steps(a, off, wp)) {
    case 1: sk_row(a, off, wp, 1, 0); break;
    case 2: sk_row(a, off, wp, 2, 0); break;
    case 3: sk_row(a, off, wp, 3, 0); break;
    case 4: sk_row(a, off, wp, 4, 0); break;
    case 5: sk_row(a, off, wp, 5, 0); break;
    case 6: sk_row(a, off, wp, 6, 0); break;
    case 7: sk_row(a, off, wp, 7, 0); break;
    case 8: sk_row(a, off, wp, 8, 0); break;
    case 9: sk_row(a, off, wp, 9, 0); break;
    default: return 0;
    }
    return 1;
}

static void conv_row(const conv_row_args *a);

/* A row with its border pixels (conv_kernels.row_edges): a 3-column window at stride 1 and
 * padding 1 on each side, c_in = 1 (step j's column tap is j % 3), whose first group (a->edge
 * bit 0) or last (bit 1) holds a border pixel. Against the interior's groups plus the border
 * columns' vertical runs, fmnist-conv1 ran as the padded copy's 28 groups a row do. */
static void conv_row_edges(const conv_row_args *a)
{
    ptrdiff_t off[SK_MAX];
    const float *wp[SK_MAX];
    switch (sk_steps(a, off, wp)) {
    case 3: sk_row(a, off, wp, 3, 1); break;
    case 6: sk_row(a, off, wp, 6, 1); break;
    case 9: sk_row(a, off, wp, 9, 1); break;
    default: conv_row(a); break; /* no window row inside the input: nothing is read */
    }
}
#endif

static void conv_row(const conv_row_args *a)
{
#ifdef CONV_SMALL_REDUCTION
    if (conv_row_small(a)) return;
#endif
    int64_t p = 0;
    if (a->cunit)
        for (; p + MR <= a->npix; p += MR) tile_full_unit(a, p);
    else
        for (; p + MR <= a->npix; p += MR) tile_full(a, p);
    if (p < a->npix) tile_part(a, p, (int)(a->npix - p));
}

#ifdef CONV_ROW_PAIR
static void row_pair_full(const conv_row_args *a, const conv_row_args *b)
{
    for (int64_t p = 0; p + MR <= a->npix; p += MR) tile_core(a, b, p, 0, 2);
}
static void row_pair_full_unit(const conv_row_args *a, const conv_row_args *b)
{
    for (int64_t p = 0; p + MR <= a->npix; p += MR) tile_core(a, b, p, 1, 2);
}

/* conv_row on blocks a and b at once (the last mr < MR pixels one block at a time) */
static void conv_row_pair(const conv_row_args *a, const conv_row_args *b)
{
#ifdef CONV_SMALL_REDUCTION
    if (conv_row_small(a)) {
        conv_row_small(b);
        return;
    }
#endif
    if (a->cunit) row_pair_full_unit(a, b);
    else row_pair_full(a, b);
    int64_t p = a->npix / MR * MR;
    if (p < a->npix) {
        tile_part(a, p, (int)(a->npix - p));
        tile_part(b, p, (int)(a->npix - p));
    }
}
#endif

/* ---- weight gradient tile ----------------------------------------------------------------- */

/* mr input channels (broadcasts from x) x NR output channels (2 vectors of dy) per pixel, the
 * pixels as the reduction; one function per mr, the accumulators named (not an array) so they
 * stay in registers (the `mr > i` tests fold away). */
#define DWT_FMA(i, c0, c1)                                                                        \
    if (mr > i) {                                                                                 \
        VF t = VBCAST(x + i);                                                                     \
        c0 = VFMA(t, b0, c0), c1 = VFMA(t, b1, c1);                                               \
    }
#define DWT_STORE(i, c0, c1)                                                                      \
    if (mr > i) {                                                                                 \
        float *o = a->out + i * NR;                                                               \
        VSTORE(o, VADD(VLOAD(o), c0));                                                            \
        VSTORE(o + VL, VADD(VLOAD(o + VL), c1));                                                  \
    }
static inline __attribute__((always_inline)) void dwt_tile(const conv_dwt_args *a, const int mr)
{
    VF c00 = VZERO(), c01 = VZERO(), c10 = VZERO(), c11 = VZERO(), c20 = VZERO(), c21 = VZERO();
    VF c30 = VZERO(), c31 = VZERO(), c40 = VZERO(), c41 = VZERO(), c50 = VZERO(), c51 = VZERO();
    const ptrdiff_t xps = a->xps, yps = a->yps;
    const int64_t ncol = a->ncol;
    for (int64_t q = 0; q < a->nrow; q++) {
        const float *x = a->x + q * a->xrs, *y = a->dy + q * a->yrs;
        for (int64_t k = 0; k < ncol; k++, x += xps, y += yps) {
            VF b0 = VLOAD(y), b1 = VLOAD(y + VL);
            DWT_FMA(0, c00, c01)
            DWT_FMA(1, c10, c11)
            DWT_FMA(2, c20, c21)
            DWT_FMA(3, c30, c31)
            DWT_FMA(4, c40, c41)
            DWT_FMA(5, c50, c51)
        }
    }
    DWT_STORE(0, c00, c01)
    DWT_STORE(1, c10, c11)
    DWT_STORE(2, c20, c21)
    DWT_STORE(3, c30, c31)
    DWT_STORE(4, c40, c41)
    DWT_STORE(5, c50, c51)
}
#undef DWT_FMA
#undef DWT_STORE

static void conv_dwt(const conv_dwt_args *a)
{
    switch (a->mr) {
    case 6: dwt_tile(a, 6); break;
    case 5: dwt_tile(a, 5); break;
    case 4: dwt_tile(a, 4); break;
    case 3: dwt_tile(a, 3); break;
    case 2: dwt_tile(a, 2); break;
    default: dwt_tile(a, 1); break;
    }
}

/* T taps x NR output channels per pixel (conv_dwtaps_args), the accumulators an array indexed
 * by constants only (T is a compile-time constant in each instance), so they stay in
 * registers: 12 taps with AVX-512 (24 accumulators, 2 for db, 2 dy vectors, a broadcast), 5
 * with 16 registers. */
#ifdef CONV_ROW_PAIR
#define DWTAPS_MAX 12
#else
#define DWTAPS_MAX 5
#endif
static inline __attribute__((always_inline)) void dwtaps_tile(const conv_dwtaps_args *a,
                                                              const int T, const int with_db)
{
    VF c[DWTAPS_MAX][2], d0 = VZERO(), d1 = VZERO();
    ptrdiff_t toff[DWTAPS_MAX];
#pragma GCC unroll 12
    for (int t = 0; t < T; t++) c[t][0] = c[t][1] = VZERO(), toff[t] = a->toff[t];
    const ptrdiff_t xps = a->xps, yps = a->yps;
    for (int64_t q = 0; q < a->nrow; q++) {
        const float *x = a->x + q * a->xrs, *y = a->dy + q * a->yrs;
        for (int64_t k = 0; k < a->ncol; k++, x += xps, y += yps) {
            const VF b0 = VLOAD(y), b1 = VLOAD(y + VL);
            if (with_db) d0 = VADD(d0, b0), d1 = VADD(d1, b1);
#pragma GCC unroll 12
            for (int t = 0; t < T; t++) {
                const VF v = VBCAST(x + toff[t]);
                c[t][0] = VFMA(v, b0, c[t][0]), c[t][1] = VFMA(v, b1, c[t][1]);
            }
        }
    }
#pragma GCC unroll 12
    for (int t = 0; t < T; t++) {
        float *o = a->out + t * NR;
        VSTORE(o, VADD(VLOAD(o), c[t][0]));
        VSTORE(o + VL, VADD(VLOAD(o + VL), c[t][1]));
    }
    if (with_db) {
        VSTORE(a->db, VADD(VLOAD(a->db), d0));
        VSTORE(a->db + VL, VADD(VLOAD(a->db + VL), d1));
    }
}

#define DWTAPS_CASE(T)                                                                            \
    case T:                                                                                       \
        if (a->db) dwtaps_tile(a, T, 1);                                                          \
        else dwtaps_tile(a, T, 0);                                                                \
        break;
static void conv_dwtaps(const conv_dwtaps_args *a)
{
    switch (a->T) {
        DWTAPS_CASE(1)
        DWTAPS_CASE(2)
        DWTAPS_CASE(3)
        DWTAPS_CASE(4)
        DWTAPS_CASE(5)
#if DWTAPS_MAX > 5
        DWTAPS_CASE(6)
        DWTAPS_CASE(7)
        DWTAPS_CASE(8)
        DWTAPS_CASE(9)
        DWTAPS_CASE(10)
        DWTAPS_CASE(11)
        DWTAPS_CASE(12)
#endif
    default: break;
    }
}
#undef DWTAPS_CASE

/* ---- depthwise ---------------------------------------------------------------------------- */

/* Any window: channel vectors from c_begin on, then the channels past the last full vector. */
static void dw_row_generic(const conv_dw_args *a, int64_t c_begin)
{
    const int64_t cfull = a->c / VL * VL;
    for (int64_t p0 = 0; p0 < a->npix; p0 += 4) {
        int np = a->npix - p0 < 4 ? (int)(a->npix - p0) : 4;
        ptrdiff_t xo = a->xo + p0 * a->xps, yo = a->yo + p0 * a->yps;
        for (int64_t c = c_begin; c < cfull; c += VL) {
            VF acc[4] = {VZERO(), VZERO(), VZERO(), VZERO()};
            for (int r = a->r0; r < a->r1; r++) {
                for (int s = a->s0; s < a->s1; s++) {
                    VF wv = VLOAD(a->w + ((int64_t)r * a->S + s) * a->cp + c);
                    const float *x = a->xb + (xo + a->roff[r] + a->soff[s] + a->xco[c]);
                    for (int p = 0; p < np; p++) acc[p] = VFMA(VLOAD(x + p * a->xps), wv, acc[p]);
                }
            }
            VF b = VLOAD(a->bias + c);
            for (int p = 0; p < np; p++) {
                ptrdiff_t o = yo + p * a->yps + a->yco[c];
                VF v = VADD(acc[p], b);
                if (a->res) v = VADD(v, VLOAD(a->res + o));
                VSTORE(a->y + o, act_apply(v, a->act));
            }
        }
        for (int64_t c = cfull; c < a->c; c++) { /* channels past the last full vector */
            for (int p = 0; p < np; p++) {
                float acc = 0.0f;
                for (int r = a->r0; r < a->r1; r++)
                    for (int s = a->s0; s < a->s1; s++)
                        acc += a->w[((int64_t)r * a->S + s) * a->cp + c] *
                               a->xb[xo + p * a->xps + a->roff[r] + a->soff[s] + a->xco[c]];
                ptrdiff_t o = yo + p * a->yps + a->yco[c];
                float v = acc + a->bias[c];
                if (a->res) v += a->res[o];
                a->y[o] = act_scalar(v, a->act);
            }
        }
    }
}

/* The full-width 3x3 window (every column tap inside the input, the rows [r0, r1) that are),
 * stride 1 or 2, no dilation: the common MobileNet case. Register blocking as in the GEMM
 * micro-kernel: DW_P = 14 output pixels x one vector of channels in 14 accumulators, 14
 * independent FMA chains (the previous 4-pixel block had 4 and ran latency-bound). The window
 * rows are the outer loop, so only that row's 3 weight vectors are live besides the
 * accumulators; per row, the (DW_P - 1) st + 3 input column vectors feed every (pixel, tap)
 * they belong to, the column pointer advanced by one add per column (gcc turns most inputs
 * into memory operands of the FMAs). 14 measured 4-9% faster than 12 (NHWC C=32 112x112)
 * and 1.65x on NCHW16c, although AVX2 then spills a few registers; 16 was slower. The rows
 * loop at run time, so the top and bottom border rows (r0 > 0, r1 < 3) take this path too.
 * The epilogue (activation, residual) is a compile-time parameter, one instance each, so
 * the stores are straight-line code (a run-time-branching store loop measured as costly as
 * the FMAs). The channel vectors of a block sweep an input strip of 3 rows x (DW_P st + 2)
 * pixels x c, which stays in L1. */
#define DW_P 14
#define DW_S_MAX 7 /* the widest window of the blocked path (dw_row_wide) */

/* The depthwise blocks are inlined into each (stride, activation, residual) variant of the row
 * so that those are constants in the unrolled loops. The portable file (a loop per "vector")
 * makes them ordinary functions: inlined there, gcc took over 10 minutes on that one file
 * under the sanitizers (2.5 before the bordered blocks). */
#ifndef CONV_DW_INLINE
#define CONV_DW_INLINE static inline __attribute__((always_inline))
#endif

/* ---- depthwise weight gradient -------------------------------------------------------------- */

/* One window row's taps over one output row (conv_dwg_args): a0 / a1 hold each tap's sums of
 * the even / odd output columns. Columns whose taps all lie inside the input, [jlo, jhi), go
 * in pairs, each pair 2 dy loads and 2 x loads per tap; the others one by one, over their
 * valid taps, in column order. */
CONV_DW_INLINE void dwg_row(const conv_dwg_args *a, const float *xr, const float *yr,
                            VF *acc, const int S, int64_t jlo, int64_t jhi)
{
    VF a0[DWG_S_MAX], a1[DWG_S_MAX];
#pragma GCC unroll 8
    for (int s = 0; s < S; s++) a0[s] = acc[s], a1[s] = acc[S + s];
    const ptrdiff_t xs = a->sw * a->xsw, ts = a->dw * a->xsw;
    const float *x0 = xr - a->pl * a->xsw;
    int64_t j = 0;
#define DWG_ONE(J)                                                                                \
    do {                                                                                          \
        const VF d = VLOAD(yr + (J) * a->ysw);                                                    \
        const float *xj = x0 + (J) * xs;                                                          \
        _Pragma("GCC unroll 8") for (int s = 0; s < S; s++) {                                     \
            if ((J) < a->ow0[s] || (J) >= a->ow1[s]) continue;                                    \
            if ((J) & 1) a1[s] = VFMA(d, VLOAD(xj + s * ts), a1[s]);                              \
            else a0[s] = VFMA(d, VLOAD(xj + s * ts), a0[s]);                                      \
        }                                                                                         \
    } while (0)
    for (; j < jlo; j++) DWG_ONE(j);
    if (j & 1 && j < jhi) { /* the pairs start at an even column */
        DWG_ONE(j);
        j++;
    }
    for (; j + 2 <= jhi; j += 2) {
        const VF d0 = VLOAD(yr + j * a->ysw), d1 = VLOAD(yr + (j + 1) * a->ysw);
        const float *xj = x0 + j * xs;
#pragma GCC unroll 8
        for (int s = 0; s < S; s++) {
            a0[s] = VFMA(d0, VLOAD(xj + s * ts), a0[s]);
            a1[s] = VFMA(d1, VLOAD(xj + xs + s * ts), a1[s]);
        }
    }
    for (; j < a->ow; j++) DWG_ONE(j);
#undef DWG_ONE
#pragma GCC unroll 8
    for (int s = 0; s < S; s++) acc[s] = a0[s], acc[S + s] = a1[s];
}

CONV_DW_INLINE void dwg_s(const conv_dwg_args *a, const int S)
{
    VF acc[DWG_S_MAX * DWG_S_MAX * 2]; /* [r][even, odd][s] */
    for (int t = 0; t < a->R * 2 * S; t++) acc[t] = VZERO();
    int64_t jlo = 0, jhi = a->ow;
    for (int s = 0; s < S; s++) jlo = RIDGE_MAX(jlo, a->ow0[s]), jhi = RIDGE_MIN(jhi, a->ow1[s]);
    jhi = RIDGE_MAX(jhi, jlo);
    VF db = VZERO();
    for (int64_t n = 0; n < a->n; n++)
        for (int64_t i = 0; i < a->oh; i++) {
            const float *yr = a->dy + n * a->ysn + i * a->ysh;
            if (a->db) {
                VF e = VZERO(), o = VZERO();
                int64_t j = 0;
                for (; j + 2 <= a->ow; j += 2)
                    e = VADD(e, VLOAD(yr + j * a->ysw)), o = VADD(o, VLOAD(yr + (j + 1) * a->ysw));
                if (j < a->ow) e = VADD(e, VLOAD(yr + j * a->ysw));
                db = VADD(db, VADD(e, o));
            }
            for (int r = 0; r < a->R; r++) {
                const int64_t ih = i * a->sh - a->pt + (int64_t)r * a->dh;
                if (ih < 0 || ih >= a->h) continue;
                dwg_row(a, a->x + n * a->xsn + ih * a->xsh, yr, acc + r * 2 * S, S, jlo, jhi);
            }
        }
    for (int r = 0; r < a->R; r++)
        for (int s = 0; s < S; s++)
            VSTORE(a->out + (r * S + s) * VL, VADD(acc[r * 2 * S + s], acc[r * 2 * S + S + s]));
    if (a->db) VSTORE(a->db, db);
}

static void conv_dwgrad(const conv_dwg_args *a)
{
    switch (a->S) {
    case 1: dwg_s(a, 1); break;
    case 2: dwg_s(a, 2); break;
    case 3: dwg_s(a, 3); break;
    case 4: dwg_s(a, 4); break;
    case 5: dwg_s(a, 5); break;
    case 6: dwg_s(a, 6); break;
    default: dwg_s(a, 7); break;
    }
}

/* P pixels (stride st) x one channel vector at pixel p, a window S columns wide (dw_row_wide:
 * 4 to 7): the window rows [r0, r1) outer, each row's S weight vectors in registers, and each
 * of the row's (P - 1) st + S input column vectors loaded once into every (pixel, tap) it
 * belongs to. The first skip_l and last skip_r of those columns are not read: the padding
 * beside the input (border pixels), so each pixel sums exactly its valid taps, in the order
 * of its whole window. The 3x3 window keeps its own copy below, dw_3x3_block_e (which also
 * stores to the streamed path's tile): this loop with S = 3 gave the same bits, but ran 4-7%
 * slower on the streamed path (depthwise C = 32 112 x 112, batch 8, 2 threads,
 * scripts/conv-ab.c, both orders). */
CONV_DW_INLINE void dw_block(const conv_dw_args *a, int64_t row, int64_t p, int64_t c,
                             const int P, const int st, const int S, const int has_res,
                             const int skip_l, const int skip_r)
{
    const ptrdiff_t ds = a->soff[1] - a->soff[0], cp = a->cp, yps = a->yps;
    const float *x = a->xb + (a->xo + row * a->xrs + p * a->xps + a->xco[c] + a->soff[0]);
    VF acc[DW_P];
    {
        const VF b = VLOAD(a->bias + c);
#pragma GCC unroll 16
        for (int i = 0; i < P; i++) acc[i] = b;
    }
    for (int r = a->r0; r < a->r1; r++) {
        const float *xj = x + a->roff[r], *w = a->w + (ptrdiff_t)r * S * cp + c;
        VF wv[DW_S_MAX];
#pragma GCC unroll 8
        for (int s = 0; s < DW_S_MAX; s++) wv[s] = s < S ? VLOAD(w + s * cp) : VZERO();
        /* input column j is tap s of pixel (j - s) / st */
#pragma GCC unroll 64
        for (int j = 0; j < (P - 1) * st + S; j++, xj += ds) {
            if (j < skip_l || j >= (P - 1) * st + S - skip_r) continue;
            VF v = VLOAD(xj);
            VPIN(v);
#pragma GCC unroll 8
            for (int s = 0; s < S; s++)
                if (j >= s && (j - s) % st == 0 && (j - s) / st < P)
                    acc[(j - s) / st] = VFMA(v, wv[s], acc[(j - s) / st]);
        }
    }
    const ptrdiff_t yo = a->yo + row * a->yrs + p * yps + a->yco[c];
#pragma GCC unroll 16
    for (int i = 0; i < P; i++) {
        VF v = acc[i];
        if (has_res) v = VADD(v, VLOAD(a->res + yo + i * yps));
        VSTORE(a->y + yo + i * yps, act_apply(v, a->act));
    }
}

CONV_DW_INLINE void dw_3x3_block_e(const conv_dw_args *a, int64_t row,
                                                                 int64_t p, int64_t c,
                                                                 const int P, const int st,
                                                                 const int act, const int has_res,
                                                                 const int skip_l, const int skip_r,
                                                                 float *yt, ptrdiff_t yts)
{
    const ptrdiff_t ds = a->soff[1] - a->soff[0], cp = a->cp, yps = a->yps;
    const float *x = a->xb + (a->xo + row * a->xrs + p * a->xps + a->xco[c] + a->soff[0]);
    VF acc[DW_P];
    {
        const VF b = VLOAD(a->bias + c);
#pragma GCC unroll 16
        for (int i = 0; i < P; i++) acc[i] = b;
    }
    for (int r = a->r0; r < a->r1; r++) {
        const float *xj = x + a->roff[r], *w = a->w + (ptrdiff_t)r * 3 * cp + c;
        const VF w0 = VLOAD(w), w1 = VLOAD(w + cp), w2 = VLOAD(w + 2 * cp);
        /* input column j is tap s of pixel (j - s) / st */
#pragma GCC unroll 32
        for (int j = 0; j < (P - 1) * st + 3; j++, xj += ds) {
            /* the row's border columns (left of pixel 0, right of pixel P-1): not read */
            if ((skip_l && j == 0) || (skip_r && j == (P - 1) * st + 2)) continue;
            VF v = VLOAD(xj);
            VPIN(v);
            if (j % st == 0 && j / st < P) acc[j / st] = VFMA(v, w0, acc[j / st]);
            if (j >= 1 && (j - 1) % st == 0 && (j - 1) / st < P)
                acc[(j - 1) / st] = VFMA(v, w1, acc[(j - 1) / st]);
            if (j >= 2 && (j - 2) % st == 0 && (j - 2) / st < P)
                acc[(j - 2) / st] = VFMA(v, w2, acc[(j - 2) / st]);
        }
    }
    const ptrdiff_t yo = a->yo + row * a->yrs + p * yps + a->yco[c];
    const float *res = has_res ? a->res + yo : NULL;
    float *y = yt ? yt : a->y + yo;
    const ptrdiff_t ys = yt ? yts : yps;
#pragma GCC unroll 16
    for (int i = 0; i < P; i++) {
        VF v = acc[i];
        if (has_res) v = VADD(v, VLOAD(res + i * yps));
        VSTORE(y + i * ys, act_apply(v, act));
    }
}

CONV_DW_INLINE void dw_3x3_block(const conv_dw_args *a,
                                                               int64_t p, int64_t c,
                                                               const int P, const int st,
                                                               const int act, const int has_res)
{
    dw_3x3_block_e(a, 0, p, c, P, st, act, has_res, 0, 0, NULL, 0);
}

/* The streamed and prefetched paths' input prefetch: the lines of the input columns [j0, j1),
 * counted from pixel p's first window column, in the pf_rows rows per output row that the
 * next call's windows add below this call's last row (3x3: one row a call, and the P st
 * columns of the block's pixels). */
CONV_DW_INLINE void dw_prefetch(const conv_dw_args *a, int64_t p, int64_t j0, int64_t j1,
                                int64_t cfull)
{
    const ptrdiff_t ds = a->soff[1] - a->soff[0];
    const ptrdiff_t x0 = a->xo + a->pf_off + (a->nrows - 1) * a->xrs + p * a->xps;
    for (int t = 0; t < a->pf_rows * a->nrows; t++) {
        const float *x = a->xb + (x0 + t * a->pf_rs);
        for (int64_t j = j0; j < j1; j++)
            for (int64_t c = 0; c < cfull; c += 16) __builtin_prefetch(x + j * ds + a->xco[c]);
    }
}

/* Channels per tile of the streamed blocks: DW_P x DW_CT floats (7 KiB) on the stack. */
#define DW_CT 128

/* Every channel vector of the DW_P-pixel block at p (skip_l / skip_r: the row's border column
 * is not read). Cached (nt = 0), each channel vector runs down the call's rows, so of the 3
 * input rows a block reads, the 2 it shares with the row below are still in L1 (row after
 * row, all 3 come again from L2 once the rows outgrow L1). The prefetched path (nt 2) runs
 * the rows the same way, after prefetching the block's columns of the rows the next call
 * adds: against one row per call, on 12.8 MB at batch 8 (Zen 5, session 42), 1.17-1.23x
 * called again and again, 1.02-1.21x in a chain of layers (scripts/conv-chain.c), 0.84-0.97x
 * when oneDNN and a copy run between the calls (scripts/conv-ab.c). The streamed path takes
 * one row per call: its data come from DRAM, where walking the rows (and the prefetch one
 * row ahead) ran faster than R + 2 streams at once (batch 8: 0.76-0.91x). With
 * a->nt, DW_CT channels at a time go to a tile in L1 and then out to y as
 * whole lines of non-temporal stores: y's lines are then written without first being read
 * (the read-for-ownership that doubles a plain store's traffic once y is past the cache), and
 * the stores do not stall on misses. */
CONV_DW_INLINE void dw_3x3_blocks(const conv_dw_args *a, int64_t p, int64_t cfull,
                                  const int st, const int act, const int has_res,
                                  const int skip_l, const int skip_r, const int nt)
{
    if (nt != 1 && a->nrows > 1) {
        if (nt == 2) dw_prefetch(a, p, 0, DW_P * st, cfull);
        for (int64_t c = 0; c < cfull; c += VL)
            for (int row = 0; row < a->nrows; row++)
                dw_3x3_block_e(a, row, p, c, DW_P, st, act, has_res, skip_l, skip_r, NULL, 0);
        return;
    }
    if (nt != 1) { /* one row (the loop above cost the single row 8-11%); 2: cached, the
                    * input prefetched as the streamed path does */
        if (nt == 2) dw_prefetch(a, p, 0, DW_P * st, cfull);
        for (int64_t c = 0; c < cfull; c += VL)
            dw_3x3_block_e(a, 0, p, c, DW_P, st, act, has_res, skip_l, skip_r, NULL, 0);
        return;
    }
    dw_prefetch(a, p, 0, DW_P * st, cfull);
    float tile[DW_P * DW_CT];
    for (int64_t c0 = 0; c0 < cfull; c0 += DW_CT) {
        const int64_t ct = cfull - c0 < DW_CT ? cfull - c0 : DW_CT;
        for (int64_t c = 0; c < ct; c += VL)
            dw_3x3_block_e(a, 0, p, c0 + c, DW_P, st, act, has_res, skip_l, skip_r, tile + c, ct);
        for (int i = 0; i < DW_P; i++) {
            float *y = a->y + (a->yo + (p + i) * a->yps);
            for (int64_t c = 0; c < ct; c += 16)
                for (int v = 0; v < 16; v += VL)
                    VSTREAM(y + a->yco[c0 + c] + v, VLOAD(tile + i * ct + c + v));
        }
    }
}

/* Stride 2 where a pixel's channels are 512 bytes or more apart (a->cwide): blocks of DW_WP
 * pixels x DW_WV channel vectors, the 28 accumulators in registers. A block reads 256
 * contiguous bytes of each of its 15 input pixels, where the 14-pixel blocks read one line of
 * each of 29 pixels, 1 KiB apart at C = 256; at stride 1 the 14-pixel blocks stay (their
 * inputs feed 3 accumulators, here 1-2), and there the wide blocks ran 0.72-0.88x. Against
 * them, 1 thread (session 47, scripts/dw-ab.c, NHWC batch 1, 3 processes each): C 256 28 -> 14
 * 1.23-1.38x, C 256 56 -> 28 1.20-1.22x, C 512 28 -> 14 1.52-1.58x, C 1024 28 -> 14
 * 1.78-1.85x, C 128 56 -> 28 1.04-1.19x; 2 threads 1.06-1.20x; batch 8 1.21-1.25x. Not at C
 * 64 (0.97-0.99x). Where the ring holds the input (dw_ring), not through it: by columns, C 512
 * and C 1024 14 -> 7 ran 0.88-0.90x the ring, so since by_tap the ring leaves them the rows
 * it can (dw_s2_by_tap) and keeps C a multiple of 1024.
 *
 * by_tap: one tap at a time over the block's 7 pixels, its 4 weight vectors in registers, each
 * input vector loaded once per tap (oneDNN's brdgmm_dw order), instead of each input column
 * loaded once with the window row's 12 weight vectors in registers (by_tap 0). By tap ran
 * 1.00-1.11x as fast at batch 1 (session 48, scripts/dw-ab.c), and far faster where the input
 * came from L3 or memory: at batch 8, C 256 28 -> 14, with oneDNN and a copy between the calls
 * (scripts/conv-ab.c, 1 thread), 0.23 ms against 0.41 by columns and oneDNN's 0.21. Pixels 4
 * KiB apart (C a multiple of 1024) keep the columns: there a tap's 7 loads fall in one L1 set,
 * and by tap ran 0.76-0.89x. */
#define DW_WP 7
#define DW_WV 4
CONV_DW_INLINE void dw_3x3_block_cwide(const conv_dw_args *a, int64_t p, int64_t c,
                                       const int act, const int has_res, const int skip_l,
                                       const int skip_r, const int by_tap)
{
    enum { ST = 2, J = (DW_WP - 1) * ST + 3 };
    const ptrdiff_t ds = a->soff[1] - a->soff[0], cp = a->cp, yps = a->yps;
    const float *x = a->xb + (a->xo + p * a->xps + a->xco[c] + a->soff[0]);
    VF acc[DW_WV][DW_WP];
#pragma GCC unroll 4
    for (int v = 0; v < DW_WV; v++) {
        const VF b = VLOAD(a->bias + c + v * VL);
#pragma GCC unroll 8
        for (int i = 0; i < DW_WP; i++) acc[v][i] = b;
    }
    for (int r = a->r0; r < a->r1; r++) {
        const float *w = a->w + (ptrdiff_t)r * 3 * cp + c;
        if (by_tap) /* tap s of pixel i is input column 2 i + s */
#pragma GCC unroll 3
            for (int s = 0; s < 3; s++) {
                VF wv[DW_WV];
#pragma GCC unroll 4
                for (int v = 0; v < DW_WV; v++) wv[v] = VLOAD(w + s * cp + v * VL);
                const float *xi = x + a->roff[r] + s * ds;
#pragma GCC unroll 8
                for (int i = 0; i < DW_WP; i++, xi += ST * ds) {
                    if ((skip_l && i == 0 && s == 0) || (skip_r && i == DW_WP - 1 && s == 2))
                        continue;
#pragma GCC unroll 4
                    for (int v = 0; v < DW_WV; v++)
                        acc[v][i] = VFMA(VLOAD(xi + v * VL), wv[v], acc[v][i]);
                }
            }
        else { /* input column j, loaded once, is tap s of pixel (j - s) / 2 */
            VF wv[DW_WV][3];
#pragma GCC unroll 4
            for (int v = 0; v < DW_WV; v++)
#pragma GCC unroll 3
                for (int s = 0; s < 3; s++) wv[v][s] = VLOAD(w + s * cp + v * VL);
            const float *xj = x + a->roff[r];
#pragma GCC unroll 16
            for (int j = 0; j < J; j++, xj += ds) {
                if ((skip_l && j == 0) || (skip_r && j == J - 1)) continue;
#pragma GCC unroll 4
                for (int v = 0; v < DW_WV; v++) {
                    VF xv = VLOAD(xj + v * VL);
                    VPIN(xv);
#pragma GCC unroll 3
                    for (int s = 0; s < 3; s++)
                        if (j >= s && (j - s) % ST == 0 && (j - s) / ST < DW_WP)
                            acc[v][(j - s) / ST] = VFMA(xv, wv[v][s], acc[v][(j - s) / ST]);
                }
            }
        }
    }
    const ptrdiff_t yo = a->yo + p * yps + a->yco[c];
#pragma GCC unroll 4
    for (int v = 0; v < DW_WV; v++)
#pragma GCC unroll 8
        for (int i = 0; i < DW_WP; i++) {
            VF o = acc[v][i];
            if (has_res) o = VADD(o, VLOAD(a->res + yo + i * yps + v * VL));
            VSTORE(a->y + yo + i * yps + v * VL, act_apply(o, act));
        }
}

/* dw_3x3_block_cwide with its border flags as constants */
CONV_DW_INLINE void dw_3x3_block_cwide_lr(const conv_dw_args *a, int64_t p, int64_t c,
                                          const int act, const int has_res, int l, int r,
                                          const int by_tap)
{
    if (l && r) dw_3x3_block_cwide(a, p, c, act, has_res, 1, 1, by_tap);
    else if (l) dw_3x3_block_cwide(a, p, c, act, has_res, 1, 0, by_tap);
    else if (r) dw_3x3_block_cwide(a, p, c, act, has_res, 0, 1, by_tap);
    else dw_3x3_block_cwide(a, p, c, act, has_res, 0, 0, by_tap);
}

/* The row in a->cwide's blocks, pixel blocks outermost (channel blocks outermost ran
 * 0.81-0.95x in a standalone loop of the same blocks, session 48); a row whose width is not a
 * multiple of DW_WP ends with a block overlapping the one before (not over a residual that is
 * y). a->cwide 2 (the prefetched mode, x + y past a quarter of the L3): after each pixel
 * block, its share of the input rows the next output row adds is prefetched, those rows split
 * evenly over the blocks (batch 8 and 16, oneDNN between the calls: 1.16-1.21x; called again
 * and again on the same input 0.81-0.88x). Returns 0, having done nothing, where the row does
 * not qualify. */
CONV_DW_INLINE int dw_row_3x3_cwide(const conv_dw_args *a, int64_t cfull, const int act,
                                    const int has_res)
{
    const int64_t n = a->npix;
    if (VL != 16 || !a->cwide || a->nrows != 1 || n < DW_WP || cfull % (DW_WV * VL) ||
        (n % DW_WP && has_res && a->res == a->y))
        return 0;
    const ptrdiff_t ds = a->soff[1] - a->soff[0];
    const int by_tap = ds % 1024 != 0;
    for (int64_t p0 = 0; p0 < n; p0 += DW_WP) {
        const int64_t p = p0 + DW_WP <= n ? p0 : n - DW_WP;
        const int l = p == 0 && a->edge_l, r = p + DW_WP == n && a->edge_r;
        for (int64_t c = 0; c < cfull; c += DW_WV * VL) {
            if (by_tap) dw_3x3_block_cwide_lr(a, p, c, act, has_res, l, r, 1);
            else dw_3x3_block_cwide_lr(a, p, c, act, has_res, l, r, 0);
        }
        if (a->cwide == 2) { /* this block's part of the rows the next output row adds */
            const char *x = (const char *)(a->xb + (a->xo + a->pf_off + a->padl * ds));
            const ptrdiff_t len = a->pf_rows * a->pf_rs * (ptrdiff_t)sizeof(float);
            const int64_t k = p0 / DW_WP, nb = (n + DW_WP - 1) / DW_WP;
            for (ptrdiff_t b = len * k / nb / 64 * 64; b < len * (k + 1) / nb; b += 64)
                __builtin_prefetch(x + b);
        }
    }
    return 1;
}

static void dw_3x3_edge(const conv_dw_args *a, int64_t cfull);

/* The pixels [p0, p1) of the row without its border flags (the blocks below, for rows too
 * short for the bordered blocks). */
CONV_DW_INLINE void dw_row_3x3_mid(const conv_dw_args *a,
                                                                 int64_t cfull, int64_t p0,
                                                                 int64_t p1, const int st,
                                                                 const int act,
                                                                 const int has_res, const int nt)
{
    int64_t p = p0;
    for (; p + DW_P <= p1; p += DW_P) dw_3x3_blocks(a, p, cfull, st, act, has_res, 0, 0, nt);
    /* The last 1..DW_P-1 pixels as one more full block ending at p1, overlapping the
     * previous one: the overlapped pixels are recomputed to the same values, which beats 4-
     * and 1-pixel blocks (4 and 1 FMA chains). Not when the residual is y itself: the
     * overlapped pixels would add it twice. */
    if (p < p1 && p1 - p0 >= DW_P && !(has_res && a->res == a->y)) {
        dw_3x3_blocks(a, p1 - DW_P, cfull, st, act, has_res, 0, 0, nt);
        return;
    }
    for (; p + 4 <= p1; p += 4)
        for (int64_t c = 0; c < cfull; c += VL) dw_3x3_block(a, p, c, 4, st, act, has_res);
    for (; p < p1; p++)
        for (int64_t c = 0; c < cfull; c += VL) dw_3x3_block(a, p, c, 1, st, act, has_res);
}

/* A whole row, its border pixels (edge_l, edge_r) included: the first block skips the column
 * left of pixel 0 and the last block the column right of the row's last pixel, so the border
 * pixels run in the 14-accumulator blocks too instead of one dependent FMA chain per channel
 * vector (dw_3x3_edge; at C=64 56x56 the two border pixels were 3.6% of the outputs). Rows
 * shorter than DW_P + 1, or whose residual is y itself (no overlapping blocks), peel the
 * border pixels off to dw_3x3_edge. */
CONV_DW_INLINE void dw_row_3x3_ep(const conv_dw_args *a,
                                                                int64_t cfull, const int st,
                                                                const int act, const int has_res,
                                                                const int nt)
{
    const int64_t n = a->npix;
    if (st == 2 && nt != 1 && dw_row_3x3_cwide(a, cfull, act, has_res)) return;
    if (!a->edge_l && !a->edge_r) {
        dw_row_3x3_mid(a, cfull, 0, n, st, act, has_res, nt);
        return;
    }
    /* Rows of DW_P or DW_P / 2 pixels with one or both border pixels, y through the cache:
     * one block of the row's pixels; rows between with both (pad 1): two blocks of DW_P / 2
     * that overlap (so not over a residual that is y). The border pixels run inside the
     * blocks; they ran on one FMA chain each before, the rest in 4- and 1-pixel blocks.
     * MobileNet's 3x3 layers on 14 x 14 and 7 x 7, 1 thread (scripts/conv-ab.c, session
     * 44): C 32-256 on 14 x 14 1.57-2.13x, C 512 1.26x; C 512 on 7 x 7 1.76x, C 1024 1.52x;
     * stride 2, C 256 28 -> 14 1.10x, C 512 14 -> 7 1.19x. Rows of 2 to 6 pixels, one block
     * too (session 50, same script): C 256 and 512 on 4 x 4 2.07x and 2.29x, C 256 5 x 5
     * 2.39x, C 128 6 x 6 1.92x; stride 2, C 256 and 512 8 -> 4 1.73x and 1.60x, C 1024 7 -> 4
     * 1.67x. */
    const int H = DW_P / 2, el = a->edge_l, er = a->edge_r;
    if (!nt && (n == DW_P || (n >= 2 && n <= H) ||
                (el && er && n > H && n < DW_P && !(has_res && a->res == a->y)))) {
#define DW_SHORT(P, p, l, r)                                                                       \
    for (int64_t c = 0; c < cfull; c += VL)                                                        \
        dw_3x3_block_e(a, 0, p, c, P, st, act, has_res, l, r, NULL, 0)
        /* rows of 2 to 6 pixels: one block, its border flags at run time (one instance per
         * width); they had run as the border pixels' single FMA chains and 1-pixel blocks, at
         * 0.42-0.58 of oneDNN */
        if (n < H) switch (n) {
            case 2: DW_SHORT(2, 0, el, er); break;
            case 3: DW_SHORT(3, 0, el, er); break;
            case 4: DW_SHORT(4, 0, el, er); break;
            case 5: DW_SHORT(5, 0, el, er); break;
            default: DW_SHORT(6, 0, el, er); break;
            }
        else if (n == DW_P && el && er) DW_SHORT(DW_P, 0, 1, 1);
        else if (n == DW_P && el) DW_SHORT(DW_P, 0, 1, 0);
        else if (n == DW_P) DW_SHORT(DW_P, 0, 0, 1);
        else if (n == H && el && er) DW_SHORT(H, 0, 1, 1);
        else if (n == H && el) DW_SHORT(H, 0, 1, 0);
        else if (n == H) DW_SHORT(H, 0, 0, 1);
        else {
            DW_SHORT(H, 0, 1, 0);
            DW_SHORT(H, n - H, 0, 1);
        }
#undef DW_SHORT
        return;
    }
    if (n <= DW_P || (has_res && a->res == a->y)) {
        conv_dw_args b = *a;
        b.edge_l = b.edge_r = 0, b.npix = 1;
        if (n == 1) { /* one pixel, both borders possible */
            b.s0 = a->edge_l, b.s1 = 3 - a->edge_r;
            dw_3x3_edge(&b, cfull);
            return;
        }
        if (a->edge_l) b.s0 = 1, dw_3x3_edge(&b, cfull);
        dw_row_3x3_mid(a, cfull, a->edge_l, n - a->edge_r, st, act, has_res, nt);
        if (a->edge_r) {
            b.s0 = 0, b.s1 = 2;
            b.xo = a->xo + (n - 1) * a->xps, b.yo = a->yo + (n - 1) * a->yps;
            dw_3x3_edge(&b, cfull);
        }
        return;
    }
    /* the first block, the blocks between, the last block ending at the row's end */
    if (a->edge_l) dw_3x3_blocks(a, 0, cfull, st, act, has_res, 1, 0, nt);
    else dw_3x3_blocks(a, 0, cfull, st, act, has_res, 0, 0, nt);
    int64_t p = DW_P;
    for (; p + DW_P < n; p += DW_P) dw_3x3_blocks(a, p, cfull, st, act, has_res, 0, 0, nt);
    if (a->edge_r) dw_3x3_blocks(a, n - DW_P, cfull, st, act, has_res, 0, 1, nt);
    else dw_3x3_blocks(a, n - DW_P, cfull, st, act, has_res, 0, 0, nt);
}

static inline void dw_store(const conv_dw_args *a, ptrdiff_t o, VF v)
{
    if (a->res) v = VADD(v, VLOAD(a->res + o));
    VSTORE(a->y + o, act_apply(v, a->act));
}

/* Border pixels of the 3x3 path: the column taps [s0, s1) only (the others fall outside the
 * input), rows [r0, r1), each pixel's channel vectors independent. */
static void dw_3x3_edge(const conv_dw_args *a, int64_t cfull)
{
    const ptrdiff_t cp = a->cp;
    for (int64_t p = 0; p < a->npix; p++) {
        const float *x = a->xb + (a->xo + p * a->xps);
        const ptrdiff_t yo = a->yo + p * a->yps;
        for (int64_t c = 0; c < cfull; c += VL) {
            const float *xc = x + a->xco[c];
            VF acc = VLOAD(a->bias + c);
            for (int r = a->r0; r < a->r1; r++)
                for (int s = a->s0; s < a->s1; s++)
                    acc = VFMA(VLOAD(xc + a->roff[r] + a->soff[s]),
                               VLOAD(a->w + (r * 3 + s) * cp + c), acc);
            dw_store(a, yo + a->yco[c], acc);
        }
    }
}

/* one instance per (stores, stride, activation, residual): no epilogue branches in the blocks.
 * Each is a function of its own: the streamed instances apart from the cached ones (sharing
 * one function measured 10-15% slower on the cached path), and no function holds more than
 * one instance: gcc's dataflow passes grow faster than a function's size, and with eight
 * instances per function the ASan + UBSan compile of each ISA's file took 16-24 minutes
 * (session 51's measurements are in docs/PERFORMANCE.md). */
#define DW_3X3_FN(nt, st, act, res)                                                          \
    static __attribute__((noinline)) void dw_3x3_##nt##st##act##res(const conv_dw_args *a,   \
                                                                   int64_t cfull)            \
    {                                                                                        \
        dw_row_3x3_ep(a, cfull, st, act, res, nt);                                           \
    }
#define DW_3X3_FNS(nt)                                                                       \
    DW_3X3_FN(nt, 1, 0, 0) DW_3X3_FN(nt, 1, 1, 0) DW_3X3_FN(nt, 1, 0, 1)                     \
    DW_3X3_FN(nt, 1, 1, 1) DW_3X3_FN(nt, 2, 0, 0) DW_3X3_FN(nt, 2, 1, 0)                     \
    DW_3X3_FN(nt, 2, 0, 1) DW_3X3_FN(nt, 2, 1, 1)
DW_3X3_FNS(0)
DW_3X3_FNS(1)
DW_3X3_FNS(2)
#undef DW_3X3_FNS
#undef DW_3X3_FN

typedef void (*dw_3x3_fn)(const conv_dw_args *, int64_t);
/* by stores mode (0 cached, 1 streamed, 2 prefetched), stride - 1, activation + 2 residual */
#define DW_3X3_ROW(nt)                                                                       \
    {{dw_3x3_##nt##100, dw_3x3_##nt##110, dw_3x3_##nt##101, dw_3x3_##nt##111},               \
     {dw_3x3_##nt##200, dw_3x3_##nt##210, dw_3x3_##nt##201, dw_3x3_##nt##211}}
static const dw_3x3_fn dw_3x3_fns[3][2][4] = {DW_3X3_ROW(0), DW_3X3_ROW(1), DW_3X3_ROW(2)};
#undef DW_3X3_ROW

static void dw_row_3x3(const conv_dw_args *a, int64_t cfull, int st)
{
    const int e = (a->act ? 1 : 0) + (a->res ? 2 : 0);
    dw_3x3_fns[a->nt ? 1 : a->pf ? 2 : 0][st != 1][e](a, cfull);
}

/* NCHW depthwise, one output row of one channel plane, vectorized across output pixels: the
 * kernel's column taps are shifted unaligned loads of the input row, each weight broadcast
 * once per 4 vectors of outputs (stride 1). The border columns, whose windows leave the
 * input, and other strides go scalar with their valid taps only (no padded copy). */
/* Output column j with the column taps [s0, s1) (the ones inside the input row). */
static float dwp_pixel(const conv_dwp_args *a, int64_t j, int s0, int s1)
{
    float acc = 0.0f;
    const float *x = a->x + j * a->sw - a->pl;
    for (int r = a->r0; r < a->r1; r++)
        for (int s = s0; s < s1; s++) acc += a->w[r * a->S + s] * x[r * a->xrs + s * a->dw];
    return acc + a->bias;
}

static void dwp_store(const conv_dwp_args *a, int64_t j, VF v)
{
    if (a->res) v = VADD(v, VLOAD(a->res + j));
    VSTORE(a->y + j, act_apply(v, a->act));
}

static void conv_dwp_row(const conv_dwp_args *a)
{
    /* the columns whose whole window is inside the input row: [lo, hi) */
    int64_t lo = (a->pl + a->sw - 1) / a->sw;
    int64_t last = a->iw - 1 - (int64_t)(a->S - 1) * a->dw + a->pl;
    int64_t hi = last < 0 ? 0 : last / a->sw + 1;
    lo = lo < a->ow ? lo : a->ow;
    hi = hi < a->ow ? (hi > lo ? hi : lo) : a->ow;
    int64_t j = lo;
    if (a->sw == 1) {
        const VF b = VSET1(a->bias);
        const float *x = a->x - a->pl;
        for (; j + 4 * VL <= hi; j += 4 * VL) {
            VF c0 = b, c1 = b, c2 = b, c3 = b;
            for (int r = a->r0; r < a->r1; r++)
                for (int s = 0; s < a->S; s++) {
                    const VF wv = VSET1(a->w[r * a->S + s]);
                    const float *xs = x + r * a->xrs + (ptrdiff_t)s * a->dw + j;
                    c0 = VFMA(VLOAD(xs), wv, c0), c1 = VFMA(VLOAD(xs + VL), wv, c1);
                    c2 = VFMA(VLOAD(xs + 2 * VL), wv, c2), c3 = VFMA(VLOAD(xs + 3 * VL), wv, c3);
                }
            dwp_store(a, j, c0), dwp_store(a, j + VL, c1);
            dwp_store(a, j + 2 * VL, c2), dwp_store(a, j + 3 * VL, c3);
        }
        for (; j + VL <= hi; j += VL) {
            VF c0 = b;
            for (int r = a->r0; r < a->r1; r++)
                for (int s = 0; s < a->S; s++)
                    c0 = VFMA(VLOAD(x + r * a->xrs + (ptrdiff_t)s * a->dw + j),
                              VSET1(a->w[r * a->S + s]), c0);
            dwp_store(a, j, c0);
        }
    }
    /* the left border, then whatever the vectors left (interior tail, stride > 1, right
     * border); the border columns with their valid column taps only */
    for (int64_t k = 0; k < a->ow; k++) {
        if (k == lo) k = j;
        if (k >= a->ow) break;
        int s0 = 0, s1 = a->S;
        if (k < lo || k >= hi) { /* 0 <= k*sw - pl + s*dw < iw */
            int64_t st = k * a->sw - a->pl;
            int64_t l = st >= 0 ? 0 : (-st + a->dw - 1) / a->dw;
            int64_t h = st > a->iw - 1 ? 0 : (a->iw - 1 - st) / a->dw + 1;
            s0 = (int)(l < a->S ? l : a->S), s1 = (int)(h < a->S ? h : a->S);
            s1 = s1 > s0 ? s1 : s0;
        }
        float v = dwp_pixel(a, k, s0, s1) + (a->res ? a->res[k] : 0.0f);
        a->y[k] = act_scalar(v, a->act);
    }
}

/* dw_row_generic on a row with border flags: the border pixels one by one with their taps. */
static void dw_row_generic_edges(const conv_dw_args *a, int64_t c_begin)
{
    conv_dw_args b = *a;
    b.edge_l = b.edge_r = 0;
    if (a->npix == 1) { /* one pixel, both borders possible */
        b.s0 = a->s0 + a->edge_l, b.s1 = a->s1 - a->edge_r;
        dw_row_generic(&b, c_begin);
        return;
    }
    b.xo = a->xo + a->edge_l * a->xps, b.yo = a->yo + a->edge_l * a->yps;
    b.npix = a->npix - a->edge_l - a->edge_r;
    if (b.npix > 0) dw_row_generic(&b, c_begin);
    b.npix = 1;
    if (a->edge_l) {
        b.xo = a->xo, b.yo = a->yo, b.s0 = a->s0 + 1, b.s1 = a->s1;
        dw_row_generic(&b, c_begin);
    }
    if (a->edge_r) {
        b.xo = a->xo + (a->npix - 1) * a->xps, b.yo = a->yo + (a->npix - 1) * a->yps;
        b.s0 = a->s0, b.s1 = a->s1 - 1;
        dw_row_generic(&b, c_begin);
    }
}

/* Windows 4 to 7 columns wide (EfficientNet's 5x5, ConvNeXt's 7x7 depthwise, the 1-D 1x4 of
 * Mamba's blocks), stride 1 or 2, no dilation, and depthwise dx's column phases of 1 to 7
 * taps (dx_depthwise_rows in conv-backward.c), the whole row in one call (a->iw): dw_block's
 * blocks of DW_P pixels, the last one overlapping the one before (as dw_row_3x3_mid's); the
 * blocks at the row's ends skip the columns outside the input, so the border pixels run in
 * them too (dw_row_generic had taken them one at a time, one chain of up to 49 FMAs per
 * channel vector). Rows of DW_P / 2 to DW_P - 1 pixels (7 x 7 and 10 x 10 images) run as one
 * block of DW_P / 2, or two that overlap: in blocks of 4 and 1 (one FMA chain of up to 49 per
 * channel vector in the 1-pixel blocks) they had run 1.9-2.8x slower, at 0.37-0.63 of oneDNN
 * (session 50, scripts/conv-ab.c, 1 thread: 7x7 C 512 and 768 on 7 x 7, 5x5 C 240 and 1152
 * on 7 x 7; 7x7 C 768 10 x 10 1.30x). Rows of 4 to 6 pixels are one block of the row (5x5
 * and 7x7, C 512 on 6 x 6 2.09x and 2.59x, C 256 on 5 x 5 1.52x and 1.39x; 12 -> 6 at stride
 * 2 1.43x and 1.68x). Rows of 1 to 3 pixels, and rows of 7 or more whose residual is y
 * itself (the blocks would overlap), go in blocks of 4 and 1, one row a call. The activation
 * and residual are applied at run time: the stores are a small share of 16 to 49 FMAs a
 * pixel. With a->nrows > 1 (cached, whole blocks) each
 * channel vector of a block runs down the rows, as dw_3x3_blocks's does. */
CONV_DW_INLINE void dw_wide_blocks(const conv_dw_args *a, int64_t p, int64_t cfull, const int P,
                                   const int st, const int S)
{
    const int64_t left = p * st - a->padl; /* input column of the block's first window column */
    const int skl = (int)RIDGE_MAX(-left, 0);
    const int skr = (int)RIDGE_MAX(left + (P - 1) * st + S - a->iw, 0);
    const int res = a->res != NULL;
    if (a->pf) { /* the block's P pixel steps of columns inside the input, the row's last
                  * block to the end of its window */
        const int64_t j1 = p + P < a->npix ? P * st : (P - 1) * st + S;
        dw_prefetch(a, p, skl, RIDGE_MIN(j1, a->iw - left), cfull);
    }
    for (int64_t c = 0; c < cfull; c += VL)
        for (int row = 0; row < a->nrows; row++) {
            if (skl | skr) dw_block(a, row, p, c, P, st, S, res, skl, skr);
            else dw_block(a, row, p, c, P, st, S, res, 0, 0);
        }
}

CONV_DW_INLINE void dw_row_wide_s(const conv_dw_args *a, int64_t cfull, const int st,
                                  const int S)
{
    const int64_t n = a->npix;
    int64_t p = 0;
    if (n >= DW_P && !(a->res && a->res == a->y)) {
        for (; p < n; p += DW_P)
            dw_wide_blocks(a, p + DW_P <= n ? p : n - DW_P, cfull, DW_P, st, S);
    } else if (n >= DW_P / 2 && !(a->res && a->res == a->y)) {
        dw_wide_blocks(a, 0, cfull, DW_P / 2, st, S);
        if (n > DW_P / 2) dw_wide_blocks(a, n - DW_P / 2, cfull, DW_P / 2, st, S);
    } else if (n >= 4 && n < DW_P / 2) {
        if (n == 4) dw_wide_blocks(a, 0, cfull, 4, st, S);
        else if (n == 5) dw_wide_blocks(a, 0, cfull, 5, st, S);
        else dw_wide_blocks(a, 0, cfull, 6, st, S);
    } else {
        for (; p + 4 <= n; p += 4) dw_wide_blocks(a, p, cfull, 4, st, S);
        for (; p < n; p++) dw_wide_blocks(a, p, cfull, 1, st, S);
    }
    /* the channels past the last vector, pixel by pixel with its taps */
    conv_dw_args b = *a;
    b.npix = 1, b.nrows = 1;
    for (int row = 0; cfull < a->c && row < a->nrows; row++)
        for (int64_t q = 0; q < n; q++) {
            const int64_t left = q * st - a->padl;
            b.s0 = (int)RIDGE_MIN(RIDGE_MAX(-left, 0), S);
            b.s1 = (int)RIDGE_MAX(RIDGE_MIN(a->iw - left, S), b.s0);
            b.xo = a->xo + row * a->xrs + q * a->xps, b.yo = a->yo + row * a->yrs + q * a->yps;
            dw_row_generic(&b, cfull);
        }
}

/* one function per window width (both strides), out of line, so no one function holds all
 * 14 instances; the sanitizer build of the AVX-512 file still took 24 minutes (session 50) */
#define DW_WIDE_FN(S)                                                                        \
    static __attribute__((noinline)) void dw_row_wide_##S(const conv_dw_args *a, int64_t cfull, \
                                                          int st)                            \
    {                                                                                        \
        if (st == 1) dw_row_wide_s(a, cfull, 1, S);                                          \
        else dw_row_wide_s(a, cfull, 2, S);                                                  \
    }
DW_WIDE_FN(1)
DW_WIDE_FN(2)
DW_WIDE_FN(3)
DW_WIDE_FN(4)
DW_WIDE_FN(5)
DW_WIDE_FN(6)
DW_WIDE_FN(7)
#undef DW_WIDE_FN

static void dw_row_wide(const conv_dw_args *a, int64_t cfull, int st)
{
    switch (a->S) {
    case 1: dw_row_wide_1(a, cfull, st); break;
    case 2: dw_row_wide_2(a, cfull, st); break;
    case 3: dw_row_wide_3(a, cfull, st); break;
    case 4: dw_row_wide_4(a, cfull, st); break;
    case 5: dw_row_wide_5(a, cfull, st); break;
    case 6: dw_row_wide_6(a, cfull, st); break;
    default: dw_row_wide_7(a, cfull, st); break;
    }
}

/* Whether the call is one for dw_row_wide, and its stride (*st) */
static int dw_wide(const conv_dw_args *a, int *st)
{
    if (a->iw <= 0 || a->S < 1 || a->S > DW_S_MAX || a->s0 != 0 || a->s1 != a->S) return 0;
    const ptrdiff_t ds = a->soff[1] - a->soff[0];
    for (int s = 2; s < a->S; s++)
        if (a->soff[s] - a->soff[s - 1] != ds) return 0;
    *st = ds > 0 && a->xps == ds ? 1 : ds > 0 && a->xps == 2 * ds ? 2 : 0;
    return *st > 0;
}

static void conv_dw_row(const conv_dw_args *a)
{
    const int64_t cfull = a->c / VL * VL;
    int wst;
    /* several rows at once where the blocks run whole (dw_row_wide_s), cached */
    if (dw_wide(a, &wst) && (a->nrows == 1 || (!a->nt && a->npix >= DW_P &&
                                               !(a->res && a->res == a->y)))) {
        dw_row_wide(a, cfull, wst);
        return;
    }
    /* the fast path: a 3x3 window (any rows; all 3 column taps, or a border pixel's), no
     * dilation (soff one column step apart), and a pixel step of 1 or 2 columns */
    const ptrdiff_t ds = a->S == 3 ? a->soff[1] - a->soff[0] : 0;
    const int st = ds > 0 && a->xps == ds ? 1 : ds > 0 && a->xps == 2 * ds ? 2 : 0;
    const int edges = a->edge_l || a->edge_r;
    const int fast =
        st && a->soff[2] - a->soff[1] == ds && (!edges || (a->s0 == 0 && a->s1 == 3));
    if (a->nrows > 1) {
        /* several rows at once only where dw_row_3x3 runs whole blocks, not streamed, and
         * nothing else (no short row, border pixel or overlapping block over a residual that
         * is y itself) */
        const int blocks = fast && a->s0 == 0 && a->s1 == 3 && cfull > 0 && !a->nt &&
                           a->npix >= DW_P + edges && !(a->res && a->res == a->y);
        if (blocks) {
            dw_row_3x3(a, cfull, st);
            if (cfull == a->c) return;
        }
        /* else the rows one at a time; the channels past the last vector always */
        conv_dw_args b = *a;
        b.nrows = 1;
        for (int i = 0; i < a->nrows; i++, b.xo += a->xrs, b.yo += a->yrs) {
            if (blocks) dw_row_generic_edges(&b, cfull);
            else conv_dw_row(&b);
        }
        return;
    }
    if (fast) {
        if (a->s0 == 0 && a->s1 == 3) dw_row_3x3(a, cfull, st);
        else dw_3x3_edge(a, cfull);
        if (cfull < a->c) dw_row_generic_edges(a, cfull);
        return;
    }
    dw_row_generic_edges(a, 0);
}

/* ---- Winograd transforms --------------------------------------------------------------------- */

/* 1D input transforms: r = B^T d. */
static inline void bt2_1d(const VF d[4], VF r[4])
{
    r[0] = VSUB(d[0], d[2]);
    r[1] = VADD(d[1], d[2]);
    r[2] = VSUB(d[2], d[1]);
    r[3] = VSUB(d[1], d[3]);
}

static inline void bt4_1d(const VF d[6], VF r[6])
{
    const VF c4 = VSET1(4.0f), c5 = VSET1(5.0f), c2 = VSET1(2.0f);
    VF t0 = VSUB(d[4], d[2]);                  /* d4 - d2 */
    VF t1 = VSUB(d[3], VMUL(c4, d[1]));       /* d3 - 4 d1 */
    VF t2 = VSUB(d[4], VMUL(c4, d[2]));       /* d4 - 4 d2 */
    VF t3 = VMUL(c2, VSUB(d[3], d[1]));       /* 2 (d3 - d1) */
    r[0] = VADD(VSUB(VMUL(c4, d[0]), VMUL(c5, d[2])), d[4]);
    r[1] = VADD(t2, t1);                       /* -4 d1 - 4 d2 + d3 + d4 */
    r[2] = VSUB(t2, t1);                       /*  4 d1 - 4 d2 - d3 + d4 */
    r[3] = VADD(t0, t3);                       /* -2 d1 - d2 + 2 d3 + d4 */
    r[4] = VSUB(t0, t3);                       /*  2 d1 - d2 - 2 d3 + d4 */
    r[5] = VADD(VSUB(VMUL(c4, d[1]), VMUL(c5, d[3])), d[5]);
}

/* 1D output transforms: o = A^T m. */
static inline void at2_1d(const VF m[4], VF o[2])
{
    o[0] = VADD(VADD(m[0], m[1]), m[2]);
    o[1] = VSUB(VSUB(m[1], m[2]), m[3]);
}

static inline void at4_1d(const VF m[6], VF o[4])
{
    const VF c2 = VSET1(2.0f), c4 = VSET1(4.0f), c8 = VSET1(8.0f);
    VF s12 = VADD(m[1], m[2]), d12 = VSUB(m[1], m[2]);
    VF s34 = VADD(m[3], m[4]), d34 = VSUB(m[3], m[4]);
    o[0] = VADD(VADD(m[0], s12), s34);
    o[1] = VFMA(c2, d34, d12);
    o[2] = VFMA(c4, s34, s12);
    o[3] = VADD(VFMA(c8, d34, d12), m[5]);
}

/* The generic path for the channels past the last full vector: the matrices as loops. */
static void wino_in_scalar(const conv_wino_mats *W, const conv_patch *d, int64_t c, float *v,
                           ptrdiff_t vs)
{
    const int al = W->alpha;
    float t[8][8];
    for (int i = 0; i < al; i++)
        for (int l = 0; l < al; l++) {
            float s = 0;
            if (l >= d->l0 && l < d->l1)
                for (int k = d->k0; k < d->k1; k++)
                    s += W->bt[i * al + k] * d->x[d->o + k * d->sh + l * d->sw + c];
            t[i][l] = s;
        }
    for (int i = 0; i < al; i++)
        for (int j = 0; j < al; j++) {
            float s = 0;
            for (int l = 0; l < al; l++) s += W->bt[j * al + l] * t[i][l];
            v[(i * al + j) * vs + c] = s;
        }
}

/* The whole channel vectors of conv_wino_in, m and whether the patch lies wholly inside the
 * image (full: no test per point) fixed at compile time */
static inline __attribute__((always_inline)) void wino_in_vectors(const int m, const int full,
                                                                  const conv_patch *d, int64_t n,
                                                                  float *v, ptrdiff_t vs)
{
    const int al = m + 2;
    for (int64_t c = 0; c + VL <= n; c += VL) {
        VF t[6][6], col[6], r[6];
        for (int j = 0; j < al; j++) { /* columns: t[.][j] = B^T d[.][j] */
            const ptrdiff_t o = d->o + j * d->sw + c;
            for (int k = 0; k < al; k++)
                col[k] = full || (j >= d->l0 && j < d->l1 && k >= d->k0 && k < d->k1)
                             ? VLOAD(d->x + (o + k * d->sh))
                             : VZERO();
            if (m == 2) bt2_1d(col, r);
            else bt4_1d(col, r);
            for (int i = 0; i < al; i++) t[i][j] = r[i];
        }
        for (int i = 0; i < al; i++) { /* rows: v[i][.] = t[i][.] B */
            if (m == 2) bt2_1d(t[i], r);
            else bt4_1d(t[i], r);
            for (int j = 0; j < al; j++) VSTORE(v + (i * al + j) * vs + c, r[j]);
        }
    }
}

/* v[i][j] = (B^T d B)[i][j] per channel, d the patch (conv_patch), v [alpha*alpha] rows vs
 * apart. */
static void conv_wino_in(int m, const conv_patch *d, int64_t n, float *v, ptrdiff_t vs)
{
    const int al = m + 2, full = d->k0 == 0 && d->k1 == al && d->l0 == 0 && d->l1 == al;
    if (m == 2) {
        if (full) wino_in_vectors(2, 1, d, n, v, vs);
        else wino_in_vectors(2, 0, d, n, v, vs);
    } else {
        if (full) wino_in_vectors(4, 1, d, n, v, vs);
        else wino_in_vectors(4, 0, d, n, v, vs);
    }
    for (int64_t c = n / VL * VL; c < n; c++) wino_in_scalar(conv_wino_mats_get(m), d, c, v, vs);
}

/* The weight gradient's dy transform of F(4,3): A = at4^T (6 x 4) applied to 4 values. */
static inline void a4_1d(const VF d[4], VF r[6])
{
    const VF c2 = VSET1(2.0f), c4 = VSET1(4.0f);
    VF s02 = VADD(d[0], d[2]), s13 = VADD(d[1], d[3]);
    VF e = VFMA(c4, d[2], d[0]), o = VMUL(c2, VFMA(c4, d[3], d[1])); /* a0 + 4a2, 2a1 + 8a3 */
    r[0] = d[0];
    r[1] = VADD(s02, s13);
    r[2] = VSUB(s02, s13);
    r[3] = VADD(e, o);
    r[4] = VSUB(e, o);
    r[5] = d[3];
}

/* v[i][j] = (A dy A^T)[i][j] per channel for the mh x mw (<= 4 x 4) tile of dy at
 * y[i*ysh + j*ysw + c], zeros past it; n channels, v's 36 rows vs apart. */
static void conv_wino_dy(const float *y, ptrdiff_t ysh, ptrdiff_t ysw, int mh, int mw, int64_t n,
                         float *v, ptrdiff_t vs)
{
    const float *at = conv_wino_mats_get(4)->at; /* A^T: 4 x 6 */
    int64_t c = 0;
    for (; c + VL <= n; c += VL) {
        VF t[4][6], d[4], r[6];
        for (int i = 0; i < 4; i++) { /* rows: t[i][.] = A dy[i][.] */
            for (int j = 0; j < 4; j++)
                d[j] = i < mh && j < mw ? VLOAD(y + i * ysh + j * ysw + c) : VZERO();
            a4_1d(d, t[i]);
        }
        for (int j = 0; j < 6; j++) { /* columns: v[.][j] = A t[.][j] */
            for (int i = 0; i < 4; i++) d[i] = t[i][j];
            a4_1d(d, r);
            for (int i = 0; i < 6; i++) VSTORE(v + (i * 6 + j) * vs + c, r[i]);
        }
    }
    for (; c < n; c++) /* the channels past the last full vector: the matrices as loops */
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                float s = 0;
                for (int k = 0; k < mh; k++)
                    for (int l = 0; l < mw; l++)
                        s += at[k * 6 + i] * y[k * ysh + l * ysw + c] * at[l * 6 + j];
                v[(i * 6 + j) * vs + c] = s;
            }
}

static float wino_out_scalar(const conv_wino_mats *W, const float *mm, ptrdiff_t ms, int64_t c,
                             int i, int j)
{
    const int al = W->alpha;
    float s = 0;
    for (int k = 0; k < al; k++)
        for (int l = 0; l < al; l++)
            s += W->at[i * al + k] * mm[(k * al + l) * ms + c] * W->at[j * al + l];
    return s;
}

/* The whole channel vectors of conv_wino_out, m and whether the tile lies wholly inside the
 * image (full: mh = mw = m) fixed at compile time */
static inline __attribute__((always_inline)) void
wino_out_vectors(const int m, const int full, const float *mm, ptrdiff_t ms, int64_t n, float *y,
                 ptrdiff_t yo, ptrdiff_t ysh, ptrdiff_t ysw, int mh, int mw, const float *bias,
                 const float *res, int act)
{
    const int al = m + 2, rows = full ? m : mh, cols = full ? m : mw;
    for (int64_t c = 0; c + VL <= n; c += VL) {
        /* r zeroed only to quiet gcc's -Wmaybe-uninitialized (m = 2 fills 2 of 4) */
        VF t[4][6], col[6], r[4] = {VZERO(), VZERO(), VZERO(), VZERO()};
        for (int j = 0; j < al; j++) { /* columns: t[.][j] = A^T M[.][j] */
            for (int k = 0; k < al; k++) col[k] = VLOAD(mm + (k * al + j) * ms + c);
            if (m == 2) at2_1d(col, r);
            else at4_1d(col, r);
            for (int i = 0; i < m; i++) t[i][j] = r[i];
        }
        VF b = VLOAD(bias + c);
        for (int i = 0; i < rows; i++) { /* rows: o[i][.] = t[i][.] A */
            if (m == 2) at2_1d(t[i], r);
            else at4_1d(t[i], r);
            for (int j = 0; j < cols; j++) {
                ptrdiff_t o = yo + i * ysh + j * ysw + c;
                VF v = VADD(r[j], b);
                if (res) v = VADD(v, VLOAD(res + o));
                VSTORE(y + o, act_apply(v, act));
            }
        }
    }
}

/* The output transform of one tile, fused with the epilogue: for the m x m outputs inside the
 * image (oi < mh, oj < mw), y[yo + i*ysh + j*ysw + c] = act((A^T M A)[i][j] + bias[c] + res).
 * mm is [alpha*alpha] rows ms apart; channels contiguous in y (the caller checked). */
static void conv_wino_out(int m, const float *mm, ptrdiff_t ms, int64_t n, float *y,
                          ptrdiff_t yo, ptrdiff_t ysh, ptrdiff_t ysw, int mh, int mw,
                          const float *bias, const float *res, int act)
{
    const int full = mh == m && mw == m;
    if (m == 2) {
        if (full) wino_out_vectors(2, 1, mm, ms, n, y, yo, ysh, ysw, mh, mw, bias, res, act);
        else wino_out_vectors(2, 0, mm, ms, n, y, yo, ysh, ysw, mh, mw, bias, res, act);
    } else {
        if (full) wino_out_vectors(4, 1, mm, ms, n, y, yo, ysh, ysw, mh, mw, bias, res, act);
        else wino_out_vectors(4, 0, mm, ms, n, y, yo, ysh, ysw, mh, mw, bias, res, act);
    }
    const conv_wino_mats *W = conv_wino_mats_get(m);
    for (int64_t c = n / VL * VL; c < n; c++)
        for (int i = 0; i < mh; i++)
            for (int j = 0; j < mw; j++) {
                ptrdiff_t o = yo + i * ysh + j * ysw + c;
                float v = wino_out_scalar(W, mm, ms, c, i, j) + bias[c];
                if (res) v += res[o];
                y[o] = act_scalar(v, act);
            }
}

/* ---- layout reorders ------------------------------------------------------------------------ */

#ifdef __AVX2__
/* dst[j * ds + i] = src[i * ss + j] for an 8 x 8 block, by 256-bit unpacks and shuffles */
static inline void conv_tr8x8(const float *src, size_t ss, float *dst, size_t ds)
{
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(src + i * ss);
    for (int i = 0; i < 8; i += 2)
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]), t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        _mm256_storeu_ps(dst + i * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(dst + (i + 4) * ds, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
    }
}
#endif

/* dst[j * ds + i] = src[i * ss + j], i < rows, j < cols (conv_kernels.transpose). Columns outer
 * in steps of 8, rows inner: each group of 8 destination rows is written whole before the
 * next, while the source lines they read stay in L1 for the next 8 columns. */
static void conv_transpose(const float *src, size_t ss, float *dst, size_t ds, size_t rows,
                           size_t cols)
{
    size_t j = 0;
#ifdef __AVX2__
    for (; j + 8 <= cols; j += 8) {
        size_t i = 0;
        for (; i + 8 <= rows; i += 8) conv_tr8x8(src + i * ss + j, ss, dst + j * ds + i, ds);
        for (; i < rows; i++)
            for (int k = 0; k < 8; k++) dst[(j + k) * ds + i] = src[i * ss + j + k];
    }
#endif
    for (; j < cols; j++)
        for (size_t i = 0; i < rows; i++) dst[j * ds + i] = src[i * ss + j];
}

#include "conv/conv-fft-template.h"

const conv_kernels KNAME = {
    .name = KNAME_STR,
    .isa = KISA,
    .vlen = VL,
    .mr = MR,
    .nr = NR,
    .row = conv_row,
    .row_masked = conv_row_masked,
#ifdef CONV_SMALL_REDUCTION
    .row_edges = conv_row_edges,
#endif
#ifdef CONV_ROW_PAIR
    .row_pair = conv_row_pair,
    .row_masked_pair = conv_row_masked_pair,
#endif
    .dw_row = conv_dw_row,
    .dwp_row = conv_dwp_row,
    .dwt = conv_dwt,
    .dwtaps = conv_dwtaps,
    .dwgrad = conv_dwgrad,
    .dwtaps_max = DWTAPS_MAX,
    .wino_in = conv_wino_in,
    .wino_dy = conv_wino_dy,
    .wino_out = conv_wino_out,
    .fft_fwd = conv_fft_fwd,
    .fft_inv = conv_fft_inv,
    .fft_cgemm = conv_fft_cgemm,
    .transpose = conv_transpose,
};
