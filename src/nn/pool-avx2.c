/* The training pooling loops compiled for avx2 (see pool-kernels.h). */
#define POOL_ISA avx2
#include "nn/pool-kernels.h"
