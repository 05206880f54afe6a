/* Internal to the lowp family: the packed layouts, the micro-kernel interface shared by the
 * int8 and bf16 kernels, and the scalar references.
 *
 * Packed layouts (one for every kernel, parameterized by MR, NR and KG, the k-group):
 * a "word" is 32 bits holding the KG consecutive k elements of one row (A) or one column (B):
 *   int8 VNNI (KG 4):  4 bytes, A u8, B s8            (vpdpbusd's operands)
 *   int8 AVX2 (KG 2):  2 int16, A zero-extended u8, B sign-extended s8   (vpmaddwd's)
 *   bf16 BF16 (KG 2):  2 bf16 for A and B             (vdpbf16ps's)
 *   bf16 AVX2 (KG 1):  A one fp32; B: one bf16 (16 bits, the only non-32-bit case)
 * k is padded with zeros to a multiple of KG (zeros add nothing, and keep colsum right).
 *   A block: MR-row panels, each kg words x MR (group-major), rows past m zero.
 *   B (plan): NR-column panels, each kg x NR words (group-major), columns past n zero. A k
 *   block [g0, g1) of a panel is the contiguous run from word g0 * NR.
 */
#ifndef RIDGE_LOWP_INTERNAL_H
#define RIDGE_LOWP_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/lowp.h"

/* What the int8 epilogue needs for one tile, pointers offset to the tile's first column. */
typedef struct qgemm_tile {
    ridge_lowp_type out;
    const int32_t *colsum;  /* padded to NR: full loads are safe */
    int32_t za;             /* effective A zero point (+128 for s8 A) */
    const int32_t *bias;    /* or NULL */
    const float *scale;     /* per_channel ? scale + j0 : scale (broadcast) */
    int per_channel;
    int32_t zo;
    float lo, hi;           /* clamp of the scaled value before rounding: [lo - zo, hi - zo] */
    int relu;
} qgemm_tile;

/* What the bf16 epilogue needs. */
typedef struct bgemm_tile {
    float beta;
} bgemm_tile;

/* A micro-kernel: the MR x NR tile over k groups [0, kg) of the packed panels ap (kg x MR
 * words) and bp (kg x NR words; 16-bit elements for the bf16 AVX2 kernel). The accumulators
 * start at zero (first) or from part (MR x NR, row stride NR); at the last k block the
 * epilogue writes C[0:mr, 0:nr] (ldc in elements), else the accumulators go to part. */
typedef void (*lowp_ukernel_fn)(size_t kg, const void *ap, const void *bp, void *part,
                                int first, int last, void *c, size_t ldc, size_t mr, size_t nr,
                                const void *tile);

/* An int8 convolution micro-kernel's call (qconv-template.h): int32 sums for up to MR output
 * pixels (any pixels: each has its own window pointer, so a tile may span rows and images)
 * and one NR-channel block, into part (MR x NR, row stride NR), from a zero-point-padded image
 * whose elements are the kernel's A elements (elem_bits wide, u8 values: s8 input is flipped
 * to u8). The GEMM micro-kernel's epilogue (kg = 0) then requantizes part.
 *   direct:    part[i][j] = sum_{t, g} word(x[i] + toff[t] + 4g) . w[(t*cg + g)*NR + j]
 *              (w: the NR-column panel of the OHWI weights, channels padded to KG)
 *   depthwise: part[i][j] = sum_t elem(x[i] + toff[t], j) * w[t*wstride + j]
 *              (x[i] already at the channel block; w: int32 weights at the channel block) */
#define QCONV_MAX_MR 16
typedef struct qconv_args {
    const uint8_t *x[QCONV_MAX_MR]; /* each pixel's window (top-left tap); MR entries, those
                                     * past mr repeat a valid one (computed, not stored) */
    const ptrdiff_t *toff;          /* taps' byte offsets */
    int taps;
    size_t cg;                      /* direct: words per tap */
    const int32_t *w;
    size_t wstride;                 /* depthwise: int32 per tap */
    int32_t *part;
} qconv_args;

typedef enum lowp_kind { LOWP_I8, LOWP_BF16 } lowp_kind;

typedef struct lowp_kernel {
    const char *name;     /* "u8s8-gemm-6x16c2-avx2" */
    lowp_kind kind;
    int mr, nr, kg;
    int elem_bits;        /* bits per element in a packed word: 8, 16 (int8); 16, 32 (bf16 A) */
    int b_elem_bytes;     /* bytes per packed B column per group: 4, or 2 (bf16 AVX2) */
    lowp_ukernel_fn ukernel;
    void (*dconv)(const qconv_args *a);  /* int8 only: direct and depthwise convolution */
    void (*dwconv)(const qconv_args *a);
} lowp_kernel;

/* The variants (each in its own file, compiled with only its ISA's flags). */
extern const lowp_kernel ridge_lowp_u8s8_avx2;       /* u8s8-gemm-6x16c2-avx2.c */
extern const lowp_kernel ridge_lowp_u8s8_avxvnni;    /* u8s8-gemm-6x16c4-avxvnni.c */
extern const lowp_kernel ridge_lowp_u8s8_avx512vnni; /* u8s8-gemm-14x32c4-avx512vnni.c */
extern const lowp_kernel ridge_lowp_bf16_avx2;       /* bf16-gemm-6x16-avx2.c */
extern const lowp_kernel ridge_lowp_bf16_avx512bf16; /* bf16-gemm-14x32c2-avx512bf16.c */

/* Tests only: use this kernel for plans and calls made from now on (NULL: select as usual);
 * and force the k block (in groups) and the m block (0: derive from the CPU). */
void ridge_lowp_force_kernel_for_tests(const lowp_kernel *k);
void ridge_lowp_set_blocking_for_tests(size_t kcg, size_t mc);
/* Whether the running CPU can execute kernel k. */
int ridge_lowp_kernel_supported(const lowp_kernel *k);
/* The int8 kernel for ctx (NULL: the references). */
const lowp_kernel *lowp_select_i8(const ridge_ctx *ctx);

/* An int8 plan (lowp.c): B packed for K, or op(B) k x n row-major in ref_b when K is NULL. */
struct ridge_qgemm_plan {
    size_t n, k;
    const lowp_kernel *K;
    int8_t *ref_b;
    uint8_t *packed;
    size_t panel_bytes;
    int32_t *colsum;      /* n rounded up to NR, zero past n */
};

/* Validates rq for n output columns (fn names the caller in the message). */
ridge_status lowp_check_requant(const char *fn, const ridge_requant *rq, size_t n);
/* The epilogue's view of rq, with A's effective zero point za and B's column sums. */
qgemm_tile lowp_qtile(const ridge_requant *rq, const int32_t *colsum, int32_t za);
/* t moved to column j (the per-column arrays offset). */
static inline qgemm_tile lowp_qtile_at(const qgemm_tile *t, size_t j)
{
    qgemm_tile q = *t;
    q.colsum += j;
    if (q.bias) q.bias += j;
    if (q.per_channel && q.scale) q.scale += j;
    return q;
}

/* ---- references (lowp-ref.c) ---------------------------------------------------------------- */

/* The requantization of one accumulator x (bias already added) for column j: writes one
 * element of type t->out at c. The definition every vector epilogue matches bit for bit. */
static inline void qgemm_finish_scalar(const ridge_requant *rq, size_t j, int32_t x, void *c)
{
    if (rq->out == RIDGE_LOWP_S32) {
        ((int32_t *)c)[0] = rq->relu && x < 0 ? 0 : x;
        return;
    }
    float v = (float)x * rq->scale[rq->per_channel ? j : 0];
    if (rq->out == RIDGE_LOWP_F32) {
        ((float *)c)[0] = rq->relu && v < 0.0f ? 0.0f : v;
        return;
    }
    int32_t zo = rq->out_zero_point;
    float lo = rq->out == RIDGE_LOWP_U8 ? 0.0f : -128.0f, hi = rq->out == RIDGE_LOWP_U8 ? 255.0f : 127.0f;
    if (rq->relu && (float)zo > lo) lo = (float)zo;
    lo -= (float)zo, hi -= (float)zo;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    int32_t q = (int32_t)nearbyintf(v) + zo;
    if (rq->out == RIDGE_LOWP_U8) ((uint8_t *)c)[0] = (uint8_t)q;
    else ((int8_t *)c)[0] = (int8_t)q;
}

/* C (m, n) = requant(sum_p (A[i][p] - za) B[p][j]) in wrap-around int32, element by element
 * in k order: the definition. a is uint8_t (a_type U8) or int8_t (S8); B element (p, j) is
 * b[p * b_rs + j * b_cs]. */
void ridge_qgemm__ref(size_t m, size_t n, size_t k, ridge_lowp_type a_type, const void *a,
                      size_t lda, int32_t za, const int8_t *b, size_t b_rs, size_t b_cs,
                      void *c, size_t ldc, const ridge_requant *rq);

/* C (m, n) = A B + beta C, bf16 inputs, fp32 sums in k order. */
void ridge_bf16_gemm__ref(size_t m, size_t n, size_t k, const uint16_t *a, size_t lda,
                          const uint16_t *b, size_t b_rs, size_t b_cs, float beta, float *c,
                          size_t ldc);

/* The fp32 value of a bf16 and the RNE conversion, shared by every file. */
static inline float lowp_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t lowp_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1); /* round to nearest, ties to the even upper half */
    return (uint16_t)(u >> 16);
}

#endif /* RIDGE_LOWP_INTERNAL_H */
