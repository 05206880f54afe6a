/* Shared by mlp.c and mlp-checkpoint.c. */
#ifndef RIDGE_MLP_INTERNAL_H
#define RIDGE_MLP_INTERNAL_H

#include "core/internal.h"
#include "ridge/mlp.h"

/* The parameter block's views: w[l] at offs[2l] (sizes[2l] floats), b[l] at offs[2l+1];
 * *total floats in all. Arrays hold 2 * RIDGE_MLP_MAX_LAYERS. Needs a checked config. */
ridge_status mlp_layout(const ridge_mlp_config *c, size_t *sizes, size_t *offs, size_t *total);

#endif /* RIDGE_MLP_INTERNAL_H */
