/* The dense (fully connected) layer: y = act(x W^T + b), W (OC, IC) as in PyTorch's Linear.
 *
 * Forward is one ridge_sgemm_ex call with the bias and activation in its epilogue, so they
 * are applied while each output tile is still in registers (the seed's lesson: a separate
 * bias pass and activation pass over y cost more than they look). SGEMM takes its
 * matrix-vector path when B == 1, streaming W once with the bias (and ReLU) fused; there, tanh
 * and sigmoid run as a separate vec pass over the OC outputs, which measured faster than the
 * path's fused versions (docs/PERFORMANCE.md, mlp).
 *
 * Backward, with dz = dy * act'(y) computed in place:
 *   dW (OC, IC) = dz^T (OC, B) x (B, IC)      one SGEMM, A transposed
 *   db (OC)     = sum over rows of dz          a row-order loop (deterministic)
 *   dx (B, IC)  = dz (B, OC) W (OC, IC)        one SGEMM
 */
#include <string.h>

#include "core/internal.h"
#include "ridge/nn.h"

static ridge_status check(const char *fn, const float *x, const float *w, size_t B, size_t IC,
                          size_t OC)
{
    if (!x || !w) return ridge_error(RIDGE_EINVAL, "%s: x or w is NULL", fn);
    if (!B || !IC || !OC)
        return ridge_error(RIDGE_EINVAL, "%s: B (%zu), IC (%zu), OC (%zu) must be > 0", fn, B,
                           IC, OC);
    size_t t;
    ridge_status st;
    if ((st = ridge_size_mul(B, IC, fn, &t)) || (st = ridge_size_mul(B, OC, fn, &t)) ||
        (st = ridge_size_mul(OC, IC, fn, &t)))
        return st;
    return RIDGE_OK;
}

static ridge_status ridge_dense_forward_untimed(ridge_ctx *ctx, float *y, const float *x, const float *w,
                                 const float *b, size_t B, size_t IC, size_t OC, ridge_epi_act act)
{
    ridge_status st = check("dense_forward", x, w, B, IC, OC);
    if (st) return st;
    if (!y) return ridge_error(RIDGE_EINVAL, "dense_forward: y is NULL");
    ridge_epilogue e = {.bias_kind = b ? RIDGE_BIAS_COL : RIDGE_BIAS_NONE, .bias = b, .act = act};
    if (B == 1 && (act == RIDGE_EPI_TANH || act == RIDGE_EPI_SIGMOID)) {
        /* measured (bench dense, batch 1): the matrix-vector path's fused tanh/sigmoid cost
         * +37% / +16% over no activation, a separate vec pass over the OC outputs +3% */
        e.act = RIDGE_EPI_NONE;
        ridge_status st = ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, 1, OC, IC, 1.0f, x, IC,
                                         w, IC, 0.0f, y, OC, &e);
        if (st) return st;
        return act == RIDGE_EPI_TANH ? ridge_tanh_f32(ctx, y, y, OC)
                                     : ridge_sigmoid_f32(ctx, y, y, OC);
    }
    return ridge_sgemm_ex(ctx, RIDGE_NO_TRANS, RIDGE_TRANS, B, OC, IC, 1.0f, x, IC, w, IC, 0.0f,
                          y, OC, &e);
}

/* ridge_dense_forward, recorded by the profiler as "dense.fwd". */
ridge_status ridge_dense_forward(ridge_ctx *ctx, float *y, const float *x, const float *w,
                                 const float *b, size_t B, size_t IC, size_t OC, ridge_epi_act act)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_dense_forward_untimed(ctx, y, x, w, b, B, IC, OC, act);
    RIDGE_PROF_END(ctx, t0, "dense.fwd", "", 2.0 * B * IC * OC, 4.0 * ((double)B * IC + (double)IC * OC + (double)B * OC + OC), 4.0 * ((double)B * IC + (double)IC * OC + (double)B * OC), "%zux%zux%zu", B, IC, OC);
    return st;
}

static ridge_status ridge_dense_backward_untimed(ridge_ctx *ctx, float *dx, float *dw, float *db, float *dy,
                                  const float *x, const float *w, const float *y, size_t B,
                                  size_t IC, size_t OC, ridge_epi_act act)
{
    ridge_status st = check("dense_backward", x, w, B, IC, OC);
    if (st) return st;
    if (!dw || !dy) return ridge_error(RIDGE_EINVAL, "dense_backward: dw or dy is NULL");
    if ((st = ridge_nn_act_backward(ctx, dy, dy, y, B * OC, act))) return st;
    if ((st = ridge_sgemm(ctx, RIDGE_TRANS, RIDGE_NO_TRANS, OC, IC, B, 1.0f, dy, OC, x, IC, 0.0f,
                          dw, IC)))
        return st;
    if (db) {
        memcpy(db, dy, OC * sizeof *db);
        for (size_t r = 1; r < B; r++)
            for (size_t j = 0; j < OC; j++) db[j] += dy[r * OC + j];
    }
    if (dx)
        st = ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, B, IC, OC, 1.0f, dy, OC, w, IC,
                         0.0f, dx, IC);
    return st;
}

/* ridge_dense_backward, recorded by the profiler as "dense.bwd". */
ridge_status ridge_dense_backward(ridge_ctx *ctx, float *dx, float *dw, float *db, float *dy,
                                  const float *x, const float *w, const float *y, size_t B,
                                  size_t IC, size_t OC, ridge_epi_act act)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_dense_backward_untimed(ctx, dx, dw, db, dy, x, w, y, B, IC, OC, act);
    /* dW and db always; dx, which reads W and writes B x IC, only when asked for (the first
     * layer has none) */
    const double products = dx ? 2.0 : 1.0;
    RIDGE_PROF_END(ctx, t0, "dense.bwd", "", products * 2.0 * B * IC * OC + (double)B * OC,
                   4.0 * (2.0 * B * OC + products * ((double)B * IC + (double)IC * OC) + OC),
                   4.0 * ((double)B * IC + (double)IC * OC + (double)B * OC), "%zux%zux%zu", B,
                   IC, OC);
    return st;
}
