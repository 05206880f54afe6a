/* The training pooling loops compiled for ref (see pool-kernels.h). */
#define POOL_ISA ref
#include "nn/pool-kernels.h"
