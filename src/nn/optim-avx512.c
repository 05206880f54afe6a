/* The optimizer loops compiled for avx512 (see optim-kernels.h). */
#define OPTIM_ISA avx512
#include "nn/optim-kernels.h"
