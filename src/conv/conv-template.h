/* The conv kernels, written once. Each ISA file defines the thin vector mapping below and
 * then includes this header, so the AVX2 build's passing tests validate the logic the AVX-512
 * build shares (only the mapping differs):
 *
 *   VF             vector type of VL floats           VZERO()          all zero
 *   VLOAD(p)       unaligned load                     VSTORE(p, v)     unaligned store
 *   VBCAST(p)      broadcast *p                       VFMA(a, b, c)    a * b + c
 *   VADD(a, b)     a + b                              VMAX(a, b)       lane max
 *   KNAME          the kernel table's symbol          KNAME_STR, KISA  its name and ISA
 *
 * Micro-kernel (row): MR = 6 output pixels x NR = 2 vectors of output channels, 12 vector
 * accumulators (AVX2 6x16: 12 of 16 ymm, AVX-512 6x32: 12 of 32 zmm), enough independent FMA
 * chains to cover the 4-cycle FMA latency on two pipes. The reduction runs over the window's
 * valid taps and the group's input channels, so the input is read in place (no im2col, no
 * padded copy). Per reduction step: 2 weight vectors, 6 broadcasts, 12 FMAs.
 *
 * Depthwise (dw_row): 4 pixels x 1 vector of channels, 4 independent chains over the window
 * taps; channels past the last full vector go through a scalar tail.
 *
 * Winograd transforms: plain loops with the channel loop innermost, compiled with the ISA's
 * flags so they vectorize. */
#include <string.h>

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

/* Stores rows [0, mr) of a tile with the epilogue. acc[p][0..NR) holds the raw sums. */
static void store_tile(const conv_row_args *a, int64_t p0, int mr, VF acc[MR][2])
{
    float *y = a->y;
    if (a->yfast) {
        VF b0 = VLOAD(a->bias), b1 = VLOAD(a->bias + VL);
        for (int p = 0; p < mr; p++) {
            ptrdiff_t o = a->yo + (p0 + p) * a->yps;
            VF v0 = VADD(acc[p][0], b0), v1 = VADD(acc[p][1], b1);
            if (a->res) {
                v0 = VADD(v0, VLOAD(a->res + o + a->yco[0]));
                v1 = VADD(v1, VLOAD(a->res + o + a->yco[VL]));
            }
            VSTORE(y + o + a->yco[0], act_apply(v0, a->act));
            VSTORE(y + o + a->yco[VL], act_apply(v1, a->act));
        }
        return;
    }
    float t[2 * VL];
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

/* A full tile of MR pixels: the hot loop. */
static void tile_full(const conv_row_args *a, int64_t p0)
{
    VF c00 = VZERO(), c01 = VZERO(), c10 = VZERO(), c11 = VZERO(), c20 = VZERO(), c21 = VZERO();
    VF c30 = VZERO(), c31 = VZERO(), c40 = VZERO(), c41 = VZERO(), c50 = VZERO(), c51 = VZERO();
    const ptrdiff_t xps = a->xps;
    const int64_t kc = a->kc;
    const ptrdiff_t *coff = a->coff;
    for (int r = a->r0; r < a->r1; r++) {
        for (int s = a->s0; s < a->s1; s++) {
            const float *x = a->xb + (a->xo + p0 * xps + a->roff[r] + a->soff[s]);
            const float *w = a->w + ((int64_t)r * a->S + s) * kc * NR;
            for (int64_t k = 0; k < kc; k++, w += NR) {
                const float *xk = x + coff[k];
                VF b0 = VLOAD(w), b1 = VLOAD(w + VL), t;
                t = VBCAST(xk);
                c00 = VFMA(t, b0, c00), c01 = VFMA(t, b1, c01);
                t = VBCAST(xk + xps);
                c10 = VFMA(t, b0, c10), c11 = VFMA(t, b1, c11);
                t = VBCAST(xk + 2 * xps);
                c20 = VFMA(t, b0, c20), c21 = VFMA(t, b1, c21);
                t = VBCAST(xk + 3 * xps);
                c30 = VFMA(t, b0, c30), c31 = VFMA(t, b1, c31);
                t = VBCAST(xk + 4 * xps);
                c40 = VFMA(t, b0, c40), c41 = VFMA(t, b1, c41);
                t = VBCAST(xk + 5 * xps);
                c50 = VFMA(t, b0, c50), c51 = VFMA(t, b1, c51);
            }
        }
    }
    VF acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
    store_tile(a, p0, MR, acc);
}

/* The last mr < MR pixels (also the single border pixels the caller sends one by one). */
static void tile_part(const conv_row_args *a, int64_t p0, int mr)
{
    VF acc[MR][2];
    for (int p = 0; p < MR; p++) acc[p][0] = acc[p][1] = VZERO();
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

static void conv_row(const conv_row_args *a)
{
    int64_t p = 0;
    for (; p + MR <= a->npix; p += MR) tile_full(a, p);
    if (p < a->npix) tile_part(a, p, (int)(a->npix - p));
}

/* ---- depthwise ---------------------------------------------------------------------------- */

static void conv_dw_row(const conv_dw_args *a)
{
    const int64_t cfull = a->c / VL * VL;
    for (int64_t p0 = 0; p0 < a->npix; p0 += 4) {
        int np = a->npix - p0 < 4 ? (int)(a->npix - p0) : 4;
        ptrdiff_t xo = a->xo + p0 * a->xps, yo = a->yo + p0 * a->yps;
        for (int64_t c = 0; c < cfull; c += VL) {
            VF acc[4] = {VZERO(), VZERO(), VZERO(), VZERO()};
            for (int r = a->r0; r < a->r1; r++) {
                for (int s = a->s0; s < a->s1; s++) {
                    VF wv = VLOAD(a->w + ((int64_t)r * a->S + s) * a->cp + c);
                    const float *x = a->xb + (xo + a->roff[r] + a->soff[s] + a->xco[c]);
                    if (np == 4) {
                        acc[0] = VFMA(VLOAD(x), wv, acc[0]);
                        acc[1] = VFMA(VLOAD(x + a->xps), wv, acc[1]);
                        acc[2] = VFMA(VLOAD(x + 2 * a->xps), wv, acc[2]);
                        acc[3] = VFMA(VLOAD(x + 3 * a->xps), wv, acc[3]);
                    } else {
                        for (int p = 0; p < np; p++)
                            acc[p] = VFMA(VLOAD(x + p * a->xps), wv, acc[p]);
                    }
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

/* ---- Winograd transforms ---------------------------------------------------------------------- */

/* v[i][j] = sum_k,l BT[i][k] d[k][l] BT[j][l], per channel, skipping the zeros of BT. */
static void conv_wino_in(int m, const float *d, int64_t n, float *v, ptrdiff_t vs)
{
    const conv_wino_mats *W = conv_wino_mats_get(m);
    const int al = W->alpha;
    float t[8 * 8 * 64]; /* BT d for one 64-channel chunk */
    for (int64_t c0 = 0; c0 < n; c0 += 64) {
        int64_t nc = n - c0 < 64 ? n - c0 : 64;
        for (int i = 0; i < al; i++)
            for (int l = 0; l < al; l++) {
                float *ti = t + (i * al + l) * 64;
                for (int64_t c = 0; c < nc; c++) ti[c] = 0.0f;
                for (int k = 0; k < al; k++) {
                    float b = W->bt[i * al + k];
                    if (b == 0.0f) continue;
                    const float *dk = d + (k * al + l) * n + c0;
                    for (int64_t c = 0; c < nc; c++) ti[c] += b * dk[c];
                }
            }
        for (int i = 0; i < al; i++)
            for (int j = 0; j < al; j++) {
                float *vij = v + (i * al + j) * vs + c0;
                for (int64_t c = 0; c < nc; c++) vij[c] = 0.0f;
                for (int l = 0; l < al; l++) {
                    float b = W->bt[j * al + l];
                    if (b == 0.0f) continue;
                    const float *ti = t + (i * al + l) * 64;
                    for (int64_t c = 0; c < nc; c++) vij[c] += b * ti[c];
                }
            }
    }
}

/* o[i][j] = sum_k,l AT[i][k] mm[k][l] AT[j][l], per channel. */
static void conv_wino_out(int m, const float *mm, ptrdiff_t ms, int64_t n, float *o)
{
    const conv_wino_mats *W = conv_wino_mats_get(m);
    const int al = W->alpha;
    float t[4 * 8 * 64];
    for (int64_t c0 = 0; c0 < n; c0 += 64) {
        int64_t nc = n - c0 < 64 ? n - c0 : 64;
        for (int i = 0; i < m; i++)
            for (int l = 0; l < al; l++) {
                float *ti = t + (i * al + l) * 64;
                for (int64_t c = 0; c < nc; c++) ti[c] = 0.0f;
                for (int k = 0; k < al; k++) {
                    float b = W->at[i * al + k];
                    if (b == 0.0f) continue;
                    const float *mk = mm + (k * al + l) * ms + c0;
                    for (int64_t c = 0; c < nc; c++) ti[c] += b * mk[c];
                }
            }
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) {
                float *oij = o + (i * m + j) * n + c0;
                for (int64_t c = 0; c < nc; c++) oij[c] = 0.0f;
                for (int l = 0; l < al; l++) {
                    float b = W->at[j * al + l];
                    if (b == 0.0f) continue;
                    const float *ti = t + (i * al + l) * 64;
                    for (int64_t c = 0; c < nc; c++) oij[c] += b * ti[c];
                }
            }
    }
}

const conv_kernels KNAME = {
    .name = KNAME_STR,
    .isa = KISA,
    .vlen = VL,
    .mr = MR,
    .nr = NR,
    .row = conv_row,
    .dw_row = conv_dw_row,
    .wino_in = conv_wino_in,
    .wino_out = conv_wino_out,
};
