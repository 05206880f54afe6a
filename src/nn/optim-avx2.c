/* The optimizer loops compiled for avx2 (see optim-kernels.h). */
#define OPTIM_ISA avx2
#include "nn/optim-kernels.h"
