/* Shared by the MLP subcommands: option values, layer lists, input statistics. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlp-cli.h"

int mlp_str_arg(const char *opt, const char *value, const char **out)
{
    if (!value) {
        fprintf(stderr, "ridge: %s needs a value\n", opt);
        return -1;
    }
    *out = value;
    return 0;
}

int mlp_float_arg(const char *opt, const char *value, double lo, double hi, double *out)
{
    if (!value) {
        fprintf(stderr, "ridge: %s needs a value\n", opt);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "ridge: %s '%s': expected a number in %g..%g\n", opt, value, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int mlp_parse_layers(const char *s, ridge_mlp_config *c)
{
    int n = 0;
    for (const char *p = s;;) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > RIDGE_MLP_MAX_WIDTH ||
            n > RIDGE_MLP_MAX_LAYERS || (*end && *end != ',')) {
            fprintf(stderr, "ridge: --layers '%s': expected 2 to %d sizes in 1..%d separated by "
                    "commas, like 784,128,10\n", s, RIDGE_MLP_MAX_LAYERS + 1, RIDGE_MLP_MAX_WIDTH);
            return -1;
        }
        c->sizes[n++] = (size_t)v;
        if (!*end) break;
        p = end + 1;
    }
    if (n < 2) {
        fprintf(stderr, "ridge: --layers '%s': need at least an input and an output size\n", s);
        return -1;
    }
    c->nlayers = n - 1;
    return 0;
}

const char *mlp_format_layers(const ridge_mlp_config *c, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (int l = 0; l <= c->nlayers && used < cap; l++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%zu", l ? "-" : "", c->sizes[l]);
    return buf;
}

int mlp_same_layers(const ridge_mlp_config *a, const ridge_mlp_config *b)
{
    if (a->nlayers != b->nlayers) return 0;
    for (int l = 0; l <= a->nlayers; l++)
        if (a->sizes[l] != b->sizes[l]) return 0;
    return 1;
}

void mlp_input_stats(const uint8_t *px, size_t n, float *mean, float *std)
{
    uint64_t sum = 0, sumsq = 0;
    for (size_t i = 0; i < n; i++) sum += px[i], sumsq += (uint64_t)px[i] * px[i];
    double m = (double)sum / (double)n / 255.0;
    double var = (double)sumsq / (double)n / (255.0 * 255.0) - m * m;
    *mean = (float)m;
    *std = var > 1e-12 ? (float)sqrt(var) : 1.0f;
}

int mlp_check_data(const ridge_mlp *m, const char *source, size_t pixels, int classes)
{
    const ridge_mlp_config *c = &m->cfg;
    char buf[256];
    if (c->sizes[0] != pixels) {
        fprintf(stderr, "ridge: %s: the model takes %zu inputs (layers %s), the images have %zu "
                "pixels\n", source, c->sizes[0], mlp_format_layers(c, buf, sizeof buf), pixels);
        return -1;
    }
    if (c->sizes[c->nlayers] < (size_t)classes) {
        fprintf(stderr, "ridge: %s: the model has %zu outputs (layers %s), the labels need %d "
                "classes\n", source, c->sizes[c->nlayers], mlp_format_layers(c, buf, sizeof buf),
                classes);
        return -1;
    }
    return 0;
}

void eval_report_print(const eval_report *r, int json)
{
    const size_t C = r->classes;
    const uint64_t *conf = r->confusion;
    double acc = 100.0 * (double)r->right / (double)r->n;
    if (json) {
        printf("{\"model\": \"%s\", \"%s\": \"%s\", \"epochs\": %u, \"split\": \"%s\", "
               "\"images\": %zu, \"loss\": %.6f, \"accuracy\": %.4f, \"confusion\": [",
               r->model, r->desc_key, r->desc, r->epochs, r->split, r->n, r->loss, acc);
        for (size_t i = 0; i < C; i++) {
            printf("%s[", i ? ", " : "");
            for (size_t j = 0; j < C; j++)
                printf("%s%llu", j ? ", " : "", (unsigned long long)conf[i * C + j]);
            printf("]");
        }
        printf("]}\n");
        return;
    }
    printf("%s: %s %s, %u epochs\n%s split of %s: %zu images\nloss %.4f  accuracy %.2f%% "
           "(%zu/%zu)\n\nconfusion (rows: true label, columns: predicted)\n     ",
           r->model, r->kind, r->desc, r->epochs, r->split, r->data, r->n, r->loss, acc, r->right,
           r->n);
    for (size_t j = 0; j < C; j++) printf(" %5zu", j);
    printf("\n");
    for (size_t i = 0; i < C; i++) {
        printf("%5zu", i);
        for (size_t j = 0; j < C; j++) printf(" %5llu", (unsigned long long)conf[i * C + j]);
        printf("\n");
    }
}

int eval_args_parse(const char *cmd, cli_common *c, eval_args *a, int argc, char **argv)
{
    *a = (eval_args){NULL, MLP_DEFAULT_DATA, "t10k", 0};
    const cli_opt opts[] = {
        {"--model", .str = &a->model},
        {"--data", .str = &a->data},
        {"--split", .str = &a->split},
        {"--limit", .num = &a->limit, .lo = 1, .hi = 0x7fffffffL},
        {0}};
    if (cli_parse(cmd, c, opts, argc, argv)) return CLI_USAGE;
    if (!c->help && !a->model) {
        fprintf(stderr, "ridge %s: --model FILE is required\n", cmd);
        return CLI_USAGE;
    }
    return CLI_OK;
}
