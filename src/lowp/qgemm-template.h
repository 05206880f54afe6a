/* The int8 GEMM micro-kernel, written once for any vector width and dot instruction. An ISA
 * file defines the thin mapping below and includes this header; the AVX2, AVX-VNNI and
 * AVX512-VNNI kernels differ only in that mapping, so the AVX2 tests validate the logic of
 * all three.
 *
 * The ISA file defines, before including:
 *   Q_MR, Q_NV, Q_KG   rows of the tile, vectors per row (NR = Q_NV * VL), k per packed word
 *   Q_ELEM_BITS        bits per element in a packed word (16: AVX2 int16 pairs; 8: VNNI bytes)
 *   Q_UKERNEL, Q_TABLE, Q_NAME   the kernel's symbol, its lowp_kernel table, its name
 *   Q_DCONV, Q_DWCONV  the direct and depthwise convolution kernels' symbols (qconv-template.h)
 *   VL                 int32 lanes per vector; vi, vf the integer and float vector types
 *   VI_ZERO() VI_SET1(x) VI_LOAD(p) VI_STORE(p, x) VI_ADD VI_SUB VI_MULLO VI_MAX
 *   VI_BCAST32(p)      the 32-bit word at p in every lane
 *   VI_DOT(acc, a, b)  acc + the KG-element dot products of words a (A, unsigned) and b (B,
 *                      signed), per lane, exact in int32 (wrapping)
 *   VI_MASKLOAD(p, n) VF_MASKLOAD(p, n)   lanes [0, n) loaded, the rest 0 and not accessed
 *   VF_SET1 VF_STORE VF_MUL VF_MIN VF_MAX  VF_FROM_I(x) (RNE)  VI_FROM_F(x) (RNE)
 *   V_STORE8(p, x, sgn)  the VL lanes (already in byte range) as VL bytes at p
 *   VI_WIDEN_I16(p) VI_WIDEN_U8(p)  VL int16 / uint8 elements at p widened to int32 lanes
 *
 * Algorithm (BLIS micro-kernel on int32 accumulators): the MR x NR tile lives in MR * NV
 * vector registers for the k block; per k group it loads NV words-vectors of B, broadcasts MR
 * words of A and issues MR * NV dot instructions, each doing VL * KG multiply-adds. The k
 * blocks of one tile chain through `part` (int32, exact, so blocking never changes a bit).
 * After the last block the epilogue runs on the registers: subtract za * colsum(B), add the
 * bias, then the requantization of lowp-internal.h's qgemm_finish_scalar, op for op. */
#include <stdint.h>
#include <string.h>

#include "lowp/lowp-internal.h"

#define Q_NR (Q_NV * VL)

static inline __attribute__((always_inline)) void q_store(void *c, size_t ldc, size_t r, int v,
                                                          size_t nr, ridge_lowp_type out,
                                                          vi x, vf f)
{
    const size_t col = (size_t)v * VL, n = nr - col < VL ? nr - col : VL;
    union { int32_t i[VL]; float f[VL]; int8_t b[VL]; } tmp;
    switch (out) {
    case RIDGE_LOWP_S32: {
        int32_t *p = (int32_t *)c + r * ldc + col;
        if (n == VL) VI_STORE(p, x);
        else VI_STORE(tmp.i, x), memcpy(p, tmp.i, n * 4);
        break;
    }
    case RIDGE_LOWP_F32: {
        float *p = (float *)c + r * ldc + col;
        if (n == VL) VF_STORE(p, f);
        else VF_STORE(tmp.f, f), memcpy(p, tmp.f, n * 4);
        break;
    }
    default: {
        int8_t *p = (int8_t *)c + r * ldc + col;
        if (n == VL) V_STORE8(p, x, out == RIDGE_LOWP_S8);
        else V_STORE8(tmp.b, x, out == RIDGE_LOWP_S8), memcpy(p, tmp.b, n);
        break;
    }
    }
}

static void Q_UKERNEL(size_t kg, const void *ap_, const void *bp_, void *part_, int first,
                      int last, void *c, size_t ldc, size_t mr, size_t nr, const void *tile)
{
    const int32_t *ap = ap_, *bp = bp_;
    int32_t *part = part_;
    vi acc[Q_MR][Q_NV];
    for (int r = 0; r < Q_MR; r++)
        for (int v = 0; v < Q_NV; v++)
            acc[r][v] = first ? VI_ZERO() : VI_LOAD(part + r * Q_NR + v * VL);
    for (size_t g = 0; g < kg; g++) {
        vi b[Q_NV];
        for (int v = 0; v < Q_NV; v++) b[v] = VI_LOAD(bp + v * VL);
        for (int r = 0; r < Q_MR; r++) {
            const vi a = VI_BCAST32(ap + r);
            for (int v = 0; v < Q_NV; v++) acc[r][v] = VI_DOT(acc[r][v], a, b[v]);
        }
        ap += Q_MR;
        bp += Q_NR;
    }
    if (!last) {
        for (int r = 0; r < Q_MR; r++)
            for (int v = 0; v < Q_NV; v++) VI_STORE(part + r * Q_NR + v * VL, acc[r][v]);
        return;
    }
    /* the epilogue, per column vector: compensation, bias, scale, clamp bounds */
    const qgemm_tile *t = tile;
    vi comp[Q_NV], bias[Q_NV];
    vf scale[Q_NV];
    for (int v = 0; v < Q_NV; v++) {
        long left = (long)nr - (long)v * VL;
        int n = left <= 0 ? 0 : left > VL ? VL : (int)left;
        comp[v] = VI_MULLO(VI_SET1(t->za), VI_LOAD(t->colsum + v * VL));
        bias[v] = t->bias && n ? VI_MASKLOAD(t->bias + v * VL, n) : VI_ZERO();
        scale[v] = !t->scale        ? VF_SET1(0.0f) /* int32 output: unused */
                   : !t->per_channel ? VF_SET1(t->scale[0])
                   : n               ? VF_MASKLOAD(t->scale + v * VL, n)
                                     : VF_SET1(0.0f);
    }
    const vf lo = VF_SET1(t->lo), hi = VF_SET1(t->hi), fzero = VF_SET1(0.0f);
    const vi zo = VI_SET1(t->zo), izero = VI_ZERO();
    /* constant trip counts, so acc[r][v] stays a register after unrolling */
    for (int r = 0; r < Q_MR; r++) {
        if ((size_t)r >= mr) break;
        for (int v = 0; v < Q_NV; v++) {
            if ((size_t)v * VL >= nr) break;
            vi x = VI_ADD(VI_SUB(acc[r][v], comp[v]), bias[v]);
            vf f = fzero;
            switch (t->out) {
            case RIDGE_LOWP_S32:
                if (t->relu) x = VI_MAX(x, izero);
                break;
            case RIDGE_LOWP_F32:
                f = VF_MUL(VF_FROM_I(x), scale[v]);
                if (t->relu) f = VF_MAX(fzero, f); /* keeps -0, as v < 0 ? 0 : v does */
                break;
            default:
                f = VF_MIN(VF_MAX(VF_MUL(VF_FROM_I(x), scale[v]), lo), hi);
                x = VI_ADD(VI_FROM_F(f), zo);
                break;
            }
            q_store(c, ldc, r, v, nr, t->out, x, f);
        }
    }
}

#include "lowp/qconv-template.h"

const lowp_kernel Q_TABLE = {
    .name = Q_NAME,
    .kind = LOWP_I8,
    .mr = Q_MR,
    .nr = Q_NR,
    .kg = Q_KG,
    .elem_bits = Q_ELEM_BITS,
    .b_elem_bytes = 4,
    .ukernel = Q_UKERNEL,
    .dconv = Q_DCONV,
    .dwconv = Q_DWCONV,
};
