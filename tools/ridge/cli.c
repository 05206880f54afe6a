/* Common option parsing and context creation for the subcommands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_common_init(cli_common *c)
{
    memset(c, 0, sizeof *c);
    c->isa = RIDGE_ISA_AUTO;
}

int cli_int_arg(const char *opt, const char *value, long lo, long hi, long *out)
{
    if (!value) {
        fprintf(stderr, "ridge: %s needs a value\n", opt);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < lo || v > hi) {
        fprintf(stderr, "ridge: %s '%s': expected an integer in %ld..%ld\n", opt, value, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_common_parse(cli_common *c, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *next = *i + 1 < argc ? argv[*i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
        c->help = 1;
    } else if (!strcmp(a, "--json")) {
        c->json = 1;
    } else if (!strcmp(a, "--threads")) {
        long v;
        if (cli_int_arg(a, next, 1, 1024, &v)) return -1;
        c->threads = (int)v;
        ++*i;
    } else if (!strcmp(a, "--isa")) {
        if (!next) {
            fprintf(stderr, "ridge: --isa needs a value (ref, avx2, avx512)\n");
            return -1;
        }
        if (ridge_isa_parse(next, &c->isa)) {
            fprintf(stderr, "ridge: --isa: %s\n", ridge_last_error());
            return -1;
        }
        ++*i;
    } else {
        return 0;
    }
    ++*i;
    return 1;
}

ridge_ctx *cli_make_ctx(const cli_common *c)
{
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = c->threads;
    o.isa = c->isa;
    ridge_ctx *ctx;
    ridge_status st = ridge_ctx_create(&o, &ctx);
    if (st) {
        fprintf(stderr, "ridge: %s: %s\n", ridge_status_str(st), ridge_last_error());
        return NULL;
    }
    return ctx;
}

static int cli_opt_named(const char *names, const char *arg)
{
    size_t n = strlen(arg);
    for (const char *p = names; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, arg, n)) return 1;
        p += len + (bar != NULL);
    }
    return 0;
}

int cli_parse(const char *cmd, cli_common *c, const cli_opt *opts, int argc, char **argv)
{
    cli_common_init(c);
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const cli_opt *o = opts;
        while (o->names && !cli_opt_named(o->names, a)) o++;
        if (!o->names) return cli_unknown(cmd, a);
        if (o->flag) {
            *o->flag = 1;
            i++;
            continue;
        }
        if (!v) {
            fprintf(stderr, "ridge %s: %s needs a value\n", cmd, a);
            return CLI_USAGE;
        }
        if (o->str) *o->str = v;
        else if (cli_int_arg(a, v, o->lo, o->hi, o->num)) return CLI_USAGE;
        i += 2;
    }
    return CLI_OK;
}

int cli_unknown(const char *cmd, const char *arg)
{
    fprintf(stderr, "ridge %s: unknown option '%s' (see 'ridge %s --help')\n", cmd, arg, cmd);
    return CLI_USAGE;
}
