/* The batch-norm loops compiled for avx2 (see bn-kernels.h). */
#define BN_ISA avx2
#include "nn/bn-kernels.h"
