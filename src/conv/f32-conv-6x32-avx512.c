/* AVX-512 conv kernels: 6x32 micro-kernel (12 zmm accumulators), depthwise 4 pixels x 16
 * channels, Winograd transforms. The logic is conv-template.h (validated by the AVX2 build's
 * tests); this file is only the mapping of its vector operations onto 512-bit intrinsics. */
#include <immintrin.h>

#include "conv/conv.h"

#define VL 16
#define VF __m512
#define VZERO() _mm512_setzero_ps()
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VSTREAM(p, v) _mm512_stream_ps((p), (v))
#define VBCAST(p) _mm512_set1_ps(*(p))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VFNMA(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VSET1(f) _mm512_set1_ps(f)
/* Zen 4 loads one 512-bit vector per cycle: the depthwise input column, folded by gcc into
 * each of the up to 3 FMAs that use it, made the 3x3 path load-bound (1.28-1.41x faster with
 * it loaded once, docs/PERFORMANCE.md) */
#define VPIN(v) __asm__("" : "+v"(v))
#define KNAME ridge_f32_conv_kernels__avx512
#define KNAME_STR "f32-conv-6x32-avx512"
#define KISA RIDGE_ISA_AVX512
#define CONV_ROW_PAIR 1 /* 6 x 64 tiles over two channel blocks (24 accumulators) */
#define CONV_SMALL_REDUCTION 1 /* reductions of <= 9 steps: the weights in registers */

#include "conv/conv-template.h"
