/* The conv family's backward pass (issue 8): the plan and the references. The fast passes run
 * on the forward's per-ISA kernels (conv.h's conv_row / conv_dw_row), so they inherit every
 * ISA variant the forward template has. */
#ifndef RIDGE_CONV_BACKWARD_INTERNAL_H
#define RIDGE_CONV_BACKWARD_INTERNAL_H

#include "conv/conv.h"
#include "ridge/conv-backward.h"

/* A run of dx pixels of one column stride phase that share their valid column taps: pixels
 * iw, iw + sw, ..., (npix of them), whose dy columns are ow0, ow0 + 1, ... for the phase's
 * first tap; taps [s0, s1) of the phase are inside dy. */
typedef struct bwd_seg {
    int64_t iw, npix, ow0;
    int s0, s1;
} bwd_seg;

/* A run of input channels of one group with a uniform stride in x (a whole group in NHWC and
 * NCHW, a 16-channel block in NCHW16c). */
typedef struct bwd_run {
    int64_t g, ci0, len;
    ptrdiff_t stride;
} bwd_run;

struct ridge_conv2d_bwd_plan {
    ridge_conv2d_desc d;
    int64_t oh, ow, cig, cog;
    ridge_conv_algo data_algo, weights_algo;
    const conv_kernels *k;
    conv_view xv, yv;
    ptrdiff_t *xco, *yco, *iota; /* channel offsets (+nr padding entries), 0, 1, 2, ... */
    /* stride phases: the taps of phase a are rtap[rph[a] .. rph[a+1]), with dy row offsets
     * relative to the phase's first tap in roff; likewise columns (stap, sph, soff) */
    int64_t *rtap, *stap;
    int *rph, *sph;
    ptrdiff_t *roff, *soff;
    size_t *wph;                 /* [a * sw + b]: tap-pair offset of phase pair (a, b) */
    bwd_seg *seg;                /* column segments, grouped by phase: seg[segph[b]..) */
    int *segph;
    int64_t ncib, ncob;          /* dx input-channel blocks, dw output-channel blocks (NR) */
    unsigned char *dx_yfast;     /* conv_yfast_table of xco, per dx block g * ncib + cib */
    bwd_run *runs;
    int64_t nruns;
    ptrdiff_t *dw_roff, *dw_soff; /* dw: x offsets of output rows / columns */
    size_t ws_data, ws_weights;  /* bytes */
    /* dx by Winograd, and depthwise at stride 1: the forward plan of the transposed
     * convolution (made once, without weights: each call transforms w into the workspace);
     * the thread count the workspaces of such plans were sized for */
    ridge_conv2d_plan *dx_fwd;
    int threads;
    int dw_nhwc; /* dw direct on NHWC: the dwt tile over chunks of output rows */
    int dx_dw_rows; /* depthwise dx by phases: each (row, column phase) one blocked call */
    /* dw direct on a thin layer (dw_taps_applies): the dwtaps tile on a padded copy of each
     * image; tap offsets into that copy, (ci, r, s) order, cig * R * S of them */
    ptrdiff_t *dw_toff;
    int64_t dw_chunks; /* fixed chunks of images, each its own partial sums */
};

/* conv-backward-ref.c */
ridge_status conv_backward_data_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow,
                                    float *dx, const float *dy, const float *w);
ridge_status conv_backward_weights_ref(const ridge_conv2d_desc *d, int64_t oh, int64_t ow,
                                       float *dw, float *db, const float *x, const float *dy);

#endif /* RIDGE_CONV_BACKWARD_INTERNAL_H */
