/* The int8 direct and depthwise convolution micro-kernels (lowp-internal.h, qconv_args),
 * written once over the same mapping as qgemm-template.h, which includes this file: an ISA
 * file's VI_DOT, VI_BCAST32 and loads serve both, so the AVX2 tests validate the logic of
 * every variant. Each kernel only forms the int32 sums of an MR-pixel x NR-channel tile in
 * `part`; the caller runs the GEMM micro-kernel's epilogue on it (kg = 0), so the
 * requantization is the GEMM's, bit for bit.
 *
 * Both read an image that the caller has padded with the input zero point and whose elements
 * are the GEMM's A elements (int16 pairs for KG 2, bytes for KG 4): no border cases, every tap
 * of every window is a valid read, and the zero point's share, za * sum of the weights, is a
 * per-channel constant the epilogue subtracts (colsum), exactly as in the GEMM.
 *
 *   direct (groups 1): per tap, per group of KG input channels, NV weight vectors (the
 *     NR-column panel of the OHWI weights) and MR broadcast words of the image feed MR * NV
 *     dot instructions: the GEMM's micro-kernel with A read in place instead of packed.
 *   depthwise: vectors run along the channels; per tap, each pixel's VL channels are widened
 *     to int32 and multiplied by the tap's int32 weights (vpmulld: exact, |x w| <= 255 * 128),
 *     MR * NV independent chains. */

_Static_assert(Q_MR <= QCONV_MAX_MR && Q_NR <= 32, "qconv.c's part buffer holds QCONV_MAX_MR x 32");

#if Q_ELEM_BITS == 16
#define Q_WIDEN(p) VI_WIDEN_I16(p)
#else
#define Q_WIDEN(p) VI_WIDEN_U8(p)
#endif

static void Q_DCONV(const qconv_args *a)
{
    vi acc[Q_MR][Q_NV];
    const uint8_t *xr[Q_MR];
    for (int r = 0; r < Q_MR; r++) {
        xr[r] = a->x[r];
        for (int v = 0; v < Q_NV; v++) acc[r][v] = VI_ZERO();
    }
    const int32_t *bp = a->w;
    for (int t = 0; t < a->taps; t++) {
        const ptrdiff_t o = a->toff[t];
        for (size_t g = 0; g < a->cg; g++, bp += Q_NR) {
            vi b[Q_NV];
            for (int v = 0; v < Q_NV; v++) b[v] = VI_LOAD(bp + v * VL);
            for (int r = 0; r < Q_MR; r++) {
                const vi x = VI_BCAST32(xr[r] + o + 4 * g);
                for (int v = 0; v < Q_NV; v++) acc[r][v] = VI_DOT(acc[r][v], x, b[v]);
            }
        }
    }
    for (int r = 0; r < Q_MR; r++)
        for (int v = 0; v < Q_NV; v++) VI_STORE(a->part + r * Q_NR + v * VL, acc[r][v]);
}

static void Q_DWCONV(const qconv_args *a)
{
    vi acc[Q_MR][Q_NV];
    const uint8_t *xr[Q_MR];
    for (int r = 0; r < Q_MR; r++) {
        xr[r] = a->x[r];
        for (int v = 0; v < Q_NV; v++) acc[r][v] = VI_ZERO();
    }
    for (int t = 0; t < a->taps; t++) {
        const ptrdiff_t o = a->toff[t];
        vi w[Q_NV];
        for (int v = 0; v < Q_NV; v++) w[v] = VI_LOAD(a->w + (size_t)t * a->wstride + v * VL);
        for (int r = 0; r < Q_MR; r++)
            for (int v = 0; v < Q_NV; v++) {
                const vi x = Q_WIDEN(xr[r] + o + v * VL * (Q_ELEM_BITS / 8));
                acc[r][v] = VI_ADD(acc[r][v], VI_MULLO(x, w[v]));
            }
    }
    for (int r = 0; r < Q_MR; r++)
        for (int v = 0; v < Q_NV; v++) VI_STORE(a->part + r * Q_NR + v * VL, acc[r][v]);
}

#undef Q_WIDEN
