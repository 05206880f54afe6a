/* The vec kernels for AVX2 + FMA: vec-template.h expanded on the simd-avx2.h mapping (8 float
 * lanes), with the math of math-avx2.h. Algorithms: vec-template.h and math-template.h. */
#include <math.h>

#include "vec/vec.h"
#include "vec/math-avx2.h"
#include "vec/simd-avx2.h"
#include "vec/small-avx2.h"

#define RV_TABLE ridge_vec_kernels_avx2
#define RV_TABLE_NAME "vec-avx2"
#define RV_DIRECT(e) ridge_vec_##e##__avx2
#include "vec/vec-template.h"
