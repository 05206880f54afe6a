/* ridge profile train <model> ...: runs the trainer with profiling on for a few steps, then
 * prints, per operator, where the time went and how far each operator is from the roof.
 *
 * The trainers call cli_profile_begin/cli_profile_step (declared in cli.h); this file owns
 * the state behind them. Steps 1..warmup run unrecorded (first-touch page faults, packing
 * buffers, caches), then `steps` steps are recorded and timed. */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "perf/svg.h"
#include "ridge/profile.h"

const char cmd_profile_summary[] =
    "where the time goes in a training step, per operator, against the roof";

static struct {
    int active, finished, json, per_layer, begin_mode, rc;
    long steps, warmup, count, max_records;
    const char *trace, *svg, *model;
    uint64_t t_begin, t_last;
    double wall;
} P = {.steps = 5, .warmup = 1, .max_records = 1 << 20};

static void help(void)
{
    printf("usage: ridge profile train <model> [profile options] [train options]\n\n"
           "Trains <model> (mlp, cnn, gpt2: the same options as `ridge train <model>`) with\n"
           "profiling on, for --warmup unrecorded steps and then --steps recorded ones, and\n"
           "prints per operator (summed over layers and steps): calls, ms per step, %% of the\n"
           "step, GFLOP/s, GB/s, FLOP/byte, the memory level of its working set, %% of its\n"
           "roofline bound, the wall it is against (compute, memory, or neither: overhead,\n"
           "imbalance, a shape off the fast path), and the Amdahl line: the time per step it\n"
           "would save at %.0f%% of its bound, largest first. 'other' is the time between\n"
           "recorded operators. The roof is this machine's, measured once and cached\n"
           "(`ridge roofline`).\n\nprofile options:\n"
           "  --steps N          recorded steps (default 5)\n"
           "  --warmup N         unrecorded steps first (default 1, at least 1)\n"
           "  --per-layer        one row per operator and shape instead of per operator\n"
           "  --trace FILE       write a Chrome/Perfetto trace (open in ui.perfetto.dev)\n"
           "  --svg FILE         plot the operators on the roofline chart\n"
           "  --json             the table as JSON on stdout\n"
           "  --max-records N    record buffer size (default 1048576)\n"
           "  --threads N, --isa ISA   as for train\n\n"
           "example: ridge profile train mlp --steps 20 --trace mlp.json\n",
           RIDGE_PROFILE_TARGET * 100);
}

static void print_table(const ridge_profile_summary *s, ridge_ctx *ctx, int have_roof)
{
    double per = 1e3 / s->steps; /* seconds in total -> ms per step */
    if (P.json) {
        printf("{\"model\": \"%s\", \"steps\": %d, \"threads\": %d, \"isa\": \"%s\", "
               "\"step_ms\": %.4f, \"other_ms\": %.4f, \"pool_wait_ms\": %.4f, \"dropped\": %zu, "
               "\"rows\": [",
               P.model, s->steps, s->threads, ridge_isa_name(ridge_ctx_isa(ctx)),
               s->step_seconds * 1e3, s->other_seconds * per, s->pool_wait_seconds * per,
               s->dropped);
        for (size_t i = 0; i < s->nrows; i++) {
            const ridge_profile_row *r = &s->rows[i];
            printf("%s\n  {\"op\": \"%s\", \"shape\": \"%s\", \"algo\": \"%s\", \"calls\": %zu, "
                   "\"ms_per_step\": %.4f, \"share\": %.5f, \"gflops\": %.3f, \"gbs\": %.3f, "
                   "\"intensity\": %.4f, \"level\": \"%s\", \"fraction\": %.4f, \"wall\": \"%s\", "
                   "\"saved_ms_per_step\": %.4f}",
                   i ? "," : "", r->op, r->shape, r->algo, r->calls, r->seconds * per, r->share,
                   r->gflops, r->gbs, r->intensity, r->level, r->fraction,
                   ridge_profile_wall_name(r->wall), r->saved_seconds * per);
        }
        printf("\n]}\n");
        return;
    }
    printf("\nprofile: %s, %d recorded steps after %ld warm-up, %d thread%s, %s kernels\n"
           "step %.3f ms; operators cover %.1f%%, other %.1f%%\n\n",
           P.model, s->steps, P.warmup, s->threads, s->threads == 1 ? "" : "s",
           ridge_isa_name(ridge_ctx_isa(ctx)), s->step_seconds * 1e3,
           100 * s->covered_seconds / s->wall_seconds, 100 * s->other_seconds / s->wall_seconds);
    int w = 10;
    for (size_t i = 0; i < s->nrows; i++) {
        int l = (int)strlen(s->rows[i].op) + (P.per_layer ? (int)strlen(s->rows[i].shape) + 1 : 0);
        if (l > w) w = l;
    }
    printf("%-*s %7s %9s %6s %8s %7s %7s %5s %6s %-8s %9s\n", w, "operator", "calls", "ms/step",
           "%step", "GFLOP/s", "GB/s", "FLOP/B", "level", "%roof", "wall", "save ms");
    for (size_t i = 0; i < s->nrows; i++) {
        const ridge_profile_row *r = &s->rows[i];
        char name[128];
        snprintf(name, sizeof name, "%s%s%s", r->op, P.per_layer && *r->shape ? " " : "",
                 P.per_layer ? r->shape : "");
        if (!strcmp(r->op, "other")) {
            printf("%-*s %7s %9.3f %5.1f%%\n", w, name, "", r->seconds * per, 100 * r->share);
            continue;
        }
        printf("%-*s %7zu %9.3f %5.1f%% %8.2f %7.2f %7.2f %5s ", w, name, r->calls / s->steps,
               r->seconds * per, 100 * r->share, r->gflops, r->gbs, r->intensity, r->level);
        if (have_roof && (r->flops > 0 || r->bytes > 0))
            printf("%5.1f%% %-8s %9.3f\n", 100 * r->fraction, ridge_profile_wall_name(r->wall),
                   r->saved_seconds * per);
        else
            printf("%6s %-8s %9s\n", "-", "-", "-");
    }
    printf("\npool: the caller waited %.3f ms per step for the slowest thread (%.1f%% of the "
           "step, inside the operators above): imbalance and synchronization\n",
           s->pool_wait_seconds * per, 100 * s->pool_wait_seconds / s->wall_seconds);
    if (s->dropped)
        printf("warning: %zu records did not fit (--max-records); the table undercounts\n",
               s->dropped);
    if (s->nrows > 1 && s->rows[0].saved_seconds > 0)
        printf("next: %s (%s-bound side, at %.0f%% of its roof) would save %.3f ms per step "
               "(%.1f%%) at %.0f%% of its roof\n",
               s->rows[0].op, ridge_profile_wall_name(s->rows[0].wall), 100 * s->rows[0].fraction,
               s->rows[0].saved_seconds * per, 100 * s->rows[0].saved_seconds / s->wall_seconds,
               RIDGE_PROFILE_TARGET * 100);
}

static int write_svg(const ridge_profile_summary *s, const ridge_roofline *roof, int threads)
{
    FILE *f = fopen(P.svg, "w");
    if (!f) {
        fprintf(stderr, "ridge profile: cannot write %s\n", P.svg);
        return -1;
    }
    ridge_roofline_mark marks[64];
    char labels[64][96];
    size_t n = 0;
    for (size_t i = 0; i < s->nrows && n < 64; i++) {
        const ridge_profile_row *r = &s->rows[i];
        if (!(r->flops > 0 && r->bytes > 0 && r->seconds > 0)) continue;
        snprintf(labels[n], sizeof labels[n], "%s %.0f%%", r->op, 100 * r->share);
        marks[n] = (ridge_roofline_mark){labels[n], r->intensity, r->gflops};
        n++;
    }
    ridge_status st = ridge_roofline_svg(roof, threads, marks, n, f);
    if (fclose(f) || st) {
        fprintf(stderr, "ridge profile: %s: %s\n", P.svg, ridge_last_error());
        return -1;
    }
    fprintf(stderr, "ridge profile: wrote %s\n", P.svg);
    return 0;
}

static void report(ridge_ctx *ctx)
{
    ridge_roofline roof;
    int have_roof = 1;
    if (ridge_roofline_for_ctx(ctx, RIDGE_ROOFLINE_QUICK, &roof)) {
        fprintf(stderr, "ridge profile: no roofline (%s); rates only\n", ridge_last_error());
        have_roof = 0;
    }
    ridge_profile_summary s;
    if (ridge_profile_summarize(ctx, have_roof ? &roof : NULL, P.wall, (int)P.steps,
                                P.per_layer, &s)) {
        fprintf(stderr, "ridge profile: %s\n", ridge_last_error());
        P.rc = CLI_FAIL;
        return;
    }
    print_table(&s, ctx, have_roof);
    if (P.svg && (!have_roof || write_svg(&s, &roof, ridge_ctx_threads(ctx)))) P.rc = CLI_FAIL;
    ridge_profile_summary_free(&s);
    if (P.trace) {
        FILE *f = fopen(P.trace, "w");
        if (!f || ridge_profile_write_trace(ctx, f) || fclose(f)) {
            fprintf(stderr, "ridge profile: cannot write %s\n", P.trace);
            P.rc = CLI_FAIL;
        } else {
            fprintf(stderr, "ridge profile: wrote %s\n", P.trace);
        }
    }
}

void cli_profile_begin(ridge_ctx *ctx)
{
    if (!P.active || P.finished) return;
    P.begin_mode = 1;
    if (P.count < P.warmup) return;
    P.t_begin = ridge_time_ns();
    if (ridge_profile_resume(ctx)) P.rc = CLI_FAIL;
}

int cli_profile_step(ridge_ctx *ctx)
{
    if (!P.active || P.finished) return P.finished;
    uint64_t now = ridge_time_ns();
    P.count++;
    if (P.count == P.warmup) {
        /* the window opens: clear, then record until the next step boundary */
        if (ridge_profile_start(ctx, (size_t)P.max_records)) {
            fprintf(stderr, "ridge profile: %s\n", ridge_last_error());
            P.rc = CLI_FAIL;
            P.finished = 1;
            return 1;
        }
        if (P.begin_mode) ridge_profile_stop(ctx); /* cli_profile_begin resumes it */
        P.t_last = ridge_time_ns(); /* after the start: allocating the buffer is not a step */
        return 0;
    }
    if (P.count < P.warmup) return 0;
    P.wall += (double)(now - (P.begin_mode ? P.t_begin : P.t_last)) * 1e-9;
    P.t_last = now;
    if (P.begin_mode) ridge_profile_stop(ctx);
    if (P.count < P.warmup + P.steps) return 0;
    ridge_profile_stop(ctx);
    P.finished = 1;
    report(ctx);
    return 1;
}

int cli_profile_finished(void)
{
    return P.finished;
}

int cmd_profile(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        help();
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (strcmp(argv[1], "train")) {
        fprintf(stderr, "ridge profile: unknown target '%s' (expected: train; see --help)\n",
                argv[1]);
        return CLI_USAGE;
    }
    if (argc < 3 || argv[2][0] == '-') {
        fprintf(stderr, "ridge profile train: which model? (mlp, cnn, gpt2)\n");
        return CLI_USAGE;
    }
    /* profile options out, everything else on to the trainer: argv = train <model> ... */
    char *rest[256];
    int nrest = 0;
    rest[nrest++] = "train";
    rest[nrest++] = argv[2];
    P.model = argv[2];
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        if (!strcmp(a, "--steps") || !strcmp(a, "--warmup") || !strcmp(a, "--max-records")) {
            if (cli_int_arg(a, v, 1, 1 << 28, &x)) return CLI_USAGE;
            if (!strcmp(a, "--steps")) P.steps = x;
            else if (!strcmp(a, "--warmup")) P.warmup = x;
            else P.max_records = x;
            i++;
        } else if (!strcmp(a, "--trace") || !strcmp(a, "--svg")) {
            if (!v) {
                fprintf(stderr, "ridge profile: %s needs a file name\n", a);
                return CLI_USAGE;
            }
            *(!strcmp(a, "--trace") ? &P.trace : &P.svg) = v;
            i++;
        } else if (!strcmp(a, "--per-layer")) {
            P.per_layer = 1;
        } else if (!strcmp(a, "--json")) {
            P.json = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help();
            return CLI_OK;
        } else if (nrest < 255) {
            rest[nrest++] = argv[i];
        }
    }
    rest[nrest] = NULL;
    P.active = 1;
    int rc = cmd_train(nrest, rest);
    if (!P.finished) {
        fprintf(stderr, "ridge profile: training ended after %ld steps, before %ld warm-up + "
                        "%ld recorded steps completed (give it more data or steps)\n",
                P.count, P.warmup, P.steps);
        return rc ? rc : CLI_FAIL;
    }
    return rc ? rc : P.rc;
}
