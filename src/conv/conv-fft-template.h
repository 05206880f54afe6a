/* The FFT convolution's kernels, written once for every ISA (included by conv-template.h, so
 * it uses the same vector mapping, plus VFNMA(a, b, c) = c - a * b).
 *
 * Every transform is vectorized across channels: a "sample" is a vector of VL channels, and
 * a complex value is a pair of such vectors (split real / imaginary), so a butterfly is a few
 * vertical multiply-adds with a broadcast twiddle and never a shuffle. One call transforms
 * one tile for one vector of channels; the tile work area (TH x (TW/2 + 1) complex vectors:
 * 34 KiB at 32 x 32 on AVX2) stays in L1/L2. A tile is TH rows by TW columns, powers of 2 up
 * to FFT_MAXT: square, or one row (1 x 256 for a 1 x 63 kernel), or one column; so every FFT
 * longer than 1 has the length of the twiddle table, the longer side's.
 *
 *   fft_c      in-place iterative radix-2 decimation-in-time FFT of length T (a power of 2,
 *              <= FFT_MAXT) on VF arrays: bit-reversal permutation, then log2 T passes of T/2
 *              butterflies, the twiddle e^{-2 pi i k / len} broadcast once per k.
 *   fft_fwd    2D real-to-complex FFT of a TH x TW real tile: rows two at a time as one complex
 *              FFT (row a as the real part, row a+1 as the imaginary part, zero past the last
 *              row) separated by Hermitian symmetry into the bins 0..TW/2 of each, then the
 *              TW/2 + 1 columns as complex FFTs of length TH.
 *   fft_inv    the inverse, computing only what overlap-save keeps: the column FFTs, then only
 *              the first mh rows (two per complex FFT, rebuilt from the half spectrum), and
 *              only the first mw columns stored. No 1/(TH TW) here: it is in the weights.
 *   fft_cgemm  the channel reduction at one frequency bin: Y[t][co] = sum_ci X[t][ci] *
 *              W[ci][co] in complex arithmetic, 4 tiles x 1 vector of output channels, 8
 *              accumulators (real, imaginary), 4 FMAs per complex multiply-add. */

#define FFT_MAXT 512

/* tw: e^{-2 pi i m / T} for m < T / 2, as (cos, -sin) pairs */
static void fft_c(VF *re, VF *im, int T, const float *tw, int inverse)
{
    for (int i = 1, j = 0; i < T; i++) { /* bit-reversal permutation */
        int bit = T >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            VF t = re[i];
            re[i] = re[j], re[j] = t;
            t = im[i], im[i] = im[j], im[j] = t;
        }
    }
    for (int len = 2; len <= T; len <<= 1) {
        const int half = len >> 1, step = T / len;
        for (int k = 0; k < half; k++) {
            /* tw holds e^{-2 pi i m / T} as (cos, -sin) pairs; the inverse conjugates it */
            const VF wr = VSET1(tw[2 * k * step]);
            const VF wi = VSET1(inverse ? -tw[2 * k * step + 1] : tw[2 * k * step + 1]);
            for (int i = k; i < T; i += len) {
                const int j = i + half;
                VF tr = VFNMA(wi, im[j], VMUL(wr, re[j]));
                VF ti = VFMA(wi, re[j], VMUL(wr, im[j]));
                re[j] = VSUB(re[i], tr), im[j] = VSUB(im[i], ti);
                re[i] = VADD(re[i], tr), im[i] = VADD(im[i], ti);
            }
        }
    }
}

/* d: the TH x TW real tile, pixel (i, j) at d[(i*TW + j) * dps] (VL channels); work:
 * TH*(TW/2+1) complex vectors; out: bin (u, v) (u < TH the row frequency, v <= TW/2 the column
 * one) at out[(u*(TW/2+1) + v) * obs], real part there, imaginary part oim floats further. */
static void conv_fft_fwd(int TH, int TW, const float *tw, const float *d, ptrdiff_t dps,
                         float *work, float *out, ptrdiff_t obs, ptrdiff_t oim)
{
    const int H = TW / 2 + 1;
    const VF half = VSET1(0.5f);
    VF re[FFT_MAXT], im[FFT_MAXT];
    for (int a = 0; a < TH; a += 2) { /* rows a, a+1 (zero past the last) */
        const int two = a + 1 < TH;
        for (int j = 0; j < TW; j++) {
            re[j] = VLOAD(d + (a * TW + j) * dps);
            im[j] = two ? VLOAD(d + ((a + 1) * TW + j) * dps) : VZERO();
        }
        fft_c(re, im, TW, tw, 0);
        /* Z = A + iB with A, B real rows: A[k] = (Z[k] + conj Z[TW-k]) / 2,
         * B[k] = (Z[k] - conj Z[TW-k]) / 2i */
        for (int k = 0; k < H; k++) {
            const int nk = (TW - k) & (TW - 1);
            float *ha = work + (a * H + k) * 2 * VL, *hb = ha + H * 2 * VL;
            VSTORE(ha, VMUL(half, VADD(re[k], re[nk])));
            VSTORE(ha + VL, VMUL(half, VSUB(im[k], im[nk])));
            if (!two) continue;
            VSTORE(hb, VMUL(half, VADD(im[k], im[nk])));
            VSTORE(hb + VL, VMUL(half, VSUB(re[nk], re[k])));
        }
    }
    for (int v = 0; v < H; v++) { /* columns */
        for (int u = 0; u < TH; u++) {
            re[u] = VLOAD(work + (u * H + v) * 2 * VL);
            im[u] = VLOAD(work + (u * H + v) * 2 * VL + VL);
        }
        fft_c(re, im, TH, tw, 0);
        for (int u = 0; u < TH; u++) {
            float *o = out + (u * H + v) * obs;
            VSTORE(o, re[u]);
            VSTORE(o + oim, im[u]);
        }
    }
}

/* in: the product spectrum, laid out as fft_fwd's out (ibs, iim); writes rows i < mh,
 * columns j < mw of the (unnormalized) inverse to o[(i*mw + j) * ops]. */
static void conv_fft_inv(int TH, int TW, const float *tw, const float *in, ptrdiff_t ibs,
                         ptrdiff_t iim, float *work, int mh, int mw, float *o, ptrdiff_t ops)
{
    const int H = TW / 2 + 1;
    VF re[FFT_MAXT], im[FFT_MAXT];
    for (int v = 0; v < H; v++) { /* columns: only rows < mh are kept */
        for (int u = 0; u < TH; u++) {
            re[u] = VLOAD(in + (u * H + v) * ibs);
            im[u] = VLOAD(in + (u * H + v) * ibs + iim);
        }
        fft_c(re, im, TH, tw, 1);
        for (int i = 0; i < mh; i++) {
            VSTORE(work + (i * H + v) * 2 * VL, re[i]);
            VSTORE(work + (i * H + v) * 2 * VL + VL, im[i]);
        }
    }
    for (int a = 0; a < mh; a += 2) { /* rows a, a+1 as Z = A + iB, full spectra rebuilt */
        const int two = a + 1 < mh;
        for (int k = 0; k < TW; k++) {
            const int kk = k < H ? k : TW - k; /* A[k] = conj A[TW-k] past TW/2 */
            const float *ha = work + (a * H + kk) * 2 * VL, *hb = ha + H * 2 * VL;
            VF ar = VLOAD(ha), ai = VLOAD(ha + VL);
            VF br = two ? VLOAD(hb) : VZERO(), bi = two ? VLOAD(hb + VL) : VZERO();
            if (k >= H) ai = VSUB(VZERO(), ai), bi = VSUB(VZERO(), bi);
            re[k] = VSUB(ar, bi);
            im[k] = VADD(ai, br);
        }
        fft_c(re, im, TW, tw, 1);
        for (int j = 0; j < mw; j++) {
            VSTORE(o + (a * mw + j) * ops, re[j]);
            if (two) VSTORE(o + ((a + 1) * mw + j) * ops, im[j]);
        }
    }
}

/* One frequency bin, one vector of output channels: for t < nt,
 *   y[t*yts + {0, yim}] = sum_{k < kc} x[t*xts + {0, xim} + k] * w[k*2*VL + {0, VL}]
 * (complex: real parts at +0, imaginary at +xim / +VL / +yim). */
static void conv_fft_cgemm(const float *x, ptrdiff_t xts, ptrdiff_t xim, int64_t nt, int64_t kc,
                           const float *w, float *y, ptrdiff_t yts, ptrdiff_t yim)
{
    int64_t t = 0;
    for (; t + 4 <= nt; t += 4) {
        VF r0 = VZERO(), i0 = VZERO(), r1 = VZERO(), i1 = VZERO();
        VF r2 = VZERO(), i2 = VZERO(), r3 = VZERO(), i3 = VZERO();
        const float *x0 = x + t * xts, *wp = w;
        for (int64_t k = 0; k < kc; k++, wp += 2 * VL) {
            const VF wr = VLOAD(wp), wi = VLOAD(wp + VL);
            VF a = VBCAST(x0 + k), b = VBCAST(x0 + xim + k);
            r0 = VFNMA(b, wi, VFMA(a, wr, r0)), i0 = VFMA(b, wr, VFMA(a, wi, i0));
            a = VBCAST(x0 + xts + k), b = VBCAST(x0 + xts + xim + k);
            r1 = VFNMA(b, wi, VFMA(a, wr, r1)), i1 = VFMA(b, wr, VFMA(a, wi, i1));
            a = VBCAST(x0 + 2 * xts + k), b = VBCAST(x0 + 2 * xts + xim + k);
            r2 = VFNMA(b, wi, VFMA(a, wr, r2)), i2 = VFMA(b, wr, VFMA(a, wi, i2));
            a = VBCAST(x0 + 3 * xts + k), b = VBCAST(x0 + 3 * xts + xim + k);
            r3 = VFNMA(b, wi, VFMA(a, wr, r3)), i3 = VFMA(b, wr, VFMA(a, wi, i3));
        }
        float *y0 = y + t * yts;
        VSTORE(y0, r0), VSTORE(y0 + yim, i0);
        VSTORE(y0 + yts, r1), VSTORE(y0 + yts + yim, i1);
        VSTORE(y0 + 2 * yts, r2), VSTORE(y0 + 2 * yts + yim, i2);
        VSTORE(y0 + 3 * yts, r3), VSTORE(y0 + 3 * yts + yim, i3);
    }
    for (; t < nt; t++) {
        VF r = VZERO(), i = VZERO();
        const float *x0 = x + t * xts, *wp = w;
        for (int64_t k = 0; k < kc; k++, wp += 2 * VL) {
            const VF wr = VLOAD(wp), wi = VLOAD(wp + VL);
            const VF a = VBCAST(x0 + k), b = VBCAST(x0 + xim + k);
            r = VFNMA(b, wi, VFMA(a, wr, r)), i = VFMA(b, wr, VFMA(a, wi, i));
        }
        VSTORE(y + t * yts, r), VSTORE(y + t * yts + yim, i);
    }
}
