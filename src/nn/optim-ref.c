/* The optimizer loops compiled for ref (see optim-kernels.h). */
#define OPTIM_ISA ref
#include "nn/optim-kernels.h"
