/* SGEMM against a double-accumulating checker, over an edge matrix of shapes, transposes,
 * leading dimensions, alpha/beta, epilogues, ISAs and thread counts; plus the batched and
 * prepacked-B calls and argument validation.
 *
 * Error bound: for each element, with s = sum_p |a_ip| |b_pj| (in double),
 *   |C - C_exact| <= (k + 4) eps (|alpha| s + |beta c| + |bias|) * 1.2 + 16 eps (|C| + |res|)
 * with eps = FLT_EPSILON: the float accumulation of k products (any order, FMA or not) is
 * within k eps s; 1.2 bounds the slope of every activation (GELU's is 1.13); the last term
 * covers the activation's own rounding and the residual add.
 *
 * Inputs are in [-1, 1); padding beyond each row is NaN, so a kernel that reads or uses an
 * element outside the matrix shows up; C has guard floats before and after, and its padding
 * columns must be left untouched. When beta == 0, C starts as NaN: it must not be read. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "gemm/gemm-internal.h"
#include "test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0);
}

#define GUARD 37
static const float guard_val = 12345.678f;

typedef struct gcase {
    ridge_trans ta, tb;
    size_t m, n, k;
    size_t pad_a, pad_b, pad_c; /* leading dimension minus the minimum */
    float alpha, beta;
    ridge_epilogue epi;  /* bias and residual pointers filled by run_case when flagged */
    int residual_in_c;   /* residual == c, ldr == ldc */
    int use_plan;        /* through ridge_sgemm_plan_* */
} gcase;

static double act_d(ridge_epi_act act, double x)
{
    switch (act) {
    case RIDGE_EPI_NONE: return x;
    case RIDGE_EPI_RELU: return x < 0 ? 0 : x;
    case RIDGE_EPI_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case RIDGE_EPI_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case RIDGE_EPI_TANH: return tanh(x);
    }
    return x;
}

static const char *act_name(ridge_epi_act a)
{
    static const char *n[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
    return n[a];
}

static float *alloc_matrix(size_t rows, size_t cols, size_t ld, int nan_pad)
{
    size_t sz = rows * ld + 1;
    float *x = malloc(sz * sizeof(float));
    for (size_t i = 0; i < sz; i++) x[i] = nan_pad ? NAN : 0.0f;
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) x[i * ld + j] = frand();
    return x;
}

/* Runs one case on ctx; returns 0 if it passed (the failure is reported). */
static int run_case(ridge_ctx *ctx, const gcase *g, const char *tag)
{
    size_t m = g->m, n = g->n, k = g->k;
    size_t ar = g->ta ? k : m, ac = g->ta ? m : k, br = g->tb ? n : k, bc = g->tb ? k : n;
    size_t lda = ac + g->pad_a, ldb = bc + g->pad_b, ldc = n + g->pad_c;
    if (lda == 0) lda = 1;
    if (ldb == 0) ldb = 1;
    if (ldc == 0) ldc = 1;
    float *a = alloc_matrix(ar, ac, lda, 1), *b = alloc_matrix(br, bc, ldb, 1);
    size_t csz = m * ldc;
    float *cbuf = malloc((csz + 2 * GUARD) * sizeof(float)), *c = cbuf + GUARD;
    float *c0 = malloc((csz + 1) * sizeof(float));
    for (size_t i = 0; i < csz + 2 * GUARD; i++) cbuf[i] = guard_val;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++)
            c[i * ldc + j] = (g->beta == 0.0f && !g->residual_in_c) ? NAN : frand();
    memcpy(c0, c, csz * sizeof(float));
    ridge_epilogue e = g->epi;
    float *bias = NULL, *res = NULL;
    if (e.bias_kind != RIDGE_BIAS_NONE) {
        size_t nb = e.bias_kind == RIDGE_BIAS_COL ? n : m;
        bias = malloc((nb + 1) * sizeof(float));
        for (size_t i = 0; i < nb; i++) bias[i] = frand();
        e.bias = bias;
    }
    if (g->residual_in_c) {
        e.residual = c;
        e.ldr = ldc;
    } else if (e.residual) {
        e.ldr = n + 3;
        res = alloc_matrix(m, n, e.ldr, 1);
        e.residual = res;
    }

    ridge_status st;
    if (g->use_plan) {
        ridge_sgemm_plan *plan = NULL;
        st = ridge_sgemm_plan_create(ctx, g->tb, n, k, b, ldb, &plan);
        if (!st) {
            /* execute must use the packed copy: clobber B first */
            for (size_t i = 0; i < br * ldb; i++) b[i] = -b[i];
            st = ridge_sgemm_plan_update(ctx, plan, b, ldb);
            for (size_t i = 0; i < br * ldb; i++) b[i] = -b[i];
            if (!st) st = ridge_sgemm_plan_update(ctx, plan, b, ldb);
            float *scrap = malloc(br * ldb * sizeof(float) + 4);
            memcpy(scrap, b, br * ldb * sizeof(float));
            for (size_t i = 0; i < br * ldb; i++) b[i] = NAN;
            if (!st)
                st = ridge_sgemm_plan_execute(ctx, plan, g->ta, m, g->alpha, a, lda, g->beta, c,
                                              ldc, &e);
            memcpy(b, scrap, br * ldb * sizeof(float));
            free(scrap);
        }
        ridge_sgemm_plan_destroy(plan);
    } else {
        st = ridge_sgemm_ex(ctx, g->ta, g->tb, m, n, k, g->alpha, a, lda, b, ldb, g->beta, c,
                            ldc, &e);
    }

    int bad = 0;
    char where[256];
    snprintf(where, sizeof where,
             "%s %c%c m=%zu n=%zu k=%zu pads=%zu,%zu,%zu alpha=%g beta=%g bias=%d act=%s res=%d%s%s",
             tag, g->ta ? 'T' : 'N', g->tb ? 'T' : 'N', m, n, k, g->pad_a, g->pad_b, g->pad_c,
             g->alpha, g->beta, (int)e.bias_kind, act_name(e.act), e.residual != NULL,
             g->residual_in_c ? " (in C)" : "", g->use_plan ? " plan" : "");
    if (st != RIDGE_OK) {
        CHECKF(0, "%s: status %s: %s", where, ridge_status_str(st), ridge_last_error());
        bad = 1;
    }
    for (size_t i = 0; i < GUARD && !bad; i++)
        if (memcmp(&cbuf[i], &guard_val, 4) || memcmp(&c[csz + i], &guard_val, 4)) {
            CHECKF(0, "%s: guard clobbered", where);
            bad = 1;
        }
    const double eps = FLT_EPSILON;
    for (size_t i = 0; i < m && !bad; i++) {
        for (size_t j = n; j < ldc && !bad && i * ldc + j < csz; j++)
            if (memcmp(&c[i * ldc + j], &guard_val, 4)) {
                CHECKF(0, "%s: padding C[%zu][%zu] written", where, i, j);
                bad = 1;
            }
        for (size_t j = 0; j < n && !bad; j++) {
            double s = 0, sabs = 0;
            if (g->alpha != 0.0f)
                for (size_t p = 0; p < k; p++) {
                    double x = a[g->ta ? p * lda + i : i * lda + p];
                    double y = b[g->tb ? j * ldb + p : p * ldb + j];
                    s += x * y;
                    sabs += fabs(x * y);
                }
            double v = g->alpha * s, cin = c0[i * ldc + j];
            double mag = fabs((double)g->alpha) * sabs;
            if (g->beta != 0.0f) {
                v += g->beta * cin;
                mag += fabs(g->beta * cin);
            }
            if (bias) {
                double bv = bias[e.bias_kind == RIDGE_BIAS_COL ? j : i];
                v += bv;
                mag += fabs(bv);
            }
            v = act_d(e.act, v);
            double r = 0;
            if (g->residual_in_c) r = cin;
            else if (res) r = res[i * e.ldr + j];
            v += r;
            double got = c[i * ldc + j];
            double tol = 1.2 * (k + 4) * eps * mag + 16 * eps * (fabs(v) + fabs(r)) + 1e-37;
            if (!(fabs(got - v) <= tol)) {
                CHECKF(0, "%s: C[%zu][%zu] = %.9g, expected %.9g (tol %.3g)", where, i, j, got, v,
                       tol);
                bad = 1;
            }
        }
    }
    if (!bad) test_passed++;
    free(a);
    free(b);
    free(cbuf);
    free(c0);
    free(bias);
    free(res);
    return !bad;
}

/* Tile-edge sizes for every micro-kernel ridge has (6x16 AVX2; 8x32, 14x32 and 6x64 AVX-512:
 * MR - 1, MR, MR + 1, NR +- 1; 6x64's 63 and 65 are among the big sizes), and primes. */
static const size_t small_sizes[] = {1, 2, 5, 6, 7, 8, 9, 13, 14, 15, 16, 17, 31, 33};
#define NSMALL (sizeof small_sizes / sizeof small_sizes[0])
static const size_t big_sizes[] = {63, 64, 65, 97, 257};
#define NBIG (sizeof big_sizes / sizeof big_sizes[0])

static gcase plain(ridge_trans ta, ridge_trans tb, size_t m, size_t n, size_t k)
{
    gcase g = {.ta = ta, .tb = tb, .m = m, .n = n, .k = k, .alpha = 1.0f, .beta = 0.0f};
    return g;
}

/* The AVX-512 tile the tests force (ridge_gemm_set_tile_for_tests), for the failure tags. */
static char tile_tag[16];

static void force_tile(int mr)
{
    ridge_gemm_set_tile_for_tests(mr);
    if (mr) snprintf(tile_tag, sizeof tile_tag, "/%dx%d", mr, mr == 6 ? 64 : 32);
    else tile_tag[0] = '\0';
}

static void test_isa(ridge_isa isa, int threads)
{
    ridge_ctx *ctx = test_ctx(threads, isa);
    if (!ctx) return;
    char tag[64];
    snprintf(tag, sizeof tag, "%s/%dt%s", ridge_isa_name(isa), threads, tile_tag);
    int fails = 0;
    /* Every small shape, every transpose pair (stop reporting after a few failures). */
    for (int t = 0; t < 4; t++)
        for (size_t x = 0; x < NSMALL; x++)
            for (size_t y = 0; y < NSMALL; y++)
                for (size_t z = 0; z < NSMALL && fails < 5; z++) {
                    gcase g = plain(t >> 1, t & 1, small_sizes[x], small_sizes[y], small_sizes[z]);
                    g.pad_a = (x + z) % 3;
                    g.pad_b = (y + z) % 2 ? 3 : 0;
                    g.pad_c = (x + y) % 2 ? 0 : 5;
                    fails += !run_case(ctx, &g, tag);
                }
    /* Larger shapes mixed with small ones. */
    for (size_t x = 0; x < NBIG; x++)
        for (size_t y = 0; y < NBIG; y++) {
            size_t s3[] = {1, 17, big_sizes[(x + y) % NBIG]};
            for (int z = 0; z < 3 && fails < 5; z++) {
                gcase g = plain((x + z) & 1, (y + z) & 1, big_sizes[x], big_sizes[y], s3[z]);
                g.pad_c = z;
                fails += !run_case(ctx, &g, tag);
                gcase h = plain(z & 1, (z >> 1) & 1, s3[z], big_sizes[x], big_sizes[y]);
                fails += !run_case(ctx, &h, tag);
            }
        }
    /* A B^T by the dot kernel (gemm.c, choose_path) over its tile edges (4 x 6, 4, 2) and k
     * tails, and just past its limits: few rows with a long reduction (48, or 96 with a small
     * B^T and k 512), then few columns. */
    {
        const size_t dm[] = {2, 3, 5, 7, 17, 47, 48, 49, 96, 97};
        const size_t dn[] = {1, 3, 4, 5, 6, 7, 10, 13, 130};
        const size_t dk[] = {255, 256, 257, 511, 787};
        const size_t nm[] = {5, 64, 65, 257}, nn[] = {1, 6, 7, 31, 32, 33, 56, 57};
        const size_t nk[] = {31, 32, 33, 100, 127, 128, 129};
        for (int narrow = 0; narrow < 2; narrow++) {
            const size_t *vm = narrow ? nm : dm, *vn = narrow ? nn : dn, *vk = narrow ? nk : dk;
            const size_t cm = narrow ? 4 : 10, cn = narrow ? 8 : 9, ck = narrow ? 7 : 5;
            for (size_t x = 0; x < cm; x++)
                for (size_t y = 0; y < cn; y++)
                    for (size_t z = 0; z < ck && fails < 5; z++) {
                        gcase g = plain(RIDGE_NO_TRANS, RIDGE_TRANS, vm[x], vn[y], vk[z]);
                        g.pad_a = z % 3;
                        g.pad_b = (x + y) % 3;
                        g.pad_c = y % 2 ? 3 : 0;
                        fails += !run_case(ctx, &g, tag);
                    }
        }
    }
    /* alpha and beta (the last shape: the dot kernel, when A B^T). */
    const float ab[] = {0.0f, 1.0f, -0.5f};
    for (int ia = 0; ia < 3; ia++)
        for (int ib = 0; ib < 3; ib++)
            for (int t = 0; t < 4 && fails < 5; t++) {
                size_t shapes[][3] = {{7, 17, 5}, {65, 33, 64}, {1, 257, 63}, {9, 14, 260}};
                for (int s = 0; s < 4; s++) {
                    gcase g = plain(t >> 1, t & 1, shapes[s][0], shapes[s][1], shapes[s][2]);
                    g.alpha = ab[ia];
                    g.beta = ab[ib];
                    g.pad_c = 2;
                    fails += !run_case(ctx, &g, tag);
                }
            }
    /* Every epilogue: bias none/col/row x activation x residual (separate, in C). */
    for (int bk = 0; bk < 3; bk++)
        for (int act = 0; act <= RIDGE_EPI_TANH; act++)
            for (int r = 0; r < 3 && fails < 5; r++) {
                /* the fifth: A B^T by the dot kernel; the sixth: B in place under the
                 * Intel cores' 6 x 64 tile for few rows, its last panel partial */
                size_t shapes[][3] = {{13, 31, 17}, {6, 16, 1}, {64, 65, 97}, {1, 33, 40},
                                      {5, 13, 300}, {20, 127, 70}};
                for (int s = 0; s < 6; s++) {
                    gcase g = plain(s >= 4 ? RIDGE_NO_TRANS : (ridge_trans)(s & 1),
                                    s == 4 ? RIDGE_TRANS : s == 5 ? RIDGE_NO_TRANS
                                                                  : (ridge_trans)((s >> 1) & 1),
                                    shapes[s][0], shapes[s][1], shapes[s][2]);
                    g.beta = (s == 2 || s >= 4) ? -0.5f : 0.0f;
                    g.alpha = (s == 3 || s == 4) ? -0.5f : 1.0f;
                    g.epi.bias_kind = (ridge_bias_kind)bk;
                    g.epi.act = (ridge_epi_act)act;
                    g.epi.residual = r == 1 ? (const float *)1 : NULL; /* flag: allocate one */
                    g.residual_in_c = r == 2;
                    fails += !run_case(ctx, &g, tag);
                }
            }
    /* Prepacked B. */
    for (int t = 0; t < 4 && fails < 5; t++) {
        size_t shapes[][3] = {{1, 128, 78}, {7, 33, 257}, {65, 17, 1}, {32, 130, 100}};
        for (int s = 0; s < 4; s++) {
            gcase g = plain(t >> 1, t & 1, shapes[s][0], shapes[s][1], shapes[s][2]);
            g.use_plan = 1;
            g.beta = s == 1 ? 1.0f : 0.0f;
            g.epi.bias_kind = s == 3 ? RIDGE_BIAS_COL : RIDGE_BIAS_NONE;
            g.epi.act = s == 3 ? RIDGE_EPI_GELU_TANH : RIDGE_EPI_NONE;
            fails += !run_case(ctx, &g, tag);
        }
    }
    /* A few shapes large enough to cross every cache block (KC, MC, NC). */
    {
        /* the fourth: the matrix-vector path over several column ranges and row blocks; the
         * fifth: more rows than any kernel reads a row-major B in place for (packed B); the
         * last three: the matrix-vector path's k segments (2 and 8 of them, with epilogues;
         * then 4 over 44 rows, as many as k allows); the ninth: a row-major B whose rows are
         * 4 KiB apart, packed although A has few rows; the tenth: B^T packed and one block
         * of k, A's 300 rows in one block where they fit 4/5 of the L2 (Zen 5's 1 MiB), in
         * blocks of 3/10 of it where they do not; the last two: A and B in place over several
         * k blocks (gemm_kernel.block, once per block), with an epilogue and a residual in C,
         * then A^T */
        size_t shapes[][3] = {{300, 700, 600}, {37, 2500, 530}, {1, 3000, 900},
                              {1, 1300, 45},   {530, 70, 45},   {1, 130, 1000},
                              {1, 517, 2049},  {1, 20000, 44},  {65, 1024, 45},
                              {300, 200, 600}, {33, 100, 1100}, {20, 60, 900}};
        for (int s = 0; s < (int)(sizeof shapes / sizeof shapes[0]) && fails < 5; s++) {
            gcase g = plain(s == 1 || s == 11, s == 2 || s == 9, shapes[s][0], shapes[s][1],
                            shapes[s][2]);
            g.beta = s == 0 || s == 11 ? 1.0f : s == 3 || s == 5 || s == 10 ? -0.5f : 0.0f;
            g.alpha = s == 6 || s == 11 ? -0.5f : 1.0f;
            g.epi.bias_kind = s == 3 || s == 5 ? RIDGE_BIAS_COL
                              : s == 10        ? RIDGE_BIAS_ROW
                                               : RIDGE_BIAS_NONE;
            g.epi.act = s == 3    ? RIDGE_EPI_RELU
                        : s == 5  ? RIDGE_EPI_GELU_TANH
                        : s == 10 ? RIDGE_EPI_SIGMOID
                                  : RIDGE_EPI_NONE;
            g.residual_in_c = s == 6 || s == 10;
            g.pad_a = 1;
            g.pad_c = 3;
            fails += !run_case(ctx, &g, tag);
        }
    }
    ridge_ctx_destroy(ctx);
}

/* op(A) op(B) (A m x k row-major, B k x n, or n x k with tb) with the GELU epilogue on
 * contexts c1 and c2, into x and y: the same bits. */
static void check_same_bits(ridge_ctx *c1, ridge_ctx *c2, ridge_trans tb, size_t m, size_t n,
                            size_t k, const float *a, const float *b, float *x, float *y)
{
    const ridge_epilogue e = {.act = RIDGE_EPI_GELU_TANH};
    const size_t ldb = tb == RIDGE_TRANS ? k : n;
    CHECK_OK(ridge_sgemm_ex(c1, RIDGE_NO_TRANS, tb, m, n, k, 1, a, k, b, ldb, 0, x, n, &e));
    CHECK_OK(ridge_sgemm_ex(c2, RIDGE_NO_TRANS, tb, m, n, k, 1, a, k, b, ldb, 0, y, n, &e));
    CHECK(memcmp(x, y, m * n * sizeof(float)) == 0);
}

/* The same bits for 1 and 2 threads (the split only changes who computes which tile). */
static void test_deterministic(void)
{
    ridge_ctx *c1 = test_ctx(1, RIDGE_ISA_AUTO), *c2 = test_ctx(2, RIDGE_ISA_AUTO);
    if (!c1 || !c2) return;
    size_t m = 150, n = 300, k = 500;
    float *a = alloc_matrix(m, k, k, 0), *b = alloc_matrix(k, n, n, 0);
    float *x = calloc(m * n, sizeof(float)), *y = calloc(m * n, sizeof(float));
    check_same_bits(c1, c2, RIDGE_NO_TRANS, m, n, k, a, b, x, y);
    /* one row: the matrix-vector path's k segments, split among the threads */
    k = 4 * n;
    free(a), free(b);
    a = alloc_matrix(1, k, k, 0), b = alloc_matrix(k, n, n, 0);
    check_same_bits(c1, c2, RIDGE_NO_TRANS, 1, n, k, a, b, x, y);
    /* few rows, A B^T: the dot kernel's tiles, split among the threads */
    free(a), free(b);
    a = alloc_matrix(m, k, k, 0), b = alloc_matrix(n, k, k, 0);
    check_same_bits(c1, c2, RIDGE_TRANS, 30, n, k, a, b, x, y);
    /* and few columns: the dot kernel across B^T for each group of A's rows (7.2 MFLOP: split
     * in two) */
    check_same_bits(c1, c2, RIDGE_TRANS, m, 20, k, a, b, x, y);
    free(a), free(b), free(x), free(y);
    ridge_ctx_destroy(c1);
    ridge_ctx_destroy(c2);
}

/* The AVX-512 tiles give the same bits: each sums an element's k products in one order. */
static void test_same_bits_every_tile(void)
{
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AVX512);
    if (!ctx) return;
    size_t m = 150, n = 300, k = 1000; /* two k blocks, edge tiles of both heights */
    float *a = alloc_matrix(m, k, k, 0), *b = alloc_matrix(k, n, n, 0);
    float *x = calloc(m * n, sizeof(float)), *y = calloc(m * n, sizeof(float));
    ridge_epilogue e = {.act = RIDGE_EPI_TANH};
    for (int tb = 0; tb < 2; tb++) {
        force_tile(8);
        CHECK_OK(ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, (ridge_trans)tb, m, n, k, 1, a, k, b,
                                tb ? k : n, 0, x, n, &e));
        const int others[] = {14, 6};
        for (int t = 0; t < 2; t++) {
            force_tile(others[t]);
            CHECK_OK(ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, (ridge_trans)tb, m, n, k, 1, a, k, b,
                                    tb ? k : n, 0, y, n, &e));
            CHECK(memcmp(x, y, m * n * sizeof(float)) == 0);
        }
    }
    force_tile(0);
    /* The dot kernel's tiles of 6, 4 and 2 columns: the columns of 10 classes (6 + 4) and of
     * 8 (6 + 2) have the bits of the same columns among 12 (6 + 6), on A's rows 4 at a time
     * and past them (m 150) */
    for (size_t kk = 33; kk <= 259; kk += 113) {
        CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, m, 12, kk, 1, a, k, b, k, 0, x,
                             12));
        for (size_t nn = 8; nn <= 10; nn += 2) {
            CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, m, nn, kk, 1, a, k, b, k, 0, y,
                                 12));
            for (size_t i = 0; i < m; i++) CHECK(memcmp(x + i * 12, y + i * 12, nn * 4) == 0);
        }
    }
    free(a), free(b), free(x), free(y);
    ridge_ctx_destroy(ctx);
}

/* Batched products against one product at a time. */
static void test_batched(ridge_isa isa)
{
    ridge_ctx *ctx = test_ctx(2, isa);
    if (!ctx) return;
    /* 3 heads interleaved in one (T, H*hs) matrix, as attention lays them out. */
    size_t batch = 3, t = 19, hs = 11, ld = batch * hs;
    float *q = alloc_matrix(t, ld, ld, 0), *kk = alloc_matrix(t, ld, ld, 0);
    float *att = calloc(batch * t * t, sizeof(float)), *one = calloc(t * t, sizeof(float));
    float *res = alloc_matrix(batch * t, t, t, 0);
    ridge_epilogue e = {.act = RIDGE_EPI_TANH, .residual = res, .ldr = t,
                        .residual_stride = t * t};
    CHECK_OK(ridge_sgemm_batched(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, batch, t, t, hs, 0.5f, q, ld,
                                 hs, kk, ld, hs, 0.0f, att, t, t * t, &e));
    for (size_t h = 0; h < batch; h++) {
        ridge_epilogue e1 = e;
        e1.residual = res + h * t * t;
        CHECK_OK(ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, t, t, hs, 0.5f, q + h * hs, ld,
                                kk + h * hs, ld, 0.0f, one, t, &e1));
        CHECK(memcmp(one, att + h * t * t, t * t * sizeof(float)) == 0);
    }
    /* stride 0: shared weights */
    float *w = alloc_matrix(hs, 5, 5, 0), *out = calloc(batch * t * 5, sizeof(float));
    CHECK_OK(ridge_sgemm_batched(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, batch, t, 5, hs, 1.0f, q,
                                 ld, hs, w, 5, 0, 0.0f, out, 5, t * 5, NULL));
    for (size_t h = 0; h < batch; h++) {
        CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, t, 5, hs, 1.0f, q + h * hs, ld,
                             w, 5, 0.0f, one, 5));
        CHECK(memcmp(one, out + h * t * 5, t * 5 * sizeof(float)) == 0);
    }
    free(q), free(kk), free(att), free(one), free(res), free(w), free(out);
    ridge_ctx_destroy(ctx);
}

#define EXPECT_EINVAL(call, word)                                                              \
    do {                                                                                       \
        ridge_status st_ = (call);                                                             \
        CHECKF(st_ == RIDGE_EINVAL && strstr(ridge_last_error(), word), "%s -> %s: '%s'",      \
               #call, ridge_status_str(st_), ridge_last_error());                               \
    } while (0)

static void test_bad_args(void)
{
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++) a[i] = b[i] = c[i] = 1.0f;
    const ridge_trans N = RIDGE_NO_TRANS, T = RIDGE_TRANS;
    EXPECT_EINVAL(ridge_sgemm(NULL, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2), "ctx");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 2, 4, 1, a, 3, b, 2, 0, c, 2), "lda (3) < k (4)");
    EXPECT_EINVAL(ridge_sgemm(ctx, T, N, 5, 2, 2, 1, a, 4, b, 2, 0, c, 2), "lda (4) < m (5)");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 3, 2, 1, a, 2, b, 2, 0, c, 3), "ldb (2) < n (3)");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, T, 2, 3, 4, 1, a, 4, b, 3, 0, c, 3), "ldb (3) < k (4)");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 3, 2, 1, a, 2, b, 3, 0, c, 2), "ldc (2) < n (3)");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 0, 2, 1, a, 2, b, 0, 0, c, 1), "ldb (0)");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, (size_t)-1, 2, 2, 1, a, 2, b, 2, 0, c, 2), "negative");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 2, (size_t)-3, 1, a, 2, b, 2, 0, c, 2), "negative");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 2, 2, 1, NULL, 2, b, 2, 0, c, 2), "a is NULL");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 2, 2, 1, a, 2, NULL, 2, 0, c, 2), "b is NULL");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, NULL, 2), "c is NULL");
    EXPECT_EINVAL(ridge_sgemm(ctx, (ridge_trans)2, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
                  "trans_a");
    EXPECT_EINVAL(ridge_sgemm(ctx, N, (ridge_trans)-1, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2),
                  "trans_b");
    size_t big = (size_t)1 << 40;
    EXPECT_EINVAL(ridge_sgemm(ctx, N, N, big, big, 2, 1, a, 2, b, big, 0, c, big),
                  "address space");
    EXPECT_EINVAL(ridge_sgemm_batched(ctx, N, N, big, 2, 2, 2, 1, a, 2, big, b, 2, 0, 0, c, 2,
                                      4, NULL),
                  "address space");
    ridge_epilogue e = {.bias_kind = RIDGE_BIAS_COL};
    EXPECT_EINVAL(ridge_sgemm_ex(ctx, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, &e), "bias");
    e = (ridge_epilogue){.act = (ridge_epi_act)9};
    EXPECT_EINVAL(ridge_sgemm_ex(ctx, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, &e), "act");
    e = (ridge_epilogue){.residual = a, .ldr = 1};
    EXPECT_EINVAL(ridge_sgemm_ex(ctx, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, &e), "ldr (1)");
    e = (ridge_epilogue){.residual = c, .ldr = 3};
    EXPECT_EINVAL(ridge_sgemm_ex(ctx, N, N, 2, 2, 2, 1, a, 2, b, 2, 0, c, 2, &e), "residual is c");
    ridge_sgemm_plan *plan = (ridge_sgemm_plan *)1;
    EXPECT_EINVAL(ridge_sgemm_plan_create(ctx, N, 4, 2, b, 3, &plan), "ldb (3) < n (4)");
    CHECK(plan == NULL);
    EXPECT_EINVAL(ridge_sgemm_plan_create(ctx, N, 4, 2, b, 4, NULL), "out");
    EXPECT_EINVAL(ridge_sgemm_plan_execute(ctx, NULL, N, 2, 1, a, 2, 0, c, 2, NULL), "plan");
    CHECK_OK(ridge_sgemm_plan_create(ctx, N, 4, 2, b, 4, &plan));
    EXPECT_EINVAL(ridge_sgemm_plan_execute(ctx, plan, N, 2, 1, a, 1, 0, c, 4, NULL), "lda");
    EXPECT_EINVAL(ridge_sgemm_plan_update(ctx, plan, NULL, 4), "b is NULL");
    ridge_sgemm_plan_destroy(plan);
    ridge_sgemm_plan_destroy(NULL);

    /* Allowed: empty products, and A/B NULL when nothing is read. */
    CHECK_OK(ridge_sgemm(ctx, N, N, 0, 0, 0, 1, NULL, 1, NULL, 1, 0, NULL, 1));
    c[0] = c[1] = 3.0f;
    CHECK_OK(ridge_sgemm(ctx, N, N, 1, 2, 0, 1, NULL, 1, NULL, 2, 0.5f, c, 2));
    CHECK(c[0] == 1.5f && c[1] == 1.5f);
    a[0] = NAN;
    CHECK_OK(ridge_sgemm(ctx, N, N, 1, 2, 1, 0.0f, a, 1, b, 2, 1.0f, c, 2)); /* alpha 0: no A */
    CHECK(c[0] == 1.5f && c[1] == 1.5f);
    CHECK_OK(ridge_sgemm(ctx, N, N, 1, 2, 3, 0.0f, NULL, 3, NULL, 2, 2.0f, c, 2));
    CHECK(c[0] == 3.0f && c[1] == 3.0f);
    ridge_ctx_destroy(ctx);
}

int main(int argc, char **argv)
{
    (void)argc, (void)argv;
    test_bad_args();
    /* AVX-512 once per tile, whichever this CPU selects */
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512, RIDGE_ISA_AVX512,
                              RIDGE_ISA_AVX512};
    const int tiles[] = {0, 0, 8, 14, 6};
    for (int i = 0; i < 5; i++) {
        force_tile(tiles[i]);
        for (int t = 1; t <= 2; t++) test_isa(isas[i], t);
        test_batched(isas[i]);
    }
    /* Again with tiny cache blocks (KC 20, MC 2 or 3 tiles, NC 3 tiles), so that the small
     * shapes cross every block boundary and the multi-block paths (beta after the first k
     * block, the epilogue on the last, a residual in C) are covered. */
    ridge_gemm_set_blocking_for_tests(20, 13, 40);
    /* A read in place on every shape where it can be (the rule reads it in place only with
     * few column panels), across the row and k blocks */
    ridge_gemm_set_a_direct_for_tests(1);
    for (int i = 1; i < 5; i++) {
        force_tile(tiles[i]);
        test_isa(isas[i], 2);
    }
    /* and A always packed, which the rule leaves to the shapes with many panels */
    ridge_gemm_set_a_direct_for_tests(-1);
    /* And with MC left to the rule, so that a packed B goes one panel at a time through one
     * panel's buffer (one row block) across many k and column blocks. */
    ridge_gemm_set_blocking_for_tests(20, 0, 40);
    for (int i = 1; i < 5; i++) {
        force_tile(tiles[i]);
        test_isa(isas[i], 1);
    }
    ridge_gemm_set_blocking_for_tests(0, 0, 0);
    ridge_gemm_set_a_direct_for_tests(0);
    force_tile(0);
    test_same_bits_every_tile();
    test_deterministic();
    return test_finish("test-gemm");
}
