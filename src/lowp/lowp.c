/* The lowp entry points: validation, kernel selection, packing (B once per plan, A per call)
 * and the blocked driver shared by the int8 and bf16 kernels.
 *
 * Driver (per thread, on its contiguous block of C, split on MR x NR tile boundaries):
 *   ic over MC rows:   pack A rows (all of k) into MR-row panels     (the A block sits in L2)
 *   jr over NR cols:   the plan's B panel (all of k)
 *   pc over KC groups: the B sub-panel, KC groups x NR               (sits in L1 across ir)
 *   ir over MR rows:   the micro-kernel
 * pc runs inside jr so that a tile's partial sums wait in a small per-thread buffer (MC x NR
 * int32/fp32) instead of C, which may be int8: the k blocks chain exactly, so the blocking
 * never changes a bit of the result. B is packed once (in the plan), so there is no NC loop:
 * a B panel is read once per MC rows of A. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lowp/lowp-internal.h"

#define LOWP_SIZE_MAX (SIZE_MAX / 2)
#define LOWP_K_MAX ((size_t)1 << 31)

/* ---- selection ------------------------------------------------------------------------------- */

static const lowp_kernel *forced;
static size_t test_kcg, test_mc;

void ridge_lowp_force_kernel_for_tests(const lowp_kernel *k) { forced = k; }
void ridge_lowp_set_blocking_for_tests(size_t kcg, size_t mc) { test_kcg = kcg, test_mc = mc; }

int ridge_lowp_kernel_supported(const lowp_kernel *k)
{
    const ridge_cpu *c = ridge_cpu_get();
    int avx2 = c->avx2 && c->fma && c->os_ymm;
    int avx512 = c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq && c->os_zmm;
    if (k == &ridge_lowp_u8s8_avx2 || k == &ridge_lowp_bf16_avx2) return avx2;
    if (k == &ridge_lowp_u8s8_avxvnni) return avx2 && c->avx_vnni;
    if (k == &ridge_lowp_u8s8_avx512vnni) return avx512 && c->avx512_vnni;
    if (k == &ridge_lowp_bf16_avx512bf16) return avx512 && c->avx512_bf16;
    return 0;
}

/* The context's ISA caps the choice (RIDGE_ISA=avx2 on an AVX-512 machine gets AVX2 or
 * AVX-VNNI kernels; ref gets the references: NULL). */
static const lowp_kernel *select_kernel(const ridge_ctx *ctx, lowp_kind kind)
{
    if (forced && forced->kind == kind) return forced;
    const ridge_cpu *c = ridge_ctx_cpu(ctx);
    ridge_isa isa = ridge_ctx_isa(ctx);
    if (kind == LOWP_I8) {
        if (isa == RIDGE_ISA_AVX512 && c->avx512_vnni) return &ridge_lowp_u8s8_avx512vnni;
        if (isa >= RIDGE_ISA_AVX2 && c->avx_vnni) return &ridge_lowp_u8s8_avxvnni;
        if (isa >= RIDGE_ISA_AVX2) return &ridge_lowp_u8s8_avx2;
    } else {
        if (isa == RIDGE_ISA_AVX512 && c->avx512_bf16) return &ridge_lowp_bf16_avx512bf16;
        if (isa >= RIDGE_ISA_AVX2) return &ridge_lowp_bf16_avx2;
    }
    return NULL;
}

const lowp_kernel *lowp_select_i8(const ridge_ctx *ctx) { return select_kernel(ctx, LOWP_I8); }

const char *ridge_lowp_describe(const ridge_ctx *ctx)
{
    static _Thread_local char buf[96];
    if (!ctx) return "u8s8-gemm-ref, bf16-gemm-ref";
    const lowp_kernel *q = select_kernel(ctx, LOWP_I8), *b = select_kernel(ctx, LOWP_BF16);
    snprintf(buf, sizeof buf, "%s, %s", q ? q->name : "u8s8-gemm-ref",
             b ? b->name : "bf16-gemm-ref");
    return buf;
}

/* ---- validation ------------------------------------------------------------------------------ */

static ridge_status check_size(const char *fn, const char *what, size_t v)
{
    if (v > LOWP_SIZE_MAX)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) is negative or too large", fn, what, v);
    return RIDGE_OK;
}

/* A stored rows x cols matrix of `esz`-byte elements with leading dimension ld. */
static ridge_status check_matrix(const char *fn, const char *name, const void *ptr, int used,
                                 size_t rows, size_t cols, size_t ld, const char *ld_name,
                                 size_t esz)
{
    ridge_status st = check_size(fn, ld_name, ld);
    if (st) return st;
    if (ld < cols || ld == 0)
        return ridge_error(RIDGE_EINVAL, "%s: %s (%zu) < the %zu columns of %s (must be >= max(1, columns))",
                           fn, ld_name, ld, cols, name);
    size_t span, ext;
    if (rows && cols &&
        (__builtin_mul_overflow(rows - 1, ld, &span) || __builtin_add_overflow(span, cols, &ext) ||
         ext > LOWP_SIZE_MAX / esz))
        return ridge_error(RIDGE_EINVAL, "%s: %s spans more than the address space (%zu rows, %s %zu)",
                           fn, name, rows, ld_name, ld);
    if (used && rows && cols && !ptr) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, name);
    return RIDGE_OK;
}

static ridge_status check_trans(const char *fn, ridge_trans t)
{
    if (t != RIDGE_NO_TRANS && t != RIDGE_TRANS)
        return ridge_error(RIDGE_EINVAL, "%s: trans_b (%d) is neither RIDGE_NO_TRANS nor RIDGE_TRANS",
                           fn, (int)t);
    return RIDGE_OK;
}

static ridge_status check_b(const char *fn, ridge_trans tb, size_t n, size_t k, const void *b,
                            size_t ldb, size_t esz)
{
    ridge_status st;
    if ((st = check_trans(fn, tb)) || (st = check_size(fn, "n", n)) || (st = check_size(fn, "k", k)))
        return st;
    if (tb == RIDGE_NO_TRANS) return check_matrix(fn, "b", b, 1, k, n, ldb, "ldb", esz);
    return check_matrix(fn, "b", b, 1, n, k, ldb, "ldb", esz);
}

ridge_status lowp_check_requant(const char *fn, const ridge_requant *rq, size_t n)
{
    if ((unsigned)rq->out > RIDGE_LOWP_F32)
        return ridge_error(RIDGE_EINVAL, "%s: requant out type (%d) is unknown", fn, (int)rq->out);
    if (rq->out != RIDGE_LOWP_S32) {
        if (!rq->scale) return ridge_error(RIDGE_EINVAL, "%s: requant scale is NULL", fn);
        size_t ns = rq->per_channel ? n : 1;
        for (size_t j = 0; j < ns; j++)
            if (!(rq->scale[j] > 0.0f) || !isfinite(rq->scale[j]))
                return ridge_error(RIDGE_EINVAL, "%s: requant scale[%zu] (%g) is not finite and > 0",
                                   fn, j, (double)rq->scale[j]);
    }
    int32_t zlo = rq->out == RIDGE_LOWP_U8 ? 0 : -128, zhi = rq->out == RIDGE_LOWP_U8 ? 255 : 127;
    if ((rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8) &&
        (rq->out_zero_point < zlo || rq->out_zero_point > zhi))
        return ridge_error(RIDGE_EINVAL, "%s: requant out_zero_point (%d) is outside [%d, %d]", fn,
                           (int)rq->out_zero_point, (int)zlo, (int)zhi);
    if ((rq->out == RIDGE_LOWP_S32 || rq->out == RIDGE_LOWP_F32) && rq->out_zero_point)
        return ridge_error(RIDGE_EINVAL, "%s: requant out_zero_point (%d) must be 0 for %s output",
                           fn, (int)rq->out_zero_point, rq->out == RIDGE_LOWP_S32 ? "int32" : "float");
    return RIDGE_OK;
}

/* ---- packing --------------------------------------------------------------------------------- */

/* One element of a packed word, `bits` wide, at position e. */
static inline uint32_t put(uint32_t v, int e, int bits)
{
    return (bits == 32 ? v : v & ((1u << bits) - 1)) << (e * bits);
}

/* op(B) (element (p, j) at b[p * rs + j * cs]; int8 or bf16 by the kernel's kind) into
 * NR-column panels of kg groups, KG elements per column per group (lowp-internal.h). */
static void pack_b(const lowp_kernel *K, size_t n, size_t k, const void *b, size_t rs,
                   size_t cs, uint8_t *dst)
{
    const size_t NR = (size_t)K->nr, KG = (size_t)K->kg, kg = (k + KG - 1) / KG;
    const size_t wbytes = (size_t)K->b_elem_bytes;
    const int i8 = K->kind == LOWP_I8;
    const int bits = i8 ? K->elem_bits : 16;
    if (!i8 && KG == 1 && cs == 1) { /* bf16, one per group, rows contiguous: copy rows */
        uint16_t *d = (uint16_t *)dst;
        for (size_t j0 = 0; j0 < n; j0 += NR) {
            size_t w = RIDGE_MIN(NR, n - j0);
            for (size_t p = 0; p < k; p++, d += NR) {
                memcpy(d, (const uint16_t *)b + p * rs + j0, w * 2);
                memset(d + w, 0, (NR - w) * 2);
            }
        }
        return;
    }
    for (size_t j0 = 0; j0 < n; j0 += NR) {
        for (size_t g = 0; g < kg; g++, dst += NR * wbytes) {
            for (size_t jj = 0; jj < NR; jj++) {
                size_t j = j0 + jj;
                uint32_t w = 0;
                for (size_t e = 0; e < KG; e++) {
                    size_t p = g * KG + e;
                    if (j >= n || p >= k) continue;
                    uint32_t v = i8 ? (uint32_t)(int32_t)((const int8_t *)b)[p * rs + j * cs]
                                    : ((const uint16_t *)b)[p * rs + j * cs];
                    w |= put(v, (int)e, bits);
                }
                memcpy(dst + jj * wbytes, &w, wbytes); /* little-endian: the low bytes */
            }
        }
    }
}

/* Rows [i0, i0 + mc) of A (m x k, lda) into MR-row panels of kg words (rows past m zero; a
 * last panel may also take rows past i0 + mc, computed but never stored). int8: flip 0x80
 * turns s8 into u8 (x + 128); bf16 with 32-bit elements becomes fp32 bits. Specialized per
 * element width by inlining. */
static inline __attribute__((always_inline)) void pack_a_generic(
    size_t MR, size_t KG, int bits, int bf16, size_t m, size_t k, size_t i0, size_t mc,
    const void *a, size_t lda, uint32_t flip, uint32_t *ap)
{
    const size_t kg = (k + KG - 1) / KG, kfull = k / KG;
    for (size_t i = i0; i < i0 + mc; i += MR) {
        for (size_t r = 0; r < MR; r++) {
            uint32_t *w = ap + r;
            if (i + r >= m) {
                for (size_t g = 0; g < kg; g++) w[g * MR] = 0;
                continue;
            }
            const uint8_t *a8 = (const uint8_t *)a + (i + r) * lda;
            const uint16_t *a16 = (const uint16_t *)a + (i + r) * lda;
            for (size_t g = 0; g < kfull; g++) {
                uint32_t x = 0;
                for (size_t e = 0; e < KG; e++) {
                    uint32_t v = bf16 ? (uint32_t)a16[g * KG + e] : (uint32_t)(a8[g * KG + e] ^ flip);
                    if (bits == 32) v <<= 16;
                    x |= put(v, (int)e, bits);
                }
                w[g * MR] = x;
            }
            for (size_t g = kfull; g < kg; g++) {
                uint32_t x = 0;
                for (size_t e = 0; g * KG + e < k; e++) {
                    uint32_t v = bf16 ? (uint32_t)a16[g * KG + e] : (uint32_t)(a8[g * KG + e] ^ flip);
                    if (bits == 32) v <<= 16;
                    x |= put(v, (int)e, bits);
                }
                w[g * MR] = x;
            }
        }
        ap += MR * kg;
    }
}

static void pack_a(const lowp_kernel *K, size_t m, size_t k, size_t i0, size_t mc,
                   const void *a, size_t lda, uint32_t flip, uint32_t *ap)
{
    const size_t MR = (size_t)K->mr;
    if (K->kind == LOWP_BF16 && K->kg == 1)
        pack_a_generic(MR, 1, 32, 1, m, k, i0, mc, a, lda, 0, ap);
    else if (K->kind == LOWP_BF16)
        pack_a_generic(MR, 2, 16, 1, m, k, i0, mc, a, lda, 0, ap);
    else if (K->kg == 2)
        pack_a_generic(MR, 2, 16, 0, m, k, i0, mc, a, lda, flip, ap);
    else
        pack_a_generic(MR, 4, 8, 0, m, k, i0, mc, a, lda, flip, ap);
}

/* ---- the driver ------------------------------------------------------------------------------ */

typedef struct lowp_job {
    const lowp_kernel *K;
    size_t m, k, kg, kcg, mc;
    const void *a;
    size_t lda;
    uint32_t flip;
    const uint8_t *bpacked;
    size_t panel_bytes;   /* one B panel: kg * NR * b_elem_bytes */
    char *c;
    size_t ldc, c_esz;
    qgemm_tile qt;        /* int8: pointers at column 0 */
    bgemm_tile bt;
    char *scratch;
    size_t per_thread;    /* bytes */
} lowp_job;

static void lowp_block(void *arg, size_t i0, size_t i1, size_t j0, size_t j1, int ith)
{
    const lowp_job *J = arg;
    const lowp_kernel *K = J->K;
    const size_t MR = (size_t)K->mr, NR = (size_t)K->nr, kg = J->kg;
    uint32_t *ap = (uint32_t *)(J->scratch + (size_t)ith * J->per_thread);
    char *part = (char *)(ap + (J->mc + MR) * (kg ? kg : 1));
    for (size_t ic = i0; ic < i1; ic += J->mc) {
        size_t mc = RIDGE_MIN(J->mc, i1 - ic);
        pack_a(K, J->m, J->k, ic, mc, J->a, J->lda, J->flip, ap);
        for (size_t jr = j0; jr < j1; jr += NR) {
            size_t nr = RIDGE_MIN(NR, j1 - jr);
            const uint8_t *bpanel = J->bpacked + (jr / NR) * J->panel_bytes;
            qgemm_tile qt;
            const void *tile = &J->bt;
            if (K->kind == LOWP_I8) qt = lowp_qtile_at(&J->qt, jr), tile = &qt;
            size_t pc = 0;
            do { /* at least once: k == 0 still writes the epilogue */
                size_t kb = RIDGE_MIN(J->kcg, kg - pc);
                for (size_t ir = 0; ir < mc; ir += MR)
                    K->ukernel(kb, ap + (ir / MR) * kg * MR + pc * MR,
                               bpanel + pc * NR * (size_t)K->b_elem_bytes, part + ir * NR * 4,
                               pc == 0, pc + kb >= kg, J->c + ((ic + ir) * J->ldc + jr) * J->c_esz,
                               J->ldc, RIDGE_MIN(MR, mc - ir), nr, tile);
                pc += kb;
            } while (pc < kg);
        }
    }
}

/* Blocks from the caches: the KC x NR B sub-panel fills half of L1; the MC x k A block half
 * of L2. Neither changes a result (the k blocks chain exactly). */
static void blocking(const lowp_kernel *K, size_t kg, size_t m, size_t *kcg, size_t *mc)
{
    const ridge_cpu *cpu = ridge_cpu_get();
    const size_t MR = (size_t)K->mr;
    size_t l1 = cpu->l1d ? cpu->l1d : 32768, l2 = cpu->l2 ? cpu->l2 : 262144;
    size_t kb = l1 / 2 / ((size_t)K->nr * (size_t)K->b_elem_bytes);
    *kcg = test_kcg ? test_kcg : RIDGE_MAX(kb, 16u);
    size_t rows = l2 / 2 / (RIDGE_MAX(kg, 1u) * 4);
    rows = RIDGE_MIN(rows, 32 * MR);
    rows = RIDGE_MIN(rows, (m + MR - 1) / MR * MR);
    if (test_mc) rows = test_mc;
    *mc = RIDGE_MAX(rows / MR, 1u) * MR;
}

/* Runs J over C (m x n) on the context's threads; J's kernel, A, B, C and tile are set. */
static ridge_status lowp_run(ridge_ctx *ctx, lowp_job *J, size_t n, const char *fn)
{
    const lowp_kernel *K = J->K;
    blocking(K, J->kg, J->m, &J->kcg, &J->mc);
    size_t MR = (size_t)K->mr, NR = (size_t)K->nr;
    size_t a_bytes = (J->mc + MR) * RIDGE_MAX(J->kg, 1u) * 4, part_bytes = (J->mc + MR) * NR * 4;
    J->per_thread = (a_bytes + part_bytes + 63) & ~(size_t)63;
    int threads = ridge_ctx_threads(ctx);
    size_t total;
    if (ridge_size_mul(J->per_thread, (size_t)threads, "scratch", &total) ||
        ridge_ctx_scratch(ctx, total, (void **)&J->scratch))
        return ridge_error(RIDGE_ENOMEM, "%s: out of memory for packing buffers", fn);
    ridge_parallel_for_2d(ctx, J->m, n, MR, NR, lowp_block, J);
    return RIDGE_OK;
}

/* ---- int8: the plan ---------------------------------------------------------------------------- */

ridge_status ridge_qgemm_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                     const int8_t *b, size_t ldb, ridge_qgemm_plan **out)
{
    const char *fn = "qgemm_plan_create";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st = check_b(fn, trans_b, n, k, b, ldb, 1);
    if (st) return st;
    if (k > LOWP_K_MAX)
        return ridge_error(RIDGE_EINVAL, "%s: k (%zu) > 2^31 (the int32 accumulator's range)", fn, k);
    ridge_qgemm_plan *P = ridge_calloc(1, sizeof *P);
    if (!P) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    P->n = n, P->k = k;
    P->K = select_kernel(ctx, LOWP_I8);
    size_t rs = trans_b == RIDGE_NO_TRANS ? ldb : 1, cs = trans_b == RIDGE_NO_TRANS ? 1 : ldb;
    size_t NR = P->K ? (size_t)P->K->nr : 1, npad = (n + NR - 1) / NR * NR, bytes = 0;
    if (P->K) {
        size_t kg = (k + (size_t)P->K->kg - 1) / (size_t)P->K->kg;
        P->panel_bytes = kg * NR * 4;
        if (ridge_size_mul(P->panel_bytes, npad / NR, "plan", &bytes)) goto err_nomem;
        if (bytes && !(P->packed = ridge_malloc(bytes))) goto err_nomem;
        if (bytes) pack_b(P->K, n, k, b, rs, cs, P->packed);
    } else {
        if (ridge_size_mul(n, k, "plan", &bytes)) goto err_nomem;
        if (bytes && !(P->ref_b = ridge_malloc(bytes))) goto err_nomem;
        for (size_t p = 0; p < k && bytes; p++)
            for (size_t j = 0; j < n; j++) P->ref_b[p * n + j] = b[p * rs + j * cs];
    }
    if (npad && !(P->colsum = ridge_calloc(npad, sizeof(int32_t)))) goto err_nomem;
    for (size_t j = 0; j < n; j++) {
        int32_t s = 0; /* |s| <= 128 k <= 2^38: wraps like the accumulators (mod 2^32) */
        for (size_t p = 0; p < k; p++) s = (int32_t)((uint32_t)s + (uint32_t)b[p * rs + j * cs]);
        P->colsum[j] = s;
    }
    *out = P;
    return RIDGE_OK;
err_nomem:
    ridge_qgemm_plan_destroy(P);
    return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu x %zu int8", fn, k, n);
}

void ridge_qgemm_plan_destroy(ridge_qgemm_plan *P)
{
    if (!P) return;
    ridge_free(P->packed);
    ridge_free(P->ref_b);
    ridge_free(P->colsum);
    ridge_free(P);
}

typedef struct qref_job {
    const ridge_qgemm_plan *P;
    ridge_lowp_type a_type;
    const void *a;
    size_t lda;
    int32_t za;
    char *c;
    size_t ldc, c_esz;
    const ridge_requant *rq;
} qref_job;

static void qref_rows(void *arg, size_t i0, size_t i1, int ith)
{
    const qref_job *q = arg;
    const char *a = (const char *)q->a + i0 * q->lda; /* 1-byte elements */
    ridge_qgemm__ref(i1 - i0, q->P->n, q->P->k, q->a_type, a, q->lda, q->za, q->P->ref_b,
                     q->P->n, 1, q->c + i0 * q->ldc * q->c_esz, q->ldc, q->rq);
}

ridge_status ridge_qgemm_plan_execute(ridge_ctx *ctx, const ridge_qgemm_plan *P,
                                      ridge_lowp_type a_type, size_t m, const void *a,
                                      size_t lda, int32_t za, void *c, size_t ldc,
                                      const ridge_requant *rq)
{
    const char *fn = "qgemm_plan_execute";
    if (!ctx || !P) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, ctx ? "plan" : "ctx");
    static const ridge_requant raw = {0};
    if (!rq) rq = &raw;
    ridge_status st;
    if ((st = check_size(fn, "m", m))) return st;
    if (a_type != RIDGE_LOWP_U8 && a_type != RIDGE_LOWP_S8)
        return ridge_error(RIDGE_EINVAL, "%s: a_type (%d) is neither RIDGE_LOWP_U8 nor RIDGE_LOWP_S8",
                           fn, (int)a_type);
    if (a_type == RIDGE_LOWP_U8 ? (za < 0 || za > 255) : (za < -128 || za > 127))
        return ridge_error(RIDGE_EINVAL, "%s: a_zero_point (%d) is outside the range of %s", fn,
                           (int)za, a_type == RIDGE_LOWP_U8 ? "uint8" : "int8");
    if ((st = lowp_check_requant(fn, rq, P->n))) return st;
    size_t c_esz = rq->out == RIDGE_LOWP_U8 || rq->out == RIDGE_LOWP_S8 ? 1 : 4;
    if ((st = check_matrix(fn, "a", a, P->k != 0 && P->n != 0, m, P->k, lda, "lda", 1)) ||
        (st = check_matrix(fn, "c", c, 1, m, P->n, ldc, "ldc", c_esz)))
        return st;
    if (m == 0 || P->n == 0) return RIDGE_OK;
    uint64_t t0 = RIDGE_PROF_START(ctx);
    if (!P->K) {
        qref_job q = {P, a_type, a, lda, za, c, ldc, c_esz, rq};
        ridge_parallel_for(ctx, m, 1, qref_rows, &q);
    } else {
        int s8 = a_type == RIDGE_LOWP_S8;
        lowp_job J = {.K = P->K, .m = m, .k = P->k, .kg = (P->k + (size_t)P->K->kg - 1) / (size_t)P->K->kg,
                      .a = a, .lda = lda, .flip = s8 ? 0x80 : 0, .bpacked = P->packed,
                      .panel_bytes = P->panel_bytes, .c = c, .ldc = ldc, .c_esz = c_esz};
        /* s8 A is packed as A + 128, so the zero point it is measured from moves by 128 */
        J.qt = lowp_qtile(rq, P->colsum, s8 ? za + 128 : za);
        if ((st = lowp_run(ctx, &J, P->n, fn))) return st;
    }
    RIDGE_PROF_END(ctx, t0, "qgemm", P->K ? P->K->name : "u8s8-gemm-ref", 2.0 * m * P->n * P->k,
                   (double)m * P->k + (double)P->k * P->n + (double)m * P->n * c_esz,
                   (double)m * P->k + (double)P->k * P->n + (double)m * P->n * c_esz,
                   "%zux%zux%zu", m, P->n, P->k);
    return RIDGE_OK;
}

qgemm_tile lowp_qtile(const ridge_requant *rq, const int32_t *colsum, int32_t za)
{
    qgemm_tile t = {.out = rq->out, .colsum = colsum, .za = za, .bias = rq->bias,
                    .scale = rq->scale, .per_channel = rq->per_channel,
                    .zo = rq->out_zero_point, .relu = rq->relu};
    float lo = rq->out == RIDGE_LOWP_U8 ? 0.0f : -128.0f;
    float hi = rq->out == RIDGE_LOWP_U8 ? 255.0f : 127.0f;
    if (rq->relu && (float)rq->out_zero_point > lo) lo = (float)rq->out_zero_point;
    t.lo = lo - (float)rq->out_zero_point;
    t.hi = hi - (float)rq->out_zero_point;
    return t;
}

static ridge_status gemm_i8_oneshot(const char *fn, ridge_ctx *ctx, ridge_trans tb,
                                    ridge_lowp_type a_type, size_t m, size_t n, size_t k,
                                    const void *a, size_t lda, int32_t za, const int8_t *b,
                                    size_t ldb, int32_t *c, size_t ldc)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_size(fn, "m", m)) || (st = check_b(fn, tb, n, k, b, ldb, 1)) ||
        (st = check_matrix(fn, "a", a, n != 0, m, k, lda, "lda", 1)) ||
        (st = check_matrix(fn, "c", c, 1, m, n, ldc, "ldc", 4)))
        return st;
    if (m == 0 || n == 0) return RIDGE_OK;
    ridge_qgemm_plan *P;
    if ((st = ridge_qgemm_plan_create(ctx, tb, n, k, b, ldb, &P))) return st;
    st = ridge_qgemm_plan_execute(ctx, P, a_type, m, a, lda, za, c, ldc, NULL);
    ridge_qgemm_plan_destroy(P);
    return st;
}

ridge_status ridge_gemm_u8s8s32(ridge_ctx *ctx, ridge_trans trans_b, size_t m, size_t n,
                                size_t k, const uint8_t *a, size_t lda, uint8_t za,
                                const int8_t *b, size_t ldb, int32_t *c, size_t ldc)
{
    return gemm_i8_oneshot("gemm_u8s8s32", ctx, trans_b, RIDGE_LOWP_U8, m, n, k, a, lda, za, b,
                           ldb, c, ldc);
}

ridge_status ridge_gemm_s8s8s32(ridge_ctx *ctx, ridge_trans trans_b, size_t m, size_t n,
                                size_t k, const int8_t *a, size_t lda, int8_t za,
                                const int8_t *b, size_t ldb, int32_t *c, size_t ldc)
{
    return gemm_i8_oneshot("gemm_s8s8s32", ctx, trans_b, RIDGE_LOWP_S8, m, n, k, a, lda, za, b,
                           ldb, c, ldc);
}

/* ---- bf16 -------------------------------------------------------------------------------------- */

struct ridge_bf16_plan {
    size_t n, k;
    const lowp_kernel *K; /* NULL: the reference; ref_b is op(B) row-major k x n */
    uint16_t *ref_b;
    uint8_t *packed;
    size_t panel_bytes;
};

ridge_status ridge_bf16_plan_create(ridge_ctx *ctx, ridge_trans trans_b, size_t n, size_t k,
                                    const uint16_t *b, size_t ldb, ridge_bf16_plan **out)
{
    const char *fn = "bf16_plan_create";
    if (!out) return ridge_error(RIDGE_EINVAL, "%s: out is NULL", fn);
    *out = NULL;
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st = check_b(fn, trans_b, n, k, b, ldb, 2);
    if (st) return st;
    ridge_bf16_plan *P = ridge_calloc(1, sizeof *P);
    if (!P) return ridge_error(RIDGE_ENOMEM, "%s: out of memory", fn);
    P->n = n, P->k = k;
    P->K = select_kernel(ctx, LOWP_BF16);
    size_t rs = trans_b == RIDGE_NO_TRANS ? ldb : 1, cs = trans_b == RIDGE_NO_TRANS ? 1 : ldb;
    size_t bytes = 0;
    if (P->K) {
        size_t NR = (size_t)P->K->nr, kg = (k + (size_t)P->K->kg - 1) / (size_t)P->K->kg;
        P->panel_bytes = kg * NR * (size_t)P->K->b_elem_bytes;
        if (ridge_size_mul(P->panel_bytes, (n + NR - 1) / NR, "plan", &bytes) ||
            (bytes && !(P->packed = ridge_malloc(bytes))))
            goto err_nomem;
        if (bytes) pack_b(P->K, n, k, b, rs, cs, P->packed);
    } else {
        if (ridge_size_mul(n * 2, k, "plan", &bytes) || (bytes && !(P->ref_b = ridge_malloc(bytes))))
            goto err_nomem;
        for (size_t p = 0; p < k && bytes; p++)
            for (size_t j = 0; j < n; j++) P->ref_b[p * n + j] = b[p * rs + j * cs];
    }
    *out = P;
    return RIDGE_OK;
err_nomem:
    ridge_bf16_plan_destroy(P);
    return ridge_error(RIDGE_ENOMEM, "%s: out of memory for %zu x %zu bf16", fn, k, n);
}

void ridge_bf16_plan_destroy(ridge_bf16_plan *P)
{
    if (!P) return;
    ridge_free(P->packed);
    ridge_free(P->ref_b);
    ridge_free(P);
}

typedef struct bref_job {
    const ridge_bf16_plan *P;
    const uint16_t *a;
    size_t lda;
    float beta;
    float *c;
    size_t ldc;
} bref_job;

static void bref_rows(void *arg, size_t i0, size_t i1, int ith)
{
    const bref_job *q = arg;
    ridge_bf16_gemm__ref(i1 - i0, q->P->n, q->P->k, q->a + i0 * q->lda, q->lda, q->P->ref_b,
                         q->P->n, 1, q->beta, q->c + i0 * q->ldc, q->ldc);
}

ridge_status ridge_bf16_plan_execute(ridge_ctx *ctx, const ridge_bf16_plan *P, size_t m,
                                     const uint16_t *a, size_t lda, float beta, float *c,
                                     size_t ldc)
{
    const char *fn = "bf16_plan_execute";
    if (!ctx || !P) return ridge_error(RIDGE_EINVAL, "%s: %s is NULL", fn, ctx ? "plan" : "ctx");
    ridge_status st;
    if ((st = check_size(fn, "m", m)) ||
        (st = check_matrix(fn, "a", a, P->n != 0, m, P->k, lda, "lda", 2)) ||
        (st = check_matrix(fn, "c", c, 1, m, P->n, ldc, "ldc", 4)))
        return st;
    if (m == 0 || P->n == 0) return RIDGE_OK;
    uint64_t t0 = RIDGE_PROF_START(ctx);
    if (!P->K) {
        bref_job q = {P, a, lda, beta, c, ldc};
        ridge_parallel_for(ctx, m, 1, bref_rows, &q);
    } else {
        lowp_job J = {.K = P->K, .m = m, .k = P->k,
                      .kg = (P->k + (size_t)P->K->kg - 1) / (size_t)P->K->kg, .a = a, .lda = lda,
                      .bpacked = P->packed, .panel_bytes = P->panel_bytes, .c = (char *)c,
                      .ldc = ldc, .c_esz = 4, .bt = {beta}};
        if ((st = lowp_run(ctx, &J, P->n, fn))) return st;
    }
    RIDGE_PROF_END(ctx, t0, "gemm_bf16", P->K ? P->K->name : "bf16-gemm-ref", 2.0 * m * P->n * P->k,
                   2.0 * (m * P->k + P->k * P->n) + 4.0 * m * P->n,
                   2.0 * (m * P->k + P->k * P->n) + 4.0 * m * P->n, "%zux%zux%zu", m, P->n, P->k);
    return RIDGE_OK;
}

ridge_status ridge_gemm_bf16(ridge_ctx *ctx, ridge_trans tb, size_t m, size_t n, size_t k,
                             const uint16_t *a, size_t lda, const uint16_t *b, size_t ldb,
                             float beta, float *c, size_t ldc)
{
    const char *fn = "gemm_bf16";
    if (!ctx) return ridge_error(RIDGE_EINVAL, "%s: ctx is NULL", fn);
    ridge_status st;
    if ((st = check_size(fn, "m", m)) || (st = check_b(fn, tb, n, k, b, ldb, 2)) ||
        (st = check_matrix(fn, "a", a, n != 0, m, k, lda, "lda", 2)) ||
        (st = check_matrix(fn, "c", c, 1, m, n, ldc, "ldc", 4)))
        return st;
    if (m == 0 || n == 0) return RIDGE_OK;
    ridge_bf16_plan *P;
    if ((st = ridge_bf16_plan_create(ctx, tb, n, k, b, ldb, &P))) return st;
    st = ridge_bf16_plan_execute(ctx, P, m, a, lda, beta, c, ldc);
    ridge_bf16_plan_destroy(P);
    return st;
}
