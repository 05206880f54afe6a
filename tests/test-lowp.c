/* lowp: int8 GEMM with requantization and bf16 GEMM against the scalar references, for every
 * kernel variant the CPU has (the others SKIP), over edge shapes, k blockings, thread counts
 * and the extremes of the int8 ranges; the int8 convolutions (im2col, pointwise, direct,
 * depthwise) against their plain loops; the int32 overflow bound driven to its edge, for the
 * GEMM and the direct and depthwise convolutions; the bf16
 * conversion (exhaustive over all 2^32 floats with --full, sampled otherwise); argument checks.
 *
 * int8 results must equal the reference bit for bit (integer arithmetic is exact, and the
 * requantization is specified op for op); the reference itself is checked against an int64
 * computation. bf16 products are exact in fp32, so a bf16 result must be within
 * (k + 2) 2^-24 sum |a b| + 2^-23 |beta c| of the double-precision value.
 *
 * Padding past each row is filled with a marker (A, B) and C has guard bytes after each row
 * and after the matrix: a kernel that reads past a row changes the result, one that writes
 * past it changes a guard. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "lowp/lowp-internal.h"
#include "test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static const lowp_kernel *const i8_kernels[] = {&ridge_lowp_u8s8_avx2, &ridge_lowp_u8s8_avxvnni,
                                                &ridge_lowp_u8s8_avx512vnni};
static const lowp_kernel *const bf16_kernels[] = {&ridge_lowp_bf16_avx2, &ridge_lowp_bf16_avx512bf16};

/* ---- int8 -------------------------------------------------------------------------------------- */

enum { FILL_RANDOM, FILL_MAX, FILL_MIN, FILL_ALT };

/* One element of A or B: random over the full range, or an extreme. */
static int32_t fill(int mode, int is_u8, size_t idx)
{
    int32_t lo = is_u8 ? 0 : -128, hi = is_u8 ? 255 : 127;
    switch (mode) {
    case FILL_MAX: return hi;
    case FILL_MIN: return lo;
    case FILL_ALT: return idx & 1 ? hi : lo;
    default: return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
    }
}

typedef struct qcase {
    size_t m, n, k;
    ridge_trans tb;
    ridge_lowp_type a_type;
    int32_t za;
    ridge_requant rq; /* scale and bias arrays filled by run_qcase */
    int has_bias, fill_a, fill_b;
    float scale_mag;  /* scales in [0.5, 1.5] * scale_mag */
} qcase;

static const char *type_name(ridge_lowp_type t)
{
    static const char *n[] = {"s32", "u8", "s8", "f32"};
    return n[t];
}

/* Runs one case through a plan on ctx; compares with the reference. 0 if it passed. */
static int run_qcase(ridge_ctx *ctx, const qcase *q, const char *tag)
{
    size_t m = q->m, n = q->n, k = q->k;
    size_t lda = k + 3, br = q->tb ? n : k, bc = q->tb ? k : n, ldb = bc + 2, ldc = n + 5;
    size_t esz = q->rq.out == RIDGE_LOWP_U8 || q->rq.out == RIDGE_LOWP_S8 ? 1 : 4;
    uint8_t *a = malloc(m * lda + 1);
    int8_t *b = malloc(br * ldb + 1);
    size_t cbytes = (m * ldc + 16) * esz;
    uint8_t *c = malloc(cbytes), *cref = malloc(cbytes);
    float *scale = malloc((n + 1) * sizeof(float));
    int32_t *bias = malloc((n + 1) * sizeof(int32_t));
    memset(a, 0x5a, m * lda + 1);
    memset(b, 0x5a, br * ldb + 1);
    memset(c, 0xa5, cbytes);
    memset(cref, 0xa5, cbytes);
    int is_u8 = q->a_type == RIDGE_LOWP_U8;
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++) a[i * lda + p] = (uint8_t)fill(q->fill_a, is_u8, i + p);
    for (size_t i = 0; i < br; i++)
        for (size_t p = 0; p < bc; p++) b[i * ldb + p] = (int8_t)fill(q->fill_b, 0, i * 3 + p);
    for (size_t j = 0; j <= n; j++) {
        scale[j] = q->scale_mag * (0.5f + (float)(rnd() % 1000) / 1000.0f);
        bias[j] = (int32_t)(rnd() % 20001) - 10000;
    }
    ridge_requant rq = q->rq;
    rq.scale = rq.out == RIDGE_LOWP_S32 ? NULL : scale;
    rq.bias = q->has_bias ? bias : NULL;
    int fail = 0;
    ridge_qgemm_plan *plan = NULL;
    ridge_status st = ridge_qgemm_plan_create(ctx, q->tb, n, k, b, ldb, &plan);
    if (!st) st = ridge_qgemm_plan_execute(ctx, plan, q->a_type, m, a, lda, q->za, c, ldc, &rq);
    CHECKF(st == RIDGE_OK, "%s: %s", tag, ridge_last_error());
    if (st) fail = 1;
    ridge_qgemm__ref(m, n, k, q->a_type, a, lda, q->za, b, q->tb ? 1 : ldb, q->tb ? ldb : 1, cref,
                     ldc, &rq);
    if (!fail && memcmp(c, cref, cbytes) != 0) {
        size_t at = 0;
        while (c[at] == cref[at]) at++;
        size_t e = at / esz;
        fprintf(stderr, "%s: %zux%zux%zu tb=%d a=%s za=%d out=%s pc=%d bias=%d relu=%d zo=%d: "
                "first difference at element %zu (row %zu col %zu)\n",
                tag, m, n, k, q->tb, type_name(q->a_type), (int)q->za, type_name(rq.out),
                rq.per_channel, q->has_bias, rq.relu, (int)rq.out_zero_point, e, e / ldc, e % ldc);
        fail = 1;
    }
    CHECK(!fail);
    ridge_qgemm_plan_destroy(plan);
    free(a), free(b), free(c), free(cref), free(scale), free(bias);
    return fail;
}

/* The reference against int64 arithmetic (the definition of the sum), on random data. */
static void check_reference(void)
{
    for (int t = 0; t < 20; t++) {
        size_t m = 1 + rnd() % 7, n = 1 + rnd() % 9, k = rnd() % 40;
        int s8 = t & 1;
        int32_t za = s8 ? (int32_t)(rnd() % 256) - 128 : (int32_t)(rnd() % 256);
        uint8_t a[7 * 40];
        int8_t b[40 * 9];
        int32_t c[7 * 9];
        for (size_t i = 0; i < m * k; i++) a[i] = (uint8_t)rnd();
        for (size_t i = 0; i < k * n; i++) b[i] = (int8_t)rnd();
        ridge_requant rq = {0};
        ridge_qgemm__ref(m, n, k, s8 ? RIDGE_LOWP_S8 : RIDGE_LOWP_U8, a, k, za, b, n, 1, c, n, &rq);
        int ok = 1;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) {
                int64_t s = 0;
                for (size_t p = 0; p < k; p++) {
                    int64_t x = s8 ? (int8_t)a[i * k + p] : a[i * k + p];
                    s += (x - za) * b[p * n + j];
                }
                ok &= s == c[i * n + j];
            }
        CHECKF(ok, "reference vs int64 (%s)", s8 ? "s8" : "u8");
    }
}

/* The quantized value of x, as the epilogue specifies it, checked at a few hand values. */
static void check_requant_scalar(void)
{
    float s = 0.5f;
    ridge_requant rq = {.out = RIDGE_LOWP_U8, .scale = &s, .out_zero_point = 10};
    uint8_t u;
    qgemm_finish_scalar(&rq, 0, 5, &u);     /* 2.5 -> 2 (even) + 10 */
    CHECK(u == 12);
    qgemm_finish_scalar(&rq, 0, 7, &u);     /* 3.5 -> 4 + 10 */
    CHECK(u == 14);
    qgemm_finish_scalar(&rq, 0, 1000, &u);  /* saturates */
    CHECK(u == 255);
    qgemm_finish_scalar(&rq, 0, -1000, &u);
    CHECK(u == 0);
    rq.relu = 1;
    qgemm_finish_scalar(&rq, 0, -4, &u);    /* relu clamps at the zero point */
    CHECK(u == 10);
    int8_t v;
    rq = (ridge_requant){.out = RIDGE_LOWP_S8, .scale = &s, .out_zero_point = -3};
    qgemm_finish_scalar(&rq, 0, INT32_MIN, &v);
    CHECK(v == -128);
    qgemm_finish_scalar(&rq, 0, INT32_MAX, &v);
    CHECK(v == 127);
    qgemm_finish_scalar(&rq, 0, -3, &v);    /* -1.5 -> -2 (even) - 3 */
    CHECK(v == -5);
}

/* Every kernel (or the reference on ISA ref) over the edge matrix. */
static void test_i8_variant(const lowp_kernel *K, int full)
{
    const char *name = K ? K->name : "u8s8-gemm-ref";
    if (K && !ridge_lowp_kernel_supported(K)) {
        SKIP("%s: the CPU lacks its ISA", name);
        return;
    }
    ridge_lowp_force_kernel_for_tests(K);
    static const size_t ms[] = {1, 2, 5, 6, 7, 13, 14, 15, 29, 67};
    static const size_t ns[] = {1, 3, 8, 15, 16, 17, 31, 32, 33, 50};
    static const size_t ks[] = {0, 1, 2, 3, 4, 5, 7, 8, 31, 64, 130};
    int failures = 0;
    for (int threads = 1; threads <= 2; threads++) {
        ridge_ctx *ctx = test_ctx(threads, K ? RIDGE_ISA_AUTO : RIDGE_ISA_REF);
        if (!ctx) continue;
        for (int blk = 0; blk < 2; blk++) {
            /* blk 1: tiny k blocks and m blocks, so partial sums chain and A is repacked */
            if (blk) ridge_lowp_set_blocking_for_tests(3, K ? (size_t)K->mr : 1);
            int cases = full ? 600 : 120;
            for (int t = 0; t < cases && failures < 5; t++) {
                qcase q = {0};
                q.m = ms[rnd() % 10], q.n = ns[rnd() % 10], q.k = ks[rnd() % 11];
                q.tb = rnd() & 1 ? RIDGE_TRANS : RIDGE_NO_TRANS;
                q.a_type = rnd() & 1 ? RIDGE_LOWP_S8 : RIDGE_LOWP_U8;
                q.za = q.a_type == RIDGE_LOWP_U8 ? (int32_t)(rnd() % 256) : (int32_t)(rnd() % 256) - 128;
                if (rnd() % 4 == 0) q.za = 0;
                q.rq.out = (ridge_lowp_type)(rnd() % 4);
                q.rq.per_channel = rnd() & 1;
                q.rq.relu = rnd() % 3 == 0;
                if (q.rq.out == RIDGE_LOWP_U8) q.rq.out_zero_point = (int32_t)(rnd() % 256);
                if (q.rq.out == RIDGE_LOWP_S8) q.rq.out_zero_point = (int32_t)(rnd() % 256) - 128;
                q.has_bias = rnd() & 1;
                q.fill_a = rnd() % 5 < 2 ? (int)(rnd() % 4) : FILL_RANDOM;
                q.fill_b = rnd() % 5 < 2 ? (int)(rnd() % 4) : FILL_RANDOM;
                /* from "most values saturate" to "most land in range" */
                q.scale_mag = (float)(1.0 / (1 + q.k * 64.0)) * (float)(1 << (rnd() % 12));
                char tag[96];
                snprintf(tag, sizeof tag, "%s %dt%s", name, threads, blk ? " small blocks" : "");
                failures += run_qcase(ctx, &q, tag);
            }
            ridge_lowp_set_blocking_for_tests(0, 0);
        }
        ridge_ctx_destroy(ctx);
    }
    ridge_lowp_force_kernel_for_tests(NULL);
    printf("%s: int8 edge matrix %s\n", name, failures ? "FAILED" : "ok");
}

/* The accumulator at its documented bound, and one term past it (wraps the same everywhere). */
static void test_i8_bound(const lowp_kernel *K)
{
    const char *name = K ? K->name : "u8s8-gemm-ref";
    if (K && !ridge_lowp_kernel_supported(K)) {
        SKIP("%s: overflow bound: the CPU lacks its ISA", name);
        return;
    }
    ridge_lowp_force_kernel_for_tests(K);
    ridge_ctx *ctx = test_ctx(2, K ? RIDGE_ISA_AUTO : RIDGE_ISA_REF);
    if (!ctx) return;
    struct { int s8; int32_t av, bv, za; size_t k; } cs[] = {
        {0, 255, -128, 0, 65793},   /* u8 x s8: 65793 * -32640 = -2147483520 >= -2^31 */
        {0, 0, 127, 255, 65793},    /* (0 - 255) * 127 * 65793 */
        {0, 255, -128, 0, 65794},   /* one past: wraps */
        {1, -128, -128, 0, 131071}, /* s8 x s8: 131071 * 16384 = 2147467264 <= 2^31 - 1 */
        {1, 127, -128, -128, 65793},/* (127 + 128) * -128 */
    };
    const size_t m = 3, n = 19;
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        size_t k = cs[t].k;
        uint8_t *a = malloc(m * k);
        int8_t *b = malloc(k * n);
        int32_t *c = malloc(m * n * 4);
        memset(a, (uint8_t)cs[t].av, m * k);
        memset(b, (int8_t)cs[t].bv, k * n);
        ridge_status st = cs[t].s8 ? ridge_gemm_s8s8s32(ctx, RIDGE_NO_TRANS, m, n, k, (int8_t *)a, k,
                                                        (int8_t)cs[t].za, b, n, c, n)
                                   : ridge_gemm_u8s8s32(ctx, RIDGE_NO_TRANS, m, n, k, a, k,
                                                        (uint8_t)cs[t].za, b, n, c, n);
        CHECK_OK(st);
        int64_t exact = (int64_t)k * (cs[t].av - cs[t].za) * cs[t].bv;
        int32_t want = (int32_t)(uint32_t)(uint64_t)exact; /* mod 2^32 */
        int fits = exact >= INT32_MIN && exact <= INT32_MAX;
        int ok = 1;
        for (size_t i = 0; i < m * n; i++) ok &= c[i] == want;
        CHECKF(ok, "%s: k = %zu, %d x %d (za %d): got %d, want %d (%s)", name, k, (int)cs[t].av,
               (int)cs[t].bv, (int)cs[t].za, (int)c[0], (int)want, fits ? "exact" : "wrapped");
        free(a), free(b), free(c);
    }
    ridge_ctx_destroy(ctx);
    ridge_lowp_force_kernel_for_tests(NULL);
}

/* The same result on 1 and 2 threads and through the one-shot call (s8 A, transposed B). */
static void test_i8_oneshot(void)
{
    ridge_ctx *c1 = test_ctx(1, RIDGE_ISA_AUTO), *c2 = test_ctx(2, RIDGE_ISA_AUTO);
    if (!c1 || !c2) goto out;
    size_t m = 37, n = 45, k = 77;
    int8_t *a = malloc(m * k), *b = malloc(n * k);
    int32_t *x = malloc(m * n * 4), *y = malloc(m * n * 4);
    for (size_t i = 0; i < m * k; i++) a[i] = (int8_t)rnd();
    for (size_t i = 0; i < n * k; i++) b[i] = (int8_t)rnd();
    CHECK_OK(ridge_gemm_s8s8s32(c1, RIDGE_TRANS, m, n, k, a, k, -7, b, k, x, n));
    CHECK_OK(ridge_gemm_s8s8s32(c2, RIDGE_TRANS, m, n, k, a, k, -7, b, k, y, n));
    int ok = !memcmp(x, y, m * n * 4);
    for (size_t i = 0; i < m && ok; i++)
        for (size_t j = 0; j < n; j++) {
            int64_t s = 0;
            for (size_t p = 0; p < k; p++) s += (int64_t)(a[i * k + p] + 7) * b[j * k + p];
            ok &= s == x[i * n + j];
        }
    CHECKF(ok, "gemm_s8s8s32: 1 vs 2 threads vs int64");
    free(a), free(b), free(x), free(y);
out:
    ridge_ctx_destroy(c1);
    ridge_ctx_destroy(c2);
}

static void test_i8_errors(void)
{
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    int8_t b[16] = {0};
    uint8_t a[16] = {0};
    int32_t c[16];
    ridge_qgemm_plan *P = NULL;
    CHECK(ridge_qgemm_plan_create(ctx, RIDGE_NO_TRANS, 4, 4, b, 3, &P) == RIDGE_EINVAL && !P);
    CHECK(ridge_qgemm_plan_create(ctx, RIDGE_NO_TRANS, 4, 4, NULL, 4, &P) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_create(ctx, (ridge_trans)7, 4, 4, b, 4, &P) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_create(ctx, RIDGE_NO_TRANS, 4, (size_t)-1, b, 4, &P) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "negative") != NULL);
    CHECK(ridge_qgemm_plan_create(ctx, RIDGE_TRANS, 1, ((size_t)1 << 31) + 1, b,
                                  ((size_t)1 << 31) + 1, &P) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "2^31") != NULL);
    CHECK_OK(ridge_qgemm_plan_create(ctx, RIDGE_NO_TRANS, 4, 4, b, 4, &P));
    float s = 1.0f, bad = -1.0f;
    ridge_requant rq = {.out = RIDGE_LOWP_U8, .scale = &s, .out_zero_point = 256};
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 4, 0, c, 4, &rq) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "out_zero_point") != NULL);
    rq.out_zero_point = 0, rq.scale = &bad;
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 4, 0, c, 4, &rq) == RIDGE_EINVAL);
    rq.scale = NULL;
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 4, 0, c, 4, &rq) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 4, 300, c, 4, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_S8, 4, a, 4, 128, c, 4, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_F32, 4, a, 4, 0, c, 4, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 3, 0, c, 4, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 4, a, 4, 0, NULL, 4, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qgemm_plan_execute(ctx, NULL, RIDGE_LOWP_U8, 4, a, 4, 0, c, 4, NULL) == RIDGE_EINVAL);
    CHECK_OK(ridge_qgemm_plan_execute(ctx, P, RIDGE_LOWP_U8, 0, NULL, 4, 0, NULL, 4, NULL));
    ridge_qgemm_plan_destroy(P);
    ridge_qgemm_plan_destroy(NULL);
    ridge_ctx_destroy(ctx);
}

/* ---- int8 convolution ------------------------------------------------------------------------- */

/* Every int8 convolution algorithm through each kernel variant (forced; the reference on ISA
 * ref) equals the plain-loop reference bit for bit: groups 1 and depthwise, u8 and s8 inputs,
 * int32, u8, s8 and f32 outputs, 1 and 2 threads. Guard bytes after y catch overruns. */
typedef struct qconv_shape { int64_t n, c, h, w, co, r, s, sh, sw, dh, dw, pt, pb, pl, pr, g; } qconv_shape;

static ridge_conv2d_desc qconv_desc(const qconv_shape *c)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = c->n, d.c_in = c->c, d.h = c->h, d.w = c->w, d.c_out = c->co, d.r = c->r, d.s = c->s;
    d.stride_h = c->sh, d.stride_w = c->sw, d.dil_h = c->dh, d.dil_w = c->dw;
    d.pad_top = c->pt, d.pad_bottom = c->pb, d.pad_left = c->pl, d.pad_right = c->pr;
    d.groups = c->g, d.layout = RIDGE_NHWC;
    return d;
}

static void test_qconv_variant(const lowp_kernel *K)
{
    const char *name = K ? K->name : "u8s8-gemm-ref";
    if (K && !ridge_lowp_kernel_supported(K)) {
        SKIP("%s: int8 convolution: the CPU lacks its ISA", name);
        return;
    }
    ridge_lowp_force_kernel_for_tests(K);
    static const qconv_shape cs[] = {
        {1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* same padding, odd c */
        {2, 8, 6, 6, 17, 3, 3, 2, 2, 1, 1, 1, 0, 1, 0, 1},   /* stride 2, asymmetric padding */
        {1, 5, 9, 8, 7, 3, 2, 1, 2, 2, 1, 2, 2, 0, 1, 1},    /* dilation, rectangular kernel */
        {2, 16, 5, 5, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},  /* pointwise, c_out past 2 NR */
        {1, 1, 12, 12, 4, 5, 5, 1, 1, 1, 1, 0, 0, 0, 0, 1},  /* one channel, 5x5 valid */
        {3, 1, 28, 28, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* the CNN's first layer */
        {1, 2, 1, 23, 3, 1, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1},   /* one row, 23 pixels (MR tails) */
        {2, 17, 7, 7, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 17}, /* depthwise, c past NR */
        {1, 40, 9, 11, 40, 5, 5, 2, 1, 1, 2, 2, 2, 3, 1, 40},/* depthwise, stride, dilation */
        {2, 1, 6, 5, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* depthwise with one channel */
        {1, 33, 4, 4, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 33}, /* depthwise 1x1 */
    };
    static const ridge_conv_algo algos[] = {RIDGE_CONV_AUTO, RIDGE_CONV_IM2COL, RIDGE_CONV_DIRECT,
                                            RIDGE_CONV_DEPTHWISE, RIDGE_CONV_REF};
    int failures = 0, runs = 0;
    for (int threads = 1; threads <= 2; threads++) {
        ridge_ctx *ctx = test_ctx(threads, K ? RIDGE_ISA_AUTO : RIDGE_ISA_REF);
        if (!ctx) continue;
        for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
            ridge_conv2d_desc d = qconv_desc(&cs[t]);
            int64_t oh, ow;
            CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
            size_t xn = (size_t)(d.n * d.h * d.w * d.c_in), wn = (size_t)(d.c_out * (d.c_in / d.groups) * d.r * d.s);
            size_t yn = (size_t)(d.n * oh * ow * d.c_out), ybytes = yn * 4 + 64;
            uint8_t *x = malloc(xn);
            int8_t *w = malloc(wn);
            uint8_t *y = malloc(ybytes), *yr = malloc(ybytes);
            float *scale = malloc((size_t)d.c_out * sizeof(float));
            int32_t *bias = malloc((size_t)d.c_out * sizeof(int32_t));
            for (size_t i = 0; i < xn; i++) x[i] = (uint8_t)rnd();
            for (size_t i = 0; i < wn; i++) w[i] = (int8_t)rnd();
            for (int64_t o = 0; o < d.c_out; o++)
                scale[o] = (float)(rnd() % 100 + 1) * 2e-5f, bias[o] = (int32_t)(rnd() % 2001) - 1000;
            for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
                ridge_qconv2d_plan *P = NULL;
                ridge_status st = ridge_qconv2d_plan_create(ctx, &d, w, algos[a], &P);
                if (st == RIDGE_EUNSUPPORTED) { /* only where the algorithm cannot apply */
                    CHECKF((algos[a] == RIDGE_CONV_DEPTHWISE) == (d.groups == 1),
                           "%s case %zu: %s refused: %s", name, t, ridge_conv_algo_name(algos[a]),
                           ridge_last_error());
                    continue;
                }
                CHECK_OK(st);
                for (int v = 0; v < 6 && P; v++) {
                    ridge_lowp_type xt = v & 1 ? RIDGE_LOWP_S8 : RIDGE_LOWP_U8;
                    int32_t zx = xt == RIDGE_LOWP_U8 ? 131 : -9;
                    ridge_requant rq = {0};
                    if (v >= 2) rq = (ridge_requant){.out = v < 4 ? RIDGE_LOWP_U8 : v == 4 ? RIDGE_LOWP_S8 : RIDGE_LOWP_F32,
                                                     .scale = scale, .per_channel = v != 4,
                                                     .bias = bias, .out_zero_point = v < 4 ? 7 : v == 4 ? -3 : 0,
                                                     .relu = v == 3 || v == 5};
                    if (v == 1) rq.bias = bias;
                    memset(y, 0x11, ybytes), memset(yr, 0x11, ybytes);
                    CHECK_OK(ridge_qconv2d_forward(ctx, P, xt, x, zx, y, &rq));
                    CHECK_OK(ridge_qconv2d_forward_ref(&d, xt, x, zx, w, yr, &rq));
                    int ok = !memcmp(y, yr, ybytes);
                    failures += !ok, runs++;
                    CHECKF(ok, "%s qconv2d case %zu %s variant %d (%d threads)", name, t,
                           ridge_conv_algo_name(ridge_qconv2d_plan_algo(P)), v, threads);
                }
                if (P && d.n > 1) { /* the first image alone through the same plan */
                    const size_t img = yn / (size_t)d.n * 4;
                    memset(y, 0x11, ybytes), memset(yr, 0x22, ybytes);
                    CHECK_OK(ridge_qconv2d_forward_n(ctx, P, 1, RIDGE_LOWP_U8, x, 5, y, NULL));
                    CHECK_OK(ridge_qconv2d_forward_ref(&d, RIDGE_LOWP_U8, x, 5, w, yr, NULL));
                    CHECKF(!memcmp(y, yr, img) && y[img] == 0x11, "%s case %zu: forward_n(1)", name, t);
                    CHECK(ridge_qconv2d_forward_n(ctx, P, 0, RIDGE_LOWP_U8, x, 5, y, NULL) == RIDGE_EINVAL);
                    CHECK(ridge_qconv2d_forward_n(ctx, P, (size_t)d.n + 1, RIDGE_LOWP_U8, x, 5, y,
                                                  NULL) == RIDGE_EINVAL);
                }
                ridge_qconv2d_plan_destroy(P);
            }
            free(x), free(w), free(y), free(yr), free(scale), free(bias);
        }
        ridge_ctx_destroy(ctx);
    }
    ridge_lowp_force_kernel_for_tests(NULL);
    printf("%s: int8 convolution, %d runs %s\n", name, runs, failures ? "FAILED" : "ok");
}

/* The direct and depthwise convolutions with every term at its extreme: at the documented
 * bound (k = c_in r s, or r s taps, up to 65793) the sums are exact; past it they wrap modulo
 * 2^32 like the reference. */
static void test_qconv_bound(const lowp_kernel *K)
{
    const char *name = K ? K->name : "u8s8-gemm-ref";
    if (K && !ridge_lowp_kernel_supported(K)) {
        SKIP("%s: int8 convolution bound: the CPU lacks its ISA", name);
        return;
    }
    ridge_lowp_force_kernel_for_tests(K);
    ridge_ctx *ctx = test_ctx(2, K ? RIDGE_ISA_AUTO : RIDGE_ISA_REF);
    struct { qconv_shape sh; int s8; int32_t xv, wv, zx; } cs[] = {
        /* direct: k = 7310 * 9 = 65790, 2x2 outputs: 65790 * 255 * -128 = -2147385600 */
        {{1, 7310, 4, 4, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0, 255, -128, 0},
        /* s8 input: (-128 - 127) * -128 per term, +2147385600, through the +128 flip */
        {{1, 7310, 4, 4, 3, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 1, -128, -128, 127},
        /* direct past the bound: 7400 * 9 terms wrap */
        {{1, 7400, 3, 3, 2, 3, 3, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0, 255, -128, 0},
        /* depthwise: 256 x 256 = 65536 taps: 65536 * -32640 = -2139095040 */
        {{1, 3, 256, 256, 3, 256, 256, 1, 1, 1, 1, 0, 0, 0, 0, 3}, 0, 255, -128, 0},
        /* depthwise past it: 257 x 257 taps wrap */
        {{1, 3, 257, 257, 3, 257, 257, 1, 1, 1, 1, 0, 0, 0, 0, 3}, 1, 127, 127, -128},
    };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0] && ctx; t++) {
        ridge_conv2d_desc d = qconv_desc(&cs[t].sh);
        int64_t oh, ow;
        CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
        size_t xn = (size_t)(d.n * d.h * d.w * d.c_in), wn = (size_t)(d.c_out * (d.c_in / d.groups) * d.r * d.s);
        size_t yn = (size_t)(d.n * oh * ow * d.c_out);
        uint8_t *x = malloc(xn);
        int8_t *w = malloc(wn);
        int32_t *y = malloc(yn * 4), *yr = malloc(yn * 4);
        memset(x, (uint8_t)cs[t].xv, xn);
        memset(w, (int8_t)cs[t].wv, wn);
        ridge_lowp_type xt = cs[t].s8 ? RIDGE_LOWP_S8 : RIDGE_LOWP_U8;
        ridge_qconv2d_plan *P = NULL;
        CHECK_OK(ridge_qconv2d_plan_create(ctx, &d, w, d.groups == 1 ? RIDGE_CONV_DIRECT
                                                                     : RIDGE_CONV_DEPTHWISE, &P));
        if (P) CHECK_OK(ridge_qconv2d_forward(ctx, P, xt, x, cs[t].zx, y, NULL));
        CHECK_OK(ridge_qconv2d_forward_ref(&d, xt, x, cs[t].zx, w, yr, NULL));
        int64_t terms = (int64_t)(d.c_in / d.groups) * d.r * d.s;
        int64_t exact = terms * (cs[t].xv - cs[t].zx) * cs[t].wv;
        int32_t want = (int32_t)(uint32_t)(uint64_t)exact;
        int ok = 1;
        for (size_t i = 0; i < yn; i++) ok &= y[i] == want && yr[i] == want;
        CHECKF(ok, "%s: conv bound case %zu (%lld terms): got %d, reference %d, want %d (%s)", name,
               t, (long long)terms, (int)y[0], (int)yr[0], (int)want,
               exact >= INT32_MIN && exact <= INT32_MAX ? "exact" : "wrapped");
        ridge_qconv2d_plan_destroy(P);
        free(x), free(w), free(y), free(yr);
    }
    ridge_ctx_destroy(ctx);
    ridge_lowp_force_kernel_for_tests(NULL);
}

static void test_qconv_errors(void)
{
    /* refusals */
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 1, d.c_in = 4, d.h = d.w = 8, d.c_out = 4, d.r = d.s = 3, d.layout = RIDGE_NHWC;
    int8_t w[4 * 4 * 9] = {0};
    ridge_qconv2d_plan *P = NULL;
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_WINOGRAD_2X3, &P) == RIDGE_EUNSUPPORTED && !P);
    CHECK(strstr(ridge_last_error(), "Winograd does not compose with int8") != NULL);
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_WINOGRAD_4X3, &P) == RIDGE_EUNSUPPORTED);
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_POINTWISE, &P) == RIDGE_EUNSUPPORTED);
    d.layout = RIDGE_NCHW;
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_AUTO, &P) == RIDGE_EUNSUPPORTED);
    d.layout = RIDGE_NHWC, d.groups = 2; /* grouped, not depthwise */
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_AUTO, &P) == RIDGE_EUNSUPPORTED);
    d.groups = 4; /* depthwise: only the depthwise algorithm */
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_DIRECT, &P) == RIDGE_EUNSUPPORTED);
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_IM2COL, &P) == RIDGE_EUNSUPPORTED);
    CHECK_OK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_AUTO, &P));
    CHECK(ridge_qconv2d_plan_algo(P) == RIDGE_CONV_DEPTHWISE);
    uint8_t x[8 * 8 * 4] = {0};
    int32_t y[6 * 6 * 4];
    CHECK(ridge_qconv2d_forward(ctx, P, RIDGE_LOWP_U8, x, 256, y, NULL) == RIDGE_EINVAL);
    CHECK(ridge_qconv2d_forward(ctx, P, RIDGE_LOWP_F32, x, 0, y, NULL) == RIDGE_EINVAL);
    ridge_requant bad = {.out = RIDGE_LOWP_U8, .scale = NULL};
    CHECK(ridge_qconv2d_forward(ctx, P, RIDGE_LOWP_U8, x, 0, y, &bad) == RIDGE_EINVAL);
    ridge_qconv2d_plan_destroy(P);
    P = NULL;
    d.groups = 1;
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_DEPTHWISE, &P) == RIDGE_EUNSUPPORTED);
    d.groups = 1, d.pad_top = -1;
    CHECK(ridge_qconv2d_plan_create(ctx, &d, w, RIDGE_CONV_AUTO, &P) == RIDGE_EINVAL);
    ridge_ctx_destroy(ctx);
}

/* ---- bf16 -------------------------------------------------------------------------------------- */

/* The RNE bf16 of x, computed independently in double: the two bf16 neighbours of x (its
 * truncation toward zero and the next one out, which may be infinity) and the nearer one, or
 * on a tie the one with an even last bit. */
static uint16_t bf16_expected(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    if (isnan(x)) return (uint16_t)((u >> 16) | 0x40);
    uint32_t t = u & 0xffff0000u;
    float lo_f;
    memcpy(&lo_f, &t, 4);
    if (t == u || isinf(x)) return (uint16_t)(t >> 16);
    double lo = fabs((double)lo_f);
    uint32_t up_bits = (t & 0x7fffffffu) + 0x10000u;
    double up;
    if (up_bits >= 0x7f800000u) up = ldexp(1.0, 128);
    else {
        float f;
        memcpy(&f, &up_bits, 4);
        up = f;
    }
    double ax = fabs((double)x);
    uint16_t hlo = (uint16_t)(t >> 16), hup = (uint16_t)(hlo + 1);
    if (ax - lo < up - ax) return hlo;
    if (ax - lo > up - ax) return hup;
    return (hlo & 1) ? hup : hlo;
}

static void test_bf16_convert(int full)
{
    /* every bf16 to fp32 is exact */
    int ok = 1;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ridge_bf16_to_f32_1((uint16_t)h);
        uint32_t u;
        memcpy(&u, &f, 4);
        ok &= u == h << 16;
    }
    CHECKF(ok, "bf16 -> f32 over all 65536 values");
    /* fp32 -> bf16: all 2^32 with --full, else every 509th plus the special values */
    static const uint32_t special[] = {0, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                       0xffc00001u, 0x7f800001u, 0xff80ffffu, 0x7f7fffffu,
                                       0x7f7f8000u, 0x7f7f7fffu, 0x00000001u, 0x00008000u,
                                       0x00018000u, 0x80008000u, 0x3f808000u, 0x3f818000u,
                                       0x3f80ffffu, 0x7f7f8001u};
    size_t bad = 0, checked = 0;
    uint32_t first_bad = 0;
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++) {
        float x;
        memcpy(&x, &special[i], 4);
        if (ridge_bf16_from_f32(x) != bf16_expected(special[i]) && !bad++) first_bad = special[i];
        checked++;
    }
    uint64_t step = full ? 1 : 509;
    for (uint64_t u = 0; u <= 0xffffffffu; u += step) {
        float x;
        uint32_t v = (uint32_t)u;
        memcpy(&x, &v, 4);
        if (ridge_bf16_from_f32(x) != bf16_expected(v) && !bad++) first_bad = v;
        checked++;
    }
    CHECKF(bad == 0, "f32 -> bf16: %zu of %zu wrong, first 0x%08x", bad, checked, first_bad);
    /* the array forms agree with the scalar ones */
    float xs[37];
    uint16_t hs[37];
    float back[37];
    for (int i = 0; i < 37; i++) xs[i] = (float)(rnd() % 100000) * 1e-3f - 50.0f;
    ridge_f32_to_bf16(37, xs, hs);
    ridge_bf16_to_f32(37, hs, back);
    ok = 1;
    for (int i = 0; i < 37; i++)
        ok &= hs[i] == ridge_bf16_from_f32(xs[i]) && fabsf(back[i] - xs[i]) <= fabsf(xs[i]) * 0x1p-8f;
    CHECKF(ok, "array conversions");
    printf("bf16 conversion: %zu fp32 values checked%s\n", checked, full ? " (all)" : "");
}

static uint16_t bf16_rand(void)
{
    return ridge_bf16_from_f32((float)((int)(rnd() % 2001) - 1000) / 500.0f);
}

static int run_bcase(ridge_ctx *ctx, size_t m, size_t n, size_t k, ridge_trans tb, float beta,
                     const char *tag)
{
    size_t lda = k + 1, br = tb ? n : k, bc = tb ? k : n, ldb = bc + 3, ldc = n + 2;
    uint16_t *a = malloc((m * lda + 1) * 2), *b = malloc((br * ldb + 1) * 2);
    float *c = malloc((m * ldc + 8) * 4), *c0 = malloc((m * ldc + 8) * 4);
    for (size_t i = 0; i < m * lda + 1; i++) a[i] = 0x7fc1; /* NaN padding */
    for (size_t i = 0; i < br * ldb + 1; i++) b[i] = 0x7fc1;
    for (size_t i = 0; i < m; i++)
        for (size_t p = 0; p < k; p++) a[i * lda + p] = bf16_rand();
    for (size_t i = 0; i < br; i++)
        for (size_t p = 0; p < bc; p++) b[i * ldb + p] = bf16_rand();
    for (size_t i = 0; i < m * ldc + 8; i++) c0[i] = c[i] = (float)(rnd() % 100) * 0.01f;
    for (size_t i = 0; i < m && beta == 0.0f; i++)
        for (size_t j = 0; j < n; j++) c0[i * ldc + j] = c[i * ldc + j] = NAN; /* must not be read */
    ridge_status st = ridge_gemm_bf16(ctx, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    CHECKF(st == RIDGE_OK, "%s: %s", tag, ridge_last_error());
    int fail = st != RIDGE_OK;
    for (size_t i = 0; i < m * ldc + 8 && !fail; i++) {
        size_t r = i / ldc, j = i % ldc;
        if (r >= m || j >= n) { /* padding and guards untouched */
            if (memcmp(&c[i], &c0[i], 4)) fail = 1;
            continue;
        }
        double s = 0, mag = 0;
        for (size_t p = 0; p < k; p++) {
            double x = ridge_bf16_to_f32_1(a[r * lda + p]);
            double y = ridge_bf16_to_f32_1(tb ? b[j * ldb + p] : b[p * ldb + j]);
            s += x * y, mag += fabs(x * y);
        }
        double bc0 = beta != 0.0f ? (double)beta * c0[i] : 0.0;
        double want = s + bc0, tol = (double)(k + 2) * 0x1p-24 * mag + 0x1p-23 * fabs(bc0) + 1e-30;
        if (!(fabs(c[i] - want) <= tol)) {
            fprintf(stderr, "%s: %zux%zux%zu tb=%d beta=%g: C[%zu][%zu] = %.9g, want %.9g (tol %.3g)\n",
                    tag, m, n, k, tb, (double)beta, r, j, (double)c[i], want, tol);
            fail = 1;
        }
    }
    CHECK(!fail);
    free(a), free(b), free(c), free(c0);
    return fail;
}

static void test_bf16_variant(const lowp_kernel *K, int full)
{
    const char *name = K ? K->name : "bf16-gemm-ref";
    if (K && !ridge_lowp_kernel_supported(K)) {
        SKIP("%s: the CPU lacks its ISA", name);
        return;
    }
    ridge_lowp_force_kernel_for_tests(K);
    static const size_t ms[] = {1, 2, 6, 7, 13, 15, 29};
    static const size_t ns[] = {1, 7, 8, 16, 17, 33, 40};
    static const size_t ks[] = {0, 1, 2, 3, 8, 17, 100};
    static const float betas[] = {0.0f, 1.0f, -0.5f};
    int failures = 0;
    for (int threads = 1; threads <= 2; threads++) {
        ridge_ctx *ctx = test_ctx(threads, K ? RIDGE_ISA_AUTO : RIDGE_ISA_REF);
        if (!ctx) continue;
        for (int blk = 0; blk < 2; blk++) {
            if (blk) ridge_lowp_set_blocking_for_tests(2, K ? (size_t)K->mr : 1);
            int cases = full ? 300 : 60;
            for (int t = 0; t < cases && failures < 5; t++)
                failures += run_bcase(ctx, ms[rnd() % 7], ns[rnd() % 7], ks[rnd() % 7],
                                      rnd() & 1 ? RIDGE_TRANS : RIDGE_NO_TRANS, betas[rnd() % 3],
                                      name);
            ridge_lowp_set_blocking_for_tests(0, 0);
        }
        ridge_ctx_destroy(ctx);
    }
    ridge_lowp_force_kernel_for_tests(NULL);
    printf("%s: bf16 edge matrix %s\n", name, failures ? "FAILED" : "ok");
}

static void test_bf16_errors(void)
{
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    uint16_t a[8] = {0}, b[8] = {0};
    float c[8];
    CHECK(ridge_gemm_bf16(ctx, RIDGE_NO_TRANS, 2, 2, 2, a, 1, b, 2, 0.0f, c, 2) == RIDGE_EINVAL);
    CHECK(ridge_gemm_bf16(ctx, RIDGE_NO_TRANS, 2, 2, 2, NULL, 2, b, 2, 0.0f, c, 2) == RIDGE_EINVAL);
    CHECK(ridge_gemm_bf16(NULL, RIDGE_NO_TRANS, 2, 2, 2, a, 2, b, 2, 0.0f, c, 2) == RIDGE_EINVAL);
    CHECK_OK(ridge_gemm_bf16(ctx, RIDGE_NO_TRANS, 0, 2, 2, NULL, 2, b, 2, 0.0f, NULL, 2));
    /* a plan owns its copy of B: the same result after B changes, and as the one-shot call */
    uint16_t bb[6 * 5], aa[3 * 6];
    float c1[3 * 5], c2[3 * 5];
    for (int i = 0; i < 30; i++) bb[i] = bf16_rand();
    for (int i = 0; i < 18; i++) aa[i] = bf16_rand();
    ridge_bf16_plan *P = NULL;
    CHECK(ridge_bf16_plan_create(ctx, RIDGE_TRANS, 5, 6, bb, 5, &P) == RIDGE_EINVAL && !P);
    CHECK_OK(ridge_bf16_plan_create(ctx, RIDGE_TRANS, 5, 6, bb, 6, &P));
    CHECK_OK(ridge_gemm_bf16(ctx, RIDGE_TRANS, 3, 5, 6, aa, 6, bb, 6, 0.0f, c1, 5));
    memset(bb, 0, sizeof bb);
    CHECK_OK(ridge_bf16_plan_execute(ctx, P, 3, aa, 6, 0.0f, c2, 5));
    CHECK(!memcmp(c1, c2, sizeof c1));
    CHECK(ridge_bf16_plan_execute(ctx, P, 3, aa, 5, 0.0f, c2, 5) == RIDGE_EINVAL);
    ridge_bf16_plan_destroy(P);
    ridge_bf16_plan_destroy(NULL);
    ridge_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    int full = argc > 1 && !strcmp(argv[1], "--full");
    check_reference();
    check_requant_scalar();
    test_i8_variant(NULL, full);
    for (size_t i = 0; i < sizeof i8_kernels / sizeof i8_kernels[0]; i++)
        test_i8_variant(i8_kernels[i], full);
    test_i8_bound(NULL);
    for (size_t i = 0; i < sizeof i8_kernels / sizeof i8_kernels[0]; i++)
        test_i8_bound(i8_kernels[i]);
    test_i8_oneshot();
    test_i8_errors();
    test_qconv_variant(NULL);
    for (size_t i = 0; i < sizeof i8_kernels / sizeof i8_kernels[0]; i++) {
        test_qconv_variant(i8_kernels[i]);
        test_qconv_bound(i8_kernels[i]);
    }
    test_qconv_bound(NULL);
    test_qconv_errors();
    test_bf16_convert(full);
    test_bf16_variant(NULL, full);
    for (size_t i = 0; i < sizeof bf16_kernels / sizeof bf16_kernels[0]; i++)
        test_bf16_variant(bf16_kernels[i], full);
    test_bf16_errors();
    return test_finish("test-lowp");
}
