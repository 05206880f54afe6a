/* Shared between cnn.c and cnn-checkpoint.c. */
#ifndef RIDGE_CNN_INTERNAL_H
#define RIDGE_CNN_INTERNAL_H

#include "ridge/cnn.h"

/* Validates c and gives the parameter views' offsets (2 per layer: weights, bias) and total,
 * and the running-statistics views' (2 per layer: mean, variance) and total, in floats. */
ridge_status cnn_layout(const ridge_cnn_config *c, size_t *poffs, size_t *ptotal, size_t *roffs,
                        size_t *rtotal);

#endif /* RIDGE_CNN_INTERNAL_H */
