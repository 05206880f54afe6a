/* GPT-2's non-GEMM inner loops for AVX2 + FMA (8 lanes): gpt2-kernels-template.h over the
 * vec family's AVX2 mapping. */
#include <math.h>

#include "vec/simd-avx2.h"
#include "vec/math-template.h"
#define rv_sqrt(a) _mm256_sqrt_ps(a)
#define GPT2_TABLE ridge_gpt2_kernels__avx2
#include "models/gpt2-kernels-template.h"
