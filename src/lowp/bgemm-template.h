/* The bf16 GEMM micro-kernel (bf16 inputs, fp32 accumulation and output), written once for
 * any vector width. An ISA file defines the mapping below and includes this header; the AVX2
 * kernel (widen bf16 to fp32 with a shift, then FMA) and the AVX512-BF16 kernel (vdpbf16ps on
 * bf16 pairs) differ only in that mapping, so the AVX2 tests validate the shared logic.
 *
 * The ISA file defines, before including (plus lowp-avx2.h or lowp-avx512.h's float ops):
 *   B_MR, B_NV, B_KG   rows of the tile, vectors per row (NR = B_NV * VL), k per packed group
 *   B_ELEM_BYTES       bytes per packed B column per group (2: one bf16; 4: a bf16 pair)
 *   B_A_BITS           bits per element of a packed A word (32: fp32; 16: bf16 pair)
 *   B_UKERNEL, B_TABLE, B_NAME
 *   va, vb             the types of an A broadcast and of a B vector as the dot consumes them
 *   B_LOADB(p)         VL columns of one group of packed B at p
 *   B_BCASTA(p)        the 32-bit A word at p in every lane
 *   B_DOT(acc, a, b)   acc + the B_KG-term dot products, per lane, in fp32
 *
 * Algorithm: the BLIS micro-kernel, as in the SGEMM one: MR x NR fp32 accumulators held for
 * the k block, NV B loads and MR A broadcasts per k group, MR * NV dot instructions. Across k
 * blocks the accumulators chain through `part` (stored and reloaded unchanged, so blocking
 * does not change the summation). The epilogue adds beta C (not read when beta == 0). */
#include <stdint.h>
#include <string.h>

#include "lowp/lowp-internal.h"

#define B_NR (B_NV * VL)

static void B_UKERNEL(size_t kg, const void *ap_, const void *bp_, void *part_, int first,
                      int last, void *c_, size_t ldc, size_t mr, size_t nr, const void *tile)
{
    const uint32_t *ap = ap_;
    const char *bp = bp_;
    float *part = part_, *c = c_;
    vf acc[B_MR][B_NV];
    for (int r = 0; r < B_MR; r++)
        for (int v = 0; v < B_NV; v++)
            acc[r][v] = first ? VF_SET1(0.0f) : VF_LOAD(part + r * B_NR + v * VL);
#pragma GCC unroll 2
    for (size_t g = 0; g < kg; g++) {
        vb b[B_NV];
        for (int v = 0; v < B_NV; v++) b[v] = B_LOADB(bp + v * VL * B_ELEM_BYTES);
        for (int r = 0; r < B_MR; r++) {
            const va a = B_BCASTA(ap + r);
            for (int v = 0; v < B_NV; v++) acc[r][v] = B_DOT(acc[r][v], a, b[v]);
        }
        ap += B_MR;
        bp += B_NR * B_ELEM_BYTES;
    }
    if (!last) {
        for (int r = 0; r < B_MR; r++)
            for (int v = 0; v < B_NV; v++) VF_STORE(part + r * B_NR + v * VL, acc[r][v]);
        return;
    }
    const bgemm_tile *t = tile;
    const vf beta = VF_SET1(t->beta);
    for (int r = 0; r < B_MR; r++) {
        if ((size_t)r >= mr) break;
        for (int v = 0; v < B_NV; v++) {
            if ((size_t)v * VL >= nr) break;
            float *p = c + r * ldc + (size_t)v * VL;
            const size_t n = nr - (size_t)v * VL < VL ? nr - (size_t)v * VL : VL;
            vf x = acc[r][v];
            if (t->beta != 0.0f) x = VF_FMA(beta, n == VL ? VF_LOAD(p) : VF_MASKLOAD(p, (int)n), x);
            if (n == VL) {
                VF_STORE(p, x);
            } else {
                float tmp[VL];
                VF_STORE(tmp, x);
                memcpy(p, tmp, n * sizeof(float));
            }
        }
    }
}

const lowp_kernel B_TABLE = {
    .name = B_NAME,
    .kind = LOWP_BF16,
    .mr = B_MR,
    .nr = B_NR,
    .kg = B_KG,
    .elem_bits = B_A_BITS,
    .b_elem_bytes = B_ELEM_BYTES,
    .ukernel = B_UKERNEL,
};
