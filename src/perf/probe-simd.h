/* The SIMD probes, written once for every vector ISA. probe-avx2.c and probe-avx512.c define
 * the thin intrinsic mapping below and include this file, so the AVX2 build (which runs here)
 * validates the logic the AVX-512 build shares:
 *
 *   PROBE_ISA           the name suffix (avx2, avx512)
 *   vf, VW              the fp32 vector type and its width in floats
 *   VSET1(x) VLOAD(p) VSTORE(p, v) VSTOREU(p, v) VADD(a, b) VFMA(a, b, c) = a*b + c
 *   PROBE_CHAINS(X)     X(0) X(1) ... for as many FMA accumulator chains as the ISA needs
 *                       (latency x pipes, within the register file)
 *
 * FMA: each chain is acc = acc * m + a with m just below 1, which converges (no overflow, no
 * denormals) and cannot be simplified by the compiler. Read: 8 accumulators of VADD over
 * aligned loads (add latency 3 x 2 pipes needs 6). Copy and triad: 4 vectors per step. */
#include "perf/probe.h"

#define PROBE_CAT2(a, b) a##__##b
#define PROBE_CAT(a, b) PROBE_CAT2(a, b)
#define PROBE_NAME(op) PROBE_CAT(ridge_probe_##op, PROBE_ISA)

static float probe_hsum(vf v)
{
    float t[VW], s = 0;
    VSTOREU(t, v);
    for (int i = 0; i < VW; i++) s += t[i];
    return s;
}

ridge_probe_result PROBE_NAME(fma)(uint64_t iters)
{
    const vf m = VSET1(0.9999999f), a = VSET1(1e-7f);
#define DECL(j) vf acc##j = VSET1(0.5f + (float)(j));
#define STEP(j) acc##j = VFMA(acc##j, m, a);
#define SUM(j) +probe_hsum(acc##j)
#define ONE(j) +1
    PROBE_CHAINS(DECL)
    for (uint64_t i = 0; i < iters; i++) {
        PROBE_CHAINS(STEP)
    }
    const int chains = 0 PROBE_CHAINS(ONE);
    ridge_probe_result r = {(double)iters * chains * VW * 2, 0 PROBE_CHAINS(SUM)};
#undef DECL
#undef STEP
#undef SUM
#undef ONE
    return r;
}

ridge_probe_result PROBE_NAME(read)(const float *a, size_t n, uint64_t reps)
{
    vf s0 = VSET1(0), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (uint64_t r = 0; r < reps; r++) {
        for (size_t i = 0; i < n; i += 8 * VW) {
            s0 = VADD(s0, VLOAD(a + i + 0 * VW));
            s1 = VADD(s1, VLOAD(a + i + 1 * VW));
            s2 = VADD(s2, VLOAD(a + i + 2 * VW));
            s3 = VADD(s3, VLOAD(a + i + 3 * VW));
            s4 = VADD(s4, VLOAD(a + i + 4 * VW));
            s5 = VADD(s5, VLOAD(a + i + 5 * VW));
            s6 = VADD(s6, VLOAD(a + i + 6 * VW));
            s7 = VADD(s7, VLOAD(a + i + 7 * VW));
        }
    }
    s0 = VADD(VADD(VADD(s0, s1), VADD(s2, s3)), VADD(VADD(s4, s5), VADD(s6, s7)));
    ridge_probe_result res = {(double)reps * (double)n * sizeof(float), probe_hsum(s0)};
    return res;
}

ridge_probe_result PROBE_NAME(copy)(float *c, const float *a, size_t n)
{
    for (size_t i = 0; i < n; i += 4 * VW) {
        vf x0 = VLOAD(a + i), x1 = VLOAD(a + i + VW), x2 = VLOAD(a + i + 2 * VW),
           x3 = VLOAD(a + i + 3 * VW);
        VSTORE(c + i, x0);
        VSTORE(c + i + VW, x1);
        VSTORE(c + i + 2 * VW, x2);
        VSTORE(c + i + 3 * VW, x3);
    }
    ridge_probe_result res = {2.0 * (double)n * sizeof(float), c[n - 1]};
    return res;
}

ridge_probe_result PROBE_NAME(triad)(float *a, const float *b, const float *c, size_t n)
{
    const vf s = VSET1(3.0f);
    for (size_t i = 0; i < n; i += 4 * VW) {
        vf x0 = VFMA(VLOAD(c + i), s, VLOAD(b + i));
        vf x1 = VFMA(VLOAD(c + i + VW), s, VLOAD(b + i + VW));
        vf x2 = VFMA(VLOAD(c + i + 2 * VW), s, VLOAD(b + i + 2 * VW));
        vf x3 = VFMA(VLOAD(c + i + 3 * VW), s, VLOAD(b + i + 3 * VW));
        VSTORE(a + i, x0);
        VSTORE(a + i + VW, x1);
        VSTORE(a + i + 2 * VW, x2);
        VSTORE(a + i + 3 * VW, x3);
    }
    ridge_probe_result res = {3.0 * (double)n * sizeof(float), a[n - 1]};
    return res;
}
