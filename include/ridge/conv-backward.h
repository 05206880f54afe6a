/* ridge/conv-backward.h: the two gradients of a 2D convolution (issue 8), for the descriptors,
 * layouts and weight format of ridge/conv.h.
 *
 *   ridge_conv2d_bwd_plan *bp;
 *   ridge_conv2d_bwd_plan_create(ctx, &d, NULL, &bp);           // tables, algorithm choice
 *   ridge_conv2d_backward_data(ctx, bp, dx, dy, w, NULL);        // dx = dL/dx
 *   ridge_conv2d_backward_weights(ctx, bp, dw, db, x, dy, NULL); // dw (OIHW), db = dL/db
 *   ridge_conv2d_bwd_plan_destroy(bp);
 *
 * Unlike the forward plan, a backward plan holds no weights: training changes them every
 * step, so backward_data packs w into its workspace on each call (c_out * c_in/groups * r * s
 * floats, a small cost next to the convolution). Both calls overwrite their outputs (they do
 * not accumulate). Results are deterministic and do not depend on the thread count: the work
 * is split over disjoint outputs (input rows x input channel blocks for dx; output channel
 * blocks x kernel taps for dw; SGEMM, whose bits do not depend on the thread count, for
 * im2col), never over a shared accumulator.
 *
 * Algorithms (ridge_conv_algo values):
 *   RIDGE_CONV_DIRECT     dx: the padding-free "full" convolution of dy with the weights, on
 *                         the forward's register-tiled micro-kernel. No zero-padded copy of dy
 *                         and no rotated copy of w: the taps that reach an input pixel come
 *                         from index arithmetic (negative tap offsets into dy, the valid range
 *                         computed per row and per pixel). A strided forward is a backward over
 *                         a dilated dy; instead of building it, input pixels are split into
 *                         stride phases, and each phase runs only the taps that hit real dy
 *                         pixels.
 *                         dw: per (output channel block, tap), the micro-kernel with input
 *                         channels as its rows and the valid output pixels as its reduction
 *                         (dy packed once per block), x read in place. On NHWC a dedicated
 *                         tile (input channels x output channels, the pixels as reduction)
 *                         on the same packed dy, over chunks of output rows that stay in L2.
 *                         A thin layer on NHWC (1-2 input channels, groups 1, c_out a
 *                         multiple of the kernel's block: 16 AVX2, 32 AVX-512) instead takes
 *                         the (input channel, tap) pairs as the tile's rows, read from a
 *                         zero-padded copy of each image, and dy in place once for all taps.
 *   RIDGE_CONV_IM2COL     NHWC only, dy read in place as a (pixels x c_out) matrix. dx: SGEMM
 *                         dcol = dy W per chunk of images, then a col2im gather per dx row
 *                         (a fixed summation order). dw: the lowered input per chunk of
 *                         images, dW = dy^T col by SGEMM (or its transpose when the lowered
 *                         K is shorter than c_out), chunks added in order.
 *   RIDGE_CONV_WINOGRAD_2X3, RIDGE_CONV_WINOGRAD_4X3   dx: 3x3 stride 1 dilation 1,
 *                         padding <= 2: the forward's Winograd on dy with the kernel rotated
 *                         and its channel axes swapped (folded into the weight transform,
 *                         redone per call into the workspace; the forward plan is made once
 *                         with this plan); tiles at the borders are zero-filled by the
 *                         gather, no padded copy.
 *                         dw (4X3 only; NHWC, 3x3 stride 1 dilation 1, groups 1): F(4x4,
 *                         3x3) transposed, dW = G^T [(A dy A^T) . (B^T x B)] G summed over
 *                         4x4 output tiles: per chunk of tiles the two transforms, then 36
 *                         c_in x c_out GEMMs over the tiles, then G^T . G per channel pair.
 *                         Error as the forward's Winograd (test-conv.c's tolerances).
 *   RIDGE_CONV_DEPTHWISE  groups = c_in = c_out: vectorized across channels (NHWC, NCHW16c).
 *   RIDGE_CONV_REF        plain loops with fp64 accumulation.
 * AUTO (what `ridge bench convbwd` measured faster here): depthwise where it applies; else
 * Winograd 4x3 where it applies (dw: NHWC, groups 1) with at least 8 channels per group each
 * side and at least 32 4x4 output tiles (batch included), else direct (dw on NHWC with 1 or 2
 * input channels per group or a 1x1 kernel: im2col, unless the thin-layer direct tile takes
 * it: groups 1 and c_out a multiple of 32). */
#ifndef RIDGE_CONV_BACKWARD_H
#define RIDGE_CONV_BACKWARD_H

#include <stddef.h>

#include "ridge/conv.h"
#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ridge_conv2d_bwd_plan ridge_conv2d_bwd_plan; /* opaque, immutable once made */

typedef struct ridge_conv2d_bwd_options {
    ridge_conv_algo data_algo;    /* AUTO, REF, DIRECT, IM2COL, WINOGRAD_*, DEPTHWISE */
    ridge_conv_algo weights_algo; /* AUTO, REF, DIRECT, IM2COL, DEPTHWISE */
} ridge_conv2d_bwd_options;

void ridge_conv2d_bwd_options_init(ridge_conv2d_bwd_options *o); /* both AUTO */

/* Validates d (ridge_conv2d_desc_check) and the forced algorithms (RIDGE_EUNSUPPORTED if one
 * cannot run d), and builds the offset tables for ctx's ISA. opts may be NULL (AUTO). */
ridge_status ridge_conv2d_bwd_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                          const ridge_conv2d_bwd_options *opts,
                                          ridge_conv2d_bwd_plan **out);
void ridge_conv2d_bwd_plan_destroy(ridge_conv2d_bwd_plan *plan); /* NULL is a no-op */

ridge_conv_algo ridge_conv2d_bwd_plan_data_algo(const ridge_conv2d_bwd_plan *plan);
ridge_conv_algo ridge_conv2d_bwd_plan_weights_algo(const ridge_conv2d_bwd_plan *plan);

/* Bytes of workspace backward_data / backward_weights need (query-then-provide). The same
 * for every thread count, except Winograd's (dx and dw), sized for the thread count of the ctx
 * the plan was made with: a caller's workspace is refused (RIDGE_EINVAL) on a ctx with more
 * threads (a NULL workspace always works). */
size_t ridge_conv2d_bwd_data_workspace_size(const ridge_conv2d_bwd_plan *plan);
size_t ridge_conv2d_bwd_weights_workspace_size(const ridge_conv2d_bwd_plan *plan);

/* dx = dL/dx given dy = dL/dy. dx: (n, c_in, h, w), dy: (n, c_out, oh, ow), both in the
 * descriptor's layout; w: OIHW (c_out, c_in/groups, r, s). workspace: at least
 * ridge_conv2d_bwd_data_workspace_size bytes, 64-byte aligned, or NULL for the ctx's arena
 * (im2col allocates its own instead: SGEMM uses the arena).
 * dx must not overlap dy or w. Padded channels of an NCHW16c dx are written as 0. */
ridge_status ridge_conv2d_backward_data(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *plan,
                                        float *dx, const float *dy, const float *w,
                                        void *workspace);

/* dw = dL/dw (OIHW, c_out * c_in/groups * r * s floats) and db = dL/db (c_out floats, or NULL:
 * not wanted) given the forward's input x and dy. Workspace as above. */
ridge_status ridge_conv2d_backward_weights(ridge_ctx *ctx, const ridge_conv2d_bwd_plan *plan,
                                           float *dw, float *db, const float *x,
                                           const float *dy, void *workspace);

/* The references directly, fp64 accumulation, the definition of correct: dx is the exact
 * transpose of ridge_conv2d_forward_ref's loops. */
ridge_status ridge_conv2d_backward_data_ref(const ridge_conv2d_desc *d, float *dx,
                                            const float *dy, const float *w);
ridge_status ridge_conv2d_backward_weights_ref(const ridge_conv2d_desc *d, float *dw, float *db,
                                               const float *x, const float *dy);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_CONV_BACKWARD_H */
