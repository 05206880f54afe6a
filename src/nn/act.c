/* Activation layers, elementwise. The backward uses the forward's output y:
 * relu' = (y > 0), tanh' = 1 - y^2, sigmoid' = y (1 - y). */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "ridge/nn.h"

static const char *const act_names[] = {"none", "relu", "gelu", "sigmoid", "tanh"};
#define NACT (sizeof act_names / sizeof act_names[0])

const char *ridge_act_name(ridge_act act)
{
    return (unsigned)act < NACT ? act_names[act] : "?";
}

ridge_status ridge_act_parse(const char *name, ridge_act *out)
{
    for (unsigned i = 0; i < NACT; i++)
        if (name && !strcmp(name, act_names[i])) return *out = (ridge_act)i, RIDGE_OK;
    return ridge_error(RIDGE_EINVAL, "unknown activation '%s' (none, relu, gelu, sigmoid, tanh)",
                       name ? name : "");
}

typedef struct act_args {
    float *out;
    const float *a, *b;
    ridge_act act;
} act_args;

static void fwd_range(void *arg, size_t begin, size_t end, int ith)
{
    const act_args *p = arg;
    float *y = p->out;
    const float *x = p->a;
    switch (p->act) {
    case RIDGE_ACT_NONE:
        if (y != x) memcpy(y + begin, x + begin, (end - begin) * sizeof *y);
        break;
    case RIDGE_ACT_RELU:
        for (size_t i = begin; i < end; i++) y[i] = x[i] > 0 ? x[i] : 0.0f;
        break;
    case RIDGE_ACT_GELU_TANH:
        for (size_t i = begin; i < end; i++) {
            float v = x[i];
            y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        }
        break;
    case RIDGE_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++) y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case RIDGE_ACT_TANH:
        for (size_t i = begin; i < end; i++) y[i] = tanhf(x[i]);
        break;
    }
}

static void bwd_range(void *arg, size_t begin, size_t end, int ith)
{
    const act_args *p = arg;
    float *dx = p->out;
    const float *dy = p->a, *y = p->b;
    switch (p->act) {
    case RIDGE_ACT_NONE:
        if (dx != dy) memcpy(dx + begin, dy + begin, (end - begin) * sizeof *dx);
        break;
    case RIDGE_ACT_RELU:
        for (size_t i = begin; i < end; i++) dx[i] = y[i] > 0 ? dy[i] : 0.0f;
        break;
    case RIDGE_ACT_SIGMOID:
        for (size_t i = begin; i < end; i++) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
        break;
    case RIDGE_ACT_TANH:
        for (size_t i = begin; i < end; i++) dx[i] = dy[i] * (1.0f - y[i] * y[i]);
        break;
    default: break; /* GELU rejected by the caller */
    }
}

static ridge_status run(ridge_ctx *ctx, ridge_range_fn fn, act_args *a, size_t n)
{
    if (n < 65536) fn(a, 0, n, 0);
    else ridge_parallel_for(ctx, n, 4096, fn, a);
    return RIDGE_OK;
}

ridge_status ridge_act_forward(ridge_ctx *ctx, float *y, const float *x, size_t n, ridge_act act)
{
    if (!ctx || (n && (!y || !x))) return ridge_error(RIDGE_EINVAL, "act_forward: NULL argument");
    if ((unsigned)act >= NACT) return ridge_error(RIDGE_EINVAL, "act_forward: act %d", (int)act);
    act_args a = {y, x, NULL, act};
    return run(ctx, fwd_range, &a, n);
}

ridge_status ridge_act_backward(ridge_ctx *ctx, float *dx, const float *dy, const float *y,
                                size_t n, ridge_act act)
{
    if (!ctx || (n && (!dx || !dy || (act != RIDGE_ACT_NONE && !y))))
        return ridge_error(RIDGE_EINVAL, "act_backward: NULL argument");
    if ((unsigned)act >= NACT) return ridge_error(RIDGE_EINVAL, "act_backward: act %d", (int)act);
    if (act == RIDGE_ACT_GELU_TANH)
        return ridge_error(RIDGE_EUNSUPPORTED,
                           "act_backward: gelu's derivative needs its input, not its output");
    act_args a = {dx, dy, y, act};
    return run(ctx, bwd_range, &a, n);
}
