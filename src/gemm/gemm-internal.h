/* Internal to the gemm family: the problem description every path shares, the scalar
 * epilogue, and the reference. */
#ifndef RIDGE_GEMM_INTERNAL_H
#define RIDGE_GEMM_INTERNAL_H

#include <math.h>
#include <stddef.h>

#include "core/internal.h"
#include "ridge/gemm.h"

/* One product C = epi(alpha op(A) op(B) + beta C), validated. Transposes are folded into
 * strides (BLIS style): element (i, p) of op(A) is a[i * a_rs + p * a_cs], element (p, j) of
 * op(B) is b[p * b_rs + j * b_cs]. k == 0 means "no product" (alpha == 0 is mapped to it). */
typedef struct gemm_problem {
    size_t m, n, k;
    float alpha, beta;
    const float *a;
    size_t a_rs, a_cs;
    const float *b;
    size_t b_rs, b_cs;
    float *c;
    size_t ldc;
    ridge_epilogue epi; /* bias_kind NONE, act NONE, residual NULL: nothing */
} gemm_problem;

/* The activations in float, the definitions every vector variant must match. ReLU keeps NaN
 * and -0 (as max(0, x) with x second does in SIMD). */
static inline float gemm_act_scalar(ridge_epi_act act, float x)
{
    switch (act) {
    case RIDGE_EPI_NONE: return x;
    case RIDGE_EPI_RELU: return x < 0.0f ? 0.0f : x;
    case RIDGE_EPI_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
    case RIDGE_EPI_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case RIDGE_EPI_TANH: return tanhf(x);
    }
    return x;
}

/* The finishing step for one element (i, j) whose raw product sum is `acc`:
 * alpha * acc + beta * C (C not read when beta == 0), bias, activation, residual. */
static inline float gemm_finish_scalar(const gemm_problem *p, size_t i, size_t j, float acc)
{
    float *c = &p->c[i * p->ldc + j];
    float v = p->k ? p->alpha * acc : 0.0f;
    if (p->beta != 0.0f) v += p->beta * *c;
    if (p->epi.bias_kind == RIDGE_BIAS_COL) v += p->epi.bias[j];
    else if (p->epi.bias_kind == RIDGE_BIAS_ROW) v += p->epi.bias[i];
    v = gemm_act_scalar(p->epi.act, v);
    if (p->epi.residual) v += p->epi.residual[i * p->epi.ldr + j];
    return v;
}

/* Lines a micro-kernel prefetches while it computes, one every `step` k steps, `lines` in
 * all (0: none): a walk over rows `rs` floats apart, `len` floats each, starting at float
 * `off` of the row at `row`. */
#define GEMM_LINE_FLOATS 16
typedef struct gemm_prefetch {
    const float *row;
    size_t rs, len, off, lines, step;
} gemm_prefetch;

/* What a micro-kernel needs besides the operands: the scalars and the epilogue, with the
 * bias and residual pointers already offset to the tile's origin (row i0, column j0). */
typedef struct gemm_tile_params {
    float alpha;
    float beta;             /* for this k block: the caller's on the first, 1 after; 0: C unread */
    int last;               /* the last k block: apply bias, activation and residual */
    int plain;              /* C = acc or C + acc: alpha 1, beta 0 or 1, nothing else to apply */
    ridge_bias_kind bias_kind;
    const float *bias;      /* COL: bias + j0; ROW: bias + i0 */
    ridge_epi_act act;
    const float *res;       /* residual + i0 * ldr + j0, or NULL */
    size_t ldr;
    gemm_prefetch pf;       /* lines of B's next panel to prefetch while computing */
} gemm_tile_params;

/* t's bias and residual for the tile at row i, column j of C, from bias and res at C[0][0]'s
 * (res NULL: none), by t's bias_kind and ldr. */
static inline void gemm_tile_at(gemm_tile_params *t, const float *bias, const float *res,
                                size_t i, size_t j)
{
    t->bias = t->bias_kind == RIDGE_BIAS_NONE ? NULL
                                              : bias + (t->bias_kind == RIDGE_BIAS_ROW ? i : j);
    t->res = res ? res + i * t->ldr + j : NULL;
}

/* One ISA's kernels (f32-gemm-template.h instantiated by an ISA file). */
typedef struct gemm_kernel {
    const char *name; /* "f32-gemm-6x16-avx2" */
    int mr, nr;
    /* Up to this many rows of A, a row-major B is read in place rather than packed, its next
     * panel prefetched by the tiles of the current one (gemm_tile_params.pf). Packing reads
     * B from L3 or DRAM in a pass of its own, which the kernel's FMAs do not hide; in place,
     * each new row of B is a new line and often a new page, which the 8 x 32 AVX-512 tile
     * meets once per 16 cycles and the 6 x 16 AVX2 tile once per 6. See f32-gemm-*.c. */
    int inplace_b_max_m;
    /* C[0:mr, 0:nr] (mr <= MR, nr <= NR) from A and B rows b_rs apart. A: with a_cs 0 a
     * packed panel (kc x MR, k-major), else in place, element (i, p) at ap[i * a_rs + p *
     * a_cs] (rows past mr are not read). B: a packed panel (b_rs == NR, b_padded: zero
     * columns up to NR) or in place (b_padded 0: columns >= nr are not read). */
    void (*ukernel)(size_t kc, const float *ap, size_t a_rs, size_t a_cs, const float *b,
                    size_t b_rs, int b_padded, float *c, size_t ldc, size_t mr, size_t nr,
                    const gemm_tile_params *t);
    /* C[0:m, 0:n] for one k block of a product with A and B in place (k = the block's depth,
     * t's beta and last for that block), tile by tile, each as ukernel with a_cs != 0 and
     * b_padded 0 would (the same bits); t's bias and res point at C[0][0]'s, its pf unused.
     * For products whose B blocks stay in cache (gemm.c, GEMM_BLOCK_MAX_B). */
    void (*block)(size_t m, size_t n, size_t k, const float *a, size_t a_rs, size_t a_cs,
                  const float *b, size_t b_rs, float *c, size_t ldc, const gemm_tile_params *t);
    /* A (mc x kc at a[i * rs + p * cs]) into MR-row panels; B (kc x nc) into NR-column panels. */
    void (*pack_a)(size_t mc, size_t kc, const float *a, size_t rs, size_t cs, float *ap);
    void (*pack_b)(size_t kc, size_t nc, const float *b, size_t rs, size_t cs, float *bp);
    /* m == 1: y[j0:j1] = epilogue(a x B), B in place with unit column stride (gemv_n) or as
     * B^T rows ldb apart with a contiguous (gemv_t); t's bias and res point at column 0. */
    /* gemv_n sums the k rows in nseg segments (ridge_partition, grain 8), each from zero,
     * added in order; it computes segments [s0, s1), and with t NULL stores the plain sum.
     * gemv_sum adds nseg such rows (ld apart, in order) and applies t's epilogue into
     * y[j0:j1]: the bits of one gemv_n call over all segments. */
    void (*gemv_n)(size_t k, const float *a, size_t a_cs, const float *b, size_t ldb,
                   size_t nseg, size_t s0, size_t s1, float *y, size_t j0, size_t j1,
                   const gemm_tile_params *t);
    void (*gemv_sum)(const float *part, size_t nseg, size_t ld, float *y, size_t j0, size_t j1,
                     const gemm_tile_params *t);
    void (*gemv_t)(size_t k, const float *a, const float *b, size_t ldb, float *y, size_t j0,
                   size_t j1, const gemm_tile_params *t);
    /* A B^T with A's and B^T's rows both contiguous in k, nothing packed (NULL: the ISA has
     * none): C[0:mr, 0:nr] (mr <= GEMM_DOT_MR, nr <= GEMM_DOT_NR) over all k, t as for
     * ukernel with t->last set. For products with few rows, where packing B^T costs more than
     * the few tiles that read each panel save, or with fewer columns than a panel holds
     * (gemm.c, choose_path). */
    void (*dot)(size_t k, const float *a, size_t lda, const float *b, size_t ldb, float *c,
                size_t ldc, size_t mr, size_t nr, const gemm_tile_params *t);
    const char *dot_name;
} gemm_kernel;

/* The tile of gemm_kernel.dot: rows of A x rows of B^T (24 accumulators) */
#define GEMM_DOT_MR 4
#define GEMM_DOT_NR 6

extern const gemm_kernel ridge_gemm_kernel_avx2;   /* f32-gemm-6x16-avx2.c */
/* f32-gemm-avx512.c: three tiles, select_kernel (gemm.c) picks one */
extern const gemm_kernel ridge_gemm_kernel_8x32_avx512;
extern const gemm_kernel ridge_gemm_kernel_14x32_avx512;
extern const gemm_kernel ridge_gemm_kernel_6x64_avx512;

/* Tests only: force the cache blocks (0: derive from the CPU as usual); while set, every
 * product is also split among all threads however small. KC changes the rounding, so this is
 * never set outside tests. */
void ridge_gemm_set_blocking_for_tests(size_t kc, size_t mc, size_t nc);
/* Tests only: force the AVX-512 tile by its rows (8, 14 or 6; 6 gives 8 where a plan needs 32
 * columns; 0: select_kernel's choice). */
void ridge_gemm_set_tile_for_tests(int mr);
/* Tests only: A read in place by the micro-kernel: 0 by the rule (driver_init), 1 always,
 * -1 never. */
void ridge_gemm_set_a_direct_for_tests(int mode);

/* gemm-ref.c: the plain scalar reference over rows [i0, i1) and columns [j0, j1) of C,
 * accumulating in float in k order. */
void ridge_f32_gemm__ref(const gemm_problem *p, size_t i0, size_t i1, size_t j0, size_t j1);

#endif /* RIDGE_GEMM_INTERNAL_H */
