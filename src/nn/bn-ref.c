/* The batch-norm loops compiled for ref (see bn-kernels.h). */
#define BN_ISA ref
#include "nn/bn-kernels.h"
