/* Tests of the vec family: every ISA the CPU has (others SKIP), 1 and 2 threads.
 *  - reductions and elementwise ops against the reference kernels over sizes 0..300 and large
 *    ones, at every start offset within a vector (0..15 floats); float sums must match the
 *    reference bit for bit (the fixed lane scheme) and the stated error bound against a long
 *    double sum; integers exactly, with overflow reported;
 *  - NaN, empty spans, in-place calls, and guard elements after every output;
 *  - activations: ULP error against double-precision libm over every 1021st float bit pattern
 *    (all signs and magnitudes), specials (NaN, +-Inf, +-0, subnormals); the same element
 *    gets the same result whatever its position (vector body or masked tail);
 *  - backward passes against the reference derivative, and the reference derivative against
 *    central finite differences in double; softmax likewise.
 * `test-vec --exhaustive` (label full) measures the ULP error over every finite float. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "test.h"
#include "vec/vec.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static double urand(double lo, double hi) { return lo + (hi - lo) * (double)(rng() >> 11) * 0x1p-53; }

static float f_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* error of got against the exact value want, in ULPs of want's binade (subnormal ulp 2^-149) */
static double ulp_err(float got, double want)
{
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got) ? 0 : INFINITY;
    if (isinf((float)want) || isinf(got)) return (float)want == got ? 0 : INFINITY;
    int e;
    frexp(fabs(want), &e);
    double ulp = ldexp(1.0, e - 24);
    if (ulp < 0x1p-149) ulp = 0x1p-149;
    return fabs((double)got - want) / ulp;
}

/* ---- the exact functions, in double ---------------------------------------------------------- */

static double act_exact(ridge_act a, double x)
{
    switch (a) {
    case RIDGE_ACT_EXP: return exp(x);
    case RIDGE_ACT_LOG: return log(x);
    case RIDGE_ACT_TANH: return tanh(x);
    case RIDGE_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case RIDGE_ACT_SILU: return isinf(x) ? (x > 0 ? x : -0.0) : x / (1.0 + exp(-x));
    case RIDGE_ACT_GELU:
        return isinf(x) ? (x > 0 ? x : -0.0)
                        : x / (1.0 + exp(-1.5957691216057307 * (x + 0.044715 * x * x * x)));
    case RIDGE_ACT_GELU_ERF:
        return isinf(x) ? (x > 0 ? x : -0.0) : 0.5 * x * erfc(-x * 0.70710678118654752);
    case RIDGE_ACT_RELU: return x != x ? x : x > 0 ? x : 0;
    case RIDGE_ACT_LEAKY_RELU: return x > 0 ? x : (double)0.1f * x;
    default: return NAN;
    }
}

/* ULP targets of the vector math (include/ridge/vec.h) where the result is a normal float,
 * and in units of the smallest subnormal where it is subnormal */
static double ulp_target(ridge_act a)
{
    return a == RIDGE_ACT_EXP || a == RIDGE_ACT_LOG ? 2.0 : 4.0;
}
#define SUBNORMAL_TARGET 2.0

static const ridge_act math_acts[] = {RIDGE_ACT_EXP,  RIDGE_ACT_LOG,  RIDGE_ACT_TANH,
                                      RIDGE_ACT_SIGMOID, RIDGE_ACT_SILU, RIDGE_ACT_GELU,
                                      RIDGE_ACT_GELU_ERF};
#define NMATH (sizeof math_acts / sizeof math_acts[0])

typedef struct ulp_stats {
    double max_normal, max_sub;
    float at_normal, at_sub;
    uint64_t count;
    int specials_bad; /* NaN where a number was due, or the reverse, or a wrong infinity */
} ulp_stats;

static void ulp_account(ulp_stats *s, float x, float got, double want)
{
    s->count++;
    double e = ulp_err(got, want);
    if (isinf(e)) {
        if (!s->specials_bad)
            fprintf(stderr, "  special: x = %a gives %a, want %a\n", x, got, want);
        s->specials_bad++;
        return;
    }
    if (fabs(want) < 0x1p-126) {
        if (e > s->max_sub) s->max_sub = e, s->at_sub = x;
    } else if (e > s->max_normal) {
        s->max_normal = e, s->at_normal = x;
    }
}

/* Checks the vector activation `a` over the float bit patterns start, start+stride, ... */
typedef struct ulp_job {
    const ridge_vec_kernels *k;
    ridge_act a;
    uint64_t stride;
    ulp_stats part[64];
} ulp_job;

#define ULP_CHUNK 4096

static void ulp_range(void *arg, size_t b, size_t e, int ith)
{
    ulp_job *j = arg;
    ulp_stats s = {0};
    float x[ULP_CHUNK], y[ULP_CHUNK];
    for (size_t c = b; c < e; c++) {
        for (int i = 0; i < ULP_CHUNK; i++)
            x[i] = f_of((uint32_t)(((uint64_t)c * ULP_CHUNK + (uint64_t)i) * j->stride));
        j->k->act[j->a](y, x, ULP_CHUNK, 0.1f);
        for (int i = 0; i < ULP_CHUNK; i++)
            ulp_account(&s, x[i], y[i], act_exact(j->a, x[i]));
    }
    ulp_stats *o = &j->part[ith];
    o->count += s.count;
    o->specials_bad += s.specials_bad;
    if (s.max_normal > o->max_normal) o->max_normal = s.max_normal, o->at_normal = s.at_normal;
    if (s.max_sub > o->max_sub) o->max_sub = s.max_sub, o->at_sub = s.at_sub;
}

static void test_ulp(ridge_ctx *ctx, uint64_t stride, const char *what)
{
    const ridge_vec_kernels *k = ridge_vec_kernels_for(ridge_ctx_isa(ctx));
    size_t chunks = (size_t)(((1ull << 32) / stride + ULP_CHUNK - 1) / ULP_CHUNK);
    for (size_t f = 0; f < NMATH; f++) {
        ulp_job j = {.k = k, .a = math_acts[f], .stride = stride};
        ridge_parallel_for(ctx, chunks, 1, ulp_range, &j);
        ulp_stats s = {0};
        for (int t = 0; t < 64; t++) {
            s.count += j.part[t].count;
            s.specials_bad += j.part[t].specials_bad;
            if (j.part[t].max_normal > s.max_normal)
                s.max_normal = j.part[t].max_normal, s.at_normal = j.part[t].at_normal;
            if (j.part[t].max_sub > s.max_sub) s.max_sub = j.part[t].max_sub, s.at_sub = j.part[t].at_sub;
        }
        printf("  %-8s %-9s max %.3f ulp (at %a), subnormal results %.3f (at %a), %llu inputs%s\n",
               k->name, ridge_act_name(math_acts[f]), s.max_normal, s.at_normal, s.max_sub,
               s.at_sub, (unsigned long long)s.count, what);
        CHECKF(s.max_normal <= ulp_target(math_acts[f]), "%s %s: %.3f ulp > %.1f", k->name,
               ridge_act_name(math_acts[f]), s.max_normal, ulp_target(math_acts[f]));
        CHECKF(s.max_sub <= SUBNORMAL_TARGET, "%s %s subnormal: %.3f > %.1f", k->name,
               ridge_act_name(math_acts[f]), s.max_sub, SUBNORMAL_TARGET);
        CHECKF(s.specials_bad == 0, "%s %s: %d special values wrong", k->name,
               ridge_act_name(math_acts[f]), s.specials_bad);
    }
}

/* ---- reductions ------------------------------------------------------------------------------ */

/* a failed check that also counts toward the per-test cap on messages */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        CHECKF(0, __VA_ARGS__);                                                                    \
        bad++;                                                                                     \
    } while (0)

#define MAXN 300
#define PAD 16

static ridge_ctx *ref_ctx;

static void fill_f32(float *x, size_t n, int kind)
{
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case 0: x[i] = (float)urand(-1, 1); break;
        case 1: x[i] = (float)ldexp(urand(-1, 1), (int)(rng() % 40) - 20); break; /* wide range */
        default: x[i] = (float)(int)(rng() % 7) - 3; break;                         /* ties */
        }
    }
}

/* |got - exact| <= 0.5 u |exact| + (B/L + log2 L + 1) u S: the bound of include/ridge/vec.h */
static int within_bound(long double got, long double exact, long double S, double u, double c)
{
    return fabsl(got - exact) <= 0.5L * u * fabsl(exact) + c * u * S + 1e-300L;
}

static void test_reductions(ridge_ctx *ctx, const char *name)
{
    static float xf[MAXN + PAD], yf[MAXN + PAD];
    static double xd[MAXN + PAD], yd[MAXN + PAD];
    static int32_t xi[MAXN + PAD], yi[MAXN + PAD];
    static int64_t xl[MAXN + PAD];
    int bad = 0;
    for (size_t n = 0; n <= MAXN && bad < 10; n++) {
        for (size_t off = 0; off < PAD; off++) {
            int kind = (int)((n + off) % 3);
            fill_f32(xf, MAXN + PAD, kind);
            fill_f32(yf, MAXN + PAD, (kind + 1) % 3);
            for (size_t i = 0; i < MAXN + PAD; i++) {
                xd[i] = (double)xf[i] * (1 + 0x1p-30), yd[i] = yf[i];
                xi[i] = (int32_t)rng();
                yi[i] = (int32_t)(rng() % 2 ? rng() : rng() % 1000);
                xl[i] = (int64_t)(rng() >> (rng() % 2 ? 3 : 40)) * (rng() % 2 ? 1 : -1);
            }
            const float *x = xf + off, *y = yf + off;
            float a, b;
            CHECK_OK(ridge_vec_sum_f32(ctx, x, n, &a));
            CHECK_OK(ridge_vec_sum_f32(ref_ctx, x, n, &b));
            long double ex = 0, S = 0;
            for (size_t i = 0; i < n; i++) ex += x[i], S += fabsl((long double)x[i]);
            if (memcmp(&a, &b, 4) || !within_bound(a, ex, S, 0x1p-24, 39)) {
                CHECKF(0, "%s sum_f32 n=%zu off=%zu: %a vs ref %a, exact %La", name, n, off, a, b, ex);
                bad++;
            }
            CHECK_OK(ridge_vec_dot_f32(ctx, x, y, n, &a));
            CHECK_OK(ridge_vec_dot_f32(ref_ctx, x, y, n, &b));
            ex = 0, S = 0;
            for (size_t i = 0; i < n; i++)
                ex += (long double)x[i] * y[i], S += fabsl((long double)x[i] * y[i]);
            if (memcmp(&a, &b, 4) || !within_bound(a, ex, S, 0x1p-24, 39)) {
                CHECKF(0, "%s dot_f32 n=%zu off=%zu: %a vs ref %a", name, n, off, a, b);
                bad++;
            }
            CHECK_OK(ridge_vec_sumsq_f32(ctx, x, n, &a));
            CHECK_OK(ridge_vec_sumsq_f32(ref_ctx, x, n, &b));
            if (memcmp(&a, &b, 4)) {
                CHECKF(0, "%s sumsq_f32 n=%zu off=%zu", name, n, off);
                bad++;
            }
            double da, db;
            const double *xdd = xd + off, *ydd = yd + off;
            CHECK_OK(ridge_vec_sum_f64(ctx, xdd, n, &da));
            CHECK_OK(ridge_vec_sum_f64(ref_ctx, xdd, n, &db));
            if (memcmp(&da, &db, 8)) {
                CHECKF(0, "%s sum_f64 n=%zu off=%zu: %a vs %a", name, n, off, da, db);
                bad++;
            }
            CHECK_OK(ridge_vec_dot_f64(ctx, xdd, ydd, n, &da));
            CHECK_OK(ridge_vec_dot_f64(ref_ctx, xdd, ydd, n, &db));
            if (memcmp(&da, &db, 8)) {
                CHECKF(0, "%s dot_f64 n=%zu off=%zu", name, n, off);
                bad++;
            }
            int64_t ia, ib;
            CHECK_OK(ridge_vec_sum_i32(ctx, xi + off, n, &ia));
            CHECK_OK(ridge_vec_sum_i32(ref_ctx, xi + off, n, &ib));
            if (ia != ib) FAIL("%s sum_i32 n=%zu off=%zu", name, n, off);
            ridge_status s1 = ridge_vec_dot_i32(ctx, xi + off, yi + off, n, &ia);
            ridge_status s2 = ridge_vec_dot_i32(ref_ctx, xi + off, yi + off, n, &ib);
            if (s1 != s2 || (s1 == RIDGE_OK && ia != ib))
                FAIL("%s dot_i32 n=%zu off=%zu", name, n, off);
            s1 = ridge_vec_sum_i64(ctx, xl + off, n, &ia);
            s2 = ridge_vec_sum_i64(ref_ctx, xl + off, n, &ib);
            if (s1 != s2 || (s1 == RIDGE_OK && ia != ib))
                FAIL("%s sum_i64 n=%zu off=%zu", name, n, off);
            if (n == 0) {
                CHECK(a == 0 && ia == 0);
                continue;
            }
            /* min/max/argmin/argmax, sometimes with a NaN */
            float xn[MAXN + PAD];
            memcpy(xn, xf, sizeof xn);
            if (off % 4 == 1) xn[off + rng() % n] = NAN;
            size_t ka, kb;
#define MM(fn, T, arr)                                                                             \
    do {                                                                                           \
        T va, vb;                                                                                  \
        CHECK_OK(ridge_vec_##fn(ctx, arr + off, n, &va));                                          \
        CHECK_OK(ridge_vec_##fn(ref_ctx, arr + off, n, &vb));                                      \
        if (!(va == vb || (va != va && vb != vb)))                                                 \
            FAIL("%s " #fn " n=%zu off=%zu", name, n, off);                            \
        CHECK_OK(ridge_vec_arg##fn(ctx, arr + off, n, &ka));                                       \
        CHECK_OK(ridge_vec_arg##fn(ref_ctx, arr + off, n, &kb));                                   \
        if (ka != kb) FAIL("%s arg" #fn " n=%zu off=%zu: %zu vs %zu", name, n, off, ka, kb); \
    } while (0)
            MM(min_f32, float, xn);
            MM(max_f32, float, xn);
            MM(min_f64, double, xd);
            MM(max_f64, double, xd);
            MM(min_i32, int32_t, xi);
            MM(max_i32, int32_t, xi);
            MM(min_i64, int64_t, xl);
            MM(max_i64, int64_t, xl);
#undef MM
            float mf;
            double md;
            CHECK_OK(ridge_vec_mean_f32(ctx, x, n, &mf));
            CHECK_OK(ridge_vec_mean_i32(ctx, xi + off, n, &md));
            ridge_vec_sum_i32(ref_ctx, xi + off, n, &ib);
            if (fabs(md - (double)ib / (double)n) > 1e-9 * fabs(md) + 1e-12)
                FAIL("%s mean_i32 n=%zu", name, n);
        }
    }
}

static const float x_one[70] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

static void test_reduction_edges(ridge_ctx *ctx, const char *name)
{
    float f = 7;
    double d = 7;
    int64_t l = 7;
    size_t k = 7;
    CHECK_OK(ridge_vec_sum_f32(ctx, NULL, 0, &f));
    CHECK(f == 0);
    CHECK(ridge_vec_min_f32(ctx, &f, 0, &f) == RIDGE_EINVAL);
    CHECK(ridge_vec_mean_f64(ctx, &d, 0, &d) == RIDGE_EINVAL && d == 7);
    CHECK(ridge_vec_argmax_i64(ctx, &l, 0, &k) == RIDGE_EINVAL && k == 7);
    CHECK(ridge_vec_sum_f32(ctx, NULL, 3, &f) == RIDGE_EINVAL);
    CHECK(ridge_vec_sum_f32(ctx, &f, 1, NULL) == RIDGE_EINVAL);
    /* int64: partial overflow that comes back is fine; a final overflow is reported */
    int64_t v[40];
    for (int i = 0; i < 40; i++) v[i] = i % 2 ? INT64_MAX : -INT64_MAX;
    CHECK_OK(ridge_vec_sum_i64(ctx, v, 40, &l));
    CHECK(l == 0);
    for (int i = 0; i < 40; i++) v[i] = INT64_MAX - i;
    CHECK(ridge_vec_sum_i64(ctx, v, 40, &l) == RIDGE_EOVERFLOW);
    CHECK(ridge_vec_sumsq_i64(ctx, v, 2, &l) == RIDGE_EOVERFLOW);
    /* short int64 spans (the kernels' no-loop path) near the limits: overflow reported exactly
     * when the exact sum leaves int64, partial overflows that come back are fine */
    static const int64_t big[] = {INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                                  (int64_t)1 << 62, -((int64_t)1 << 62), ((int64_t)1 << 40) - 1, -1,
                                  0, 1};
    int64_t vb[40];
    for (int rep = 0; rep < 400; rep++) {
        size_t n = 1 + rng() % 40;
        __int128 exact = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng();
            vb[i] = r % 3 ? big[(r >> 8) % 10] : (int64_t)rng();
            exact += vb[i];
        }
        int fits = exact >= INT64_MIN && exact <= INT64_MAX;
        l = 7;
        ridge_status st = ridge_vec_sum_i64(ctx, vb, n, &l);
        CHECKF(fits ? st == RIDGE_OK && l == (int64_t)exact : st == RIDGE_EOVERFLOW && l == 7,
               "%s sum_i64 of %zu near the limits: status %d", name, n, (int)st);
    }
    /* the edges of the AVX2 short path's fast case (every element in [-2^59, 2^59): 16 of them
     * cannot leave int64) and of its fallback, for every short length and any one element out */
    static const int64_t edge[] = {-((int64_t)1 << 59), ((int64_t)1 << 59) - 1, (int64_t)1 << 59,
                                   -((int64_t)1 << 59) - 1};
    for (size_t n = 1; n <= 20; n++)
        for (int e = 0; e < 4; e++)
            for (size_t out = 0; out <= n; out++) { /* out < n: vb[out] = INT64_MIN + 1 */
                __int128 exact = 0;
                for (size_t i = 0; i < n; i++) {
                    vb[i] = i == out ? INT64_MIN + 1 : edge[e];
                    exact += vb[i];
                }
                int fits = exact >= INT64_MIN && exact <= INT64_MAX;
                l = 7;
                ridge_status st = ridge_vec_sum_i64(ctx, vb, n, &l);
                CHECKF(fits ? st == RIDGE_OK && l == (int64_t)exact
                            : st == RIDGE_EOVERFLOW && l == 7,
                       "%s sum_i64 of %zu x %lld (element %zu: INT64_MIN + 1): status %d", name,
                       n, (long long)edge[e], out, (int)st);
            }
    int32_t w[40];
    for (int i = 0; i < 40; i++) w[i] = INT32_MIN;
    CHECK_OK(ridge_vec_sum_i32(ctx, w, 40, &l));
    CHECK(l == 40 * (int64_t)INT32_MIN);
    CHECK_OK(ridge_vec_sumsq_i32(ctx, w, 1, &l));
    CHECK(l == (int64_t)INT32_MIN * INT32_MIN);
    /* the extremes over several flushes of the int32 lane sums (2^15 elements per lane) and
     * every short length */
    enum { NW = (1 << 21) + 5 };
    int32_t *wb = malloc(NW * sizeof *wb);
    if (wb) {
        for (int e = 0; e < 2; e++) {
            int32_t v32 = e ? INT32_MAX : INT32_MIN;
            for (size_t i = 0; i < NW; i++) wb[i] = v32;
            size_t lens[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, NW};
            for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
                CHECK_OK(ridge_vec_sum_i32(ctx, wb, lens[k], &l));
                CHECKF(l == (int64_t)lens[k] * v32, "sum_i32 of %zu x %d", lens[k], (int)v32);
            }
        }
        free(wb);
    }
    CHECK(ridge_vec_sumsq_i32(ctx, w, 2, &l) == RIDGE_EOVERFLOW);
    CHECK_OK(ridge_vec_mean_i64(ctx, v, 40, &d));
    CHECK(fabs(d - (double)INT64_MAX) < 1e4);
    /* all -0: the sign of the zero sum must match the reference scheme's */
    float mz[70];
    for (int i = 0; i < 70; i++) mz[i] = -0.0f;
    for (size_t n = 1; n <= 70; n++) {
        float a, b;
        CHECK_OK(ridge_vec_sum_f32(ctx, mz, n, &a));
        CHECK_OK(ridge_vec_sum_f32(ref_ctx, mz, n, &b));
        CHECKF(memcmp(&a, &b, 4) == 0, "%s sum of %zu x -0: %g vs ref %g", name, n, a, b);
        CHECK_OK(ridge_vec_dot_f32(ctx, mz, x_one, n, &a));
        CHECK_OK(ridge_vec_dot_f32(ref_ctx, mz, x_one, n, &b));
        CHECKF(memcmp(&a, &b, 4) == 0, "%s dot of %zu x -0", name, n);
        double md[70], da, db;
        for (size_t i = 0; i < n; i++) md[i] = -0.0;
        CHECK_OK(ridge_vec_sum_f64(ctx, md, n, &da));
        CHECK_OK(ridge_vec_sum_f64(ref_ctx, md, n, &db));
        CHECKF(memcmp(&da, &db, 8) == 0, "%s f64 sum of %zu x -0", name, n);
        CHECK_OK(ridge_vec_sumsq_f64(ctx, md, n, &da));
        CHECK_OK(ridge_vec_sumsq_f64(ref_ctx, md, n, &db));
        CHECKF(memcmp(&da, &db, 8) == 0, "%s f64 sumsq of %zu x -0", name, n);
    }
    /* NaN first, last, only */
    float x[37];
    for (int i = 0; i < 37; i++) x[i] = (float)i;
    x[36] = NAN;
    CHECK_OK(ridge_vec_max_f32(ctx, x, 37, &f));
    CHECK(isnan(f));
    CHECK_OK(ridge_vec_argmin_f32(ctx, x, 37, &k));
    CHECK(k == 36);
    x[36] = 1, x[0] = -INFINITY;
    CHECK_OK(ridge_vec_min_f32(ctx, x, 37, &f));
    CHECK(f == -INFINITY);
    CHECK_OK(ridge_vec_argmax_f32(ctx, x, 37, &k));
    CHECK(k == 35);
    (void)name;
}

/* sizes large enough for the blocks and the thread split: must equal the 1-thread ref */
static void test_large(ridge_ctx *ctx, const char *name)
{
    static const size_t sizes[] = {4095, 4096, 4097, 70001, 300007, (1 << 20) + 3};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *x = malloc(n * sizeof *x);
        int32_t *xi = malloc(n * sizeof *xi);
        double *xd = malloc(n * sizeof *xd);
        if (!x || !xi || !xd) {
            CHECK(0);
            free(x), free(xi), free(xd);
            return;
        }
        for (size_t i = 0; i < n; i++) {
            x[i] = (float)urand(-1, 2);
            xi[i] = (int32_t)rng();
            xd[i] = urand(-1, 2);
        }
        x[n / 3] = 5, xi[n / 2] = INT32_MAX, x[n - 1] = -7;
        float a, b;
        CHECK_OK(ridge_vec_sum_f32(ctx, x, n, &a));
        CHECK_OK(ridge_vec_sum_f32(ref_ctx, x, n, &b));
        CHECKF(a == b, "%s sum_f32 n=%zu: %a vs %a", name, n, a, b);
        CHECK_OK(ridge_vec_dot_f32(ctx, x, x, n, &a));
        CHECK_OK(ridge_vec_dot_f32(ref_ctx, x, x, n, &b));
        CHECKF(a == b, "%s dot_f32 n=%zu", name, n);
        double da, db;
        CHECK_OK(ridge_vec_sum_f64(ctx, xd, n, &da));
        CHECK_OK(ridge_vec_sum_f64(ref_ctx, xd, n, &db));
        CHECKF(da == db, "%s sum_f64 n=%zu", name, n);
        int64_t ia, ib;
        CHECK_OK(ridge_vec_sum_i32(ctx, xi, n, &ia));
        CHECK_OK(ridge_vec_sum_i32(ref_ctx, xi, n, &ib));
        CHECKF(ia == ib, "%s sum_i32 n=%zu", name, n);
        for (size_t i = 0; i < n; i++) xi[i] >>= 12; /* squares sum within int64 */
        int64_t ic;
        CHECK_OK(ridge_vec_sumsq_i32(ctx, xi, n, &ia));
        CHECK_OK(ridge_vec_sumsq_i32(ref_ctx, xi, n, &ic));
        CHECKF(ia == ic, "%s sumsq_i32 n=%zu", name, n);
        xi[n / 2] = INT32_MAX;
        size_t ka;
        CHECK_OK(ridge_vec_argmax_f32(ctx, x, n, &ka));
        CHECKF(ka == n / 3, "%s argmax_f32 n=%zu: %zu", name, n, ka);
        CHECK_OK(ridge_vec_argmin_f32(ctx, x, n, &ka));
        CHECK(ka == n - 1);
        CHECK_OK(ridge_vec_argmax_i32(ctx, xi, n, &ka));
        CHECK(xi[ka] == INT32_MAX && ka <= (size_t)n / 2);
        /* elementwise and activations against the ref */
        float *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
        if (y && z) {
            CHECK_OK(ridge_gelu_f32(ctx, y, x, n));
            CHECK_OK(ridge_gelu_f32(ref_ctx, z, x, n));
            int worst = 0;
            for (size_t i = 0; i < n; i++)
                if (ulp_err(y[i], z[i]) > 5) worst = 1;
            CHECKF(!worst, "%s gelu large n=%zu", name, n);
            CHECK_OK(ridge_vec_fma_f32(ctx, y, x, x, x, n));
            CHECK_OK(ridge_vec_fma_f32(ref_ctx, z, x, x, x, n));
            CHECK(memcmp(y, z, n * sizeof *y) == 0);
        }
        free(y), free(z);
        free(x), free(xi), free(xd);
    }
}

/* argmin/argmax over spans of several blocks (the one-pass block scheme of vec-template.h):
 * the first index of the extremum, ties in different blocks, +0/-0, NaN in any block; against
 * a scalar loop written here and the reference kernels */
#define ARG_EXPECT(x, n, better)                                                      \
    size_t want = 0;                                                                               \
    for (size_t i = 0; i < n; i++) {                                                               \
        if (x[i] != x[i]) {                                                                        \
            want = i;                                                                              \
            break;                                                                                 \
        }                                                                                          \
        if (x[i] better x[want]) want = i;                                                         \
    }
#define ARG_CASE(fn, T, better, x, n, what)                                                        \
    do {                                                                                           \
        ARG_EXPECT(x, n, better)                                                           \
        size_t got = 7, ref = 7;                                                                   \
        CHECK_OK(ridge_vec_arg##fn(ctx, x, n, &got));                                              \
        CHECK_OK(ridge_vec_arg##fn(ref_ctx, x, n, &ref));                                          \
        CHECKF(got == want && ref == want, "%s arg" #fn " n=%zu %s: %zu, ref %zu, want %zu", name, \
               (size_t)n, what, got, ref, want);                                                   \
    } while (0)

static void test_arg_long(ridge_ctx *ctx, const char *name)
{
    static const size_t sizes[] = {1023, 1024, 1025, 1537, 2049, 4096, 10000, 70001};
    enum { NMAX = 70001 };
    float *f = malloc(NMAX * sizeof *f);
    double *d = malloc(NMAX * sizeof *d);
    int32_t *i32 = malloc(NMAX * sizeof *i32);
    int64_t *i64 = malloc(NMAX * sizeof *i64);
    if (!f || !d || !i32 || !i64) {
        CHECK(0);
        free(f), free(d), free(i32), free(i64);
        return;
    }
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        /* the positions that are moved: block edges (512), the ends, the middle */
        size_t pos[] = {0, 1, 511, 512, 513, 1023, 1024, n / 2, n - 2, n - 1};
        for (int pat = 0; pat < 6; pat++) {
            for (size_t i = 0; i < n; i++) {
                double u = urand(-1, 1);
                f[i] = (float)u, d[i] = u, i32[i] = (int32_t)rng(), i64[i] = (int64_t)rng();
            }
            size_t p = pos[rng() % 10] % n, q = pos[rng() % 10] % n;
            char what[64];
            snprintf(what, sizeof what, "pattern %d at %zu, %zu", pat, p, q);
            switch (pat) {
            case 0: break; /* random */
            case 1:        /* the same extremes at p and q (ties: the first wins) */
                f[p] = f[q] = 2, d[p] = d[q] = 2, i32[p] = i32[q] = INT32_MAX;
                i64[p] = i64[q] = INT64_MAX;
                break;
            case 2: /* every element equal */
                for (size_t i = 0; i < n; i++) f[i] = -3, d[i] = -3, i32[i] = INT32_MIN, i64[i] = 5;
                break;
            case 3: /* all negative but a -0 and a +0: both are the max */
                for (size_t i = 0; i < n; i++) f[i] = -fabsf(f[i]) - 1, d[i] = -fabs(d[i]) - 1;
                f[p] = -0.0f, f[q] = 0.0f, d[p] = 0.0, d[q] = -0.0;
                break;
            case 4: /* one NaN */
                f[p] = NAN, d[q] = NAN;
                break;
            default: /* two NaNs, and an extreme after them */
                f[p] = f[q] = NAN, d[p] = d[q] = NAN;
                f[n - 1] = INFINITY, d[n - 1] = -INFINITY;
                break;
            }
            ARG_CASE(max_f32, float, >, f, n, what);
            ARG_CASE(min_f32, float, <, f, n, what);
            ARG_CASE(max_f64, double, >, d, n, what);
            ARG_CASE(min_f64, double, <, d, n, what);
            ARG_CASE(max_i32, int32_t, >, i32, n, what);
            ARG_CASE(min_i32, int32_t, <, i32, n, what);
            ARG_CASE(max_i64, int64_t, >, i64, n, what);
            ARG_CASE(min_i64, int64_t, <, i64, n, what);
        }
    }
    free(f), free(d), free(i32), free(i64);
}

/* exact int32 sums of values at and near the extremes (and at the 2^16 split of the lane sums)
 * over long spans, several flushes of the lane sums, every start offset within a vector */
static void test_sum_i32_extremes(ridge_ctx *ctx, const char *name)
{
    static const int32_t vals[] = {INT32_MIN, INT32_MIN + 1, INT32_MAX, INT32_MAX - 1, -65536,
                                   -65535,    65535,         65536,     32767,         -1,
                                   0,         (int32_t)0xffff8000};
    enum { NW = (1 << 21) + 77 };
    int32_t *w = malloc(NW * sizeof *w);
    if (!w) {
        CHECK(0);
        return;
    }
    for (int pat = 0; pat < 3; pat++) {
        for (size_t i = 0; i < NW; i++) {
            uint64_t r = rng();
            /* pattern 0: any of vals; 1: mostly INT32_MAX; 2: mostly INT32_MIN */
            w[i] = pat == 0 || r % 8 == 0 ? vals[(r >> 8) % 12] : pat == 1 ? INT32_MAX : INT32_MIN;
        }
        static const size_t lens[] = {33, 64, 100, 1000, 10000, 70001, (1 << 20) + 31, NW - 16};
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
            for (size_t off = 0; off < 16; off += k < 4 ? 1 : 5) {
                size_t n = lens[k];
                int64_t want = 0, got = 0, ref = 0;
                for (size_t i = 0; i < n; i++) want += w[off + i];
                CHECK_OK(ridge_vec_sum_i32(ctx, w + off, n, &got));
                CHECK_OK(ridge_vec_sum_i32(ref_ctx, w + off, n, &ref));
                CHECKF(got == want && ref == want,
                       "%s sum_i32 extremes pattern %d n=%zu off=%zu: %lld, want %lld", name, pat,
                       n, off, (long long)got, (long long)want);
            }
    }
    free(w);
}

/* ---- elementwise ------------------------------------------------------------------------------ */

#define GUARD 12345.0f

static void test_elementwise(ridge_ctx *ctx, const char *name)
{
    float x[MAXN + PAD], y[MAXN + PAD], z[MAXN + PAD], o1[MAXN + PAD + 4], o2[MAXN + PAD + 4];
    int bad = 0;
    for (size_t nn = 0; nn < (MAXN + 1) * PAD && bad < 10; nn++) {
        size_t n = nn / PAD, off = nn % PAD; /* every size at every start offset */
        fill_f32(x, MAXN + PAD, 1);
        fill_f32(y, MAXN + PAD, 0);
        fill_f32(z, MAXN + PAD, 0);
        if (n > 3) x[off + 1] = NAN, x[off + 2] = INFINITY;
        for (int op = 0; op < 7; op++) {
            for (size_t i = 0; i < MAXN + PAD + 4; i++) o1[i] = o2[i] = GUARD;
            float *a = o1 + off, *b = o2 + off;
            const float *xx = x + off, *yy = y + off, *zz = z + off;
            for (int pass = 0; pass < 2; pass++) {
                ridge_ctx *c = pass ? ref_ctx : ctx;
                float *o = pass ? b : a;
                switch (op) {
                case 0: CHECK_OK(ridge_vec_add_f32(c, o, xx, yy, n)); break;
                case 1: CHECK_OK(ridge_vec_sub_f32(c, o, xx, yy, n)); break;
                case 2: CHECK_OK(ridge_vec_mul_f32(c, o, xx, yy, n)); break;
                case 3: CHECK_OK(ridge_vec_scale_f32(c, o, xx, 0.37f, n)); break;
                case 4:
                    memcpy(o, yy, n * sizeof *o);
                    CHECK_OK(ridge_vec_axpy_f32(c, o, -1.7f, xx, n));
                    break;
                case 5: CHECK_OK(ridge_vec_fma_f32(c, o, xx, yy, zz, n)); break;
                case 6: CHECK_OK(ridge_vec_clamp_f32(c, o, xx, -0.25f, 0.5f, n)); break;
                }
            }
            if (memcmp(o1, o2, sizeof o1)) {
                CHECKF(0, "%s elementwise op %d n=%zu off=%zu", name, op, n, off);
                bad++;
            }
            if (o1[off + n] != GUARD) FAIL("%s op %d wrote past n=%zu", name, op, n);
        }
        /* in place (the output is the first input): the same as out of place */
        for (int op = 0; op < 5; op++) {
            float *p = o1 + off;
            const float *yy = y + off, *zz = z + off;
            memcpy(o1, x, sizeof x);
            switch (op) {
            case 0: CHECK_OK(ridge_vec_add_f32(ctx, p, p, yy, n)); break;
            case 1: CHECK_OK(ridge_vec_scale_f32(ctx, p, p, 3.0f, n)); break;
            case 2: CHECK_OK(ridge_vec_fma_f32(ctx, p, p, yy, zz, n)); break;
            case 3: CHECK_OK(ridge_vec_clamp_f32(ctx, p, p, -0.5f, 0.25f, n)); break;
            case 4: CHECK_OK(ridge_exp_f32(ctx, p, p, n)); break;
            }
            for (size_t i = 0; i < n; i++) {
                float v = x[off + i], want;
                switch (op) {
                case 0: want = v + yy[i]; break;
                case 1: want = 3.0f * v; break;
                case 2: want = fmaf(v, yy[i], zz[i]); break;
                case 3: want = v != v ? v : v < -0.5f ? -0.5f : v > 0.25f ? 0.25f : v; break;
                default: ridge_exp_f32(ctx, &want, &x[off + i], 1); break;
                }
                if (memcmp(&p[i], &want, 4)) {
                    CHECKF(0, "%s op %d in place n=%zu i=%zu: %a vs %a", name, op, n, i, p[i], want);
                    bad++;
                    break;
                }
            }
        }
    }
    CHECK(ridge_vec_clamp_f32(ctx, x, x, 1, 0, 4) == RIDGE_EINVAL);
}

/* ---- activations ------------------------------------------------------------------------------ */

static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f,
                                 0x1p-127f, -0x1p-130f, FLT_MIN, FLT_MAX, -FLT_MAX, 88.7f, 88.73f,
                                 -87.4f, -103.9f, -104.0f, 1e-20f, -1e-20f, 0.625f, -0.625f,
                                 9.5f, -9.5f, 20.0f, -20.0f, -13.0f, -10.0f, 1.0f, 0.5f};

static void test_activations(ridge_ctx *ctx, const char *name)
{
    const ridge_vec_kernels *k = ridge_vec_kernels_for(ridge_ctx_isa(ctx));
    enum { N = 1000 };
    static float x[N + PAD], y[N + PAD + 4], y1[4], dy[N + PAD], dx[N + PAD], dr[N + PAD];
    for (int a = 0; a < RIDGE_ACT_COUNT; a++) {
        int bad = 0;
        /* random inputs over the interesting range, then the specials */
        for (size_t i = 0; i < N + PAD; i++) x[i] = (float)urand(-25, 25);
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) x[3 + i * 7] = specials[i];
        for (size_t i = 0; i < N + PAD; i++) dy[i] = (float)urand(-2, 2);
        for (size_t nn = 0; nn < 71 * PAD && bad < 5; nn++) {
            /* position independence: element i gives what it gives alone, in every lane, at
             * every start offset */
            size_t n = nn / PAD, off = nn % PAD;
            for (size_t i = 0; i < n + 4; i++) y[i] = GUARD;
            CHECK_OK(ridge_act_forward_f32(ctx, (ridge_act)a, 0.1f, y, x + off, n));
            for (size_t i = 0; i < n; i++) {
                k->act[a](y1, x + off + i, 1, 0.1f);
                /* bit for bit, except that a NaN's sign is not specified (IEEE 754) */
                if (memcmp(&y1[0], &y[i], 4) && !(isnan(y1[0]) && isnan(y[i]))) {
                    CHECKF(0, "%s %s n=%zu i=%zu: %a alone vs %a", name, ridge_act_name(a), n, i,
                           y1[0], y[i]);
                    bad++;
                }
            }
            if (y[n] != GUARD) FAIL("%s %s wrote past n=%zu", name, ridge_act_name(a), n);
        }
        CHECK_OK(ridge_act_forward_f32(ctx, (ridge_act)a, 0.1f, y, x, N));
        for (size_t i = 0; i < N && bad < 5; i++) {
            double want = act_exact((ridge_act)a, x[i]);
            double e = ulp_err(y[i], want);
            double tol = fabs(want) < 0x1p-126 ? SUBNORMAL_TARGET : ulp_target((ridge_act)a);
            if (!(e <= tol)) {
                CHECKF(0, "%s %s(%a) = %a, want %a (%.2f ulp)", name, ridge_act_name(a), x[i],
                       y[i], want, e);
                bad++;
            }
        }
        /* backward vs the reference derivative (finite x only) */
        for (size_t i = 0; i < N + PAD; i++)
            if (!isfinite(x[i]) || (a == RIDGE_ACT_LOG && x[i] <= 0)) x[i] = 0.75f;
        CHECK_OK(ridge_act_backward_f32(ctx, (ridge_act)a, 0.1f, dx, dy, x, N));
        CHECK_OK(ridge_act_backward_f32(ref_ctx, (ridge_act)a, 0.1f, dr, dy, x, N));
        for (size_t i = 0; i < N && bad < 5; i++) {
            double tol = 1e-5 * fabs(dr[i]) + 1e-6 * fabs(dy[i]) + 1e-37;
            if (dx[i] != dr[i] && !(fabs(dx[i] - dr[i]) <= tol)) {
                CHECKF(0, "%s %s backward at %a: %a vs ref %a", name, ridge_act_name(a), x[i],
                       dx[i], dr[i]);
                bad++;
            }
        }
    }
}

/* the reference derivatives against central differences of the exact functions */
static void test_gradients_fd(void)
{
    for (int a = 0; a < RIDGE_ACT_COUNT; a++) {
        int bad = 0;
        for (int t = 0; t < 200 && bad < 3; t++) {
            double x = urand(-6, 6);
            if (a == RIDGE_ACT_LOG) x = urand(0.05, 8);
            if ((a == RIDGE_ACT_RELU || a == RIDGE_ACT_LEAKY_RELU) && fabs(x) < 1e-3) continue;
            double h = 1e-5 * (1 + fabs(x));
            double fd = (act_exact(a, x + h) - act_exact(a, x - h)) / (2 * h);
            float g = ridge_act_grad_ref((ridge_act)a, (float)x, 0.1f);
            /* g is at (float)x: allow for the input's rounding too */
            double slack = 1e-6 * (1 + fabs(fd)) + fabs(x - (double)(float)x) * 100;
            if (!(fabs(g - fd) <= slack + 1e-5 * fabs(fd))) {
                CHECKF(0, "%s'(%g) = %g, finite differences %g", ridge_act_name(a), x, g, fd);
                bad++;
            }
        }
    }
}

static void test_softmax(ridge_ctx *ctx, const char *name)
{
    /* every short row length (the kernels' one- and two-vector paths, their tails stored in
     * pieces), 1 and 3 rows, with a guard after the output */
    for (size_t cols = 1; cols <= 40; cols++)
        for (size_t rows = 1; rows <= 3; rows += 2) {
            float xs[3 * 40 + 1], ys[3 * 40 + 1], yrs[3 * 40];
            for (size_t i = 0; i < rows * cols; i++) xs[i] = (float)urand(-30, 30);
            ys[rows * cols] = GUARD;
            CHECK_OK(ridge_softmax_f32(ctx, ys, xs, rows, cols));
            CHECK_OK(ridge_softmax_f32(ref_ctx, yrs, xs, rows, cols));
            int bad = ys[rows * cols] != GUARD;
            for (size_t i = 0; i < rows * cols; i++)
                if (!(fabs(ys[i] - yrs[i]) <= 4e-6 * fabs(yrs[i]) + 1e-40)) bad++;
            CHECKF(!bad, "%s softmax %zu x %zu: %d mismatches or guard", name, rows, cols, bad);
        }
    enum { R = 5, C = 77 };
    static float x[R * C], y[R * C], yr[R * C], dy[R * C], dx[R * C], dxr[R * C];
    for (size_t cols = 1; cols <= C; cols += 19) {
        for (size_t i = 0; i < R * cols; i++) x[i] = (float)urand(-30, 30), dy[i] = (float)urand(-1, 1);
        for (int op = 0; op < 2; op++) {
            ridge_status (*f)(ridge_ctx *, float *, const float *, size_t, size_t) =
                op ? ridge_log_softmax_f32 : ridge_softmax_f32;
            ridge_status (*b)(ridge_ctx *, float *, const float *, const float *, size_t, size_t) =
                op ? ridge_log_softmax_backward_f32 : ridge_softmax_backward_f32;
            CHECK_OK(f(ctx, y, x, R, cols));
            CHECK_OK(f(ref_ctx, yr, x, R, cols));
            CHECK_OK(b(ctx, dx, dy, y, R, cols));
            CHECK_OK(b(ref_ctx, dxr, dy, yr, R, cols));
            int bad = 0;
            for (size_t i = 0; i < R * cols; i++) {
                double tol = op ? 4e-6 * (1 + fabs(yr[i])) : 4e-6 * fabs(yr[i]) + 1e-40;
                if (!(fabs(y[i] - yr[i]) <= tol)) bad++;
                if (!(fabs(dx[i] - dxr[i]) <= 1e-5 * (1 + fabs(dxr[i])))) bad++;
            }
            CHECKF(!bad, "%s %s cols=%zu: %d mismatches", name, op ? "log_softmax" : "softmax",
                   cols, bad);
            /* backward against finite differences of L = sum(dy * f(x)) on row 0, in double */
            for (size_t j = 0; j < cols && j < 5; j++) {
                double xs[C], lp = 0, lm = 0, h = 1e-3;
                for (int s = -1; s <= 1; s += 2) {
                    for (size_t i = 0; i < cols; i++) xs[i] = x[i];
                    xs[j] += s * h;
                    double m = -INFINITY, sum = 0;
                    for (size_t i = 0; i < cols; i++) m = fmax(m, xs[i]);
                    for (size_t i = 0; i < cols; i++) sum += exp(xs[i] - m);
                    double L = 0;
                    for (size_t i = 0; i < cols; i++)
                        L += dy[i] * (op ? xs[i] - m - log(sum) : exp(xs[i] - m) / sum);
                    if (s < 0) lm = L;
                    else lp = L;
                }
                double fd = (lp - lm) / (2 * h);
                CHECKF(fabs(dx[j] - fd) <= 1e-4 * (1 + fabs(fd)), "%s %s backward FD col %zu: %g vs %g",
                       name, op ? "log_softmax" : "softmax", j, dx[j], fd);
            }
        }
        /* rows of softmax sum to 1; in place gives the same */
        CHECK_OK(ridge_softmax_f32(ctx, y, x, R, cols));
        for (size_t r = 0; r < R; r++) {
            double s = 0;
            for (size_t i = 0; i < cols; i++) s += y[r * cols + i];
            CHECKF(fabs(s - 1) < 1e-5, "%s softmax row sum %g", name, s);
        }
        memcpy(yr, x, sizeof x);
        CHECK_OK(ridge_softmax_f32(ctx, yr, yr, R, cols));
        CHECK(memcmp(yr, y, R * cols * sizeof *y) == 0);
    }
    CHECK(ridge_softmax_f32(ctx, y, x, 2, 0) == RIDGE_EINVAL);
    CHECK_OK(ridge_softmax_f32(ctx, y, x, 0, 0));
}

int main(int argc, char **argv)
{
    int exhaustive = argc > 1 && !strcmp(argv[1], "--exhaustive");
    ref_ctx = test_ctx(1, RIDGE_ISA_REF);
    if (!ref_ctx) return test_finish("test-vec");
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    if (exhaustive) {
        /* every finite float (and the NaN/Inf patterns), on the vector ISAs present */
        for (int i = 1; i < 3; i++) {
            ridge_ctx *ctx = test_ctx(0, isas[i]);
            if (!ctx) continue;
            test_ulp(ctx, 1, " (exhaustive)");
            ridge_ctx_destroy(ctx);
        }
        ridge_ctx_destroy(ref_ctx);
        return test_finish("test-vec --exhaustive");
    }
    test_gradients_fd();
    for (int i = 0; i < 3; i++) {
        for (int threads = 1; threads <= 2; threads++) {
            ridge_ctx *ctx = test_ctx(threads, isas[i]);
            if (!ctx) break;
            char name[32];
            snprintf(name, sizeof name, "%s/%dt", ridge_isa_name(isas[i]), threads);
            test_reduction_edges(ctx, name);
            test_large(ctx, name);
            test_sum_i32_extremes(ctx, name);
            if (threads == 1) {
                test_arg_long(ctx, name);
                test_reductions(ctx, name);
                test_elementwise(ctx, name);
                test_activations(ctx, name);
                test_softmax(ctx, name);
                if (isas[i] != RIDGE_ISA_REF) test_ulp(ctx, 1021, " (every 1021st pattern)");
            }
            ridge_ctx_destroy(ctx);
        }
    }
    ridge_ctx_destroy(ref_ctx);
    return test_finish("test-vec");
}
