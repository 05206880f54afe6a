/* The roofline probes for AVX2 + FMA (256-bit): the mapping for probe-simd.h. 12 FMA chains:
 * Zen 3 / Haswell-class cores have FMA latency 4-5 and two FMA pipes (8-10 in flight), and 12
 * accumulators plus 2 constants fit the 16 ymm registers. */
#include <immintrin.h>

#define PROBE_ISA avx2
typedef __m256 vf;
#define VW 8
#define VSET1(x) _mm256_set1_ps(x)
#define VLOAD(p) _mm256_load_ps(p)
#define VSTORE(p, v) _mm256_store_ps(p, v)
#define VSTOREU(p, v) _mm256_storeu_ps(p, v)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define PROBE_CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

#include "perf/probe-simd.h"
