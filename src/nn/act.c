/* Activation backward from the forward's output y (what a layer keeps):
 * relu' = (y > 0) (vec's relu backward, since y > 0 exactly when its input was),
 * tanh' = 1 - y^2, sigmoid' = y (1 - y) (plain loops; gcc vectorizes them at -O3). */
#include <string.h>

#include "core/internal.h"
#include "ridge/nn.h"

static const char *const act_names[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
#define NACT (sizeof act_names / sizeof act_names[0])

const char *ridge_nn_act_name(ridge_epi_act act)
{
    return (unsigned)act < NACT ? act_names[act] : "?";
}

ridge_status ridge_nn_act_parse(const char *name, ridge_epi_act *out)
{
    for (unsigned i = 0; i < NACT; i++)
        if (name && !strcmp(name, act_names[i])) return *out = (ridge_epi_act)i, RIDGE_OK;
    return ridge_error(RIDGE_EINVAL, "unknown activation '%s' (none, relu, gelu, sigmoid, tanh)",
                       name ? name : "");
}

typedef struct act_args {
    float *dx;
    const float *dy, *y;
    ridge_epi_act act;
} act_args;

static void bwd_range(void *arg, size_t begin, size_t end, int ith)
{
    const act_args *p = arg;
    float *dx = p->dx;
    const float *dy = p->dy, *y = p->y;
    if (p->act == RIDGE_EPI_SIGMOID)
        for (size_t i = begin; i < end; i++) dx[i] = dy[i] * (y[i] * (1.0f - y[i]));
    else
        for (size_t i = begin; i < end; i++) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
}

static ridge_status ridge_nn_act_backward_untimed(ridge_ctx *ctx, float *dx, const float *dy, const float *y,
                                   size_t n, ridge_epi_act act)
{
    if (!ctx || (n && (!dx || !dy || (act != RIDGE_EPI_NONE && !y))))
        return ridge_error(RIDGE_EINVAL, "act_backward: NULL argument");
    switch (act) {
    case RIDGE_EPI_NONE:
        if (dx != dy) memmove(dx, dy, n * sizeof *dx);
        return RIDGE_OK;
    case RIDGE_EPI_RELU: return ridge_relu_backward_f32(ctx, dx, dy, y, n);
    case RIDGE_EPI_SIGMOID:
    case RIDGE_EPI_TANH: {
        act_args a = {dx, dy, y, act};
        if (n < 65536) bwd_range(&a, 0, n, 0);
        else ridge_parallel_for(ctx, n, 4096, bwd_range, &a);
        return RIDGE_OK;
    }
    case RIDGE_EPI_GELU_TANH:
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "act_backward: gelu's derivative needs its input, not its output");
    }
    return ridge_error(RIDGE_EINVAL, "act_backward: unknown activation %d", (int)act);
}

/* ridge_nn_act_backward, recorded by the profiler as "act.bwd". */
ridge_status ridge_nn_act_backward(ridge_ctx *ctx, float *dx, const float *dy, const float *y,
                                   size_t n, ridge_epi_act act)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_nn_act_backward_untimed(ctx, dx, dy, y, n, act);
    RIDGE_PROF_END(ctx, t0, "act.bwd", "", 2.0 * n, 12.0 * n, 12.0 * n, "%zu", n);
    return st;
}
