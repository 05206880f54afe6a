/* The pooling loops compiled for ref (see pool-kernels.h). */
#define POOL_ISA ref
#define POOL_VBYTES 16
#include "conv/pool-kernels.h"
