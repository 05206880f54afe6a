/* ridge conv: how ridge would run one 2-D convolution, and why. Builds the descriptor from the
 * options, creates a plan on random weights (AUTO, a forced algorithm, or tuned), and prints
 * ridge_conv2d_plan_explain: every algorithm considered with the cost model's prediction, the
 * measured time when tuned, the workspace and weight bytes, whether it applies (and why not),
 * and the reason for the pick. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "perf/json.h"

const char cmd_conv_summary[] = "explain (and with --tune, time) ridge's algorithm choice for a convolution";

static void help(void)
{
    printf("usage: ridge conv [options]\n\n"
           "Shows how ridge would run one 2-D convolution, without writing C: every algorithm\n"
           "it considers (direct, im2col, pointwise, depthwise, Winograd F(2,3) and F(4,3),\n"
           "FFT) with the cost model's predicted time on this machine's measured roof (`ridge\n"
           "roofline`), the workspace and packed-weight bytes, whether it applies and why not,\n"
           "and the reason for the pick. With --tune each applicable algorithm is also timed\n"
           "here (median of 5 calls) and the fastest kept; the times are saved per machine and\n"
           "reused, as RIDGE_CONV_TUNE=1 does for the models' layers.\n\n"
           "shape (default: ResNet's 3x3 64 -> 64 layer on 56 x 56, batch 1):\n"
           "  --n N              batch (default 1)\n"
           "  --c C              input channels (default 64)\n"
           "  --hw H[xW]         input height and width (default 56)\n"
           "  --k K              output channels (default 64)\n"
           "  --kernel R[xS]     kernel height and width (default 3)\n"
           "  --stride S[xS]     (default 1)\n"
           "  --dilation D[xD]   (default 1)\n"
           "  --pad P|T,B,L,R    zero padding on every side, or top,bottom,left,right\n"
           "                     (default: dilation * (kernel - 1) / 2 on each side)\n"
           "  --groups G         (default 1; G = C = K is depthwise)\n"
           "  --layout L         nhwc, nchw or nchw16c (default nhwc)\n\n"
           "choice:\n"
           "  --algo A           force one: direct, im2col, pointwise, depthwise,\n"
           "                     winograd-2x3, winograd-4x3, fft (default auto)\n"
           "  --tune             time the candidates (or reuse this machine's saved times)\n"
           "  --retune           time them again and replace the saved times\n\n"
           "options:\n" CLI_COMMON_HELP "\n"
           "examples:\n"
           "  ridge conv --c 3 --k 64 --hw 224 --kernel 7 --stride 2     ResNet's first layer\n"
           "  ridge conv --c 32 --k 32 --groups 32 --hw 112              a depthwise layer\n"
           "  ridge conv --kernel 9 --tune                               FFT against the rest\n");
}

/* "A" or "AxB" with both in [lo, hi]; prints a message naming opt and returns -1 if not. */
static int parse_pair(const char *opt, const char *v, long lo, long hi, int64_t *a, int64_t *b)
{
    char *end;
    long p = strtol(v, &end, 10), q = p;
    int ok = end != v && p >= lo && p <= hi;
    if (ok && *end == 'x') {
        const char *s = end + 1;
        q = strtol(s, &end, 10);
        ok = end != s && q >= lo && q <= hi;
    }
    if (!ok || *end) {
        fprintf(stderr, "ridge conv: %s '%s': expected N or NxM, each in %ld..%ld\n", opt, v, lo,
                hi);
        return -1;
    }
    *a = p, *b = q;
    return 0;
}

/* "P" or "T,B,L,R" into d's padding. */
static int parse_pad(const char *v, ridge_conv2d_desc *d)
{
    long p[4];
    char buf[96];
    if (strlen(v) >= sizeof buf) return cli_int_arg("--pad", v, 0, 1 << 20, p);
    strcpy(buf, v);
    int n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (n == 4 || cli_int_arg("--pad", tok, 0, 1 << 20, &p[n])) {
            if (n == 4) fprintf(stderr, "ridge conv: --pad '%s': one value or four\n", v);
            return -1;
        }
        n++;
    }
    if (n != 1 && n != 4) {
        fprintf(stderr, "ridge conv: --pad '%s': one value or four (top,bottom,left,right)\n", v);
        return -1;
    }
    if (n == 1) p[1] = p[2] = p[3] = p[0];
    d->pad_top = p[0], d->pad_bottom = p[1], d->pad_left = p[2], d->pad_right = p[3];
    return 0;
}

static void print_json(const ridge_conv2d_desc *d, const ridge_conv2d_plan *plan, int tuned)
{
    printf("{\n  \"desc\": {\"n\": %lld, \"c_in\": %lld, \"h\": %lld, \"w\": %lld, "
           "\"c_out\": %lld, \"r\": %lld, \"s\": %lld, \"stride\": [%lld, %lld], "
           "\"dilation\": [%lld, %lld], \"pad\": [%lld, %lld, %lld, %lld], \"groups\": %lld, "
           "\"layout\": \"%s\"},\n",
           (long long)d->n, (long long)d->c_in, (long long)d->h, (long long)d->w,
           (long long)d->c_out, (long long)d->r, (long long)d->s, (long long)d->stride_h,
           (long long)d->stride_w, (long long)d->dil_h, (long long)d->dil_w,
           (long long)d->pad_top, (long long)d->pad_bottom, (long long)d->pad_left,
           (long long)d->pad_right, (long long)d->groups, ridge_layout_name(d->layout));
    printf("  \"pick\": \"%s\",\n  \"tuned\": %s,\n  \"candidates\": [\n",
           ridge_conv_algo_name(ridge_conv2d_plan_algo(plan)), tuned ? "true" : "false");
    const ridge_conv2d_candidate *c = ridge_conv2d_plan_candidates(plan);
    for (int i = 0; i < RIDGE_CONV_ALGO_COUNT; i++) {
        printf("    {\"algo\": \"%s\", \"applies\": %s", ridge_conv_algo_name(c[i].algo),
               c[i].applies ? "true" : "false");
        if (c[i].applies)
            printf(", \"predicted_ms\": %.6g, \"measured_ms\": %.6g, \"workspace_bytes\": %zu, "
                   "\"weight_bytes\": %zu",
                   1e3 * c[i].predicted_s, 1e3 * c[i].measured_s, c[i].workspace,
                   c[i].weight_bytes);
        printf(", \"why\": ");
        ridge_json_write_string(stdout, c[i].why);
        printf("}%s\n", i + 1 < RIDGE_CONV_ALGO_COUNT ? "," : "");
    }
    printf("  ],\n  \"explain\": ");
    ridge_json_write_string(stdout, ridge_conv2d_plan_explain(plan));
    printf("\n}\n");
}

int cmd_conv(int argc, char **argv)
{
    cli_common c;
    long n = 1, ci = 64, k = 64, groups = 1;
    const char *hw = "56", *kernel = "3", *stride = "1", *dil = "1", *pad = NULL;
    const char *layout = "nhwc", *algo = "auto";
    int tune = 0, retune = 0;
    const long big = 1L << 20;
    const cli_opt opts[] = {
        {"--n", .num = &n, .lo = 1, .hi = big},
        {"--c", .num = &ci, .lo = 1, .hi = big},
        {"--k", .num = &k, .lo = 1, .hi = big},
        {"--groups", .num = &groups, .lo = 1, .hi = big},
        {"--hw", .str = &hw},
        {"--kernel", .str = &kernel},
        {"--stride", .str = &stride},
        {"--dilation", .str = &dil},
        {"--pad", .str = &pad},
        {"--layout", .str = &layout},
        {"--algo", .str = &algo},
        {"--tune", .flag = &tune},
        {"--retune", .flag = &retune},
        {0}};
    if (cli_parse("conv", &c, opts, argc, argv)) return CLI_USAGE;
    if (c.help) {
        help();
        return CLI_OK;
    }
    ridge_conv2d_desc d = {.n = n, .c_in = ci, .c_out = k, .groups = groups};
    ridge_conv2d_plan_options o;
    ridge_conv2d_plan_options_init(&o);
    o.tune = retune ? 2 : tune;
    if (parse_pair("--hw", hw, 1, big, &d.h, &d.w) ||
        parse_pair("--kernel", kernel, 1, 4096, &d.r, &d.s) ||
        parse_pair("--stride", stride, 1, 4096, &d.stride_h, &d.stride_w) ||
        parse_pair("--dilation", dil, 1, 4096, &d.dil_h, &d.dil_w))
        return CLI_USAGE;
    if (pad) {
        if (parse_pad(pad, &d)) return CLI_USAGE;
    } else {
        d.pad_top = d.pad_bottom = d.dil_h * (d.r - 1) / 2;
        d.pad_left = d.pad_right = d.dil_w * (d.s - 1) / 2;
    }
    if (ridge_layout_parse(layout, &d.layout) || ridge_conv_algo_parse(algo, &o.algo)) {
        fprintf(stderr, "ridge conv: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    int64_t oh, ow;
    if (ridge_conv2d_desc_check(&d, &oh, &ow)) {
        fprintf(stderr, "ridge conv: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    /* random weights: the plan packs them, tuning runs them */
    const double nw = (double)d.c_out * (double)(d.c_in / d.groups) * (double)(d.r * d.s);
    if (nw > (double)(1L << 30)) {
        fprintf(stderr, "ridge conv: the weights would take %.1f GB\n", 4 * nw / 1e9);
        return CLI_FAIL;
    }
    float *w = malloc((size_t)nw * sizeof(float));
    if (!w) {
        fprintf(stderr, "ridge conv: out of memory for %.0f weights\n", nw);
        return CLI_FAIL;
    }
    uint32_t seed = 12345;
    for (size_t i = 0; i < (size_t)nw; i++) {
        seed = seed * 1664525u + 1013904223u;
        w[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 0.2f;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) {
        free(w);
        return CLI_FAIL;
    }
    if (o.tune && !c.json)
        fprintf(stderr, "ridge conv: timing the candidates on %d thread%s...\n",
                ridge_ctx_threads(ctx), ridge_ctx_threads(ctx) == 1 ? "" : "s");
    ridge_conv2d_plan *plan = NULL;
    int rc = CLI_OK;
    ridge_status st = ridge_conv2d_plan_create(ctx, &d, w, &o, &plan);
    if (st) {
        /* a forced algorithm that cannot run this shape is a bad request, not a failure */
        fprintf(stderr, "ridge conv: %s\n", ridge_last_error());
        rc = st == RIDGE_EINVAL || st == RIDGE_EUNSUPPORTED ? CLI_USAGE : CLI_FAIL;
    } else if (c.json) {
        print_json(&d, plan, o.tune != 0);
    } else {
        fputs(ridge_conv2d_plan_explain(plan), stdout);
    }
    ridge_conv2d_plan_destroy(plan);
    ridge_ctx_destroy(ctx);
    free(w);
    return rc;
}
