/* ridge/conv.h: 2D convolution forward, every algorithm, every layout, and a choice that
 * explains itself.
 *
 *   ridge_conv2d_desc d;
 *   ridge_conv2d_desc_init(&d);          // then set sizes: n, c_in, h, w, c_out, r, s, ...
 *   d.n = 1; d.c_in = 64; d.h = d.w = 56; d.c_out = 64; d.r = d.s = 3;
 *   d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1; d.layout = RIDGE_NHWC;
 *   ridge_conv2d_plan *plan;
 *   ridge_conv2d_plan_create(ctx, &d, weights, NULL, &plan);   // picks, packs weights once
 *   puts(ridge_conv2d_plan_explain(plan));                      // what it considered, and why
 *   ridge_conv2d_forward(ctx, plan, x, y, bias, NULL, NULL);     // NULL workspace: ctx arena
 *   ridge_conv2d_plan_destroy(plan);
 *
 * Tensors. Activations are float32 in one of three layouts (ridge_layout): NCHW, NHWC and
 * NCHW16c (channels in blocks of 16: [N][ceil(C/16)][H][W][16]; the padded channels of the last
 * block are ignored on input and written as 0 on output). Weights are always given as OIHW:
 * (c_out, c_in / groups, r, s), row-major; the plan copies what it needs, so the caller may free
 * them after ridge_conv2d_plan_create. Output size: oh = (h + pad_top + pad_bottom -
 * dil_h * (r - 1) - 1) / stride_h + 1, likewise ow.
 *
 * Threads: a plan is immutable after creation, so several threads may run forward on one plan,
 * each with its own context and workspace.
 */
#ifndef RIDGE_CONV_H
#define RIDGE_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- layouts ------------------------------------------------------------------------------ */

typedef enum ridge_layout {
    RIDGE_NCHW = 0,
    RIDGE_NHWC = 1,
    RIDGE_NCHW16C = 2, /* [N][ceil(C/16)][H][W][16] */
} ridge_layout;

const char *ridge_layout_name(ridge_layout l); /* "nchw", "nhwc", "nchw16c" */
ridge_status ridge_layout_parse(const char *name, ridge_layout *out);

/* Elements (floats) a tensor of this shape takes in this layout; 0 (and RIDGE_EOVERFLOW in
 * ridge_last_error) if the product overflows or a size is not positive. */
size_t ridge_tensor_elems(ridge_layout l, int64_t n, int64_t c, int64_t h, int64_t w);

/* Copies an (n, c, h, w) tensor between layouts (dst and src must not overlap). Pure
 * bandwidth; padded channels of an NCHW16c destination are written as 0. */
ridge_status ridge_layout_reorder(ridge_ctx *ctx, float *dst, ridge_layout dst_layout,
                                  const float *src, ridge_layout src_layout, int64_t n, int64_t c,
                                  int64_t h, int64_t w);

/* ---- the descriptor ------------------------------------------------------------------------ */

typedef struct ridge_conv2d_desc {
    int64_t n, c_in, h, w;          /* input */
    int64_t c_out, r, s;            /* weights: c_out x (c_in/groups) x r x s */
    int64_t stride_h, stride_w;     /* >= 1 */
    int64_t dil_h, dil_w;           /* >= 1 (1: dense kernel) */
    int64_t pad_top, pad_bottom, pad_left, pad_right; /* >= 0, zero padding */
    int64_t groups;                 /* divides c_in and c_out; c_in = c_out = groups: depthwise */
    ridge_layout layout;            /* of both x and y */
} ridge_conv2d_desc;

/* Zero sizes, stride/dilation/groups 1, no padding, NCHW: set the sizes after this. */
void ridge_conv2d_desc_init(ridge_conv2d_desc *d);

/* Validates every field (positive sizes, groups dividing channels, output size >= 1, element
 * counts that fit) and gives the output size. RIDGE_EINVAL or RIDGE_EOVERFLOW with a message
 * naming the field. oh/ow may be NULL. */
ridge_status ridge_conv2d_desc_check(const ridge_conv2d_desc *d, int64_t *oh, int64_t *ow);

/* 2 * n * oh * ow * c_out * (c_in/groups) * r * s: the direct algorithm's FLOP count, the one
 * every algorithm's effective GFLOP/s is quoted against. 0 for an invalid descriptor. */
double ridge_conv2d_flops(const ridge_conv2d_desc *d);

/* ---- algorithms and the plan ---------------------------------------------------------------- */

typedef enum ridge_conv_algo {
    RIDGE_CONV_AUTO = -1,    /* cost model (or, with tune, measurement) chooses */
    RIDGE_CONV_REF = 0,      /* plain loops, fp64 accumulation: the definition of correct */
    RIDGE_CONV_DIRECT,       /* register-tiled, padding-free: window folded into the reduction */
    RIDGE_CONV_IM2COL,       /* tiled lowering of L2-sized pixel strips + GEMM micro-kernel */
    RIDGE_CONV_POINTWISE,    /* 1x1 stride 1 unpadded: a GEMM straight on the input, no lowering */
    RIDGE_CONV_DEPTHWISE,    /* groups = c_in = c_out: vectorized across channels */
    RIDGE_CONV_WINOGRAD_2X3, /* F(2x2,3x3), 3x3 stride 1 dilation 1 */
    RIDGE_CONV_WINOGRAD_4X3, /* F(4x4,3x3), 3x3 stride 1 dilation 1 */
    RIDGE_CONV_FFT,          /* overlap-save FFT tiles, stride 1, groups 1: large kernels */
    RIDGE_CONV_ALGO_COUNT
} ridge_conv_algo;

const char *ridge_conv_algo_name(ridge_conv_algo a); /* "ref", "direct", "im2col", ... */
ridge_status ridge_conv_algo_parse(const char *name, ridge_conv_algo *out);

typedef struct ridge_conv2d_plan_options {
    ridge_conv_algo algo; /* RIDGE_CONV_AUTO, or force one (RIDGE_EUNSUPPORTED if it cannot) */
    int tune;             /* 1: time every applicable candidate on this ctx (median of 5)
                           * and keep the fastest, unless this shape (with this ISA and
                           * thread count) was timed before: in this process, or by any
                           * process on this machine (the results are saved beside the
                           * roofline profile: $XDG_CACHE_HOME/ridge/conv-tune-<cpu>.txt,
                           * else ~/.cache/ridge/...); 2: time them again and replace the
                           * saved result; 0: the cost model alone */
    int fft_tile;         /* FFT: tile size T (8, 16, 32 or 64, at least the dilated kernel),
                           * or 0: the cost model picks it */
    int stream;           /* direct, pointwise, depthwise 3x3; NHWC / NCHW16c with c_out /
                           * groups a multiple of 16 (depthwise: c_out) and y 64-byte
                           * aligned: write y with non-temporal stores, past the caches.
                           * 0: when x and y together exceed a quarter of the L3 one core
                           * can count on (NHWC only: NCHW16c measured no gain); 1: whenever
                           * the layout allows; -1: never */
} ridge_conv2d_plan_options;

void ridge_conv2d_plan_options_init(ridge_conv2d_plan_options *o); /* AUTO, no tuning, all 0 */

typedef struct ridge_conv2d_plan ridge_conv2d_plan; /* opaque, immutable once created */

/* Validates d, chooses the algorithm (opts NULL: AUTO, tuned if the context's conv_tune is 1),
 * transforms and packs the OIHW weights (c_out * c_in/groups * r * s floats) for the ctx's
 * ISA, and sizes the workspace. The plan
 * uses the kernels of ctx's ISA; run it with any context on this CPU. Free with
 * ridge_conv2d_plan_destroy. On failure *out is NULL. */
ridge_status ridge_conv2d_plan_create(ridge_ctx *ctx, const ridge_conv2d_desc *d,
                                      const float *weights, const ridge_conv2d_plan_options *opts,
                                      ridge_conv2d_plan **out);
void ridge_conv2d_plan_destroy(ridge_conv2d_plan *plan); /* NULL is a no-op */

ridge_conv_algo ridge_conv2d_plan_algo(const ridge_conv2d_plan *plan);

/* Bytes of workspace forward needs when run with `threads` threads (query-then-provide). */
size_t ridge_conv2d_workspace_size(const ridge_conv2d_plan *plan, int threads);

/* One candidate the plan considered. */
typedef struct ridge_conv2d_candidate {
    ridge_conv_algo algo;
    int applies;          /* 0: cannot run this descriptor (why says why) */
    double predicted_s;   /* the cost model's time (compute, memory and extra passes, added) */
    double measured_s;    /* median of the tuning runs; 0 if not tuned */
    size_t workspace;     /* bytes at the ctx's thread count */
    size_t weight_bytes;  /* packed/transformed weights the plan holds */
    char why[192];        /* applies: what the prediction rests on; else why not */
} ridge_conv2d_candidate;

/* The candidates, in enum order (RIDGE_CONV_ALGO_COUNT entries, owned by the plan). */
const ridge_conv2d_candidate *ridge_conv2d_plan_candidates(const ridge_conv2d_plan *plan);

/* A readable account: the shape, each candidate with its prediction, workspace and whether it
 * applies (and why not), and the reason for the pick. Owned by the plan. */
const char *ridge_conv2d_plan_explain(const ridge_conv2d_plan *plan);

/* ---- forward -------------------------------------------------------------------------------- */

typedef enum ridge_conv_act {
    RIDGE_CONV_ACT_NONE = 0,
    RIDGE_CONV_ACT_RELU = 1,
} ridge_conv_act;

/* Applied to every output element, fused into the algorithm's last pass:
 *   y = act(conv(x) + bias[c] + residual) */
typedef struct ridge_conv2d_epilogue {
    ridge_conv_act act;
    const float *residual; /* NULL, or a tensor shaped like y (same layout); may equal y */
} ridge_conv2d_epilogue;

/* y = act(conv(x, W) + bias + residual). x: (n, c_in, h, w), y: (n, c_out, oh, ow), both in
 * the descriptor's layout; bias: c_out floats or NULL; ep: NULL for none. workspace: at least
 * ridge_conv2d_workspace_size(plan, ridge_ctx_threads(ctx)) bytes (64-byte aligned is faster),
 * or NULL to use the ctx's scratch arena. Plans that run on ridge_sgemm (im2col in NCHW and
 * NHWC, pointwise in NCHW) must not be given the arena itself (SGEMM uses it; with NULL they
 * take a temporary allocation). x and y must not overlap. Deterministic for a given thread
 * count. */
ridge_status ridge_conv2d_forward(ridge_ctx *ctx, const ridge_conv2d_plan *plan, const float *x,
                                  float *y, const float *bias, const ridge_conv2d_epilogue *ep,
                                  void *workspace);

/* The reference directly, without a plan: fp64 accumulation, every layout, the definition of
 * correct the tests and benchmarks check against. weights OIHW as above. */
ridge_status ridge_conv2d_forward_ref(const ridge_conv2d_desc *d, const float *x,
                                      const float *weights, float *y, const float *bias,
                                      const ridge_conv2d_epilogue *ep);

/* ---- fusion helpers -------------------------------------------------------------------------- */

/* The depthwise-separable block, fused: y = pw_ep(pointwise(dw_ep(depthwise(x) + dw_bias)) +
 * pw_bias), the intermediate kept in an L2-sized strip of rows instead of a tensor. dw: a plan
 * with the DEPTHWISE algorithm; pw: a POINTWISE plan whose input is dw's output (same n, c_in =
 * dw's c_out, h x w = dw's oh x ow, groups 1); both NHWC (RIDGE_EUNSUPPORTED otherwise).
 * dw_ep may not have a residual; pw_ep's residual is shaped like y. workspace: at least
 * ridge_conv2d_separable_workspace_size(dw, pw) bytes, or NULL for the ctx's scratch arena. */
size_t ridge_conv2d_separable_workspace_size(const ridge_conv2d_plan *dw,
                                             const ridge_conv2d_plan *pw);
ridge_status ridge_conv2d_separable_forward(ridge_ctx *ctx, const ridge_conv2d_plan *dw,
                                            const ridge_conv2d_plan *pw, const float *x,
                                            float *y, const float *dw_bias,
                                            const ridge_conv2d_epilogue *dw_ep,
                                            const float *pw_bias,
                                            const ridge_conv2d_epilogue *pw_ep, void *workspace);

/* Folds an inference batch-norm that follows the convolution into its weights and bias:
 *   k = gamma[o] / sqrt(var[o] + eps);  W'[o] = W[o] * k;  b'[o] = (b[o] - mean[o]) * k + beta[o]
 * weights (c_out x per_out floats, per_out = c_in/groups * r * s) and bias (c_out, may not be
 * NULL: start from zeros) are updated in place. */
ridge_status ridge_conv2d_fold_bn(int64_t c_out, int64_t per_out, float *weights, float *bias,
                                  const float *gamma, const float *beta, const float *mean,
                                  const float *var, float eps);

/* ---- pooling -------------------------------------------------------------------------------- */

typedef enum ridge_pool_kind {
    RIDGE_POOL_MAX = 0, /* max over the window's taps inside the input (padding never wins) */
    RIDGE_POOL_AVG = 1, /* mean over the taps inside the input, or over r*s with count_pad */
} ridge_pool_kind;

typedef struct ridge_pool2d_desc {
    int64_t n, c, h, w;
    int64_t r, s, stride_h, stride_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    ridge_pool_kind kind;
    int count_pad;        /* AVG: 1 divides by r*s (padding counts as zeros) */
    ridge_layout layout;  /* of x and y */
} ridge_pool2d_desc;

/* Validates (as ridge_conv2d_desc_check; pads must be < the window) and gives the output size. */
ridge_status ridge_pool2d_desc_check(const ridge_pool2d_desc *d, int64_t *oh, int64_t *ow);

/* y (n, c, oh, ow) = pool(x (n, c, h, w)), both in d->layout; no workspace. */
ridge_status ridge_pool2d_forward(ridge_ctx *ctx, const ridge_pool2d_desc *d, const float *x,
                                  float *y);

/* For `ridge info`: the conv kernels the context's ISA selects. */
const char *ridge_conv_describe(const ridge_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_CONV_H */
