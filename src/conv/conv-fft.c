/* FFT convolution: overlap-save on T x T tiles, the channel reduction in the frequency domain.
 *
 * Algorithm. A stride-1 convolution (cross-correlation) y[o] = sum_k x[o + k] w[k] of a
 * T-point tile is, by the convolution theorem, Y = X * conj(W) bin by bin, where X and W are
 * the T x T DFTs of the tile and of the kernel zero-padded to T x T; the product's inverse is
 * the circular correlation, and its first M = T - K' + 1 outputs per dimension (K' the
 * dilated kernel extent) never wrap around, so they are exactly the convolution's outputs
 * (overlap-save). The output is cut into M_h x M_w tiles; tile (ty, tx) reads the T x T input
 * patch starting at (ty*M_h - pad_top, tx*M_w - pad_left), zeros outside the image (the
 * padding is just part of the patch: any padding works, and no padded copy of x exists).
 * Per block of TB tiles, three passes, each split over the threads:
 *   1. gather each tile's patch (all channels) and FFT it, one vector of channels at a time,
 *      into the spectra X[bin][tile][re|im][c_in] (real 2D FFT: T x (T/2+1) bins);
 *   2. per frequency bin, the channel reduction as a complex GEMM:
 *      Y[bin][tile][c_out] = X[bin][tile][c_in] * Wf[bin][c_in][c_out], with Wf = conj(DFT(w))
 *      / T^2 computed once in the plan (fp64). This is where the work is, and it is a GEMM:
 *      each bin's weights (c_in x c_out complex) are reused over the block's TB tiles, so it
 *      runs near the FMA peak rather than at memory speed, as a per-tile product would;
 *   3. inverse FFT of each tile's Y (only the M_h x M_w outputs kept), then bias, residual
 *      and activation on the way into y.
 *
 * Cost model. Per tile, the GEMM executes 8 T (T/2+1) c_in c_out FLOPs (4 FMAs per complex
 * multiply-add) for the M_h M_w outputs that direct computes with 2 K_h K_w c_in c_out each:
 * the FLOP ratio is about 2 T^2 / (M_h M_w K_h K_w), which falls as the kernel grows (11x11 on
 * T = 32: 29x fewer FLOPs than direct; 3x3: 2.5x fewer at T = 8, 4x at T = 64, no better than
 * Winograd F(4,3), whose GEMMs are real and whose transforms are cheaper). The
 * transforms cost about 5 T log2 T FLOPs per 1D FFT, T + 1 + M/2 FFTs per channel and tile
 * each way, and run well below peak (radix-2 butterflies through L1); the transformed weights
 * are T (T/2+1) c_in c_out complex floats (9x-70x the spatial ones) streamed once per block,
 * and the spectra (about (T/M)^2 times x and y) go through memory once each way. The tile
 * size is the T in {8, 16, 32, 64} that minimizes the sum of those terms on the measured
 * roof; larger T amortizes the K' - 1 overlap, smaller T keeps the weights and spectra small.
 * The efficiencies below are what `ridge bench conv` measured (docs/PERFORMANCE.md). */
#include <math.h>
#include <string.h>

#include "conv/conv.h"

/* fractions of the FMA peak the kernels reached in ridge bench conv */
#define FFT_GEMM_EFF 0.60
#define FFT_XFORM_EFF 0.20
#define FFT_BLOCK_BYTES (8u << 20) /* spectra of one block: X + Y */

typedef struct fft_geo {
    int th, tw, tn, H;        /* tile rows, columns, the longer, bins per row (tw/2 + 1) */
    int mh, mw;               /* outputs per tile */
    int64_t F;                /* bins: th * H */
    int64_t tiles_w, tiles_img, tiles, TB;
    int64_t cp, cop;          /* c_in, c_out rounded up to whole vectors */
} fft_geo;

static fft_geo fft_geometry(const ridge_conv2d_plan *p, int th, int tw)
{
    const ridge_conv2d_desc *d = &p->d;
    const int64_t vl = p->k->vlen;
    fft_geo g;
    g.th = th, g.tw = tw, g.tn = RIDGE_MAX(th, tw);
    g.H = tw / 2 + 1, g.F = (int64_t)th * g.H;
    g.mh = (int)(th - d->dil_h * (d->r - 1));
    g.mw = (int)(tw - d->dil_w * (d->s - 1));
    g.cp = (d->c_in + vl - 1) / vl * vl;
    g.cop = (d->c_out + vl - 1) / vl * vl;
    if (g.mh < 1 || g.mw < 1) {
        g.tiles = 0;
        return g;
    }
    g.tiles_w = (p->ow + g.mw - 1) / g.mw;
    g.tiles_img = (p->oh + g.mh - 1) / g.mh * g.tiles_w;
    g.tiles = d->n * g.tiles_img;
    /* as many tiles per block as keep the block's spectra within FFT_BLOCK_BYTES: each bin's
     * weights are reused TB times */
    int64_t per_tile = g.F * 2 * (g.cp + g.cop) * (int64_t)sizeof(float);
    g.TB = RIDGE_MAX(1, (int64_t)FFT_BLOCK_BYTES / per_tile);
    g.TB = RIDGE_MIN(RIDGE_MIN(g.TB, 64), g.tiles);
    return g;
}

/* One complex FFT of length n: about 5 n log2 n FLOPs. */
static double fft1(int n)
{
    return 5.0 * n * log2((double)n);
}

/* Predicted seconds for tile th x tw (0 when it is too small for the kernel). */
static double fft_predict(const ridge_conv2d_plan *p, int th, int tw, double peak, double bw,
                          conv_fft_cost *c)
{
    fft_geo g = fft_geometry(p, th, tw);
    if (g.tiles == 0) return 0;
    const ridge_conv2d_desc *d = &p->d;
    const double nblk = ceil((double)g.tiles / (double)g.TB);
    c->th = th, c->tw = tw;
    c->gemm_flops = 8.0 * g.tiles * g.F * d->c_in * g.cop;
    /* forward: rows in pairs, then H columns; inverse: H columns, then the kept rows in pairs */
    c->fft_flops = g.tiles * (((th + 1) / 2 * fft1(tw) + g.H * fft1(th)) * (double)g.cp +
                              (g.H * fft1(th) + (g.mh + 1) / 2 * fft1(tw)) * (double)g.cop);
    c->weight_bytes = 8.0 * g.F * d->c_in * g.cop;
    /* weights past L2 stream once per block; the spectra go out and back once each */
    c->spectra_bytes = (c->weight_bytes > (1 << 19) ? nblk - 1 : 0) * c->weight_bytes +
                       2.0 * 8.0 * g.tiles * g.F * (g.cp + g.cop);
    c->compute_s = c->gemm_flops / (peak * FFT_GEMM_EFF) + c->fft_flops / (peak * FFT_XFORM_EFF);
    return c->compute_s + (c->weight_bytes + c->spectra_bytes) / bw;
}

/* The tile asked for (th x tw, both given), or the fastest predicted among the square ones
 * (8 x 8 to 64 x 64) for a 2-D kernel, the 1 x TW ones for a kernel of one row and the TH x 1
 * ones for a kernel of one column (up to CONV_FFT_MAX_SIDE: 1 x 256 for a 1 x 63 kernel).
 * The template's FFTs rely on that shape (every FFT longer than 1 has the longer side's
 * length). Other rectangles the model picked for the benchmark's 2-D kernels ran 0.87-1.12x
 * the square tiles. */
conv_fft_cost conv_fft_tile(const ridge_conv2d_plan *p, int th, int tw, double peak, double bw)
{
    const ridge_conv2d_desc *d = &p->d;
    const int square = d->r > 1 && d->s > 1;
    conv_fft_cost best = {0}, c;
    if (th) return fft_predict(p, th, tw, peak, bw, &c) > 0 ? c : best;
    double tbest = 0;
    for (int t = square ? 8 : 1; t <= (square ? CONV_FFT_MAX_SQUARE : CONV_FFT_MAX_SIDE); t *= 2) {
        /* square; one row (a 1 x S kernel, 1 x 1 too); one column (R x 1) */
        const int h = d->r > 1 ? t : 1, w = d->s > 1 || d->r == 1 ? t : 1;
        double s = fft_predict(p, h, w, peak, bw, &c);
        if (s > 0 && (tbest == 0 || s < tbest)) tbest = s, best = c;
    }
    return best;
}

size_t conv_fft_weight_elems(const ridge_conv2d_plan *p)
{
    fft_geo g = fft_geometry(p, p->fft_th, p->fft_tw);
    return (size_t)(g.F * p->d.c_in * g.cop * 2);
}

size_t conv_fft_ws_fixed(const ridge_conv2d_plan *p)
{
    fft_geo g = fft_geometry(p, p->fft_th, p->fft_tw);
    size_t f = (size_t)(g.F * g.TB * 2 * (g.cp + g.cop));
    return (f * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
}

/* per thread: the gathered patch D [th*tw][cp], the transform's work area, the outputs O */
size_t conv_fft_ws_per_thread(const ridge_conv2d_plan *p)
{
    fft_geo g = fft_geometry(p, p->fft_th, p->fft_tw);
    size_t f = (size_t)((int64_t)g.th * g.tw * g.cp + g.F * 2 * p->k->vlen +
                        (int64_t)g.mh * g.mw * g.cop + 3 * RIDGE_ALIGN);
    return (f * sizeof(float) + RIDGE_ALIGN - 1) / RIDGE_ALIGN * RIDGE_ALIGN;
}

/* Wf[bin][co / VL][ci][re|im][co % VL] = conj(DFT(w[co][ci] dilated, zero-padded to th x tw))
 * / (th tw),
 * in fp64, the DFT separable: along the kernel's columns, then its rows, with the twiddles of
 * each (frequency, tap) pair tabulated once. */
ridge_status conv_fft_pack(ridge_conv2d_plan *p, const float *w)
{
    const ridge_conv2d_desc *d = &p->d;
    const fft_geo g = fft_geometry(p, p->fft_th, p->fft_tw);
    const int TH = g.th, TW = g.tw, H = g.H, vl = p->k->vlen;
    const int64_t R = d->r, S = d->s, cin = d->c_in, ncov = g.cop / vl;
    p->wp_elems = conv_fft_weight_elems(p);
    p->wp = ridge_calloc(p->wp_elems, sizeof(float));
    p->fft_twid = ridge_malloc((size_t)(g.tn + 1) * sizeof(float));
    /* e^{-2 pi i v s dw / TW}: cs/sn[v][s]; e^{-2 pi i u r dh / TH}: cr/sr[u][r]; g[r][v] */
    double *cs = ridge_malloc((size_t)(2 * H * S + 2 * TH * R + 2 * R * H) * sizeof(double));
    if (!p->wp || !p->fft_twid || !cs) {
        ridge_free(cs);
        return ridge_error(RIDGE_ENOMEM, "conv2d plan: out of memory for the FFT weights");
    }
    double *sn = cs + H * S, *cr = sn + H * S, *sr = cr + TH * R, *gr = sr + TH * R;
    double *gi = gr + R * H;
    for (int m = 0; m < g.tn / 2; m++) {
        p->fft_twid[2 * m] = (float)cos(2.0 * M_PI * m / g.tn);
        p->fft_twid[2 * m + 1] = (float)-sin(2.0 * M_PI * m / g.tn);
    }
    for (int v = 0; v < H; v++)
        for (int64_t s = 0; s < S; s++) {
            double a = 2.0 * M_PI * (double)((v * s * d->dil_w) % TW) / TW;
            cs[v * S + s] = cos(a), sn[v * S + s] = sin(a);
        }
    for (int u = 0; u < TH; u++)
        for (int64_t r = 0; r < R; r++) {
            double a = 2.0 * M_PI * (double)((u * r * d->dil_h) % TH) / TH;
            cr[u * R + r] = cos(a), sr[u * R + r] = sin(a);
        }
    const double scale = 1.0 / ((double)TH * TW);
    for (int64_t co = 0; co < d->c_out; co++)
        for (int64_t ci = 0; ci < cin; ci++) {
            const float *k = w + (co * cin + ci) * R * S;
            for (int64_t r = 0; r < R; r++) /* g[r][v] = sum_s k[r][s] e^{-2 pi i v s dw / TW} */
                for (int v = 0; v < H; v++) {
                    double re = 0, im = 0;
                    for (int64_t s = 0; s < S; s++)
                        re += k[r * S + s] * cs[v * S + s], im -= k[r * S + s] * sn[v * S + s];
                    gr[r * H + v] = re, gi[r * H + v] = im;
                }
            for (int u = 0; u < TH; u++) /* W[u][v] = sum_r g[r][v] e^{-2 pi i u r dh / TH} */
                for (int v = 0; v < H; v++) {
                    double re = 0, im = 0;
                    for (int64_t r = 0; r < R; r++) {
                        double c = cr[u * R + r], sv = sr[u * R + r];
                        re += gr[r * H + v] * c + gi[r * H + v] * sv;
                        im += gi[r * H + v] * c - gr[r * H + v] * sv;
                    }
                    float *o = p->wp + (((int64_t)(u * H + v) * ncov + co / vl) * cin + ci) * 2 *
                                           vl + co % vl;
                    o[0] = (float)(re * scale), o[vl] = (float)(-im * scale); /* conjugate */
                }
        }
    ridge_free(cs);
    return RIDGE_OK;
}

/* ---- forward --------------------------------------------------------------------------------- */

typedef struct fft_run {
    const ridge_conv2d_plan *p;
    fft_geo g;
    const float *x;
    float *y;
    const float *bias, *res;
    int act;
    float *X, *Y;  /* the block's spectra: [F][TB][re|im][cp], [F][TB][re|im][cop] */
    char *tws;     /* the per-thread areas, wstride bytes apart (conv_area_stride) */
    size_t wstride;
    int64_t t0, nt; /* the block: tiles [t0, t0 + nt) */
} fft_run;

static void fft_areas(const fft_run *f, int ith, float **D, float **work, float **O)
{
    const fft_geo *g = &f->g;
    char *base = f->tws + (size_t)ith * f->wstride;
    size_t dsz = ((size_t)g->th * g->tw * g->cp * sizeof(float) + RIDGE_ALIGN - 1) /
                 RIDGE_ALIGN * RIDGE_ALIGN;
    size_t wsz = ((size_t)(g->F * 2 * f->p->k->vlen) * sizeof(float) + RIDGE_ALIGN - 1) /
                 RIDGE_ALIGN * RIDGE_ALIGN;
    *D = (float *)base;
    *work = (float *)(base + dsz);
    *O = (float *)(base + dsz + wsz);
}

/* tile index -> image, tile row, tile column */
static void fft_tile_pos(const fft_geo *g, int64_t tt, int64_t *n, int64_t *ty, int64_t *tx)
{
    *n = tt / g->tiles_img;
    *ty = tt % g->tiles_img / g->tiles_w;
    *tx = tt % g->tiles_w;
}

/* Pass 1: gather tile t's patch (zeros outside the image) and transform it. */
static void fft_in_range(void *arg, size_t b, size_t e, int ith)
{
    const fft_run *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const ridge_conv2d_desc *d = &p->d;
    const fft_geo *g = &f->g;
    const int TH = g->th, TW = g->tw, vl = p->k->vlen;
    const int64_t cin = d->c_in, cp = g->cp;
    /* the channels are one run of memory (NHWC, NCHW16c up to 16 channels) */
    const int contig = conv_runs_contiguous(p->xco, (int)cin, (int)cin);
    float *D, *work, *O;
    fft_areas(f, ith, &D, &work, &O);
    for (size_t t = b; t < e; t++) {
        int64_t n, ty, tx;
        fft_tile_pos(g, f->t0 + (int64_t)t, &n, &ty, &tx);
        const int64_t ih0 = ty * g->mh - d->pad_top, iw0 = tx * g->mw - d->pad_left;
        for (int i = 0; i < TH; i++)
            for (int j = 0; j < TW; j++) {
                float *dp = D + ((int64_t)i * TW + j) * cp;
                int64_t ih = ih0 + i, iw = iw0 + j;
                if (ih < 0 || ih >= d->h || iw < 0 || iw >= d->w) {
                    memset(dp, 0, (size_t)cp * sizeof(float));
                    continue;
                }
                const float *xp = f->x + n * p->xv.sn + ih * p->xv.sh + iw * p->xv.sw;
                if (contig) memcpy(dp, xp + p->xco[0], (size_t)cin * sizeof(float));
                else
                    for (int64_t c = 0; c < cin; c++) dp[c] = xp[p->xco[c]];
                for (int64_t c = cin; c < cp; c++) dp[c] = 0.0f;
            }
        for (int64_t c0 = 0; c0 < cp; c0 += vl)
            p->k->fft_fwd(TH, TW, p->fft_twid, D + c0, cp, work, f->X + (int64_t)t * 2 * cp + c0,
                          g->TB * 2 * cp, cp);
    }
}

/* Pass 2: items are (bin, vector of output channels). */
static void fft_gemm_range(void *arg, size_t b, size_t e, int ith)
{
    const fft_run *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const fft_geo *g = &f->g;
    const int vl = p->k->vlen;
    const int64_t cin = p->d.c_in, ncov = g->cop / vl;
    for (size_t it = b; it < e; it++) {
        int64_t bin = (int64_t)it / ncov, cob = (int64_t)it % ncov;
        p->k->fft_cgemm(f->X + bin * g->TB * 2 * g->cp, 2 * g->cp, g->cp, f->nt, cin,
                        p->wp + (bin * ncov + cob) * cin * 2 * vl,
                        f->Y + bin * g->TB * 2 * g->cop + cob * vl, 2 * g->cop, g->cop);
    }
}

/* Pass 3: inverse transform of tile t, then the epilogue into y. */
static void fft_out_range(void *arg, size_t b, size_t e, int ith)
{
    const fft_run *f = arg;
    const ridge_conv2d_plan *p = f->p;
    const fft_geo *g = &f->g;
    const int vl = p->k->vlen;
    const int64_t cout = p->d.c_out, cop = g->cop;
    const ptrdiff_t *yco = p->yco;
    float *D, *work, *O;
    fft_areas(f, ith, &D, &work, &O);
    for (size_t t = b; t < e; t++) {
        int64_t n, ty, tx;
        fft_tile_pos(g, f->t0 + (int64_t)t, &n, &ty, &tx);
        const int mh = (int)RIDGE_MIN(g->mh, p->oh - ty * g->mh);
        const int mw = (int)RIDGE_MIN(g->mw, p->ow - tx * g->mw);
        for (int64_t c0 = 0; c0 < cop; c0 += vl)
            p->k->fft_inv(g->th, g->tw, p->fft_twid, f->Y + (int64_t)t * 2 * cop + c0,
                          g->TB * 2 * cop, cop, work, mh, mw, O + c0, cop);
        for (int i = 0; i < mh; i++)
            for (int j = 0; j < mw; j++) {
                const float *op = O + ((int64_t)i * mw + j) * cop;
                ptrdiff_t o = n * p->yv.sn + (ty * g->mh + i) * p->yv.sh +
                              (tx * g->mw + j) * p->yv.sw;
                for (int64_t c = 0; c < cout; c++) {
                    float v = op[c] + f->bias[c] + (f->res ? f->res[o + yco[c]] : 0.0f);
                    f->y[o + yco[c]] = f->act && !(v > 0.0f) ? 0.0f : v;
                }
            }
    }
}

void conv_fft_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *x, float *y,
                      const float *bias, int act, const float *res, char *ws)
{
    fft_run f = {p, fft_geometry(p, p->fft_th, p->fft_tw), x, y, bias, res, act, NULL, NULL, NULL,
                 0, 0, 0};
    const fft_geo *g = &f.g;
    f.X = (float *)ws;
    f.Y = f.X + g->F * g->TB * 2 * g->cp;
    f.tws = ws + p->ws_fixed;
    f.wstride = conv_area_stride(p->ws_per_thread, ridge_ctx_threads(ctx));
    for (f.t0 = 0; f.t0 < g->tiles; f.t0 += g->TB) {
        f.nt = RIDGE_MIN(g->TB, g->tiles - f.t0);
        ridge_parallel_for(ctx, (size_t)f.nt, 1, fft_in_range, &f);
        ridge_parallel_for(ctx, (size_t)(g->F * (g->cop / p->k->vlen)), 1, fft_gemm_range, &f);
        ridge_parallel_for(ctx, (size_t)f.nt, 1, fft_out_range, &f);
    }
}
