/* Optimizers (SGD with momentum, AdamW with decoupled weight decay) and learning-rate
 * schedules (constant; cosine with linear warm-up). The updates are elementwise, so they are
 * split across threads in contiguous blocks and give the same bits for any thread count. */
#include <math.h>
#include <string.h>

#include "core/internal.h"
#include "nn/optim-internal.h"
#include "ridge/nn.h"

void ridge_optim_config_init(ridge_optim_config *c)
{
    memset(c, 0, sizeof *c);
    c->kind = RIDGE_OPTIM_ADAMW;
    c->lr = 1e-3f;
    c->momentum = 0.9f;
    c->beta1 = 0.9f;
    c->beta2 = 0.999f;
    c->eps = 1e-8f;
    c->weight_decay = 0.01f;
    c->schedule = RIDGE_LR_CONSTANT;
}

ridge_status ridge_optim_config_check(const ridge_optim_config *c)
{
    if (!c) return ridge_error(RIDGE_EINVAL, "optim: config is NULL");
    if (c->kind != RIDGE_OPTIM_SGD && c->kind != RIDGE_OPTIM_ADAMW)
        return ridge_error(RIDGE_EINVAL, "optim: unknown kind %d", (int)c->kind);
    if (c->schedule != RIDGE_LR_CONSTANT && c->schedule != RIDGE_LR_COSINE)
        return ridge_error(RIDGE_EINVAL, "optim: unknown schedule %d", (int)c->schedule);
    if (!(c->lr > 0 && c->lr < 1e3f)) return ridge_error(RIDGE_EINVAL, "optim: lr %g", c->lr);
    if (!(c->momentum >= 0 && c->momentum < 1))
        return ridge_error(RIDGE_EINVAL, "optim: momentum %g not in [0, 1)", c->momentum);
    if (!(c->beta1 >= 0 && c->beta1 < 1) || !(c->beta2 >= 0 && c->beta2 < 1))
        return ridge_error(RIDGE_EINVAL, "optim: betas %g, %g not in [0, 1)", c->beta1, c->beta2);
    if (!(c->eps > 0)) return ridge_error(RIDGE_EINVAL, "optim: eps %g <= 0", c->eps);
    if (!(c->weight_decay >= 0 && c->weight_decay < 1e3f))
        return ridge_error(RIDGE_EINVAL, "optim: weight decay %g", c->weight_decay);
    if (!(c->min_lr_frac >= 0 && c->min_lr_frac <= 1))
        return ridge_error(RIDGE_EINVAL, "optim: min_lr_frac %g not in [0, 1]", c->min_lr_frac);
    return RIDGE_OK;
}

static const char *const optim_names[] = {"sgd", "adamw"};
static const char *const lr_names[] = {"constant", "cosine"};

const char *ridge_optim_name(ridge_optim_kind k) { return (unsigned)k < 2 ? optim_names[k] : "?"; }
const char *ridge_lr_name(ridge_lr_kind k) { return (unsigned)k < 2 ? lr_names[k] : "?"; }

ridge_status ridge_optim_parse(const char *name, ridge_optim_kind *out)
{
    for (int i = 0; i < 2; i++)
        if (name && !strcmp(name, optim_names[i])) return *out = (ridge_optim_kind)i, RIDGE_OK;
    return ridge_error(RIDGE_EINVAL, "unknown optimizer '%s' (sgd, adamw)", name ? name : "");
}

ridge_status ridge_lr_parse(const char *name, ridge_lr_kind *out)
{
    for (int i = 0; i < 2; i++)
        if (name && !strcmp(name, lr_names[i])) return *out = (ridge_lr_kind)i, RIDGE_OK;
    return ridge_error(RIDGE_EINVAL, "unknown schedule '%s' (constant, cosine)",
                       name ? name : "");
}

float ridge_lr_at(const ridge_optim_config *c, uint64_t step)
{
    if (c->schedule == RIDGE_LR_CONSTANT) return c->lr;
    if (step < c->warmup) return c->lr * (float)(step + 1) / (float)c->warmup;
    uint64_t span = c->total > c->warmup ? c->total - c->warmup : 1;
    double t = (double)(step - c->warmup) / (double)span;
    if (t > 1) t = 1;
    double lo = c->lr * (double)c->min_lr_frac;
    return (float)(lo + (c->lr - lo) * 0.5 * (1 + cos(M_PI * t)));
}

size_t ridge_optim_state_per_param(const ridge_optim_config *c)
{
    if (c->kind == RIDGE_OPTIM_ADAMW) return 2;
    return c->momentum > 0 ? 1 : 0;
}

typedef struct step_args {
    float *p;
    const float *g;
    float *m, *v;
    optim_consts k;
    void (*adamw)(float *restrict, const float *restrict, float *restrict, float *restrict,
                  size_t, const optim_consts *);
    void (*sgd)(float *restrict, const float *restrict, float *restrict, size_t,
                const optim_consts *);
} step_args;

static void step_range(void *arg, size_t begin, size_t end, int ith)
{
    const step_args *a = arg;
    if (a->v)
        a->adamw(a->p + begin, a->g + begin, a->m + begin, a->v + begin, end - begin, &a->k);
    else
        a->sgd(a->p + begin, a->g + begin, a->m ? a->m + begin : NULL, end - begin, &a->k);
}

static ridge_status ridge_optim_step_untimed(ridge_ctx *ctx, const ridge_optim_config *c, float *params,
                              const float *grads, float *state, size_t n, uint64_t step)
{
    ridge_status st = ridge_optim_config_check(c);
    if (st) return st;
    if (!ctx || !params || !grads || (ridge_optim_state_per_param(c) && !state))
        return ridge_error(RIDGE_EINVAL, "optim_step: NULL argument");
    const float lr = ridge_lr_at(c, step);
    step_args a = {.p = params, .g = grads};
    switch (ridge_ctx_isa(ctx)) {
    case RIDGE_ISA_AVX512:
        a.adamw = ridge_f32_adamw_ukernel__avx512, a.sgd = ridge_f32_sgd_ukernel__avx512;
        break;
    case RIDGE_ISA_AVX2:
        a.adamw = ridge_f32_adamw_ukernel__avx2, a.sgd = ridge_f32_sgd_ukernel__avx2;
        break;
    default: a.adamw = ridge_f32_adamw_ukernel__ref, a.sgd = ridge_f32_sgd_ukernel__ref;
    }
    if (c->kind == RIDGE_OPTIM_ADAMW) {
        a.m = state;
        a.v = state + n;
        a.k.lr_bc1 = (float)(lr / (1 - pow(c->beta1, (double)(step + 1))));
        a.k.inv_sqrt_bc2 = (float)(1 / sqrt(1 - pow(c->beta2, (double)(step + 1))));
        a.k.decay = 1.0f - lr * c->weight_decay;
        a.k.beta1 = c->beta1;
        a.k.beta2 = c->beta2;
        a.k.eps = c->eps;
    } else {
        a.m = c->momentum > 0 ? state : NULL;
        a.k.lr = lr;
        a.k.momentum = c->momentum;
        a.k.weight_decay = c->weight_decay;
    }
    /* below ~64k parameters the fork-join costs more than the update; blocks of 4096 floats
     * keep every thread's span vector-aligned, and the result does not depend on the split */
    if (n < 65536) step_range(&a, 0, n, 0);
    else ridge_parallel_for(ctx, n, 4096, step_range, &a);
    return RIDGE_OK;
}

/* ridge_optim_step, recorded by the profiler as "optim.step". */
ridge_status ridge_optim_step(ridge_ctx *ctx, const ridge_optim_config *c, float *params,
                              const float *grads, float *state, size_t n, uint64_t step)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_optim_step_untimed(ctx, c, params, grads, state, n, step);
    RIDGE_PROF_END(ctx, t0, "optim.step", "", (c && c->kind == RIDGE_OPTIM_ADAMW ? 12.0 : 4.0) * n, 4.0 * n * (c && c->kind == RIDGE_OPTIM_ADAMW ? 7 : 3), 4.0 * n * 4, "%zu params", n);
    return st;
}
