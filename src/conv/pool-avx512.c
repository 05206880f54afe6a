/* The pooling loops compiled for avx512 (see pool-kernels.h). */
#define POOL_ISA avx512
#define POOL_VBYTES 64
#include "conv/pool-kernels.h"
