/* The context: options from the caller or the environment, the chosen ISA, the pool, the
 * scratch arena. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

#define DEFAULT_SPIN_US 50
#define MAX_THREADS 1024

void ridge_ctx_options_init(ridge_ctx_options *o)
{
    o->threads = 0;
    o->isa = RIDGE_ISA_AUTO;
    o->spin_us = -1;
    o->verbose = -1;
    o->conv_tune = -1;
}

/* Reads a non-negative integer environment variable; *out untouched if unset or empty. */
static ridge_status env_int(const char *name, long max, int *out)
{
    const char *s = getenv(name);
    if (!s || !*s) return RIDGE_OK;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > max)
        return ridge_error(RIDGE_EINVAL, "%s='%s': expected an integer in 0..%ld", name, s, max);
    *out = (int)v;
    return RIDGE_OK;
}

ridge_status ridge_ctx_create(const ridge_ctx_options *opts, ridge_ctx **out)
{
    if (!out) return ridge_error(RIDGE_EINVAL, "ctx_create: out is NULL");
    *out = NULL;
    ridge_ctx_options o;
    if (opts) o = *opts;
    else ridge_ctx_options_init(&o);
    const ridge_cpu *cpu = ridge_cpu_get();
    ridge_status st;

    if (o.threads < 0 || o.threads > MAX_THREADS)
        return ridge_error(RIDGE_EINVAL, "ctx_create: threads = %d, expected 0..%d", o.threads,
                           MAX_THREADS);
    if (o.threads == 0) {
        if ((st = env_int("RIDGE_NUM_THREADS", MAX_THREADS, &o.threads))) return st;
        if (o.threads == 0) o.threads = cpu->logical_cpus;
    }
    if (o.spin_us < 0) {
        o.spin_us = DEFAULT_SPIN_US;
        if ((st = env_int("RIDGE_SPIN_US", 10000000, &o.spin_us))) return st;
    }
    if (o.verbose < 0) {
        o.verbose = 0;
        if ((st = env_int("RIDGE_VERBOSE", 9, &o.verbose))) return st;
    }
    if (o.conv_tune < 0) {
        o.conv_tune = 0;
        if ((st = env_int("RIDGE_CONV_TUNE", 1, &o.conv_tune))) return st;
    }
    if (o.conv_tune > 1)
        return ridge_error(RIDGE_EINVAL, "ctx_create: conv_tune = %d, expected -1, 0 or 1",
                           o.conv_tune);
    if (o.isa == RIDGE_ISA_AUTO) {
        const char *s = getenv("RIDGE_ISA");
        if (s && *s && (st = ridge_isa_parse(s, &o.isa)))
            return ridge_error(st, "RIDGE_ISA='%s': expected ref, avx2, avx512 or auto", s);
    }
    if (o.isa == RIDGE_ISA_AUTO) o.isa = ridge_cpu_best_isa(cpu);
    if (o.isa < RIDGE_ISA_REF || o.isa > RIDGE_ISA_AVX512)
        return ridge_error(RIDGE_EINVAL, "ctx_create: isa = %d is not a ridge_isa", (int)o.isa);
    if (!ridge_cpu_supports(cpu, o.isa))
        return ridge_error(RIDGE_EUNSUPPORTED, "ctx_create: this CPU (%s) does not support %s",
                           cpu->brand, ridge_isa_name(o.isa));

    ridge_ctx *ctx = ridge_calloc(1, sizeof *ctx);
    if (!ctx) return ridge_error(RIDGE_ENOMEM, "ctx_create: out of memory");
    ctx->cpu = cpu;
    ctx->isa = o.isa;
    ctx->threads = o.threads;
    ctx->spin_us = o.spin_us;
    ctx->verbose = o.verbose;
    ctx->conv_tune = o.conv_tune;
    if ((st = ridge_pool_create(o.threads, o.spin_us, &ctx->pool))) {
        ridge_free(ctx);
        return st;
    }
    if (ctx->verbose)
        fprintf(stderr, "ridge: %s, isa %s, %d thread%s, spin %d us\n", cpu->brand,
                ridge_isa_name(ctx->isa), ctx->threads, ctx->threads == 1 ? "" : "s",
                ctx->spin_us);
    *out = ctx;
    return RIDGE_OK;
}

void ridge_ctx_destroy(ridge_ctx *ctx)
{
    if (!ctx) return;
    ridge_pool_destroy(ctx->pool);
    ridge_free(ctx->scratch);
    ridge_free(ctx->prof.recs);
    ridge_free(ctx);
}

int ridge_ctx_threads(const ridge_ctx *ctx) { return ctx->threads; }
ridge_isa ridge_ctx_isa(const ridge_ctx *ctx) { return ctx->isa; }
int ridge_ctx_spin_us(const ridge_ctx *ctx) { return ctx->spin_us; }
const ridge_cpu *ridge_ctx_cpu(const ridge_ctx *ctx) { return ctx->cpu; }

ridge_status ridge_ctx_scratch(ridge_ctx *ctx, size_t bytes, void **out)
{
    *out = NULL;
    if (bytes == 0) bytes = 1;
    if (bytes <= ctx->scratch_bytes && ctx->scratch) {
        *out = ctx->scratch;
        return RIDGE_OK;
    }
    /* grow geometrically so a sequence of slightly larger requests does not reallocate each time */
    size_t want = RIDGE_MAX(bytes, ctx->scratch_bytes + ctx->scratch_bytes / 2);
    void *p = ridge_malloc(want);
    if (!p) return ridge_error(RIDGE_ENOMEM, "scratch: cannot allocate %zu bytes", want);
    ridge_free(ctx->scratch);
    ctx->scratch = p;
    ctx->scratch_bytes = want;
    *out = p;
    return RIDGE_OK;
}
