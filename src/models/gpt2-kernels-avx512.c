/* GPT-2's non-GEMM inner loops for AVX-512 (16 lanes): gpt2-kernels-template.h over the vec
 * family's AVX-512 mapping. */
#include <math.h>

#include "vec/simd-avx512.h"
#include "vec/math-template.h"
#define rv_sqrt(a) _mm512_sqrt_ps(a)
#define GPT2_TABLE ridge_gpt2_kernels__avx512
#include "models/gpt2-kernels-template.h"
