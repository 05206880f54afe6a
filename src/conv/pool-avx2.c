/* The pooling loops compiled for avx2 (see pool-kernels.h). */
#define POOL_ISA avx2
#define POOL_VBYTES 32
#include "conv/pool-kernels.h"
