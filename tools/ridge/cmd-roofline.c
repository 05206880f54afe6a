/* ridge roofline: measures (or loads the cached) roof of this machine and prints it as a
 * table, as JSON, or as an SVG chart with benchmark results placed on it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "perf/json.h"
#include "perf/svg.h"

const char cmd_roofline_summary[] = "measure this machine's compute peaks and bandwidths";

#define MAX_POINT_FILES 16

static void help(void)
{
    printf("usage: ridge roofline [options]\n\n"
           "Measures the machine's roof at 1..N threads: the fp32 FMA peak of each ISA (scalar,\n"
           "AVX2, AVX-512), the int8 (VNNI) and bf16 dot-product peaks, the read bandwidth of\n"
           "L1, L2, L3 and DRAM, and STREAM copy and triad. Each is the best of several short\n"
           "trials (2-3 s on 2 threads; --quick about 1 s). The profile is cached in\n"
           "$XDG_CACHE_HOME/ridge/ (else ~/.cache/ridge/), keyed by CPU and thread count, and\n"
           "reused by `ridge bench` while the detected cache sizes match; --refresh measures\n"
           "again. Every ISA the CPU has is measured whatever --isa says; --threads sets the\n"
           "largest thread count.\n"
           "Run it alone: anything else running lowers the numbers.\n\noptions:\n" CLI_COMMON_HELP
           "  --quick            fewer, shorter trials\n"
           "  --refresh          ignore the cached profile: measure and save a new one\n"
           "  --svg FILE         also write a log-log roofline chart to FILE\n"
           "  --points FILE      with --svg: place the kernels of FILE on the chart, FILE being\n"
           "                     `ridge bench <name> --json` output ('-': stdin); rows with\n"
           "                     numeric \"gflops\" and \"intensity\" are plotted, labelled by\n"
           "                     their \"case\" or \"kernel\" field (repeatable)\n"
           "\nPeaks in GFLOP/s (int8: GOP/s, 2 OP per multiply-add), bandwidths in GB/s (1e9 B),\n"
           "ridge points in FLOP/byte. n/a: the CPU lacks that instruction set.\n");
}

static void print_num(double v, int width, int prec)
{
    if (v > 0) printf("  %*.*f", width, prec, v);
    else printf("  %*s", width, "n/a");
}

static void print_table(const ridge_roofline *r, const char *source)
{
    printf("roofline: %s, %d thread%s\n", r->cpu, r->threads, r->threads == 1 ? "" : "s");
    printf("measured %s in %.1f s%s; %s\n", r->measured_at, r->seconds,
           r->quick ? " (quick)" : "", source);
    printf("caches: L1d %zu KiB, L2 %zu KiB, L3 usable %zu MiB (probe arrays: L1d/2, L2/2, "
           "4 x L2 for L3, 4 x L3 for DRAM)\n",
           r->l1d >> 10, r->l2 >> 10, r->l3_usable >> 20);

    printf("\ncompute peaks, GFLOP/s (i8-dot: GOP/s)\nthreads");
    for (int k = 0; k < RIDGE_PEAK_COUNT; k++) printf("  %10s", ridge_roofline_peak_name(k));
    printf("\n");
    for (int i = 0; i < r->npoints; i++) {
        printf("%7d", r->points[i].threads);
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++) print_num(r->points[i].peak[k], 10, 1);
        printf("\n");
    }

    printf("\nbandwidth, GB/s (read; DRAM roof = best of read, copy, triad)\nthreads");
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) printf("  %7s", ridge_roofline_level_name(l));
    printf("  %7s  %7s\n", "copy", "triad");
    for (int i = 0; i < r->npoints; i++) {
        const ridge_roofline_point *p = &r->points[i];
        printf("%7d", p->threads);
        for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) print_num(p->read[l], 7, 1);
        print_num(p->copy, 7, 1);
        print_num(p->triad, 7, 1);
        printf("\n");
    }

    printf("\nridge points, FLOP/byte (peak / bandwidth: below it a kernel is memory bound)\n");
    printf("threads  %-10s", "peak");
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) printf("  %6s", ridge_roofline_level_name(l));
    printf("\n");
    for (int i = 0; i < r->npoints; i++) {
        const ridge_roofline_point *p = &r->points[i];
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++) {
            if (!(p->peak[k] > 0)) continue;
            printf("%7d  %-10s", p->threads, ridge_roofline_peak_name(k));
            for (int l = 0; l < RIDGE_LEVEL_COUNT; l++)
                printf("  %6.2f", p->peak[k] / ridge_roofline_bandwidth(p, l));
            printf("\n");
        }
    }
}

/* Collects plot marks from one `ridge bench --json` document (or several, concatenated). */
typedef struct marks {
    ridge_roofline_mark *m;
    char **labels;
    size_t n, cap;
    size_t skipped; /* rows without numeric gflops and intensity */
} marks;

static int add_mark(marks *ms, const char *label, double intensity, double gflops)
{
    if (ms->n == ms->cap) {
        size_t cap = ms->cap ? 2 * ms->cap : 64;
        ridge_roofline_mark *m = realloc(ms->m, cap * sizeof *m);
        if (!m) return -1;
        ms->m = m;
        char **l = realloc(ms->labels, cap * sizeof *l);
        if (!l) return -1;
        ms->labels = l;
        ms->cap = cap;
    }
    char *s = strdup(label);
    if (!s) return -1;
    ms->labels[ms->n] = s;
    ms->m[ms->n].label = s;
    ms->m[ms->n].intensity = intensity;
    ms->m[ms->n].gflops = gflops;
    ms->n++;
    return 0;
}

static int read_points(const char *path, marks *ms)
{
    char *text = NULL;
    ridge_status st;
    if (!strcmp(path, "-")) st = ridge_read_file("/dev/stdin", (size_t)1 << 28, &text);
    else st = ridge_read_file(path, (size_t)1 << 28, &text);
    ridge_json *docs = NULL;
    if (!st) st = ridge_json_parse_many(text, &docs);
    free(text);
    if (st) {
        fprintf(stderr, "ridge roofline: --points %s: %s\n", path, ridge_last_error());
        return -1;
    }
    int found_rows = 0;
    for (const ridge_json *d = docs->child; d; d = d->next) {
        const ridge_json *rows = ridge_json_get(d, "rows"), *bench = ridge_json_get(d, "bench");
        if (!rows || rows->type != RIDGE_JSON_ARRAY) continue;
        found_rows = 1;
        int i = 0;
        for (const ridge_json *row = rows->child; row; row = row->next, i++) {
            const ridge_json *g = ridge_json_get(row, "gflops"), *x = ridge_json_get(row, "intensity");
            if (!g || !x || g->type != RIDGE_JSON_NUMBER || x->type != RIDGE_JSON_NUMBER) {
                ms->skipped++;
                continue;
            }
            const ridge_json *c = ridge_json_get(row, "case"), *k = ridge_json_get(row, "kernel");
            const ridge_json *name = c && c->type == RIDGE_JSON_STRING ? c
                                   : k && k->type == RIDGE_JSON_STRING ? k
                                                                       : NULL;
            char label[160];
            if (name) snprintf(label, sizeof label, "%s", name->str);
            else snprintf(label, sizeof label, "%s #%d",
                          bench && bench->type == RIDGE_JSON_STRING ? bench->str : "row", i);
            if (add_mark(ms, label, x->num, g->num)) {
                fprintf(stderr, "ridge roofline: out of memory\n");
                ridge_json_free(docs);
                return -1;
            }
        }
    }
    ridge_json_free(docs);
    if (!found_rows) {
        fprintf(stderr, "ridge roofline: --points %s: no {\"bench\": ..., \"rows\": [...]} object "
                        "(expected `ridge bench <name> --json` output)\n", path);
        return -1;
    }
    return 0;
}

static void free_marks(marks *ms)
{
    for (size_t i = 0; i < ms->n; i++) free(ms->labels[i]);
    free(ms->labels);
    free(ms->m);
}

static int write_svg(const char *path, const ridge_roofline *roof, const marks *ms)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    ridge_status st = ridge_roofline_svg(roof, roof->threads, ms->m, ms->n, f);
    if (fclose(f) && !st) st = RIDGE_EIO;
    if (st) {
        fprintf(stderr, "ridge roofline: %s: %s\n", path, ridge_last_error());
        return -1;
    }
    return 0;
}

int cmd_roofline(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    int quick = 0, refresh = 0, npoints = 0;
    const char *svg = NULL, *points[MAX_POINT_FILES];
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quick")) quick = 1;
        else if (!strcmp(a, "--refresh")) refresh = 1;
        else if (!strcmp(a, "--svg") || !strcmp(a, "--points")) {
            if (!next) {
                fprintf(stderr, "ridge roofline: %s needs a file name\n", a);
                return CLI_USAGE;
            }
            if (a[2] == 's') svg = next;
            else if (npoints == MAX_POINT_FILES) {
                fprintf(stderr, "ridge roofline: at most %d --points files\n", MAX_POINT_FILES);
                return CLI_USAGE;
            } else points[npoints++] = next;
            i++;
        } else return cli_unknown("roofline", a);
        i++;
    }
    if (c.help) {
        help();
        return CLI_OK;
    }
    if (npoints && !svg) {
        fprintf(stderr, "ridge roofline: --points needs --svg FILE (the chart to put them on)\n");
        return CLI_USAGE;
    }

    marks ms = {0};
    int rc = CLI_OK;
    for (int i = 0; i < npoints; i++)
        if (read_points(points[i], &ms)) {
            free_marks(&ms);
            return CLI_FAIL;
        }
    if (ms.skipped)
        fprintf(stderr, "ridge roofline: %zu rows without numeric gflops and intensity not "
                        "plotted\n", ms.skipped);

    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) {
        free_marks(&ms);
        return CLI_FAIL;
    }
    char path[4096];
    int cached = ridge_roofline_cache_path(ridge_ctx_cpu(ctx)->brand, ridge_ctx_threads(ctx),
                                           path, sizeof path) == RIDGE_OK;
    ridge_roofline before = {0}, roof;
    int had = cached && !refresh && ridge_roofline_load(path, &before) == RIDGE_OK;
    int flags = (quick ? RIDGE_ROOFLINE_QUICK : 0) | (refresh ? RIDGE_ROOFLINE_REFRESH : 0) |
                (isatty(2) ? RIDGE_ROOFLINE_VERBOSE : 0);
    ridge_status st = ridge_roofline_for_ctx(ctx, flags, &roof);
    if (st) {
        fprintf(stderr, "ridge roofline: %s: %s\n", ridge_status_str(st), ridge_last_error());
        rc = CLI_FAIL;
        goto out;
    }
    /* say where the numbers came from: the cache (unchanged) or a new measurement */
    int reused = had && !strcmp(before.measured_at, roof.measured_at) &&
                 before.seconds == roof.seconds;
    char source[4200];
    if (!cached) snprintf(source, sizeof source, "not cached (no HOME or XDG_CACHE_HOME)");
    else if (reused) snprintf(source, sizeof source, "cached in %s (--refresh to measure)", path);
    else snprintf(source, sizeof source, "saved to %s", path);

    if (c.json) {
        size_t n = ridge_roofline_to_json(&roof, NULL, 0);
        char *text = malloc(n + 1);
        if (!text) {
            fprintf(stderr, "ridge roofline: out of memory\n");
            rc = CLI_FAIL;
            goto out;
        }
        ridge_roofline_to_json(&roof, text, n + 1);
        fputs(text, stdout);
        free(text);
    } else {
        print_table(&roof, source);
    }
    if (svg) {
        if (write_svg(svg, &roof, &ms)) rc = CLI_FAIL;
        else if (!c.json) printf("\nchart: %s (%zu kernel%s)\n", svg, ms.n, ms.n == 1 ? "" : "s");
    }
out:
    ridge_ctx_destroy(ctx);
    free_marks(&ms);
    return rc;
}
