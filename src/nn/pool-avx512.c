/* The training pooling loops compiled for avx512 (see pool-kernels.h). */
#define POOL_ISA avx512
#include "nn/pool-kernels.h"
