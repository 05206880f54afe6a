/* The roofline probes for AVX-512 (512-bit): the mapping for probe-simd.h. 16 FMA chains:
 * two 512-bit FMA pipes at latency 4 need 8 in flight; 16 leave margin and use half the 32
 * zmm registers. */
#include <immintrin.h>

#define PROBE_ISA avx512
typedef __m512 vf;
#define VW 16
#define VSET1(x) _mm512_set1_ps(x)
#define VLOAD(p) _mm512_load_ps(p)
#define VSTORE(p, v) _mm512_store_ps(p, v)
#define VSTOREU(p, v) _mm512_storeu_ps(p, v)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define PROBE_CHAINS(X)                                                                       \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

#include "perf/probe-simd.h"
