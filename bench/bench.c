/* Benchmark statistics and the table/JSON writer. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "perf/json.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted samples, by the nearest-rank rule. */
static double quantile(const double *s, size_t n, double q)
{
    size_t i = (size_t)ceil(q * (double)n);
    if (i > 0) i--;
    if (i >= n) i = n - 1;
    return s[i];
}

bench_stats bench_summarize(double *samples, size_t n)
{
    bench_stats st = {0};
    if (n == 0) {
        st.median = st.p10 = st.p90 = st.p99 = st.best = st.mean = NAN;
        return st;
    }
    qsort(samples, n, sizeof *samples, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += samples[i];
    st.n = n;
    st.best = samples[0];
    st.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    st.p10 = quantile(samples, n, 0.10);
    st.p90 = quantile(samples, n, 0.90);
    st.p99 = quantile(samples, n, 0.99);
    st.mean = sum / (double)n;
    return st;
}

bench_stats bench_time(void (*fn)(void *), void *arg, int warmup, int reps, double *samples)
{
    double *own = NULL;
    if (reps < 1) reps = 1;
    if (!samples) samples = own = malloc((size_t)reps * sizeof *samples);
    if (!samples) return bench_summarize(NULL, 0);
    for (int i = 0; i < warmup; i++) fn(arg);
    for (int i = 0; i < reps; i++) {
        uint64_t t0 = ridge_time_ns();
        fn(arg);
        samples[i] = (double)(ridge_time_ns() - t0) * 1e-9;
    }
    bench_stats st = bench_summarize(samples, (size_t)reps);
    free(own);
    return st;
}

ridge_ctx *bench_ctx(const ridge_bench_opts *o, int threads, const char *name)
{
    ridge_ctx_options co;
    ridge_ctx_options_init(&co);
    co.threads = threads;
    co.isa = o->isa;
    ridge_ctx *ctx = NULL;
    if (ridge_ctx_create(&co, &ctx)) {
        fprintf(stderr, "bench %s: %s\n", name, ridge_last_error());
        return NULL;
    }
    return ctx;
}

void bench_quiesce(int us)
{
    struct timespec ts = {us / 1000000, (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Prints text's words (an option's "[...]" counts as one) in lines of at most 88 columns,
 * starting at column `indent` (already printed up to there), every next line indented as
 * far. */
static void print_wrapped(const char *text, int indent)
{
    int col = indent;
    for (const char *w = text; *w;) {
        const char *close = *w == '[' ? strchr(w, ']') : NULL;
        int len = close ? (int)(close - w) + 1 : (int)strcspn(w, " ");
        if (col > indent && col + 1 + len > 88) col = indent, printf("\n%*s", indent, "");
        else if (col > indent) col += printf(" ");
        col += printf("%.*s", len, w);
        w += len;
        w += strspn(w, " ");
    }
    putchar('\n');
}

int bench_help(int argc, char **argv, const char *name, const char *summary, const char *own)
{
    for (int i = 0; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            char usage[512];
            int col = printf("usage: ridge bench %s ", name);
            snprintf(usage, sizeof usage,
                     "[--quick] [--peers] [--json] [--threads N] [--isa ISA]%s%s", own ? " " : "",
                     own ? own : "");
            print_wrapped(usage, col);
            putchar('\n');
            snprintf(usage, sizeof usage, "%s.", summary);
            print_wrapped(usage, 0);
            return 1;
        }
    return 0;
}

int bench_no_options(int argc, char **argv, const char *name, const char *summary)
{
    if (argc == 0) return 0;
    if (bench_help(argc, argv, name, summary, NULL)) return 1;
    fprintf(stderr, "ridge bench %s: unknown option '%s' (it has none of its own)\n", name,
            argv[0]);
    return -1;
}

void bench_note(const ridge_bench_opts *opts, const char *fmt, ...)
{
    (void)opts;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void bench_table_begin(bench_table *t, const ridge_bench_opts *opts, const char *title,
                       const bench_col *cols, int ncols)
{
    memset(t, 0, sizeof *t);
    t->opts = opts;
    t->title = title;
    t->ncols = ncols < BENCH_MAX_COLS ? ncols : BENCH_MAX_COLS;
    memcpy(t->cols, cols, (size_t)t->ncols * sizeof *cols);
}

static char *format_cell(bench_col_kind kind, bench_val v)
{
    char buf[256];
    if (kind == BENCH_STR) snprintf(buf, sizeof buf, "%s", v.s ? v.s : "-");
    else if (isnan(v.v)) snprintf(buf, sizeof buf, "-");
    else if (kind == BENCH_INT) snprintf(buf, sizeof buf, "%.0f", v.v);
    else if (kind == BENCH_F1) snprintf(buf, sizeof buf, "%.1f", v.v);
    else if (kind == BENCH_F2) snprintf(buf, sizeof buf, "%.2f", v.v);
    else snprintf(buf, sizeof buf, "%.3f", v.v);
    return strdup(buf);
}

void bench_table_row(bench_table *t, const bench_val *vals)
{
    if (t->nrows >= BENCH_MAX_ROWS) return;
    for (int c = 0; c < t->ncols; c++) t->cells[t->nrows][c] = format_cell(t->cols[c].kind, vals[c]);
    t->nrows++;
}

void bench_table_end(bench_table *t)
{
    FILE *f = t->opts->out ? t->opts->out : stdout;
    if (t->opts->json) {
        fprintf(f, "{\"bench\": ");
        ridge_json_write_string(f, t->title);
        fprintf(f, ", \"rows\": [");
        for (int r = 0; r < t->nrows; r++) {
            fprintf(f, "%s\n  {", r ? "," : "");
            for (int c = 0; c < t->ncols; c++) {
                fprintf(f, "%s", c ? ", " : "");
                ridge_json_write_string(f, t->cols[c].name);
                fprintf(f, ": ");
                const char *cell = t->cells[r][c];
                if (t->cols[c].kind == BENCH_STR) ridge_json_write_string(f, cell);
                else fprintf(f, "%s", strcmp(cell, "-") == 0 ? "null" : cell);
            }
            fprintf(f, "}");
        }
        fprintf(f, "\n]}\n");
    } else {
        int width[BENCH_MAX_COLS];
        for (int c = 0; c < t->ncols; c++) {
            width[c] = (int)strlen(t->cols[c].name);
            for (int r = 0; r < t->nrows; r++) {
                int w = (int)strlen(t->cells[r][c]);
                if (w > width[c]) width[c] = w;
            }
        }
        fprintf(f, "%s\n", t->title);
        for (int c = 0; c < t->ncols; c++)
            fprintf(f, c ? "  %*s" : "%-*s", width[c], t->cols[c].name);
        fputc('\n', f);
        for (int r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++)
                fprintf(f, c ? "  %*s" : "%-*s", width[c], t->cells[r][c]);
            fputc('\n', f);
        }
    }
    fflush(f);
    for (int r = 0; r < t->nrows; r++)
        for (int c = 0; c < t->ncols; c++) free(t->cells[r][c]);
    t->nrows = 0;
}
