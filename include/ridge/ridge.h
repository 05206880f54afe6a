/* ridge.h: the umbrella header. Include this one.
 *
 *   #include <ridge/ridge.h>
 *
 *   ridge_ctx *ctx;
 *   if (ridge_ctx_create(NULL, &ctx) != RIDGE_OK) {       // threads, ISA from the environment
 *       fprintf(stderr, "ridge: %s\n", ridge_last_error());
 *       return 1;
 *   }
 *   printf("%d threads, %s kernels\n", ridge_ctx_threads(ctx), ridge_isa_name(ridge_ctx_isa(ctx)));
 *   ridge_ctx_destroy(ctx);
 *
 * Conventions (docs/API.md): every call that can fail returns a ridge_status and fills
 * ridge_last_error(); results go through out-parameters; the caller owns inputs and outputs.
 */
#ifndef RIDGE_RIDGE_H
#define RIDGE_RIDGE_H

#define RIDGE_VERSION_MAJOR 0
#define RIDGE_VERSION_MINOR 1
#define RIDGE_VERSION_PATCH 0
#define RIDGE_VERSION_STRING "0.1.0"

#include "ridge/core.h"
#include "ridge/perf.h"
#include "ridge/profile.h"
#include "ridge/vec.h"
#include "ridge/gemm.h"
#include "ridge/conv.h"
#include "ridge/conv-backward.h"
#include "ridge/lowp.h"
#include "ridge/nn.h"
#include "ridge/mlp.h"
#include "ridge/nn-conv.h"
#include "ridge/cnn.h"
#include "ridge/io.h" /* in libridge_io (links zlib), not libridge */
#include "ridge/llmc.h"
#include "ridge/bpe.h" /* in libridge_io (links PCRE2), not libridge */
#include "ridge/gpt2.h"
#include "ridge/quant.h"
#include "ridge/dist.h" /* in libridge_dist (links MPI; -DRIDGE_WITH_MPI=ON only) */

#endif /* RIDGE_RIDGE_H */
