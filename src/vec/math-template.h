/* Vector float math, written once against the mapping of simd-avx2.h / simd-avx512.h and
 * expanded by math-avx2.h (ridge_<fn>_f32x8 on __m256) and math-avx512.h (ridge_<fn>_f32x16
 * on __m512). No include guard: it is expanded once per mapping. Everything is static inline
 * so GEMM/convolution epilogues can apply an activation to a register tile directly.
 *
 * Algorithms (all with FMA; errors measured, see include/ridge/vec.h):
 *  exp      Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2 (ln2 split 16+24 bits), degree-6
 *           polynomial for e^r (Cephes expf coefficients), scale by 2^n through the exponent
 *           field. Lanes with |x| > 87 take a second path that clamps x to [-150, 89] and
 *           scales in two steps 2^(n/2) 2^(n-n/2), so overflow gives +Inf and the subnormal
 *           range is rounded once, as libm does. exp_ext(hi, lo) is e^(hi + lo) for an argument
 *           carried in two floats; gelu uses it to keep the exponent's rounding error out.
 *  log      x = m 2^e, m in [sqrt(1/2), sqrt 2); log(1+f) = f - f^2/2 + f^3 P(f) (Cephes logf,
 *           degree 8); subnormal x are scaled by 2^23 first; x<0 -> NaN, 0 -> -Inf, Inf -> Inf.
 *  tanh     |x| < 1: x + x^3 P(x^2), P of degree 6 fitted by scripts/fit-tanh.py (reweighted
 *           least squares on tanh's relative error, each coefficient rounded to float before
 *           the rest were refitted); else 1 - 2 / (e^(2|x|) + 1); sign restored; |x| clamped
 *           at 9.5 where tanh rounds to 1. (Until session 5: Cephes tanhf's degree 4 below
 *           0.625, and the exp form's cancellation on [0.625, 1) gave 1.33 ULP; now 0.95.)
 *           AVX-512 (RV_LUT32): piecewise degree-5 polynomials picked by the exponent, 0.76.
 *  sigmoid  e = e^-|x|; 1/(1+e) for x >= 0, e/(1+e) for x < 0: no cancellation either side.
 *  silu     x/(1+e) or x e/(1+e), with e = e^-|x|.
 *  gelu     tanh form = x sigmoid(2u), u = sqrt(2/pi)(x + 0.044715 x^3); 2u is computed as a
 *           double-float (hi + lo) because the result's relative error is |2u| times the
 *           argument's, which reaches 50x for x = -8.
 *  gelu_erf x/2 erfc(-x/sqrt 2). |x|/sqrt2 < 0.5: erf by its Taylor series to t^15 (error
 *           < 1e-9); else erfc(t) = w exp(-t^2 + P(w)), w = 2/(2+t), P of degree 9, with
 *           -t^2 = -x^2/2 carried as a double-float.
 * Gradients f'(x) for the backward passes sit next to each function.
 */
#ifndef RV_W
#error "include simd-avx2.h or simd-avx512.h before math-template.h"
#endif

#define RV_CAT2(a, b, c) a##b##_##c
#define RV_CAT(a, b, c) RV_CAT2(a, b, c)
#define RV_FN(name) RV_CAT(ridge_, name, RV_SFX)
#define RV_C(x) rv_set1((float)(x))

/* |x|, -|x|, and the sign bit of x */
static inline rv_f RV_FN(abs)(rv_f x) { return rv_and(x, rv_asf(rv_set1i(0x7fffffff))); }
static inline rv_f RV_FN(negabs)(rv_f x) { return rv_or(x, RV_C(-0.0f)); }
static inline rv_f RV_FN(signbit)(rv_f x) { return rv_and(x, RV_C(-0.0f)); }

/* c[0] x^(n-1) + c[1] x^(n-2) + ... + c[n-1] by Horner's rule, one FMA per coefficient */
static inline __attribute__((always_inline)) rv_f RV_FN(horner)(rv_f x, const float *c, int n)
{
    rv_f p = rv_set1(c[0]);
#pragma GCC unroll 16
    for (int i = 1; i < n; i++) p = rv_fma(p, x, rv_set1(c[i]));
    return p;
}

/* 2^k for integer lanes k in [-126, 127] */
static inline rv_f RV_FN(pow2i)(rv_i k) { return rv_asf(rv_slli(rv_iadd(k, rv_set1i(127)), 23)); }

/* e^(x + xlo) = p 2^n for |x| <= 89: returns p, in [0.7, 1.42], and the integral n. has_lo
 * (a constant after inlining) 0: xlo is 0 and is not added (x + 0 is an instruction) */
static inline __attribute__((always_inline)) rv_f RV_FN(exp_poly)(rv_f x, rv_f xlo,
                                                                   const int has_lo, rv_f *n)
{
    *n = rv_round(rv_mul(x, RV_C(1.44269504088896341)));
    rv_f r = rv_fnma(*n, RV_C(0x1.62e4p-1f), x); /* exact: n has <= 8 bits, ln2_hi 16 */
    r = rv_fnma(*n, RV_C(0x1.7f7d1cp-20f), r);
    if (has_lo) r = rv_add(r, xlo);
    static const float pc[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
    rv_f p = RV_FN(horner)(r, pc, 6);
    p = rv_fma(p, rv_mul(r, r), r);
    return rv_add(p, RV_C(1.0f));
}

/* e^(x + xlo), |xlo| <= ulp(x) (xlo = 0 for plain exp), and *em = m e^(x + xlo) with m
 * applied before the scaling by 2^n, so that m e^x is rounded once even where e^x alone would
 * be subnormal (silu and gelu need x e^-|a| in that range). */
static inline __attribute__((always_inline)) rv_f RV_FN(exp_ext_mul)(rv_f x, rv_f xlo,
                                                                       const int has_lo, rv_f m,
                                                                       rv_f *em)
{
    /* NaN compares false: it takes the fast path and stays NaN through the polynomial */
    int wide = rv_any(rv_cmp(RV_FN(abs)(x), RV_C(87.0f), _CMP_GT_OQ));
    if (wide) x = rv_min(RV_C(89.0f), rv_max(RV_C(-150.0f), x)); /* keeps NaN (see mapping) */
    rv_f n, p = RV_FN(exp_poly)(x, xlo, has_lo, &n);
    rv_f pm = rv_mul(p, m);
    if (!wide) { /* 2^n normal: one vscalefps each on AVX-512 (exp 0.226 -> 0.208 ns) */
        *em = rv_scale2(pm, n);
        return rv_scale2(p, n);
    }
    rv_i k = rv_cvt(n);
    /* n in [-217, 129]: 2^(n/2) and 2^(n - n/2) are both normal; x < -150 gives 0 even
     * when m is large */
    rv_f s1 = RV_FN(pow2i)(rv_srai(k, 1)), s2 = RV_FN(pow2i)(rv_isub(k, rv_srai(k, 1)));
    *em = rv_mul(rv_mul(pm, s1), s2);
    return rv_mul(rv_mul(p, s1), s2);
}

static inline rv_f RV_FN(exp_ext)(rv_f x, rv_f xlo)
{
    rv_f unused;
    return RV_FN(exp_ext_mul)(x, xlo, 1, RV_C(1.0f), &unused);
}

static inline rv_f RV_FN(exp)(rv_f x)
{
    rv_f unused;
    return RV_FN(exp_ext_mul)(x, rv_zero(), 0, RV_C(1.0f), &unused);
}

/* e^x for |x| <= 87 only, without exp's test for the wide range (tanh: 0.497 -> 0.444 ns per
 * element with the vscalefps above; the same bits) */
static inline rv_f RV_FN(exp_narrow)(rv_f x)
{
    rv_f n, p = RV_FN(exp_poly)(x, rv_zero(), 0, &n);
    return rv_scale2(p, n);
}

/* log of x = m 2^(e + eadj) for positive normal x (eadj: the exponent's correction when x was
 * scaled from a subnormal) */
static inline rv_f RV_FN(log_core)(rv_f x, rv_f eadj)
{
    const rv_f one = RV_C(1.0f), zero = rv_zero();
    rv_i bits = rv_asi(x);
    rv_f e = rv_cvtf(rv_isub(rv_srli(bits, 23), rv_set1i(126))); /* x = m 2^e, m in [1/2, 1) */
    e = rv_add(e, eadj);
    rv_f m = rv_asf(rv_ior(rv_iand(bits, rv_set1i(0x007fffff)), rv_set1i(0x3f000000)));
    rv_m lo = rv_cmp(m, RV_C(0.707106781186547524f), _CMP_LT_OQ);
    e = rv_sub(e, rv_sel(lo, one, zero));
    rv_f f = rv_add(rv_sub(m, one), rv_sel(lo, m, zero)); /* exact: 2m - 1 or m - 1 */
    rv_f z = rv_mul(f, f);
    static const float yc[] = {7.0376836292e-2f,  -1.1514610310e-1f, 1.1676998740e-1f,
                               -1.2420140846e-1f, 1.4249322787e-1f,  -1.6668057665e-1f,
                               2.0000714765e-1f,  -2.4999993993e-1f, 3.3333331174e-1f};
    rv_f y = RV_FN(horner)(f, yc, 9);
    y = rv_mul(rv_mul(y, f), z);
    y = rv_fma(e, RV_C(-2.12194440e-4f), y);
    y = rv_fma(z, RV_C(-0.5f), y);
    return rv_fma(e, RV_C(0.693359375f), rv_add(f, y));
}

static inline rv_f RV_FN(log)(rv_f x)
{
    /* the common case, every lane a positive normal finite float, skips the special cases */
    rv_m special = rv_mor(rv_cmp(x, RV_C(0x1p-126f), _CMP_NGE_UQ),
                          rv_cmp(x, RV_C(INFINITY), _CMP_EQ_OQ)); /* < FLT_MIN, NaN, +Inf */
    if (!rv_any(special)) return RV_FN(log_core)(x, rv_zero());
    const rv_f zero = rv_zero();
    rv_m tiny = rv_cmp(x, RV_C(0x1p-126f), _CMP_LT_OQ);
    rv_f xs = rv_sel(tiny, rv_mul(x, RV_C(0x1p23f)), x);
    rv_f res = RV_FN(log_core)(xs, rv_sel(tiny, RV_C(-23.0f), zero));
    res = rv_sel(rv_cmp(x, zero, _CMP_EQ_OQ), RV_C(-INFINITY), res);
    res = rv_sel(rv_cmp(x, RV_C(INFINITY), _CMP_EQ_OQ), x, res);
    return rv_sel(rv_cmp(x, zero, _CMP_NGE_UQ), RV_C(NAN), res); /* x < 0 or NaN */
}

#ifdef RV_LUT32
#include "vec/tanh-table.h"
/* AVX-512: piecewise polynomials, neither exp nor a division (0.444 -> 0.28 ns per element,
 * 0.95 -> 0.76 ULP). |x| (clamped at 9.5) picks its interval by its exponent and two leading
 * mantissa bits, t = |x| - c is exact (c within a factor 2 of |x|), and tanh ~= the interval's
 * polynomial in t of degree 5, its coefficients gathered from two-register tables
 * (vpermt2ps). Interval 0, [0, 0.078), stores c1 = 0 and takes t as its constant term:
 * t + t (t r(t)) for tanh(t) ~= t (1 + t r(t)). scripts/fit-tanh-table.py made the table. */
static inline rv_f RV_FN(tanh)(rv_f x)
{
    const float(*T)[32] = ridge_tanh_lut;
    rv_f sign = RV_FN(signbit)(x);
    rv_f ax = rv_min(RV_C(9.5f), rv_xor(x, sign)); /* NaN stays */
    rv_i i = rv_imax(rv_isub(rv_srli(rv_asi(ax), 21), rv_set1i(4 * 123)), rv_set1i(0));
    rv_f t = rv_sub(ax, rv_lut32(T[0], i));
    rv_f p = rv_lut32(T[6], i);
#pragma GCC unroll 4
    for (int k = 5; k >= 2; k--) p = rv_fma(p, t, rv_lut32(T[k], i)); /* c4 .. c1 */
    rv_f c0 = rv_sel(rv_cmp(ax, RV_C(0.078125f), _CMP_LT_OQ), t, rv_lut32(T[1], i));
    return rv_xor(rv_fma(p, t, c0), sign);
}
#else
static inline rv_f RV_FN(tanh)(rv_f x)
{
    rv_f sign = RV_FN(signbit)(x);
    rv_f ax = rv_min(RV_C(9.5f), rv_xor(x, sign)); /* NaN stays (see mapping) */
    rv_f z = rv_mul(ax, ax);
    static const float pc[] = {-3.52872099029e-4f, 2.28334241547e-3f,  -7.92344100773e-3f,
                               2.14726999402e-2f,  -5.38754798472e-2f, 1.33322834969e-1f,
                               -3.33332926035e-1f};
    rv_f p = RV_FN(horner)(z, pc, 7);
    rv_f small = rv_fma(rv_mul(p, z), ax, ax);
    rv_f e = RV_FN(exp_narrow)(rv_add(ax, ax)); /* 2|x| <= 19 */
    rv_f large = rv_sub(RV_C(1.0f), rv_div(RV_C(2.0f), rv_add(e, RV_C(1.0f))));
    rv_f res = rv_sel(rv_cmp(ax, RV_C(1.0f), _CMP_LT_OQ), small, large);
    return rv_xor(res, sign);
}
#endif

static inline rv_f RV_FN(sigmoid)(rv_f x)
{
    rv_f e = RV_FN(exp)(RV_FN(negabs)(x));
    rv_f num = rv_sel(rv_cmp(x, rv_zero(), _CMP_GE_OQ), RV_C(1.0f), e);
    return rv_div(num, rv_add(RV_C(1.0f), e));
}

static inline rv_f RV_FN(silu)(rv_f x)
{
    /* x e for x < 0, with x kept finite so that -Inf e^-Inf gives -0, not NaN */
    rv_f neg, e = RV_FN(exp_ext_mul)(RV_FN(negabs)(x), rv_zero(), 0, rv_max(RV_C(-200.0f), x),
                                     &neg);
    rv_f num = rv_sel(rv_cmp(x, rv_zero(), _CMP_GE_OQ), x, neg);
    return rv_div(num, rv_add(RV_C(1.0f), e));
}

/* a = 2 sqrt(2/pi) (x + 0.044715 x^3) as hi + lo, for |x| <= 20 */
#define RV_GELU_C1 1.5957691216057307117597842397375 /* 2 sqrt(2/pi) */
#define RV_GELU_C2 0.071354816272076200955 /* 2 sqrt(2/pi) 0.044715 */
static inline rv_f RV_FN(gelu_arg)(rv_f x, rv_f *lo)
{
    const float c1h = (float)RV_GELU_C1, c1l = (float)(RV_GELU_C1 - (double)(float)RV_GELU_C1);
    const float c2h = (float)RV_GELU_C2, c2l = (float)(RV_GELU_C2 - (double)(float)RV_GELU_C2);
    rv_f s = rv_mul(x, x);
    rv_f se = rv_fms(x, x, s); /* s + se = x^2 exactly */
    rv_f m = rv_mul(RV_C(c2h), s);
    rv_f me = rv_fms(RV_C(c2h), s, m);
    me = rv_fma(RV_C(c2h), se, me);
    me = rv_fma(RV_C(c2l), s, me); /* m + me = c2 x^2 */
    rv_f q = rv_add(RV_C(c1h), m);  /* two-sum: q + ql = c1h + m */
    rv_f bb = rv_sub(q, RV_C(c1h));
    rv_f ql = rv_add(rv_sub(RV_C(c1h), rv_sub(q, bb)), rv_sub(m, bb));
    ql = rv_add(ql, rv_add(me, RV_C(c1l)));
    rv_f a = rv_mul(x, q);
    *lo = rv_fma(x, ql, rv_fms(x, q, a));
    return a;
}

/* e = e^-|a| for a = hi + lo (so e <= 1) */
static inline rv_f RV_FN(exp_negabs_ext)(rv_f hi, rv_f lo, rv_f m, rv_f *em)
{
    rv_f sm = RV_C(-0.0f);
    rv_f flip = rv_xor(rv_and(hi, sm), sm); /* sign to apply to lo: that of -|hi| / hi */
    return RV_FN(exp_ext_mul)(rv_or(hi, sm), rv_xor(lo, flip), 1, m, em);
}

static inline rv_f RV_FN(gelu_tanh)(rv_f x)
{
    rv_f xc = rv_min(RV_C(20.0f), rv_max(RV_C(-20.0f), x)); /* beyond: e underflows; NaN kept */
    rv_f lo, a = RV_FN(gelu_arg)(xc, &lo);
    rv_f neg, e = RV_FN(exp_negabs_ext)(a, lo, xc, &neg);
    rv_f num = rv_sel(rv_cmp(x, rv_zero(), _CMP_GE_OQ), x, neg);
    return rv_div(num, rv_add(RV_C(1.0f), e));
}

/* Phi(x) = erfc(-x/sqrt2)/2, the normal CDF, with full relative accuracy in the left tail;
 * returns m Phi(x) (m applied before the final scaling, so a subnormal Phi does not lose
 * bits when m is large) and *gauss = e^(-x^2/2) (for the gradient). |x| is clamped at 20. */
static inline rv_f RV_FN(ncdf_mul)(rv_f x, rv_f m, rv_f *gauss)
{
    rv_f xc = rv_min(RV_C(20.0f), rv_max(RV_C(-20.0f), x));
    rv_f ax = RV_FN(abs)(xc);
    const double r2 = 0.70710678118654752440;
    rv_f t = rv_mul(ax, RV_C(r2));
    rv_f tl = rv_fma(ax, RV_C(r2 - (double)(float)r2), rv_fms(ax, RV_C(r2), t)); /* t + tl */
    /* small |t|: erf(t) = 2/sqrt(pi) (t - t^3/3 + t^5/10 - ...) */
    rv_f z = rv_mul(t, t);
#define TS(k) (float)(1.1283791670955126 / (k)) /* 2/sqrt(pi) / k */
    static const float pc[] = {-TS(75600), TS(9360), -TS(1320), TS(216), -TS(42), TS(10), -TS(3)};
#undef TS
    rv_f p = RV_FN(horner)(z, pc, 7);
    rv_f erf_small = rv_fma(rv_mul(p, z), t, rv_mul(t, RV_C(1.1283791670955126)));
    /* erfc(t) = w exp(-t^2 + P(u)), w = 2/(2+t), u = 3.125 w - 1.5 in [-1, 1] for t in
     * [0.5, 10.5]; P = c0 + u Q(u) is the degree-9 Chebyshev interpolant of
     * log(erfc(t)/w) + t^2 (error 3e-9, fitted in long double). The exponent
     * -x^2/2 + c0 + u Q(u) is summed as a double-float, as its rounding is the result's. */
    rv_f d = rv_add(RV_C(2.0f), t);
    rv_f dl = rv_add(rv_sub(t, rv_sub(d, RV_C(2.0f))), tl); /* d + dl = 2 + t, |t| may be > 2 */
    dl = rv_add(dl, rv_sub(RV_C(2.0f), rv_sub(d, rv_sub(d, RV_C(2.0f)))));
    rv_f w = rv_div(RV_C(2.0f), d);
    /* w's rounding moves the result by (1/w + 3.125 P'(u)) w_lo in the exponent: corrected,
     * with 1/w = 1 + t/2 and P' to 3 terms (the correction is 1e-7 relative, so 1% is plenty) */
    rv_f wl = rv_mul(rv_fnma(w, dl, rv_fnma(w, d, RV_C(2.0f))), rv_mul(w, RV_C(0.5f)));
    rv_f u = rv_fma(w, RV_C(3.125f), RV_C(-1.5f));
    rv_f dp = rv_fma(rv_fma(u, RV_C(-0.0355f), RV_C(0.0433114f)), u, RV_C(0.42792531f));
    rv_f wcorr = rv_mul(wl, rv_fma(dp, RV_C(3.125f), rv_fma(t, RV_C(0.5f), RV_C(1.0f))));
    static const float qc[] = {9.30631343e-06f,  -1.06554069e-05f, -9.67171363e-05f,
                               0.000164767871f,  0.000892931867f,  -0.00194430249f,
                               -0.0118428281f,   0.0216556983f,    0.42792531f};
    rv_f q = RV_FN(horner)(u, qc, 9);
    rv_f uq = rv_mul(u, q), uql = rv_fms(u, q, uq); /* uq + uql = u Q(u) */
    const double c0 = -0.698621088;
    rv_f s = rv_mul(rv_mul(xc, xc), RV_C(-0.5f));
    rv_f se = rv_mul(rv_fms(xc, xc, rv_mul(xc, xc)), RV_C(-0.5f)); /* s + se = -x^2/2 */
    rv_f h1 = rv_add(s, RV_C(c0)); /* two-sums: h + hl = s + c0 + uq */
    rv_f b1 = rv_sub(h1, s);
    rv_f l1 = rv_add(rv_sub(s, rv_sub(h1, b1)), rv_sub(RV_C(c0), b1));
    rv_f h = rv_add(h1, uq);
    rv_f b2 = rv_sub(h, h1);
    rv_f l2 = rv_add(rv_sub(h1, rv_sub(h, b2)), rv_sub(uq, b2));
    rv_f hl = rv_add(rv_add(l1, l2), rv_add(rv_add(se, uql), RV_C(c0 - (double)(float)c0)));
    hl = rv_add(hl, wcorr);
    rv_f hw = rv_mul(RV_C(0.5f), w);
    rv_f tail_m, tail = rv_mul(hw, RV_FN(exp_ext_mul)(h, hl, 1, rv_mul(hw, m), &tail_m));
    *gauss = RV_FN(exp_ext)(s, se);
    /* Phi = erfc(|t|)/2 for x < 0, 1 - erfc(|t|)/2 for x >= 0 */
    rv_m small = rv_cmp(t, RV_C(0.5f), _CMP_LT_OQ);
    rv_f hs = rv_mul(RV_C(0.5f), erf_small);
    rv_f left = rv_sel(small, rv_sub(RV_C(0.5f), hs), tail);
    rv_f right = rv_sel(small, rv_add(RV_C(0.5f), hs), rv_sub(RV_C(1.0f), tail));
    rv_m neg = rv_cmp(x, rv_zero(), _CMP_LT_OQ);
    rv_f left_m = rv_sel(small, rv_mul(m, left), tail_m);
    return rv_sel(neg, left_m, rv_mul(m, right));
}

static inline rv_f RV_FN(gelu_erf)(rv_f x)
{
    /* x Phi(x); for x = -Inf, Phi = 0 and the clamp gives -0 instead of NaN */
    rv_f g;
    return RV_FN(ncdf_mul)(x, rv_max(RV_C(-40.0f), x), &g);
}

/* ---- gradients f'(x) -------------------------------------------------------------------- */

static inline rv_f RV_FN(sigmoid_grad)(rv_f x)
{
    rv_f e = RV_FN(exp)(RV_FN(negabs)(x));
    rv_f d = rv_add(RV_C(1.0f), e);
    return rv_div(e, rv_mul(d, d)); /* s (1 - s) = e / (1 + e)^2 */
}

static inline rv_f RV_FN(tanh_grad)(rv_f x)
{
    rv_f t = RV_FN(tanh)(x);
    return rv_fnma(t, t, RV_C(1.0f));
}

static inline rv_f RV_FN(silu_grad)(rv_f x)
{
    /* s + x s (1 - s), s = sigmoid(x), s (1 - s) = e / (1 + e)^2 */
    rv_f e = RV_FN(exp)(RV_FN(negabs)(x));
    rv_f d = rv_add(RV_C(1.0f), e);
    rv_f s = rv_div(rv_sel(rv_cmp(x, rv_zero(), _CMP_GE_OQ), RV_C(1.0f), e), d);
    rv_f ss = rv_div(e, rv_mul(d, d));
    return rv_fma(rv_max(RV_C(-200.0f), x), ss, s);
}

static inline rv_f RV_FN(gelu_tanh_grad)(rv_f x)
{
    /* d/dx x sigmoid(a) = s + x s (1 - s) a', a = c1 x + c2 x^3, a' = c1 + 3 c2 x^2 */
    rv_f xc = rv_min(RV_C(20.0f), rv_max(RV_C(-20.0f), x));
    rv_f lo, a = RV_FN(gelu_arg)(xc, &lo);
    rv_f unused, e = RV_FN(exp_negabs_ext)(a, lo, RV_C(1.0f), &unused);
    rv_f d = rv_add(RV_C(1.0f), e);
    rv_f s = rv_div(rv_sel(rv_cmp(x, rv_zero(), _CMP_GE_OQ), RV_C(1.0f), e), d);
    rv_f ss = rv_div(e, rv_mul(d, d));
    rv_f da = rv_fma(RV_C(3.0 * RV_GELU_C2), rv_mul(xc, xc), RV_C(RV_GELU_C1));
    return rv_fma(rv_mul(xc, ss), da, s);
}

static inline rv_f RV_FN(gelu_erf_grad)(rv_f x)
{
    /* Phi(x) + x phi(x), phi(x) = e^(-x^2/2) / sqrt(2 pi) */
    rv_f g, phi = RV_FN(ncdf_mul)(x, RV_C(1.0f), &g);
    rv_f xc = rv_min(RV_C(20.0f), rv_max(RV_C(-20.0f), x));
    return rv_fma(rv_mul(xc, g), RV_C(0.39894228040143268), phi);
}

static inline rv_f RV_FN(log_grad)(rv_f x) { return rv_div(RV_C(1.0f), x); }
