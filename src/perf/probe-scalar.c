/* The portable probes: what plain C compiled for baseline x86-64 (no FMA) gets. The fp32 peak
 * is 14 chains of scalar multiply + add; an empty asm per step pins each accumulator in its
 * own register so the compiler cannot pack the chains into SSE vectors. 14, not 12: a chain's
 * multiply then add take 6 cycles on Zen 3 and its two multiply and two add pipes retire 4 per
 * cycle, so 12 chains fill them exactly, with no slack for imperfect scheduling; the 2-thread
 * peak then moved 20% between runs (19.8-25.7 GFLOP/s). The memory probes are
 * plain loops (the compiler may vectorize them with SSE2: that is what portable code gets);
 * measure.c uses them only on CPUs without AVX2. */
#include "perf/probe.h"

#if defined(__GNUC__)
#define PIN(x) __asm__("" : "+x"(x))
#else
#define PIN(x) ((void)0)
#endif

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13)

ridge_probe_result ridge_probe_fma__scalar(uint64_t iters)
{
    const float m = 0.9999999f, a = 1e-7f;
#define DECL(j) float acc##j = 0.5f + (float)(j);
#define STEP(j) acc##j = acc##j * m + a; PIN(acc##j);
#define SUM(j) +acc##j
    CHAINS(DECL)
    for (uint64_t i = 0; i < iters; i++) {
        CHAINS(STEP)
    }
    ridge_probe_result r = {(double)iters * 14 * 2, 0 CHAINS(SUM)};
#undef DECL
#undef STEP
#undef SUM
    return r;
}

ridge_probe_result ridge_probe_read__scalar(const float *a, size_t n, uint64_t reps)
{
    float s[8] = {0};
    for (uint64_t r = 0; r < reps; r++)
        for (size_t i = 0; i < n; i += 8)
            for (int j = 0; j < 8; j++) s[j] += a[i + j];
    ridge_probe_result res = {(double)reps * (double)n * sizeof(float),
                              s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7]};
    return res;
}

ridge_probe_result ridge_probe_copy__scalar(float *c, const float *a, size_t n)
{
    for (size_t i = 0; i < n; i++) c[i] = a[i];
    ridge_probe_result res = {2.0 * (double)n * sizeof(float), c[n - 1]};
    return res;
}

ridge_probe_result ridge_probe_triad__scalar(float *a, const float *b, const float *c, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = b[i] + 3.0f * c[i];
    ridge_probe_result res = {3.0 * (double)n * sizeof(float), a[n - 1]};
    return res;
}
