/* The vec kernels, written once against the mapping of simd-avx2.h / simd-avx512.h and expanded
 * by vec-avx2.c and vec-avx512.c (which define RV_TABLE, the table's name). No include guard.
 *
 * Reductions: float sums keep LANES/W vector accumulators, so that lane j of accumulator k
 * holds the elements i = k W + j (mod LANES): exactly the lanes of the reference scheme, on
 * any vector width; the tail is loaded with zeros in the masked lanes; accumulators are folded
 * pairwise in the reference's order. 64 float lanes = 8 independent add chains on AVX2, enough
 * to cover the 3-cycle add latency at 2 loads per cycle. min/max use 4 accumulators; NaN is
 * detected with one unordered compare per pair of vectors, and the first NaN is then
 * returned; spans shorter than a vector run a scalar loop, longer ones finish with an
 * overlapping last vector (min/max/find are idempotent); argmin/argmax of long spans are one
 * pass over blocks. Integer sums are exact: int32 as a wrapped sum plus the exact sum of the
 * high 16-bit halves in 32-bit lanes (flushed every 2^16 elements per lane), int64 and int32
 * products as 32-bit halves in 64-bit lanes; short int32 / int64 spans as sum_i32_short and
 * sum_i64_short say.
 * Elementwise kernels: 2 vectors per iteration and an overlapping last vector whose inputs are
 * loaded first (so in place works); spans shorter than a vector are scalar (the same IEEE
 * operations, so the same results).
 * Short spans (up to two vectors; four for the 8-accumulator float sums) take a loop-free
 * path inline, and every table entry returns ridge_status, so that a 10-element call is the
 * entry point's checks, one jump and a few vector instructions (src/vec/vec.h). Where the ISA
 * file includes short-span kernels first (small-avx2.h, RV_SMALL), the double and integer sums
 * and the int32 min/max of up to 16 elements use those.
 * Activations: the math of math-template.h, masked loads/stores for the tail so that every
 * element gets exactly the same computation wherever it sits. */
#ifndef RV_TABLE
#error "define RV_TABLE and include a simd mapping before vec-template.h"
#endif

#include <string.h>

#include "core/internal.h"

#define NACC_F32 (RIDGE_VEC_LANES_F32 / RV_W)
#define NACC_F64 (RIDGE_VEC_LANES_F64 / RD_W)
_Static_assert(NACC_F32 == 8 || NACC_F32 == 4, "LANE_SUM handles 4 or 8 accumulators");
_Static_assert(NACC_F64 == 8 || NACC_F64 == 4, "LANE_SUM handles 4 or 8 accumulators");

/* ---- float / double sums in the fixed lane scheme ------------------------------------------ */

/* how many of the W elements at offset o exist (0..W), and where to point the masked load
 * (never past the end, so no pointer beyond the array is formed even for an empty mask) */
static inline size_t tail_off(size_t n, size_t o) { return o < n ? o : n; }
static inline size_t tail_count(size_t n, size_t o, size_t w)
{
    size_t c = o < n ? n - o : 0;
    return c < w ? c : w;
}

/* the masked step of the W elements at offset o: those of them that exist */
#define LANE_TAIL(tailstep, a, o, W) tailstep(a, tail_off(n, o), tail_count(n, o, W))

/* LANES/W accumulators (NACC = 8 or 4), named a0..a7 so they stay in registers: the loop
 * body, the tail and the pairwise fold of one sum kernel. The tail (< LANES elements) is a
 * masked load per accumulator, with empty masks past the end and no branch. step(acc, o) adds
 * the W elements at o; tailstep(acc, o, c) the first c of them. */
#define LANE_SUM(VT, W, NACC, LANES, zero, add, step, tailstep, reduce)                            \
    VT a0 = zero(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;                 \
    size_t i = 0;                                                                                  \
    for (; i + LANES <= n; i += LANES) {                                                           \
        a0 = step(a0, i), a1 = step(a1, i + W), a2 = step(a2, i + 2 * W);                          \
        a3 = step(a3, i + 3 * W);                                                                  \
        if (NACC == 8) {                                                                           \
            a4 = step(a4, i + 4 * W), a5 = step(a5, i + 5 * W), a6 = step(a6, i + 6 * W);          \
            a7 = step(a7, i + 7 * W);                                                              \
        }                                                                                          \
    }                                                                                              \
    a0 = LANE_TAIL(tailstep, a0, i, W);                                                            \
    a1 = LANE_TAIL(tailstep, a1, i + W, W);                                                        \
    a2 = LANE_TAIL(tailstep, a2, i + 2 * W, W);                                                    \
    a3 = LANE_TAIL(tailstep, a3, i + 3 * W, W);                                                    \
    if (NACC == 8) {                                                                               \
        a4 = LANE_TAIL(tailstep, a4, i + 4 * W, W);                                                \
        a5 = LANE_TAIL(tailstep, a5, i + 5 * W, W);                                                \
        a6 = LANE_TAIL(tailstep, a6, i + 6 * W, W);                                                \
        a7 = LANE_TAIL(tailstep, a7, i + 7 * W, W);                                                \
        a0 = add(a0, a4), a1 = add(a1, a5), a2 = add(a2, a6), a3 = add(a3, a7);                    \
    }                                                                                              \
    a0 = add(a0, a2), a1 = add(a1, a3);                                                            \
    return reduce(add(a0, a1))

/* Up to LANE_SUM_SHORT elements without a loop. first(o) / firstt(o, c) load the W elements at
 * o (the first c of them, zeros after) as a first accumulator value: the reference starts
 * its lanes at +0, which only turns a -0 into +0, and the sum of the lanes can be -0 only if
 * every lane is (the fold adds the +0 lanes beyond n), so a single + 0 at the end where every
 * lane holds an element gives the same bits. */
#define LANE_SUM_SHORT(NACC, W) ((NACC) == 8 ? 4 * (W) : 2 * (W))
#define LANE_SUM_SMALL(VT, W, NACC, zero, add, first, firstt, reduce)                             \
    if (__builtin_expect(n - W <= W, 1)) { /* W..2W: the fall-through path */                      \
        VT s_ = add(first(0), firstt(W, n - W));                                                   \
        return reduce(n == 2 * W ? add(s_, zero()) : s_);                                          \
    }                                                                                              \
    if (NACC == 8 && n > 2 * W) { /* ((a0 + a2) + (a1 + a3)), as the full fold */                 \
        VT a0 = first(0), a1 = first(W), a2, a3 = zero();                                          \
        if (n >= 3 * W) a2 = first(2 * W), a3 = firstt(3 * W, n - 3 * W);                          \
        else a2 = firstt(2 * W, n - 2 * W);                                                        \
        VT s_ = add(add(a0, a2), add(a1, a3));                                                     \
        return reduce(n == 4 * W ? add(s_, zero()) : s_);                                          \
    }                                                                                              \
    return reduce(firstt(0, n))

#define SUM_F32_1(o) rv_load(x + (o))
#define SUM_F32_1T(o, c) rv_load_nz(x + (o), c)
#define DOT_F32_1(o) rv_mul(rv_load(x + (o)), rv_load(y + (o)))
#define DOT_F32_1T(o, c) rv_mul(rv_load_nz(x + (o), c), rv_load_nz(y + (o), c))
#define SUM_F64_1(o) rd_load(x + (o))
#define SUM_F64_1T(o, c) rd_load_n(x + (o), c)
#define DOT_F64_1(o) rd_mul(rd_load(x + (o)), rd_load(y + (o)))
#define DOT_F64_1T(o, c) rd_mul(rd_load_n(x + (o), c), rd_load_n(y + (o), c))
#define SUM_F32(a, o) rv_add(a, rv_load(x + (o)))
#define SUM_F32_T(a, o, c) rv_add(a, rv_load_nz(x + (o), c))
#define DOT_F32(a, o) rv_fma(rv_load(x + (o)), rv_load(y + (o)), a)
#define DOT_F32_T(a, o, c) rv_fma(rv_load_nz(x + (o), c), rv_load_nz(y + (o), c), a)
#define SUM_F64(a, o) rd_add(a, rd_load(x + (o)))
#define SUM_F64_T(a, o, c) rd_add(a, rd_load_n(x + (o), c))
#define DOT_F64(a, o) rd_fma(rd_load(x + (o)), rd_load(y + (o)), a)
#define DOT_F64_T(a, o, c) rd_fma(rd_load_n(x + (o), c), rd_load_n(y + (o), c), a)

/* SMALL_TO(f, out, ARGS): where the ISA has short-span kernels (small-avx2.h: RV_SMALL), spans
 * of 1..RV_SMALL elements are small_f ARGS into *out; else nothing. The float sums keep the
 * paths below (in 128-bit registers they were no faster: measured). */
#define NO_SMALL(f, out, ARGS)
#ifdef RV_SMALL
#define SMALL_TO(f, out, ARGS)                                                                     \
    if (__builtin_expect(n - 1 < RV_SMALL, 1)) {                                                   \
        *(out) = small_##f ARGS;                                                                   \
        return RIDGE_OK;                                                                           \
    }
#else
#define SMALL_TO NO_SMALL
#endif

/* The kernels write through out. Spans of up to two vectors are done right here, with no stack
 * frame (a call out of a function holding ymm values makes gcc realign the stack); longer
 * ones are a tail call to the out-of-line loop. mean (sums only): the sum / n. */
#define LANE_SUM_FN(name, T, VT, W, NACC, LANES, zero, add, step, tailstep, first, firstt, reduce, \
                    Y, YA, SMALL)                                                                  \
    static T name##_loop(const T *x Y, size_t n)                                                   \
    {                                                                                              \
        LANE_SUM(VT, W, NACC, LANES, zero, add, step, tailstep, reduce);                           \
    }                                                                                              \
    /* noipa: no clone without the unused ctx, whose call would then move every argument */     \
    static RIDGE_NOIPA ridge_status name##_long(RIDGE_VEC_CTX, const T *x Y, size_t n,             \
                                                           T *out, int mean)                       \
    {                                                                                              \
        T s = name##_loop(x YA, n);                                                                \
        *out = mean ? (T)((double)s / (double)n) : s;                                              \
        return RIDGE_OK;                                                                           \
    }                                                                                              \
    static inline T name##_short(const T *x Y, size_t n)                                           \
    {                                                                                              \
        LANE_SUM_SMALL(VT, W, NACC, zero, add, first, firstt, reduce);                             \
    }                                                                                              \
    static ridge_status name##_to(RIDGE_VEC_CTX, const T *x Y, size_t n, T *out)                   \
    {                                                                                              \
        SMALL(name, out, (x YA, n))                                                                \
        if (W > 8 && __builtin_expect(n - 1 < W - 1, 1)) { /* 16 lanes: 1..W-1 first (10) */     \
            *out = reduce(firstt(0, n)); /* the lanes past n are +0: -0 sums become +0 */       \
            return RIDGE_OK;                                                                       \
        }                                                                                          \
        if (__builtin_expect(n - W <= W, 1)) { /* W..2W first: one test on that path */            \
            *out = name##_short(x YA, n);                                                          \
            return RIDGE_OK;                                                                       \
        }                                                                                          \
        if (__builtin_expect(n > LANE_SUM_SHORT(NACC, W), 0))                                      \
            return name##_long(ctx, x YA, n, out, 0);                                              \
        *out = name##_short(x YA, n);                                                              \
        return RIDGE_OK;                                                                           \
    }
#define NOY
#define YARG(T) , const T *y
#define COMMA_Y , y
LANE_SUM_FN(sum_f32, float, rv_f, RV_W, NACC_F32, RIDGE_VEC_LANES_F32, rv_zero, rv_add, SUM_F32,
            SUM_F32_T, SUM_F32_1, SUM_F32_1T, rv_reduce_add, NOY, NOY, NO_SMALL)
LANE_SUM_FN(dot_f32, float, rv_f, RV_W, NACC_F32, RIDGE_VEC_LANES_F32, rv_zero, rv_add, DOT_F32,
            DOT_F32_T, DOT_F32_1, DOT_F32_1T, rv_reduce_add, YARG(float), COMMA_Y, NO_SMALL)
LANE_SUM_FN(sum_f64, double, rd_f, RD_W, NACC_F64, RIDGE_VEC_LANES_F64, rd_zero, rd_add, SUM_F64,
            SUM_F64_T, SUM_F64_1, SUM_F64_1T, rd_reduce_add, NOY, NOY, SMALL_TO)
LANE_SUM_FN(dot_f64, double, rd_f, RD_W, NACC_F64, RIDGE_VEC_LANES_F64, rd_zero, rd_add, DOT_F64,
            DOT_F64_T, DOT_F64_1, DOT_F64_1T, rd_reduce_add, YARG(double), COMMA_Y, SMALL_TO)

#ifdef RV_SMALL
static inline double small_mean_f64(const double *x, size_t n)
{
    return small_sum_f64(x, n) / (double)n;
}
#endif

static ridge_status mean_f32_to(RIDGE_VEC_CTX, const float *x, size_t n, float *out)
{
    if (n > LANE_SUM_SHORT(NACC_F32, RV_W)) return sum_f32_long(ctx, x, n, out, 1);
    *out = (float)((double)sum_f32_short(x, n) / (double)n);
    return RIDGE_OK;
}

static ridge_status mean_f64_to(RIDGE_VEC_CTX, const double *x, size_t n, double *out)
{
    SMALL_TO(mean_f64, out, (x, n))
    if (n > LANE_SUM_SHORT(NACC_F64, RD_W)) return sum_f64_long(ctx, x, n, out, 1);
    *out = sum_f64_short(x, n) / (double)n;
    return RIDGE_OK;
}

/* ---- exact integer sums --------------------------------------------------------------------- */

/* int32 spans of up to two vectors, no loop: widened to 64-bit lanes in registers. Longer ones:
 * x = hi 2^16 + lo, hi = x >> 16 in [-2^15, 2^15), lo in [0, 2^16). Each 32-bit lane keeps
 * the exact sum of hi (c of them, c <= 2^16: the sum is in [-2^31, 2^31)) and the wrapped sum
 * of x; then sum(lo) = (wrapped - 2^16 sum(hi)) mod 2^32 exactly, as it lies in [0, 2^32). */
static inline int64_t sum_i32_short(const int32_t *x, size_t n)
{
    if (__builtin_expect(n >= RV_W, 1)) {
#ifdef RV_SMALL
        return small_sum_i32(x, n);
#else
        rv_i a = ri_load(x), b = ri_load_n(x + RV_W, n - RV_W);
        return rl_hsum(rl_add(rl_add(ri_widen_lo(a), ri_widen_hi(a)),
                              rl_add(ri_widen_lo(b), ri_widen_hi(b))));
#endif
    }
    rv_i a = ri_load_n(x, n);
    return rl_hsum(rl_add(ri_widen_lo(a), ri_widen_hi(a)));
}

/* Longer spans: four vectors a step, added in pairs before they reach the accumulators (three
 * vector operations per load, each load done once: rv_keep), 2^15 steps (2^16 elements per
 * lane) between flushes of the lane sums; the last < 4 vectors by the short form. */
static __attribute__((noinline)) ridge_i128 sum_i32_long(const int32_t *x, size_t n)
{
    ridge_i128 total = 0;
    size_t i = 0;
    while (n - i >= 4 * RV_W) {
        size_t end = n - (n - i) % (4 * RV_W), cap = i + ((size_t)1 << 15) * 4 * RV_W;
        if (end > cap) end = cap;
        const int32_t *p = x + i, *pe = x + end;
        rv_i w0 = ri_zero(), h0 = ri_zero(), w1 = ri_zero(), h1 = ri_zero();
        do {
            rv_i a = ri_load(p), b = ri_load(p + RV_W);
            rv_i c = ri_load(p + 2 * RV_W), d = ri_load(p + 3 * RV_W);
            rv_keep(a); rv_keep(b); rv_keep(c); rv_keep(d);
            w0 = ri_add32(w0, ri_add32(a, b));
            h0 = ri_add32(h0, ri_add32(rv_srai(a, 16), rv_srai(b, 16)));
            w1 = ri_add32(w1, ri_add32(c, d));
            h1 = ri_add32(h1, ri_add32(rv_srai(c, 16), rv_srai(d, 16)));
            p += 4 * RV_W;
        } while (p < pe);
        i = end;
        /* lo = wrapped - 2^16 hi per lane (in [0, 2^32): its two halves of each 64-bit lane
         * zero-extended), hi widened: every lane sum below 2^35 in magnitude */
        const rv_i m32 = rl_set1(0xffffffff);
        rv_i lo0 = rv_isub(w0, rv_slli(h0, 16)), lo1 = rv_isub(w1, rv_slli(h1, 16));
        rv_i lo = rl_add(rl_add(rl_and(lo0, m32), rl_srli(lo0, 32)),
                         rl_add(rl_and(lo1, m32), rl_srli(lo1, 32)));
        rv_i hi = rl_add(rl_add(ri_widen_lo(h0), ri_widen_hi(h0)),
                         rl_add(ri_widen_lo(h1), ri_widen_hi(h1)));
        total += (ridge_i128)rl_hsum(hi) * 65536 + rl_hsum(lo);
    }
    while (i < n) {
        size_t c = n - i < 2 * RV_W ? n - i : 2 * RV_W;
        total += sum_i32_short(x + i, c);
        i += c;
    }
    return total;
}

static inline ridge_i128 sum_i32(const int32_t *x, size_t n)
{
    if (n > 2 * RV_W) return sum_i32_long(x, n);
    return sum_i32_short(x, n);
}

/* int64: x = hi 2^32 + lo, lo in [0, 2^32), |hi| < 2^31; 64-bit lanes hold 2^31 of each. */
static __attribute__((noinline)) ridge_i128 sum_i64_long(const int64_t *x, size_t n)
{
    ridge_i128 total = 0;
    const rv_i lomask = rl_set1(0xffffffff);
    size_t i = 0;
    while (i + 2 * RL_W <= n) {
        rv_i lo0 = ri_zero(), hi0 = ri_zero(), lo1 = ri_zero(), hi1 = ri_zero();
        size_t end = n - (n - i) % (2 * RL_W), cap = i + ((size_t)1 << 30) * 2 * RL_W;
        if (end > cap) end = cap;
        for (; i < end; i += 2 * RL_W) {
            rv_i a = ri_load(x + i), b = ri_load(x + i + RL_W);
            lo0 = rl_add(lo0, rl_and(a, lomask));
            hi0 = rl_add(hi0, rl_srai32(a));
            lo1 = rl_add(lo1, rl_and(b, lomask));
            hi1 = rl_add(hi1, rl_srai32(b));
        }
        int64_t l0[RL_W], h0[RL_W], l1[RL_W], h1[RL_W];
        ri_store(l0, lo0), ri_store(h0, hi0), ri_store(l1, lo1), ri_store(h1, hi1);
        for (int j = 0; j < RL_W; j++)
            total += ((ridge_i128)h0[j] + h1[j]) * ((ridge_i128)1 << 32) + l0[j] + l1[j];
    }
    for (; i < n; i++) total += x[i];
    return total;
}

/* int64 spans of up to four vectors: the wrapped sum w (64-bit lanes) and, in the odd 32-bit
 * lanes of h, the sum of x >> 40 (the high dword shifted by 8; at most 4 of them per lane: no
 * overflow): hs = sum(x >> 40) puts the exact sum within 4 RL_W 2^40 + 2^40 of hs 2^40, and
 * the exact sum is ws + k 2^64 with k = round((hs - (ws >> 40)) / 2^24) (the error is far below
 * 2^63): the sum fits int64 iff k = 0, and is then ws. Three operations per vector. */
static inline int64_t sum_i64_short(const int64_t *x, size_t n, int64_t *k)
{
    rv_i w = ri_zero(), h = ri_zero();
    size_t i = 0;
    for (; i + RL_W <= n; i += RL_W) {
        rv_i v = ri_load(x + i);
        rv_keep(v);
        w = rl_add(w, v), h = ri_add32(h, rv_srai(v, 8));
    }
    if (i < n) {
        rv_i v = rl_load_n(x + i, n - i);
        w = rl_add(w, v), h = ri_add32(h, rv_srai(v, 8));
    }
    int64_t ws = rl_hsum(w), hs = rl_hsum(rl_srai32(h));
    *k = (hs - (ws >> 40) + ((int64_t)1 << 23)) >> 24;
    return ws;
}

static inline ridge_i128 sum_i64(const int64_t *x, size_t n)
{
    if (n > 4 * RL_W) return sum_i64_long(x, n);
    int64_t k, ws = sum_i64_short(x, n, &k);
    return ws + (ridge_i128)k * ((ridge_i128)1 << 64);
}

static inline ridge_status sum_i64_short_to(const int64_t *x, size_t n, int64_t *out,
                                            const char *what)
{
#ifdef RV_SMALL
    _Static_assert(RV_SMALL == 4 * RL_W, "small_sum_i64 takes the short spans");
    if (__builtin_expect(small_sum_i64(x, n, out), 1)) return RIDGE_OK;
#endif
    int64_t k, ws = sum_i64_short(x, n, &k);
    if (k) return ridge_vec_overflow(what);
    *out = ws;
    return RIDGE_OK;
}

/* int32 dot: 64-bit products of the even and the odd lanes, each split as in sum_i64. */
static ridge_i128 dot_i32(const int32_t *x, const int32_t *y, size_t n)
{
    ridge_i128 total = 0;
    const rv_i lomask = rl_set1(0xffffffff);
    size_t i = 0;
    while (i + RV_W <= n) {
        rv_i lo = ri_zero(), hi = ri_zero();
        size_t end = n - (n - i) % RV_W, cap = i + ((size_t)1 << 28) * RV_W;
        if (end > cap) end = cap;
        for (; i < end; i += RV_W) {
            rv_i a = ri_load(x + i), b = ri_load(y + i);
            rv_i pe = ri_mul32(a, b), po = ri_mul32(rl_srli(a, 32), rl_srli(b, 32));
            lo = rl_add(lo, rl_add(rl_and(pe, lomask), rl_and(po, lomask)));
            hi = rl_add(hi, rl_add(rl_srai32(pe), rl_srai32(po)));
        }
        int64_t l[RL_W], h[RL_W];
        ri_store(l, lo), ri_store(h, hi);
        for (int j = 0; j < RL_W; j++) total += (ridge_i128)h[j] * ((ridge_i128)1 << 32) + l[j];
    }
    for (; i < n; i++) total += (int64_t)x[i] * y[i];
    return total;
}

/* ---- min / max ------------------------------------------------------------------------------ */

static inline size_t find_f32(const float *x, size_t n, float v);
static inline size_t find_f64(const double *x, size_t n, double v);

/* The lanewise extremum of x[0..n), n >= W, four accumulators and an overlapping last vector
 * (min/max are idempotent); NAN2(a, b) is a mask of the lanes where a or b is NaN (0 for
 * integers), mor ORs two of them and *nan gets mbits of them all. A float load is used twice
 * (op and the NaN test): keep = rv_keep stops gcc from loading it again as a memory operand. */
#define MINMAX_VEC(name, T, W, vt, load, op, NAN2, mor, mbits, keep)                               \
    static inline __attribute__((always_inline)) vt name##_vec(const T *x, size_t n,               \
                                                               unsigned *nan)                      \
    {                                                                                              \
        vt m0 = load(x), m1 = m0, m2 = m0, m3 = m0;                                                \
        __typeof__(NAN2(m0, m0)) nn = NAN2(m0, m0);                                                \
        size_t i = 0;                                                                              \
        for (; i + 4 * W <= n; i += 4 * W) {                                                       \
            vt a = load(x + i), b = load(x + i + W), c = load(x + i + 2 * W),                      \
               d = load(x + i + 3 * W);                                                            \
            keep(a); keep(b); keep(c); keep(d);                                                    \
            m0 = op(m0, a), m1 = op(m1, b), m2 = op(m2, c), m3 = op(m3, d);                        \
            nn = mor(nn, mor(NAN2(a, b), NAN2(c, d)));                                             \
        }                                                                                          \
        for (; i + W <= n; i += W) {                                                               \
            vt a = load(x + i);                                                                    \
            m0 = op(m0, a), nn = mor(nn, NAN2(a, a));                                              \
        }                                                                                          \
        if (i < n) {                                                                               \
            vt a = load(x + n - W);                                                                \
            m1 = op(m1, a), nn = mor(nn, NAN2(a, a));                                              \
        }                                                                                          \
        *nan = mbits(nn);                                                                          \
        return op(op(m0, m1), op(m2, m3));                                                         \
    }

/* MM_SHORT: spans shorter than a vector as one masked vector where the ISA has cheap masks
 * (RV_MASKED_SHORT), the missing lanes filled with x[0] (min and max are idempotent) */
#ifdef RV_MASKED_SHORT
#define MM_SHORT(W, vt, loadfill, NAN2, mbits, reduce, findfn, nanv)                               \
    if (__builtin_expect(n - 1 < W, 1)) {                                                          \
        vt a = loadfill(x, n, x[0]);                                                               \
        if (__builtin_expect(mbits(NAN2(a, a)) != 0, 0)) return x[findfn(x, n, nanv)];             \
        return reduce(a);                                                                          \
    }
#define MM_SHORT_I(W, loadfill, reduce)                                                            \
    if (__builtin_expect(n - 1 < W, 1)) return reduce(loadfill(x, n, x[0]));
#else
#define MM_SHORT(W, vt, loadfill, NAN2, mbits, reduce, findfn, nanv)
#define MM_SHORT_I(W, loadfill, reduce)
#endif
/* name: spans of up to two vectors inline (two overlapping vectors), longer ones out of line;
 * a NaN anywhere gives the first NaN (float) */
#define FMINMAX(name, T, W, vt, load, loadfill, op, NAN2, mor, mbits, reduce, findfn, sop)         \
    MINMAX_VEC(name, T, W, vt, load, op, NAN2, mor, mbits, rv_keep)                                \
    static __attribute__((noinline)) T name##_long(const T *x, size_t n);                          \
    static inline T name(const T *x, size_t n)                                                     \
    {                                                                                              \
        if (__builtin_expect(n - W <= W, 1)) {                                                     \
            vt a = load(x), b = load(x + n - W);                                                   \
            if (__builtin_expect(mbits(NAN2(a, b)) != 0, 0)) return x[findfn(x, n, (T)NAN)];       \
            return reduce(op(a, b));                                                               \
        }                                                                                          \
        MM_SHORT(W, vt, loadfill, NAN2, mbits, reduce, findfn, (T)NAN)                             \
        return name##_long(x, n);                                                                  \
    }                                                                                              \
    static T name##_long(const T *x, size_t n)                                                     \
    {                                                                                              \
        if (n < W) {                                                                               \
            T m = x[0];                                                                            \
            for (size_t i = 0; i < n; i++) {                                                       \
                if (x[i] != x[i]) return x[i];                                                     \
                if (x[i] sop m) m = x[i];                                                          \
            }                                                                                      \
            return m;                                                                              \
        }                                                                                          \
        unsigned nan;                                                                              \
        vt m = name##_vec(x, n, &nan);                                                             \
        if (nan) return x[findfn(x, n, (T)NAN)];                                                   \
        return reduce(m);                                                                          \
    }
#define F32_NAN2(a, b) rv_cmp(a, b, _CMP_UNORD_Q)
#define F64_NAN2(a, b) rd_cmp(a, b, _CMP_UNORD_Q)
FMINMAX(min_f32, float, RV_W, rv_f, rv_load, rv_load_fill, rv_min, F32_NAN2, rv_mor, rv_mbits,
        rv_reduce_min, find_f32, <)
FMINMAX(max_f32, float, RV_W, rv_f, rv_load, rv_load_fill, rv_max, F32_NAN2, rv_mor, rv_mbits,
        rv_reduce_max, find_f32, >)
FMINMAX(min_f64, double, RD_W, rd_f, rd_load, rd_load_fill, rd_min, F64_NAN2, rd_mor, rd_mbits,
        rd_reduce_min, find_f64, <)
FMINMAX(max_f64, double, RD_W, rd_f, rd_load, rd_load_fill, rd_max, F64_NAN2, rd_mor, rd_mbits,
        rd_reduce_max, find_f64, >)
#define I_NAN2(a, b) 0
#define I_MOR(a, b) ((a) | (b))
#define I_MBITS(m) ((unsigned)(m))
#define NO_KEEP(v) (void)0
#define IMINMAX(name, T, W, loadfill, op, reduce, sop)                                             \
    MINMAX_VEC(name, T, W, rv_i, ri_load, op, I_NAN2, I_MOR, I_MBITS, NO_KEEP)                     \
    static __attribute__((noinline)) T name##_long(const T *x, size_t n);                          \
    static inline T name(const T *x, size_t n)                                                     \
    {                                                                                              \
        if (__builtin_expect(n - W <= W, 1)) return SHORT_##name(x, n);                            \
        MM_SHORT_I(W, loadfill, reduce)                                                            \
        return name##_long(x, n);                                                                  \
    }                                                                                              \
    static T name##_long(const T *x, size_t n)                                                     \
    {                                                                                              \
        unsigned nan;                                                                              \
        if (n >= W) return reduce(name##_vec(x, n, &nan));                                         \
        T m = x[0];                                                                                \
        for (size_t i = 1; i < n; i++)                                                             \
            if (x[i] sop m) m = x[i];                                                              \
        return m;                                                                                  \
    }
/* spans of W..2W: two overlapping vectors, or small-avx2.h's int32 forms */
#define SHORT_MM(op, reduce, x, n, W) reduce(op(ri_load(x), ri_load((x) + (n) - (W))))
#ifdef RV_SMALL
_Static_assert(RV_W == 8, "small_min_i32 takes 8..16 elements");
#define SHORT_min_i32(x, n) small_min_i32(x, n)
#define SHORT_max_i32(x, n) small_max_i32(x, n)
#else
#define SHORT_min_i32(x, n) SHORT_MM(ri_min32, ri_reduce_min32, x, n, RV_W)
#define SHORT_max_i32(x, n) SHORT_MM(ri_max32, ri_reduce_max32, x, n, RV_W)
#endif
#define SHORT_min_i64(x, n) SHORT_MM(rl_min, rl_reduce_min, x, n, RL_W)
#define SHORT_max_i64(x, n) SHORT_MM(rl_max, rl_reduce_max, x, n, RL_W)
IMINMAX(min_i32, int32_t, RV_W, ri_load_fill, ri_min32, ri_reduce_min32, <)
IMINMAX(max_i32, int32_t, RV_W, ri_load_fill, ri_max32, ri_reduce_max32, >)
IMINMAX(min_i64, int64_t, RL_W, rl_load_fill, rl_min, rl_reduce_min, <)
IMINMAX(max_i64, int64_t, RL_W, rl_load_fill, rl_max, rl_reduce_max, >)

/* ---- find: the first index of a value ------------------------------------------------------- */

/* bits(p) gives the match bits of the W elements at p; scans forward, then the overlapping
 * last vector; spans shorter than a vector are scalar. */
#define FIND_BODY(W, bits, scalar_eq)                                                              \
    size_t i = 0;                                                                                  \
    if (n >= W) {                                                                                  \
        for (; i + W <= n; i += W) {                                                               \
            unsigned b_ = bits(x + i);                                                             \
            if (b_) return i + (size_t)__builtin_ctz(b_);                                          \
        }                                                                                          \
        if (i < n) {                                                                               \
            unsigned b_ = bits(x + n - W);                                                         \
            if (b_) return n - W + (size_t)__builtin_ctz(b_);                                      \
        }                                                                                          \
        return n;                                                                                  \
    }                                                                                              \
    for (; i < n; i++)                                                                             \
        if (scalar_eq) return i;                                                                   \
    return n

/* FIND_SHORT: spans shorter than a vector as one masked vector (RV_MASKED_SHORT), its missing
 * lanes filled with x[0]: they match only if x[0] does, and then index 0 comes first */
#ifdef RV_MASKED_SHORT
#define FIND_SHORT(W, bits)                                                                        \
    if (__builtin_expect(n - 1 < W, 1)) {                                                          \
        unsigned b_ = bits;                                                                        \
        return b_ ? (size_t)__builtin_ctz(b_) : n;                                                 \
    }
#else
#define FIND_SHORT(W, bits)
#endif

static inline size_t find_f32(const float *x, size_t n, float v)
{
    rv_f vv = rv_set1(v);
    FIND_SHORT(RV_W, rv_mbits(v != v ? rv_cmp(rv_load_fill(x, n, x[0]), rv_zero(), _CMP_UNORD_Q)
                                     : rv_cmp(rv_load_fill(x, n, x[0]), vv, _CMP_EQ_OQ)))
    if (__builtin_expect(v != v, 0)) {
#define BITS(p) rv_mbits(rv_cmp(rv_load(p), rv_load(p), _CMP_UNORD_Q))
        FIND_BODY(RV_W, BITS, x[i] != x[i]);
#undef BITS
    }
#define BITS(p) rv_mbits(rv_cmp(rv_load(p), vv, _CMP_EQ_OQ))
    FIND_BODY(RV_W, BITS, x[i] == v);
#undef BITS
}

static inline size_t find_f64(const double *x, size_t n, double v)
{
    rd_f vv = rd_set1(v);
    FIND_SHORT(RD_W, rd_mbits(v != v ? rd_cmp(rd_load_fill(x, n, x[0]), rd_zero(), _CMP_UNORD_Q)
                                     : rd_cmp(rd_load_fill(x, n, x[0]), vv, _CMP_EQ_OQ)))
    if (__builtin_expect(v != v, 0)) {
#define BITS(p) rd_mbits(rd_cmp(rd_load(p), rd_load(p), _CMP_UNORD_Q))
        FIND_BODY(RD_W, BITS, x[i] != x[i]);
#undef BITS
    }
#define BITS(p) rd_mbits(rd_cmp(rd_load(p), vv, _CMP_EQ_OQ))
    FIND_BODY(RD_W, BITS, x[i] == v);
#undef BITS
}

static inline size_t find_i32(const int32_t *x, size_t n, int32_t v)
{
    rv_i vv = rv_set1i(v);
    FIND_SHORT(RV_W, ri_eq32_bits(ri_load_fill(x, n, x[0]), vv))
#define BITS(p) ri_eq32_bits(ri_load(p), vv)
    FIND_BODY(RV_W, BITS, x[i] == v);
#undef BITS
}

static inline size_t find_i64(const int64_t *x, size_t n, int64_t v)
{
    rv_i vv = rl_set1(v);
    FIND_SHORT(RL_W, rl_eq_bits(rl_load_fill(x, n, x[0]), vv))
#define BITS(p) rl_eq_bits(ri_load(p), vv)
    FIND_BODY(RL_W, BITS, x[i] == v);
#undef BITS
}

/* ---- argmin / argmax --------------------------------------------------------------------- */

/* Spans of up to 2 ARG_BLOCK elements: find(min/max), two passes over data in L1. Longer ones:
 * one pass over blocks of ARG_BLOCK elements (the last one up to twice that), each reduced in
 * registers to its extremum; a block replaces the best so far only if its extremum is strictly
 * better, so the best block is the first that holds the answer, and the answer's index is then
 * found in that block alone (a re-read of at most 2 ARG_BLOCK elements). A block with a NaN
 * ends the scan: its first NaN is the first of the span (nanv: the value find looks for then). */
#define ARG_BLOCK 512
#define ARGMINMAX(name, T, findfn, reduce, sop, nanv)                                              \
    static __attribute__((noinline)) size_t arg##name##_long(const T *x, size_t n)                 \
    {                                                                                              \
        size_t at = 0, s = 0;                                                                      \
        T best = 0;                                                                                \
        while (s < n) {                                                                            \
            size_t len = n - s < 2 * ARG_BLOCK ? n - s : ARG_BLOCK;                                \
            unsigned nan;                                                                          \
            T m = reduce(name##_vec(x + s, len, &nan));                                            \
            if (nan) return s + findfn(x + s, len, nanv);                                          \
            if (s == 0 || m sop best) best = m, at = s;                                            \
            s += len;                                                                              \
        }                                                                                          \
        return at + findfn(x + at, n - at < 2 * ARG_BLOCK ? n - at : ARG_BLOCK, best);            \
    }                                                                                              \
    static inline size_t arg##name(const T *x, size_t n)                                           \
    {                                                                                              \
        if (n <= 2 * ARG_BLOCK) return findfn(x, n, name(x, n));                                   \
        return arg##name##_long(x, n);                                                             \
    }                                                                                              \
    /* the table entry (vec-wrap.h, RIDGE_VEC_ARG_SHORT): spans of one to two vectors inline,  \
     * with no call, the rest by a tail call of this, so that the entry has no stack frame */     \
    static RIDGE_NOIPA ridge_status arg##name##_other_to(RIDGE_VEC_CTX, const void *x, size_t n,  \
                                                         size_t *out)                              \
    {                                                                                              \
        *out = arg##name((const T *)x, n);                                                         \
        return RIDGE_OK;                                                                           \
    }
ARGMINMAX(min_f32, float, find_f32, rv_reduce_min, <, NAN)
ARGMINMAX(max_f32, float, find_f32, rv_reduce_max, >, NAN)
ARGMINMAX(min_f64, double, find_f64, rd_reduce_min, <, NAN)
ARGMINMAX(max_f64, double, find_f64, rd_reduce_max, >, NAN)
ARGMINMAX(min_i32, int32_t, find_i32, ri_reduce_min32, <, 0)
ARGMINMAX(max_i32, int32_t, find_i32, ri_reduce_max32, >, 0)
ARGMINMAX(min_i64, int64_t, find_i64, rl_reduce_min, <, 0)
ARGMINMAX(max_i64, int64_t, find_i64, rl_reduce_max, >, 0)

/* n is W..2W, with W the elements of T in a vector */
#define RIDGE_VEC_ARG_SHORT(T, n) ((n) - RV_W * 4 / sizeof(T) <= RV_W * 4 / sizeof(T))
#define RIDGE_VEC_SHORT_I32(n) ((n) <= 2 * RV_W)
#define RIDGE_VEC_SHORT_I64(n) ((n) <= 4 * RL_W)
#define RIDGE_VEC_SUM_I64_SHORT_TO(x, n, out, what) sum_i64_short_to(x, n, out, what)
#include "vec/vec-wrap.h"

/* ---- elementwise ---------------------------------------------------------------------------- */

/* EW_SHORT (RV_MASKED_SHORT): spans shorter than a vector, out of place. From half a vector
 * up: one vector joined from two overlapping half-vector loads, stored as the same two
 * halves; below: one masked vector, the lanes past n loaded as 0 and not stored. In place,
 * the plain loop below: the next call's load of the output (axpy called again on its y)
 * cannot be forwarded from two overlapping stores at once, nor from a masked store, and
 * waits for them to retire (axpy on 10 elements, single runs: 0.44-0.58x the plain loop both
 * ways, a half-vector and a scalar tail 0.81x, the loop 0.73-0.94x). */
#ifdef RV_MASKED_SHORT
#define EW_SHORT(VF, A, B, C)                                                                      \
    if (__builtin_expect(n - 1 < RV_W - 1, 1) && out != (A) && out != (B) && out != (C)) {         \
        if (__builtin_expect(n >= RV_W / 2, 1)) {                                                  \
            rv_f r = VF(rv_load_halves(A, n), rv_load_halves(B, n), rv_load_halves(C, n));         \
            rv_store_halves(out, r, n);                                                            \
        } else {                                                                                   \
            rv_store_n(out, VF(rv_load_nz(A, n), rv_load_nz(B, n), rv_load_nz(C, n)), n);          \
        }                                                                                          \
        return RIDGE_OK;                                                                           \
    }
#else
#define EW_SHORT(VF, A, B, C)
#endif
/* In place below a vector: the scalar loop (gcc vectorizes it: 8 lanes, 4, then scalars),
 * except AVX-512 spans of 8 to 15 in pieces of 8, 4 and 2 and a scalar (rv_load8...):
 * 10-element axpy in place 1.07x called on one y, 1.16x on several, where pieces for 1..7
 * as well were a cycle slower at 1, 3 and 5 elements (docs/PERFORMANCE.md, session 9) */
#ifdef RV_MASKED_SHORT
#define EW_PIECE(VF, A, B, C, k)                                                                   \
    if (n & k) {                                                                                   \
        rv_f r = VF(rv_load##k(A + i), rv_load##k(B + i), rv_load##k(C + i));                      \
        rv_store##k(out + i, r);                                                                   \
        i += k;                                                                                    \
    }
#define EW_PIECES(VF, SF, A, B, C)                                                                 \
    size_t i = 0;                                                                                  \
    if (n < 8) {                                                                                   \
        for (; i < n; i++) out[i] = SF;                                                            \
    } else {                                                                                       \
        EW_PIECE(VF, A, B, C, 8)                                                                   \
        EW_PIECE(VF, A, B, C, 4)                                                                   \
        EW_PIECE(VF, A, B, C, 2)                                                                   \
        if (n & 1) out[i] = SF;                                                                    \
    }
#else
#define EW_PIECES(VF, SF, A, B, C)                                                                 \
    for (size_t i = 0; i < n; i++) out[i] = SF
#endif
/* out[i] = VF(a, b, c) on the vectors of A, B, C at i (SF: the same on scalars, for spans
 * shorter than a vector). No scalar tail: the last vector is computed at n - W, overlapping;
 * its inputs are loaded before anything is stored, so the result is right in place too
 * (out == A), and the overlapped elements are stored twice with the same value. */
#define EW_KERNEL(VF, SF, A, B, C)                                                                 \
    EW_SHORT(VF, A, B, C)                                                                          \
    if (__builtin_expect(n - RV_W <= RV_W, 1)) {                                                   \
        /* one or two vectors, no loop, the second overlapping the first (masked stores are     \
         * slow on AMD cores; measured 1.5-2x slower here at 10 elements) */                       \
        const size_t l = n - RV_W;                                                                 \
        rv_f r0 = VF(rv_load(A), rv_load(B), rv_load(C));                                          \
        rv_f r1 = VF(rv_load(A + l), rv_load(B + l), rv_load(C + l));                              \
        rv_store(out, r0);                                                                         \
        rv_store(out + l, r1);                                                                     \
        return RIDGE_OK;                                                                           \
    }                                                                                              \
    if (n < RV_W) {                                                                                \
        EW_PIECES(VF, SF, A, B, C);                                                                \
        return RIDGE_OK;                                                                           \
    }                                                                                              \
    const size_t last = n - RV_W;                                                                  \
    const rv_f la = rv_load(A + last), lb = rv_load(B + last), lc = rv_load(C + last);             \
    (void)lb, (void)lc;                                                                            \
    size_t i = 0;                                                                                  \
    for (; i + 2 * RV_W <= n; i += 2 * RV_W) {                                                     \
        rv_f r0 = VF(rv_load(A + i), rv_load(B + i), rv_load(C + i));                              \
        rv_f r1 = VF(rv_load(A + i + RV_W), rv_load(B + i + RV_W), rv_load(C + i + RV_W));         \
        rv_store(out + i, r0);                                                                     \
        rv_store(out + i + RV_W, r1);                                                              \
    }                                                                                              \
    if (i + RV_W <= n) rv_store(out + i, VF(rv_load(A + i), rv_load(B + i), rv_load(C + i)));      \
    rv_store(out + last, VF(la, lb, lc));                                                          \
    return RIDGE_OK

#define V_ADD(a, b, c) rv_add(a, b)
#define V_SUB(a, b, c) rv_sub(a, b)
#define V_MUL(a, b, c) rv_mul(a, b)
#define V_SCALE(a, b, c) rv_mul(va, a)
#define V_AXPY(a, b, c) rv_fma(va, a, b)
#define V_FMA(a, b, c) rv_fma(a, b, c)
#define V_CLAMP(a, b, c) rv_min(vhi, rv_max(vlo, a)) /* keeps a NaN (see the mapping) */

static ridge_status add_f32(RIDGE_VEC_CTX, float *out, const float *x, const float *y, size_t n)
{
    EW_KERNEL(V_ADD, x[i] + y[i], x, y, y);
}
static ridge_status sub_f32(RIDGE_VEC_CTX, float *out, const float *x, const float *y, size_t n)
{
    EW_KERNEL(V_SUB, x[i] - y[i], x, y, y);
}
static ridge_status mul_f32(RIDGE_VEC_CTX, float *out, const float *x, const float *y, size_t n)
{
    EW_KERNEL(V_MUL, x[i] * y[i], x, y, y);
}
static ridge_status scale_f32(RIDGE_VEC_CTX, float *out, const float *x, float a, size_t n)
{
    rv_f va = rv_set1(a);
    EW_KERNEL(V_SCALE, a * x[i], x, x, x);
}
static ridge_status axpy_f32(RIDGE_VEC_CTX, float *out, float a, const float *x, size_t n)
{
    rv_f va = rv_set1(a);
    EW_KERNEL(V_AXPY, __builtin_fmaf(a, x[i], out[i]), x, out, out);
}
static ridge_status fma_f32(RIDGE_VEC_CTX, float *out, const float *x, const float *y,
                            const float *z, size_t n)
{
    EW_KERNEL(V_FMA, __builtin_fmaf(x[i], y[i], z[i]), x, y, z);
}
static ridge_status clamp_f32(RIDGE_VEC_CTX, float *out, const float *x, float lo, float hi,
                              size_t n)
{
    rv_f vlo = rv_set1(lo), vhi = rv_set1(hi);
    EW_KERNEL(V_CLAMP, x[i] != x[i] ? x[i] : x[i] < lo ? lo : x[i] > hi ? hi : x[i], x, x, x);
}

/* ---- activations ---------------------------------------------------------------------------- */

/* y = F(x) with F a vector function of (x, va); the tail through masked loads and stores */
#define ACT_FWD(name, F)                                                                           \
    static ridge_status act_##name(float *y, const float *x, size_t n, float alpha)                \
    {                                                                                              \
        rv_f va = rv_set1(alpha);                                                                  \
        (void)va;                                                                                  \
        size_t i = 0;                                                                              \
        for (; i + RV_W <= n; i += RV_W) rv_store(y + i, F(rv_load(x + i), va));                   \
        if (i < n) rv_store_n(y + i, F(rv_load_nz(x + i, n - i), va), n - i);                      \
        return RIDGE_OK;                                                                           \
    }
#define ACT_BWD(name, G)                                                                           \
    static ridge_status act_bwd_##name(float *dx, const float *dy, const float *x, size_t n,       \
                                       float alpha)                                                \
    {                                                                                              \
        rv_f va = rv_set1(alpha);                                                                  \
        (void)va;                                                                                  \
        size_t i = 0;                                                                              \
        for (; i + RV_W <= n; i += RV_W)                                                           \
            rv_store(dx + i, rv_mul(rv_load(dy + i), G(rv_load(x + i), va)));                      \
        if (i < n) {                                                                               \
            size_t r = n - i;                                                                      \
            rv_f g = G(rv_load_nz(x + i, r), va);                                                  \
            rv_store_n(dx + i, rv_mul(rv_load_nz(dy + i, r), g), r);                               \
        }                                                                                          \
        return RIDGE_OK;                                                                           \
    }

#define F_RELU(x, a) rv_max(rv_zero(), x) /* NaN stays NaN */
#define F_LEAKY(x, a) rv_sel(rv_cmp(x, rv_zero(), _CMP_GT_OQ), x, rv_mul(a, x))
#define F_SIGMOID(x, a) RV_FN(sigmoid)(x)
#define F_TANH(x, a) RV_FN(tanh)(x)
#define F_GELU(x, a) RV_FN(gelu_tanh)(x)
#define F_GELU_ERF(x, a) RV_FN(gelu_erf)(x)
#define F_SILU(x, a) RV_FN(silu)(x)
#define F_EXP(x, a) RV_FN(exp)(x)
#define F_LOG(x, a) RV_FN(log)(x)
#define G_RELU(x, a) rv_sel(rv_cmp(x, rv_zero(), _CMP_GT_OQ), rv_set1(1.0f), rv_zero())
#define G_LEAKY(x, a) rv_sel(rv_cmp(x, rv_zero(), _CMP_GT_OQ), rv_set1(1.0f), a)
#define G_SIGMOID(x, a) RV_FN(sigmoid_grad)(x)
#define G_TANH(x, a) RV_FN(tanh_grad)(x)
#define G_GELU(x, a) RV_FN(gelu_tanh_grad)(x)
#define G_GELU_ERF(x, a) RV_FN(gelu_erf_grad)(x)
#define G_SILU(x, a) RV_FN(silu_grad)(x)
#define G_EXP(x, a) RV_FN(exp)(x)
#define G_LOG(x, a) RV_FN(log_grad)(x)

/* relu and leaky relu are exact (max, one multiply): the elementwise kernel's overlapping
 * last vector gives the same bits as a masked tail, cheaper; the scalar forms match the
 * vector ones bit for bit (vmaxps(0, x) is 0 > x ? 0 : x, keeping -0 and NaN). */
static ridge_status act_relu(float *out, const float *x, size_t n, float alpha)
{
    (void)alpha;
#define V_RELU(a, b, c) rv_max(rv_zero(), a)
    EW_KERNEL(V_RELU, 0.0f > x[i] ? 0.0f : x[i], x, x, x);
#undef V_RELU
}
static ridge_status act_leaky_relu(float *out, const float *x, size_t n, float alpha)
{
    rv_f va = rv_set1(alpha);
#define V_LEAKY(a, b, c) F_LEAKY(a, va)
    EW_KERNEL(V_LEAKY, x[i] > 0 ? x[i] : alpha * x[i], x, x, x);
#undef V_LEAKY
}
ACT_FWD(sigmoid, F_SIGMOID)
ACT_FWD(tanh, F_TANH)
ACT_FWD(gelu, F_GELU)
ACT_FWD(gelu_erf, F_GELU_ERF)
ACT_FWD(silu, F_SILU)
ACT_FWD(exp, F_EXP)
ACT_FWD(log, F_LOG)
ACT_BWD(relu, G_RELU)
ACT_BWD(leaky_relu, G_LEAKY)
ACT_BWD(sigmoid, G_SIGMOID)
ACT_BWD(tanh, G_TANH)
ACT_BWD(gelu, G_GELU)
ACT_BWD(gelu_erf, G_GELU_ERF)
ACT_BWD(silu, G_SILU)
ACT_BWD(exp, G_EXP)
ACT_BWD(log, G_LOG)

/* ---- softmax rows --------------------------------------------------------------------------- */

/* y = exp(x - m) (stored) and returns the sum; the masked tail loads -Inf, so exp gives 0 */
static float exp_shift_store(float *y, const float *x, float m, size_t n)
{
    rv_f vm = rv_set1(m), s0 = rv_zero(), s1 = rv_zero();
    size_t i = 0;
    for (; i + 2 * RV_W <= n; i += 2 * RV_W) {
        rv_f e0 = RV_FN(exp)(rv_sub(rv_load(x + i), vm));
        rv_f e1 = RV_FN(exp)(rv_sub(rv_load(x + i + RV_W), vm));
        rv_store(y + i, e0), rv_store(y + i + RV_W, e1);
        s0 = rv_add(s0, e0), s1 = rv_add(s1, e1);
    }
    for (; i < n; i += RV_W) {
        size_t r = n - i < RV_W ? n - i : RV_W;
        rv_f e = RV_FN(exp)(rv_sub(rv_load_n(x + i, r, rv_set1(-INFINITY)), vm));
        if (r == RV_W) rv_store(y + i, e);
        else rv_store_n(y + i, e, r);
        s0 = rv_add(s0, e);
    }
    return rv_reduce_add(rv_add(s0, s1));
}

static ridge_status softmax_row(float *y, const float *x, size_t n)
{
    if (n - RV_W <= RV_W) {
        /* one or two vectors, in registers: exp_shift_store's sum and scale_f32's products, the
         * same operations in the same order; the tail stored in pieces (rv_store_part: masked
         * stores are slow on AMD) */
        const size_t l = n - RV_W;
        const rv_f vm = rv_set1(max_f32(x, n));
        rv_f e0 = RV_FN(exp)(rv_sub(rv_load(x), vm));
        rv_f e1 = RV_FN(exp)(rv_sub(rv_load_n(x + RV_W, l, rv_set1(-INFINITY)), vm));
        rv_f inv = rv_set1(1.0f / rv_reduce_add(rv_add(rv_add(e0, e1), rv_zero())));
        rv_store(y, rv_mul(e0, inv));
        if (l == RV_W) rv_store(y + RV_W, rv_mul(e1, inv));
        else rv_store_part(y + RV_W, rv_mul(e1, inv), l);
        return RIDGE_OK;
    }
#ifdef RV_MASKED_SHORT
    if (__builtin_expect(n - 1 < RV_W, 1)) { /* shorter than a vector: one masked vector */
        const rv_f vm = rv_set1(max_f32(x, n));
        rv_f e = RV_FN(exp)(rv_sub(rv_load_fill(x, n, -INFINITY), vm)); /* e^-Inf = 0 */
        rv_store_n(y, rv_mul(e, rv_set1(1.0f / rv_reduce_add(e))), n);
        return RIDGE_OK;
    }
#endif
    float s = exp_shift_store(y, x, max_f32(x, n), n);
    return scale_f32(NULL, y, y, 1.0f / s, n);
}

static ridge_status log_softmax_row(float *y, const float *x, size_t n)
{
    float m = max_f32(x, n);
    /* sum the exponentials without storing them, so that y may be x */
    rv_f vm = rv_set1(m), s0 = rv_zero();
    for (size_t j = 0; j < n; j += RV_W) {
        size_t r = n - j < RV_W ? n - j : RV_W;
        rv_f v = r == RV_W ? rv_load(x + j) : rv_load_n(x + j, r, rv_set1(-INFINITY));
        s0 = rv_add(s0, RV_FN(exp)(rv_sub(v, vm)));
    }
    float ls = logf(rv_reduce_add(s0));
    rv_f vl = rv_set1(ls);
    float *out = y;
#define V_LSM(a, b, c) rv_sub(rv_sub(a, vm), vl)
    EW_KERNEL(V_LSM, (x[i] - m) - ls, x, x, x);
#undef V_LSM
}

static float dot_any(const float *x, const float *y, size_t n)
{
    rv_f s0 = rv_zero(), s1 = rv_zero();
    size_t i = 0;
    for (; i + 2 * RV_W <= n; i += 2 * RV_W) {
        s0 = rv_fma(rv_load(x + i), rv_load(y + i), s0);
        s1 = rv_fma(rv_load(x + i + RV_W), rv_load(y + i + RV_W), s1);
    }
    float s = rv_reduce_add(rv_add(s0, s1));
    for (; i < n; i++) s = __builtin_fmaf(x[i], y[i], s);
    return s;
}

static ridge_status softmax_bwd_row(float *dx, const float *dy, const float *y, size_t n)
{
    float s = dot_any(dy, y, n);
    rv_f vs = rv_set1(s);
    float *out = dx;
#define V_SMB(a, b, c) rv_mul(a, rv_sub(b, vs))
    EW_KERNEL(V_SMB, y[i] * (dy[i] - s), y, dy, dy);
#undef V_SMB
}

static ridge_status log_softmax_bwd_row(float *dx, const float *dy, const float *y, size_t n)
{
    float s = 0;
    {
        rv_f s0 = rv_zero();
        size_t i = 0;
        for (; i + RV_W <= n; i += RV_W) s0 = rv_add(s0, rv_load(dy + i));
        s = rv_reduce_add(s0);
        for (; i < n; i++) s += dy[i];
    }
    rv_f vs = rv_set1(s);
    size_t i = 0;
    for (; i + RV_W <= n; i += RV_W)
        rv_store(dx + i, rv_fnma(RV_FN(exp)(rv_load(y + i)), vs, rv_load(dy + i)));
    if (i < n) {
        size_t r = n - i;
        rv_f e = RV_FN(exp)(rv_load_nz(y + i, r));
        rv_store_n(dx + i, rv_fnma(e, vs, rv_load_nz(dy + i, r)), r);
    }
    return RIDGE_OK;
}

const ridge_vec_kernels RV_TABLE = {
    .name = RV_TABLE_NAME,
    RIDGE_VEC_WRAPPED,
    .add_f32 = add_f32, .sub_f32 = sub_f32, .mul_f32 = mul_f32, .scale_f32 = scale_f32,
    .axpy_f32 = axpy_f32, .fma_f32 = fma_f32, .clamp_f32 = clamp_f32,
    .act = {act_relu, act_leaky_relu, act_sigmoid, act_tanh, act_gelu, act_gelu_erf, act_silu,
            act_exp, act_log},
    .act_bwd = {act_bwd_relu, act_bwd_leaky_relu, act_bwd_sigmoid, act_bwd_tanh, act_bwd_gelu,
                act_bwd_gelu_erf, act_bwd_silu, act_bwd_exp, act_bwd_log},
    .softmax_row = softmax_row, .log_softmax_row = log_softmax_row,
    .softmax_bwd_row = softmax_bwd_row, .log_softmax_bwd_row = log_softmax_bwd_row,
};

/* the direct names of the kernels above (src/vec/vec.h, RIDGE_VEC_DIRECT) */
#define RV_ALIAS(e, member, k)                                                                     \
    extern RIDGE_VEC_KTYPE(member) RV_DIRECT(e) __attribute__((alias(#k)));
RIDGE_VEC_DIRECT(RV_ALIAS)
#undef RV_ALIAS
