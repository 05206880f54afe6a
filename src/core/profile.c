/* The profiler's record buffer: a flat array filled by the calling thread (the pool appends
 * its workers' spans after the join, so no record is written concurrently). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/internal.h"

ridge_status ridge_profile_start(ridge_ctx *ctx, size_t max_records)
{
    if (!ctx) return ridge_error(RIDGE_EINVAL, "profile_start: ctx is NULL");
    if (max_records == 0 || max_records > ((size_t)1 << 28))
        return ridge_error(RIDGE_EINVAL, "profile_start: max_records = %zu, expected 1..2^28",
                           max_records);
    ridge_profile *p = &ctx->prof;
    if (max_records != p->cap) {
        ridge_prof_record *r = ridge_calloc(max_records, sizeof *r);
        if (!r)
            return ridge_error(RIDGE_ENOMEM, "profile_start: cannot hold %zu records",
                               max_records);
        ridge_free(p->recs);
        p->recs = r;
        p->cap = max_records;
    }
    p->n = p->dropped = 0;
    p->depth = 0;
    p->on = 1;
    ridge_pool_set_profile(ctx->pool, p);
    return RIDGE_OK;
}

void ridge_profile_stop(ridge_ctx *ctx)
{
    if (!ctx) return;
    ctx->prof.on = 0;
    ridge_pool_set_profile(ctx->pool, NULL);
}

ridge_status ridge_profile_resume(ridge_ctx *ctx)
{
    if (!ctx || !ctx->prof.recs)
        return ridge_error(RIDGE_EINVAL, "profile_resume: profiling was never started");
    ctx->prof.on = 1;
    ctx->prof.depth = 0;
    ridge_pool_set_profile(ctx->pool, &ctx->prof);
    return RIDGE_OK;
}

size_t ridge_profile_records(const ridge_ctx *ctx, const ridge_prof_record **out)
{
    *out = ctx->prof.recs;
    return ctx->prof.n;
}

size_t ridge_profile_dropped(const ridge_ctx *ctx)
{
    return ctx->prof.dropped;
}

uint64_t ridge_profile_enter(ridge_profile *p)
{
    p->depth++;
    return ridge_time_ns();
}

void ridge_profile_add(ridge_profile *p, const char *op, const char *algo, double flops,
                       double bytes, double working_set, uint64_t start_ns, uint64_t end_ns,
                       int thread, const char *shape_fmt, ...)
{
    if (p->n >= p->cap) {
        p->dropped++;
        return;
    }
    ridge_prof_record *r = &p->recs[p->n++];
    r->op = op;
    r->algo = algo ? algo : "";
    r->flops = flops;
    r->bytes = bytes;
    r->working_set = working_set;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    r->thread = thread;
    r->depth = p->depth;
    va_list ap;
    va_start(ap, shape_fmt);
    vsnprintf(r->shape, sizeof r->shape, shape_fmt, ap);
    va_end(ap);
}
