/* AVX2 + FMA conv kernels: 6x16 micro-kernel (12 ymm accumulators), depthwise 14 pixels x
 * 8 channels, Winograd transforms. The logic is conv-template.h; this file is only the mapping
 * of its vector operations onto 256-bit intrinsics. */
#include <immintrin.h>

#include "conv/conv.h"

#define VL 8
#define VF __m256
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VSTREAM(p, v) _mm256_stream_ps((p), (v))
#define VBCAST(p) _mm256_broadcast_ss(p)
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VFNMA(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VSET1(f) _mm256_set1_ps(f)
#define KNAME ridge_f32_conv_kernels__avx2
#define KNAME_STR "f32-conv-6x16-avx2"
#define KISA RIDGE_ISA_AVX2

#include "conv/conv-template.h"
