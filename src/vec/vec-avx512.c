/* The vec kernels for AVX-512 F/DQ: vec-template.h expanded on the simd-avx512.h mapping (16 float
 * lanes), with the math of math-avx512.h. Algorithms: vec-template.h and math-template.h. */
#include <math.h>

#include "vec/vec.h"
#include "vec/math-avx512.h"
#include "vec/simd-avx512.h"

#define RV_TABLE ridge_vec_kernels_avx512
#define RV_TABLE_NAME "vec-avx512"
#define RV_DIRECT(e) ridge_vec_##e##__avx512
#include "vec/vec-template.h"
