/* The batch-norm loops compiled for avx512 (see bn-kernels.h). */
#define BN_ISA avx512
#include "nn/bn-kernels.h"
