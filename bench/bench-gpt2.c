/* ridge bench gpt2: GPT-2 training steps (forward, backward, AdamW) at llm.c's B=4, T=64.
 *
 * Builds a randomly initialized model (default d12 = GPT-2 124M), checks that its loss on a
 * random batch is finite and near ln(V) and falls after a step, runs one untimed step (the
 * first touches gradients and optimizer state), then times --steps steps and reports the
 * median and best ms/step, tokens/s, GFLOP/s (6 N B T plus attention, ridge_gpt2_train_flops)
 * and the share of the fp32 FMA peak for the context's ISA and threads, measured in the same
 * process just before (the roofline's probes). A second table breaks the steps down by part
 * (forward and backward), each matrix product with its own GFLOP/s.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

const char ridge_bench_gpt2_summary[] =
    "GPT-2 training step (d12 = 124M, B=4, T=64): ms/step, GFLOP/s, per-part breakdown";

/* The fp32 FMA ceiling of the context's ISA on its threads, measured now (the roofline's quick
 * probes, about a second) so that it sees the machine as the steps do; 0 if unavailable. */
static double fma_peak(ridge_ctx *ctx)
{
    ridge_roofline roof;
    ridge_roofline_point pt;
    if (ridge_roofline_measure(ctx, RIDGE_ROOFLINE_QUICK, &roof) ||
        ridge_roofline_at(&roof, ridge_ctx_threads(ctx), &pt))
        return 0;
    return pt.peak[ridge_roofline_peak_f32(ridge_ctx_isa(ctx))];
}

/* ---- the benchmark ------------------------------------------------------------------------ */

static int usage(void)
{
    fprintf(stderr, "ridge bench gpt2 [--depth L] [-b B] [-t T] [--steps N]\n");
    return BENCH_USAGE;
}

int ridge_bench_gpt2(const ridge_bench_opts *opts, int argc, char **argv)
{
    int depth = 12, B = 4, T = 64, steps = opts->quick ? 2 : 5;
    if (bench_help(argc, argv, "gpt2", ridge_bench_gpt2_summary,
                   "[--depth L] [-b B] [-t T] [--steps N]"))
        return 0;
    for (int i = 0; i < argc; i++) {
        int *dst = NULL;
        if (!strcmp(argv[i], "--depth")) dst = &depth;
        else if (!strcmp(argv[i], "-b")) dst = &B;
        else if (!strcmp(argv[i], "-t")) dst = &T;
        else if (!strcmp(argv[i], "--steps")) dst = &steps;
        if (!dst || i + 1 >= argc || (*dst = atoi(argv[++i])) <= 0) return usage();
    }
    ridge_ctx *ctx = bench_ctx(opts, opts->threads, "gpt2");
    if (!ctx) return 1;
    ridge_status st;
    ridge_gpt2_config cfg = ridge_gpt2_config_depth(depth);
    if (T > cfg.max_seq_len) T = cfg.max_seq_len;
    ridge_gpt2 *m = NULL;
    int rc = 1;
    int *tok = malloc(2 * (size_t)B * T * sizeof *tok);
    double *ms = malloc((size_t)steps * sizeof *ms);
    if (!tok || !ms || (st = ridge_gpt2_create(ctx, &cfg, &m))) {
        fprintf(stderr, "bench gpt2: %s\n", tok && ms ? ridge_last_error() : "out of memory");
        goto out;
    }
    size_t nparams;
    ridge_gpt2_params(m, &nparams);
    bench_note(opts, "gpt2 d%d: %zu parameters, B=%d T=%d, %d threads, %s", depth, nparams, B,
               T, ridge_ctx_threads(ctx), ridge_isa_name(ridge_ctx_isa(ctx)));
    ridge_gpt2_init_random(m, 42);
    ridge_mt19937 rng;
    ridge_mt19937_seed(&rng, 1);
    for (int i = 0; i < 2 * B * T; i++) tok[i] = (int)(ridge_mt19937_u32(&rng) % (uint32_t)cfg.vocab_size);
    const int *in = tok, *tg = tok + B * T;
    ridge_gpt2_adamw_opts o;
    ridge_gpt2_adamw_defaults(&o);

    /* check first: a sane loss that a step on the same batch lowers (also the warm-up step) */
    float l0 = 0, l1 = 0;
    if ((st = ridge_gpt2_forward(m, in, tg, B, T, &l0)) || (st = ridge_gpt2_zero_grad(m)) ||
        (st = ridge_gpt2_backward(m)) || (st = ridge_gpt2_update(m, &o, 1)) ||
        (st = ridge_gpt2_forward(m, in, tg, B, T, &l1))) {
        fprintf(stderr, "bench gpt2: %s\n", ridge_last_error());
        goto out;
    }
    if (!isfinite(l0) || fabs(l0 - log(cfg.vocab_size)) > 0.5 || !(l1 < l0)) {
        fprintf(stderr, "bench gpt2: wrong result: loss %f at init (ln V = %f), %f after a step\n",
                l0, log(cfg.vocab_size), l1);
        goto out;
    }
    double peak = fma_peak(ctx);

    ridge_gpt2_profile_enable(m, 1);
    for (int s = 0; s < steps; s++) {
        uint64_t t0 = ridge_time_ns();
        if ((st = ridge_gpt2_forward(m, in, tg, B, T, NULL)) || (st = ridge_gpt2_zero_grad(m)) ||
            (st = ridge_gpt2_backward(m)) || (st = ridge_gpt2_update(m, &o, s + 2))) {
            fprintf(stderr, "bench gpt2: %s\n", ridge_last_error());
            goto out;
        }
        ms[s] = (double)(ridge_time_ns() - t0) * 1e-6;
    }
    bench_stats sm = bench_summarize(ms, (size_t)steps);
    double flops = ridge_gpt2_train_flops(&cfg, B, T);
    char name[32];
    snprintf(name, sizeof name, "gpt2-d%d", depth);
    static const bench_col cols[] = {
        {"model", BENCH_STR},    {"B", BENCH_INT},         {"T", BENCH_INT},
        {"threads", BENCH_INT},  {"ms/step", BENCH_F1},    {"best ms", BENCH_F1},
        {"tokens/s", BENCH_INT}, {"GFLOP/s", BENCH_F1},    {"peak", BENCH_F1},
        {"% peak", BENCH_F1},
    };
    bench_table t;
    bench_table_begin(&t, opts, "gpt2 training step", cols, 10);
    double gf = flops / sm.median * 1e-6;
    bench_table_row(&t, (bench_val[]){{name, 0}, {NULL, B}, {NULL, T},
                                      {NULL, ridge_ctx_threads(ctx)}, {NULL, sm.median},
                                      {NULL, sm.best}, {NULL, B * T / sm.median * 1e3},
                                      {NULL, gf}, {NULL, peak ? peak : NAN},
                                      {NULL, peak ? 100 * gf / peak : NAN}});
    bench_table_end(&t);

    double fwd[RIDGE_GPT2_NUM_PARTS], bwd[RIDGE_GPT2_NUM_PARTS], total = 0;
    ridge_gpt2_profile_get(m, fwd, bwd);
    for (int k = 0; k < RIDGE_GPT2_NUM_PARTS; k++) total += fwd[k] + bwd[k];
    static const bench_col pcols[] = {
        {"part", BENCH_STR},        {"fwd ms", BENCH_F2},       {"bwd ms", BENCH_F2},
        {"% of step", BENCH_F1},    {"fwd GFLOP/s", BENCH_F1},  {"bwd GFLOP/s", BENCH_F1},
    };
    bench_table_begin(&t, opts, "gpt2 step by part (mean per step)", pcols, 6);
    for (int k = 0; k < RIDGE_GPT2_NUM_PARTS; k++) {
        double f = ridge_gpt2_part_flops(&cfg, k, B, T);
        double fm = fwd[k] / steps * 1e3, bm = bwd[k] / steps * 1e3;
        bench_table_row(&t, (bench_val[]){{ridge_gpt2_part_name(k), 0}, {NULL, fm}, {NULL, bm},
                                          {NULL, 100 * (fwd[k] + bwd[k]) / total},
                                          {NULL, f && fm ? f / fm * 1e-6 : NAN},
                                          {NULL, f && bm ? 2 * f / bm * 1e-6 : NAN}});
    }
    bench_table_end(&t);
    rc = 0;
out:
    ridge_gpt2_destroy(m);
    free(tok);
    free(ms);
    ridge_ctx_destroy(ctx);
    return rc;
}
