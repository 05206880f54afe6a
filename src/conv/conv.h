/* The conv family's internal interface: layout views, the kernel table each ISA fills from
 * the shared template (conv-template.h), and the plan.
 *
 * Every algorithm addresses activations through a view, so one piece of code serves every
 * layout: element (n, c, h, w) lives at  n*sn + co[c] + h*sh + w*sw, where co[c] is a table
 * of per-channel offsets ((c/16)*H*W*16 + c%16 for NCHW16c, c for NHWC, c*H*W for NCHW).
 * The backward pass (issue 8) reuses these views. */
#ifndef RIDGE_CONV_INTERNAL_H
#define RIDGE_CONV_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "ridge/conv.h"
#include "ridge/gemm.h"

/* ---- layout views ---------------------------------------------------------------------------- */

typedef struct conv_view {
    ptrdiff_t sn, sh, sw; /* strides of image, row, pixel */
    ptrdiff_t cblk;       /* channels stored contiguously in a block (C for NHWC, 16 for
                           * NCHW16c, 1 for NCHW) */
    ptrdiff_t scb;        /* stride between channel blocks (NCHW16c), or per channel (NCHW) */
    ptrdiff_t sc;         /* stride between channels inside a block (1, or H*W for NCHW) */
} conv_view;

conv_view conv_view_make(ridge_layout l, int64_t c, int64_t h, int64_t w);
static inline ptrdiff_t conv_view_chan(const conv_view *v, int64_t c)
{
    return (ptrdiff_t)(c / v->cblk) * v->scb + (ptrdiff_t)(c % v->cblk) * v->sc;
}
/* Whether the offsets tab[0..n) hold contiguous runs of vl (n a multiple of vl, or vl = n). */
static inline int conv_runs_contiguous(const ptrdiff_t *tab, int n, int vl)
{
    for (int v = 0; v < n; v += vl)
        for (int j = 1; j < vl; j++)
            if (tab[v + j] != tab[v] + j) return 0;
    return 1;
}
/* Fills tab[0..c) with conv_view_chan. */
void conv_view_chan_table(const conv_view *v, int64_t c, ptrdiff_t *tab);
/* Per channel block g * nblk + b (nblk = per_group / nr rounded up) of a channel table: 1 when
 * the block has nr channels and each vector's offsets are contiguous, so that a tile stores
 * whole vectors (conv_row_args.yfast). A table for the plan, so no row call checks again.
 * NULL when out of memory. */
unsigned char *conv_yfast_table(const ptrdiff_t *tab, int64_t groups, int64_t per_group, int nr,
                                int vl);

/* Writes 0 into the padded channels of an NCHW16c tensor (no-op for other layouts). */
void conv_zero_channel_padding(float *y, ridge_layout l, int64_t n, int64_t c, int64_t h,
                               int64_t w);

/* ---- kernels --------------------------------------------------------------------------------- */

/* The register-tiled micro-kernel, run along a row of npix output pixels for NR output
 * channels. For pixel p and output channel j < NR:
 *   acc = sum_{r in [r0,r1), s in [s0,s1), k < kc}
 *            xb[xo + p*xps + roff[r] + soff[s] + coff[k]] * w[((r*S + s)*kc + k)*NR + j]
 *   y[yo + p*yps + yco[j]] = act(acc + bias[j] + res[same offset])
 * Offsets are only formed for taps in the ranges, so xo may point before the tensor (the
 * padding-free border: the caller narrows the ranges instead of padding the input). Direct,
 * pointwise, im2col (on the lowered strip) and Winograd (on the transformed tiles) all run on
 * it. */
typedef struct conv_row_args {
    const float *xb;
    ptrdiff_t xo, xps;
    const ptrdiff_t *roff, *soff, *coff;
    int cunit;               /* coff[k] == k for every k (the kernel then does not read it) */
    int r0, r1, s0, s1, S;
    int64_t kc;
    const float *w;          /* packed [R][S][kc][NR], zero beyond the valid channels */
    float *y;                /* output tensor base */
    ptrdiff_t yo, yps;
    const ptrdiff_t *yco;    /* offsets of the NR (nco valid) output channels */
    int nco;                 /* valid output channels, <= NR */
    int yfast;               /* nco == NR and each vector's channels are contiguous in y */
    int nt;                  /* with yfast: y is written with non-temporal stores (whole
                              * 64-byte lines: y aligned, NR channels per pixel per block) */
    const float *bias;       /* NR floats at this channel block (never NULL: zeros) */
    const float *res;        /* residual tensor base (same offsets as y) or NULL */
    int act;
    int64_t npix;
    int one_chain;           /* a lone pixel's sum in one chain, as in a tile (not tile_1's
                              * four): set where npix depends on the thread split */
    int pfx;                 /* pointwise with each pixel's kc inputs contiguous (xps == kc):
                              * a full tile prefetches the next tile's pixels */
    int edge;                /* row_edges only: bit 0, pixel 0 is the image's first column;
                              * bit 1, pixel npix - 1 its last */
    /* row_masked only: pixel p's own column taps [ps0[p], ps1[p]) within [s0, s1), and kc
     * zeros it reads for the taps outside them */
    const int *ps0, *ps1;
    const float *zx;
} conv_row_args;

/* Depthwise (groups = c_in = c_out) along a row of npix pixels, all channels, for layouts
 * whose channels are contiguous in vector-sized runs (NHWC, NCHW16c). Same addressing as
 * above with coff = yco-like channel tables for x (xco) and y (yco); w is [R][S][Cp]. */
typedef struct conv_dw_args {
    const float *xb;
    ptrdiff_t xo, xps;
    const ptrdiff_t *roff, *soff, *xco;
    int r0, r1, s0, s1, S;
    int64_t c, cp;           /* channels, and the padded row length of w */
    const float *w;
    float *y;
    ptrdiff_t yo, yps;
    const ptrdiff_t *yco;
    const float *bias;       /* cp floats (zeros past c) */
    const float *res;
    int act;
    int64_t npix;
    /* Row borders inside the call (forward 3x3 path; 0 elsewhere): pixel 0's first column tap
     * and pixel npix-1's last column tap fall outside the input, so they are skipped, not read
     * (the taps [s0, s1) hold for the other pixels). */
    int edge_l, edge_r;
    /* The blocked path for windows 4 to 7 columns wide (dw_row_wide; 0 elsewhere): the input
     * is iw columns wide and pixel 0's window starts padl columns left of it (negative: inside
     * it), so the call may hold border pixels, each with the taps inside the input. */
    int64_t iw, padl;
    /* Streamed (3x3 path's full 14-pixel blocks, nt = 1): y written as whole 64-byte lines of
     * non-temporal stores, and the input lines pf_rows rows below (pf_rs floats apart, the
     * first pf_off floats below the block's window origin) prefetched. Set only when y is
     * 64-byte aligned, yps and the 16-channel groups' yco are line multiples and c % 16 == 0;
     * the caller then issues the store fence. */
    int nt, pf_rows;
    /* cached (nt = 0), but the input prefetched as when streamed; windows 4 to 7 wide
     * (dw_row_wide) take only this path, and with nrows > 1 prefetch the pf_rows * nrows
     * rows below the call's last row */
    int pf;
    ptrdiff_t pf_off, pf_rs;
    /* nrows >= 1 output rows in one call, row i's offsets xo + i * xrs and yo + i * yrs, all
     * with the same taps, borders and pixels (the 3x3 path runs each block of pixels and
     * channels down the rows, so the input lines a block shares with the row below are still
     * in L1; the other paths take the rows one at a time) */
    int nrows;
    ptrdiff_t xrs, yrs;
    /* 3x3 at stride 2, NHWC, in place, channels >= 128 floats apart and c a multiple of 64,
     * y through the cache: blocks of 7 pixels x 4 channel vectors (dw_row_3x3_cwide; AVX-512
     * only, the other ISAs ignore it); 2: the same with the input prefetched (pf) */
    int cwide;
} conv_dw_args;

/* NCHW depthwise, one output row of one (image, channel) plane, w the channel's R x S taps:
 *   y[j] = act(sum_{r in [r0, r1), s < S, 0 <= j*sw - pl + s*dw < iw} w[r*S + s] *
 *              x[r*xrs + j*sw - pl + s*dw] + bias + res[j]),  j < ow
 * x points at the input row of kernel row 0 (only rows [r0, r1) are read). */
typedef struct conv_dwp_args {
    const float *x;
    ptrdiff_t xrs;           /* between kernel rows: dil_h * w */
    int r0, r1, S;
    int64_t dw, pl, sw, iw;  /* column dilation, left padding, stride, input width */
    const float *w;
    float *y;
    const float *res;        /* the residual row, or NULL */
    float bias;
    int act;
    int64_t ow;
} conv_dwp_args;

/* Weight gradient tile (the backward's dw on NHWC): mr <= MR input channels i x NR output
 * channels j, summed over nrow rows q of ncol pixels k:
 *   out[i*NR + j] += sum_{q, k} x[q*xrs + k*xps + i] * dy[q*yrs + k*yps + j]
 * out holds MR x NR floats (rows past mr untouched). x and dy are read through their strides
 * (x in place, dy packed; Winograd dw: the transformed V and Q): the forward's micro-kernel
 * with the pixels as the reduction and the channels as the tile. */
typedef struct conv_dwt_args {
    const float *x, *dy;
    ptrdiff_t xrs, xps, yrs, yps;
    int64_t nrow, ncol;
    int mr;
    float *out;
} conv_dwt_args;

/* Weight gradient of a thin layer (1-2 input channels): T (kernel tap, input channel) pairs
 * at once, each a broadcast from x at toff[t], against the NR output channels of dy; the
 * output pixels (nrow x ncol) are the reduction. x is a zero-padded copy of one image, so
 * every tap is inside it. out[t * NR + j] += sum dy[j] x[toff[t]]; with db, db[j] += sum dy[j]. */
typedef struct conv_dwtaps_args {
    const float *x, *dy;
    const ptrdiff_t *toff;
    ptrdiff_t xrs, xps, yrs, yps;
    int64_t nrow, ncol;
    int T;
    float *out, *db;
} conv_dwtaps_args;

/* Depthwise weight gradient of one vector of channels (VL lanes; conv_kernels.dwgrad): for
 * each tap (r, s) of an R x S window (S <= DWG_S_MAX), out[(r * S + s) * VL + lane] = the sum
 * over images and output pixels (i, j) whose tap lies inside the input of dy[n][i][j] *
 * x[n][i*sh - pt + r*dh][j*sw - pl + s*dw]. x and dy point at the vector's first channel in
 * image 0; ow0[s], ow1[s]: the output columns whose tap column s is inside the input. The sums
 * go in a fixed order (images, rows, then even and odd columns apart, added at the end): the
 * bits depend on the shape only. With db, db[lane] = the sum of dy over all output pixels
 * (each row's sum, then the rows'). */
#define DWG_S_MAX 7
typedef struct conv_dwg_args {
    const float *x, *dy;
    ptrdiff_t xsn, xsh, xsw, ysn, ysh, ysw;
    int64_t n, h, oh, ow;
    int R, S, sh, sw, dh, dw, pt, pl;
    const int *ow0, *ow1;
    float *out, *db;
} conv_dwg_args;

/* An alpha x alpha patch of an input with n channels contiguous: point (k, l), channel c at
 * x[o + k*sh + l*sw + c]. Points outside rows [k0, k1) or columns [l0, l1) are the padding:
 * zeros, never read (their offsets may fall outside x). */
typedef struct conv_patch {
    const float *x;
    ptrdiff_t o, sh, sw;
    int k0, k1, l0, l1;
} conv_patch;

/* The al x al patch whose point (0, 0) is pixel (ih0, iw0) of an h x w image at x[o] (the
 * image's first channel), rows sh and pixels sw floats apart. */
static inline void conv_patch_at(conv_patch *pt, const float *x, ptrdiff_t o, ptrdiff_t sh,
                                 ptrdiff_t sw, int64_t ih0, int64_t iw0, int64_t h, int64_t w,
                                 int al)
{
    pt->x = x, pt->o = o + ih0 * sh + iw0 * sw, pt->sh = sh, pt->sw = sw;
    pt->k0 = (int)RIDGE_MIN(RIDGE_MAX(-ih0, 0), al);
    pt->k1 = (int)RIDGE_MAX(RIDGE_MIN(h - ih0, al), 0);
    pt->l0 = (int)RIDGE_MIN(RIDGE_MAX(-iw0, 0), al);
    pt->l1 = (int)RIDGE_MAX(RIDGE_MIN(w - iw0, al), 0);
}

/* Winograd transforms on alpha x alpha tiles (alpha = m + 2), n channels innermost:
 *   in:  the patch d -> v[alpha*alpha] rows vs apart:  v = B^T d B   (per channel)
 *   out: mm[alpha*alpha] rows ms apart -> the mh x mw (<= m x m) outputs inside the image,
 *        y[yo + i*ysh + j*ysw + c] = act((A^T mm A)[i][j] + bias[c] + res[same]), channels
 *        contiguous in y. */
typedef void (*conv_wino_in_fn)(int m, const conv_patch *d, int64_t n, float *v, ptrdiff_t vs);
/* dy transform of the weight gradient (F(4,3) only): v[xi*vs + c] = (A dy A^T)[xi], A = at4^T,
 * for the mh x mw (<= 4 x 4) tile at y[i*ysh + j*ysw + c], zeros past it, c < n. */
typedef void (*conv_wino_dy_fn)(const float *y, ptrdiff_t ysh, ptrdiff_t ysw, int mh, int mw,
                                int64_t n, float *v, ptrdiff_t vs);
typedef void (*conv_wino_out_fn)(int m, const float *mm, ptrdiff_t ms, int64_t n, float *y,
                                 ptrdiff_t yo, ptrdiff_t ysh, ptrdiff_t ysw, int mh, int mw,
                                 const float *bias, const float *res, int act);

/* FFT convolution (conv-fft-template.h; strides in floats, one vector of channels per call;
 * tiles TH x TW, powers of 2, square or of one row or column; tw: twiddles e^{-2 pi i m / T},
 * m < T / 2, T = max(TH, TW)):
 *   fft_fwd:   2D real FFT of a TH x TW tile d[(i*TW + j) * dps] into the TH x (TW/2+1) bins at
 *              out[bin * obs] (real), out[bin * obs + oim] (imaginary), bin = u*(TW/2+1) + v
 *   fft_inv:   inverse of such a spectrum, unnormalized, keeping rows < mh and columns < mw:
 *              o[(i*mw + j) * ops]
 *   fft_cgemm: one bin: y[t][co] = sum_{k < kc} x[t][k] * w[k][co], complex, t < nt, VL
 *              output channels; real / imaginary parts xim, 2nd vector of w, yim apart */
typedef void (*conv_fft_fwd_fn)(int TH, int TW, const float *tw, const float *d, ptrdiff_t dps,
                                float *work, float *out, ptrdiff_t obs, ptrdiff_t oim);
typedef void (*conv_fft_inv_fn)(int TH, int TW, const float *tw, const float *in, ptrdiff_t ibs,
                                ptrdiff_t iim, float *work, int mh, int mw, float *o,
                                ptrdiff_t ops);
typedef void (*conv_fft_cgemm_fn)(const float *x, ptrdiff_t xts, ptrdiff_t xim, int64_t nt,
                                  int64_t kc, const float *w, float *y, ptrdiff_t yts,
                                  ptrdiff_t yim);

typedef struct conv_kernels {
    const char *name; /* "f32-conv-6x16-avx2" */
    ridge_isa isa;
    int vlen, mr, nr;
    void (*row)(const conv_row_args *a);
    /* row on two adjacent channel blocks of one group at once (same pixels and taps; b's
     * weights follow a's), or NULL where the registers do not hold the wider tile */
    void (*row_pair)(const conv_row_args *a, const conv_row_args *b);
    /* npix <= mr pixels along a row, each with its own column tap range (ps0, ps1): a row's
     * border pixels in one tile. Channels contiguous (cunit); coff is not read. */
    void (*row_masked)(const conv_row_args *a);
    void (*row_masked_pair)(const conv_row_args *a, const conv_row_args *b); /* or NULL */
    /* row for a 3-column window at stride 1 with padding 1 on each side and one input
     * channel per group, whose pixels may include the border columns (a->edge); npix > 4 when
     * a->edge has bit 0. NULL: the border columns go apart (direct_range). */
    void (*row_edges)(const conv_row_args *a);
    void (*dw_row)(const conv_dw_args *a);
    void (*dwp_row)(const conv_dwp_args *a);
    void (*dwt)(const conv_dwt_args *a);
    void (*dwtaps)(const conv_dwtaps_args *a);
    void (*dwgrad)(const conv_dwg_args *a);
    int dwtaps_max; /* the most taps dwtaps takes at once (its accumulators in registers) */
    conv_wino_in_fn wino_in;
    conv_wino_dy_fn wino_dy;
    conv_wino_out_fn wino_out;
    conv_fft_fwd_fn fft_fwd;
    conv_fft_inv_fn fft_inv;
    conv_fft_cgemm_fn fft_cgemm;
    /* dst[j * ds + i] = src[i * ss + j] for i < rows, j < cols (ridge_layout_reorder) */
    void (*transpose)(const float *src, size_t ss, float *dst, size_t ds, size_t rows,
                      size_t cols);
} conv_kernels;

extern const conv_kernels ridge_f32_conv_kernels__scalar;
extern const conv_kernels ridge_f32_conv_kernels__avx2;
extern const conv_kernels ridge_f32_conv_kernels__avx512;

const conv_kernels *conv_kernels_for(ridge_isa isa);

/* Winograd matrices (Lavin & Gray), row-major: BT alpha x alpha, G alpha x 3, AT m x alpha. */
typedef struct conv_wino_mats {
    int m, alpha;
    const float *bt, *g, *at;
} conv_wino_mats;
const conv_wino_mats *conv_wino_mats_get(int m);

/* ---- the plan -------------------------------------------------------------------------------- */

struct ridge_conv2d_plan {
    ridge_conv2d_desc d;
    int64_t oh, ow, cig, cog;   /* output size; channels per group */
    ridge_conv_algo algo;
    const conv_kernels *k;
    conv_view xv, yv;
    ptrdiff_t *xco, *yco;        /* channel offset tables: c_in and c_out(+nr) entries */
    ptrdiff_t *roff, *soff;      /* per kernel row / column tap offsets in x */
    ptrdiff_t *iota;             /* 0, 1, 2, ...: the contiguous channel table for buffers */
    float *zrow;                 /* cig zeros: row_masked's input for taps in the padding */
    float *wp;                   /* packed / transformed weights */
    size_t wp_elems;
    float *wref;                 /* the OIHW weights (reference algorithm only) */
    int gemm_route;              /* im2col / pointwise on ridge_sgemm (NCHW, NHWC) */
    ridge_sgemm_plan **gplan;    /* NHWC: per group, the prepacked B = W^T (K x cog) */
    int64_t ncob;                /* output channel blocks of NR per group */
    unsigned char *yfast;        /* conv_yfast_table of yco, per block g * ncob + cob */
    size_t ws_per_thread;        /* bytes */
    size_t ws_fixed;             /* bytes shared by the threads (FFT: the spectra) */
    int stream;                  /* ridge_conv2d_plan_options.stream */
    int stores;                  /* conv_stream_choice, decided once at plan creation */
    int fft_th, fft_tw;          /* FFT: tile rows x columns (powers of 2), 0 if it cannot apply */
    float *fft_twid;             /* FFT: twiddles e^{-2 pi i m / T}, (cos, -sin), m < T/2,
                                  * T = max(fft_th, fft_tw) */
    ridge_conv2d_candidate cand[RIDGE_CONV_ALGO_COUNT];
    char explain[4096];
};

/* conv-ref.c */
void conv_forward_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow, const float *x,
                      const float *w, float *y, const float *bias, int act, const float *res);

/* ---- tuning results (conv-tune.c) ------------------------------------------------------------ */

/* One shape's tuning: every candidate's median time, and the fastest. */
typedef struct conv_tune_entry {
    ridge_conv2d_desc d;
    ridge_isa isa;
    int threads;
    ridge_conv_algo algo;                   /* the fastest measured; AUTO when none ran */
    double measured[RIDGE_CONV_ALGO_COUNT]; /* seconds; 0: not measured */
} conv_tune_entry;

/* The entry for (d, isa, threads): this process's, else the machine's tuning file's
 * (conv-tune-<brand>.txt beside the roofline profile). 1 when found, where saying which
 * ("in this process" or "in PATH"). */
int conv_tune_lookup(const char *brand, const ridge_conv2d_desc *d, ridge_isa isa, int threads,
                     conv_tune_entry *out, char *where, size_t where_len);
/* Keeps e for this process and writes it into the machine's tuning file, replacing the line
 * for the same key. 1 when saved (where: the path); else 0, where saying why (no HOME, a file
 * that is not ours, an I/O error: the file is then left as it was). */
int conv_tune_store(const char *brand, const conv_tune_entry *e, char *where, size_t where_len);
void conv_tune_forget(void); /* drops this process's entries (tests) */
/* One line of the file, '\n'-terminated: the length it needs (as snprintf); and back: 1 if the
 * line is a valid entry (exact field count, a descriptor that validates, the named algorithm
 * the fastest of the times given). */
size_t conv_tune_format_line(const conv_tune_entry *e, char *buf, size_t size);
int conv_tune_parse_line(const char *line, conv_tune_entry *e);

/* conv-algos.c: the algorithms' plan parts and forward passes */
/* How the plan's forward writes y, and why (empty where the algorithm has no streamed path):
 * through the cache; non-temporal, past it (when y is 64-byte aligned); through the cache with
 * the depthwise input prefetched. Decided once, at plan creation (the plan's `stores`). */
enum { CONV_STORES_CACHED, CONV_STORES_STREAMED, CONV_STORES_PREFETCHED };
int conv_stream_choice(const ridge_conv2d_plan *p, char *why, size_t why_len);
ridge_status conv_algo_applies(const ridge_conv2d_desc *d, ridge_conv_algo a, char *why,
                               size_t why_len);
ridge_status conv_algo_pack(ridge_conv2d_plan *p, const float *w);
size_t conv_algo_ws_per_thread(const ridge_conv2d_plan *p, ridge_conv_algo a);

/* Per-thread workspace areas lie whole MiBs apart when more than one thread runs. Packed one
 * after another, Winograd's areas (509 KB each for the CNN's dx, F(4,3), 64 -> 32 channels
 * at 14 x 14, batch 64) ran that pass on 2 threads at 1.3x its 1-thread speed; 1 MiB apart,
 * at 1.5-1.6x (Zen 5, 2 vCPUs, session 40: `convbwd-time dx 64 32 14 64 2 6 201`, 1.03-1.25
 * -> 0.78-0.92 ms; the cause was not found, docs/PERFORMANCE.md). Spacing them by 64 KiB
 * gained 5%, by 256 KiB 20%, by whole 4 KiB pages nothing. The last area needs only its own
 * bytes, so the areas take less than threads - 1 MiB more than packed. */
#define CONV_AREA_SPACING ((size_t)1 << 20)
static inline size_t conv_area_stride(size_t bytes, int threads)
{
    return threads > 1 ? (bytes + CONV_AREA_SPACING - 1) / CONV_AREA_SPACING * CONV_AREA_SPACING
                       : bytes;
}
/* bytes of `threads` areas of `bytes` each, spaced by conv_area_stride */
static inline size_t conv_areas_bytes(size_t bytes, int threads)
{
    return threads < 2 ? bytes : (size_t)(threads - 1) * conv_area_stride(bytes, threads) + bytes;
}
/* ws: the per-thread areas; ridge_sgemm-route plans call ridge_sgemm from the calling thread
 * (it runs on ctx's pool and scratch arena itself), so ws must not come from that arena. */
/* wp: Winograd's transformed weights to use instead of p->wp (the backward's dx transforms
 * them per call), or NULL. */
ridge_status conv_algo_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *wp,
                               const float *x, float *y, const float *bias, const float *ubias,
                               int act, const float *res, char *ws);
/* Winograd: transforms the kernels of output-channel blocks [b0, b1) of (g * ncob + cob) into
 * U (p->wp's layout, p->wp_elems floats, zeros for the padded channels). rot = 0: w is p's
 * OIHW weights; rot = 1: w is the OIHW weights of the convolution p is the transpose of
 * (c_out = p's c_in), rotated by 180 degrees on the fly. */
void conv_wino_transform(const ridge_conv2d_plan *p, const float *w, int rot, int64_t b0,
                         int64_t b1, float *U);
/* conv.c: a forward pass without bias or epilogue through transformed weights wp (as
 * conv_algo_forward), ws: ridge_conv2d_workspace_size(p, ctx's threads) bytes. */
ridge_status conv_forward_with(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *wp,
                               const float *x, float *y, void *ws);
ridge_status conv_gemm_pack(ridge_ctx *ctx, ridge_conv2d_plan *p, const float *w);
/* test-conv: the least x + y bytes per thread of a depthwise layer (0: split every layer; < 0:
 * the default, DW_MIN_BYTES_PER_THREAD) */
void conv_set_dw_min_bytes_for_tests(double bytes);
/* test-conv: the depthwise threads' claims on [0, n) (nth threads, chunks of `chunk`), played
 * in one thread: every thread claims once, then `first` claims until none is left to it, then
 * the others in turn. Returns how many items were not claimed exactly once (or -1: out of
 * memory); *helped: items `first` took from a share whose own thread had started. */
long conv_shares_check_for_tests(size_t n, int nth, size_t chunk, int apart, int first,
                                 size_t *helped);
/* The fused depthwise-separable block (NHWC): rows of depthwise output per strip, and the pass. */
int64_t conv_separable_strip_rows(const ridge_conv2d_plan *dw);
/* Biases padded as ridge_conv2d_forward pads them. */
void conv_separable_forward(ridge_ctx *ctx, const ridge_conv2d_plan *dw,
                            const ridge_conv2d_plan *pw, const float *x, float *y,
                            const float *dw_bias, int dw_act, const float *pw_bias, int pw_act,
                            const float *res, float *strip);
/* conv-fft.c: the FFT algorithm. conv_fft_tile returns the cost model's terms for the tile
 * TH x TW it picks for p's shape on a machine of `peak` FLOP/s and `bw` bytes/s: the fastest
 * predicted, or th x tw when both are given (th, tw 0: free); th = tw = 0 in the result when
 * no tile fits. */
#define CONV_FFT_MAX_SQUARE 64   /* a 2-D kernel's square tile, at most */
#define CONV_FFT_MAX_SIDE 512    /* a 1-D kernel's tile (1 x TW, TH x 1), at most */
typedef struct conv_fft_cost {
    int th, tw;          /* tile rows, columns */
    double gemm_flops;   /* the per-bin complex GEMMs */
    double fft_flops;    /* the transforms */
    double compute_s;    /* both at their measured efficiencies */
    double weight_bytes; /* the transformed weights */
    double spectra_bytes; /* the spectra out and back, and the weights' re-streaming */
} conv_fft_cost;
conv_fft_cost conv_fft_tile(const ridge_conv2d_plan *p, int th, int tw, double peak, double bw);
size_t conv_fft_ws_fixed(const ridge_conv2d_plan *p);
size_t conv_fft_ws_per_thread(const ridge_conv2d_plan *p);
size_t conv_fft_weight_elems(const ridge_conv2d_plan *p);
ridge_status conv_fft_pack(ridge_conv2d_plan *p, const float *w);
/* ws: ws_fixed bytes, then the per-thread areas; bias padded to whole vectors */
void conv_fft_forward(ridge_ctx *ctx, const ridge_conv2d_plan *p, const float *x, float *y,
                      const float *bias, int act, const float *res, char *ws);

/* Whether algorithm a runs on ridge_sgemm for d (im2col and pointwise in NCHW and NHWC). */
int conv_gemm_route(const ridge_conv2d_desc *d, ridge_conv_algo a);

#endif /* RIDGE_CONV_INTERNAL_H */
