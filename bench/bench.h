/* Shared benchmark machinery: options, timing statistics, and one table writer that prints
 * either an aligned text table or JSON. Every bench/bench-<family>.c uses it, and the ridge
 * CLI runs the same functions (`ridge bench <family>`). */
#ifndef RIDGE_BENCH_H
#define RIDGE_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ridge/ridge.h"

typedef struct ridge_bench_opts {
    int threads;        /* 0: all CPUs; benches that sweep thread counts go up to this */
    ridge_isa isa;      /* RIDGE_ISA_AUTO: best */
    int json;           /* 1: JSON instead of a table */
    int quick;          /* 1: fewer repeats, smaller sizes */
    int peers;          /* 1: also time the peer libraries linked in */
    const char *filter; /* only cases whose name contains this (NULL: all) */
    FILE *out;
} ridge_bench_opts;

/* A bench entry point: returns 0 on success, BENCH_USAGE for a bad option of its own, other
 * non-zero if a result was wrong or setup failed (with a message on stderr). */
#define BENCH_USAGE 2
typedef int (*ridge_bench_fn)(const ridge_bench_opts *opts, int argc, char **argv);

/* Every file bench/bench-<name>.c defines
 *   const char ridge_bench_<name>_summary[] = "one line for `ridge bench --help`";
 *   int ridge_bench_<name>(const ridge_bench_opts *opts, int argc, char **argv);
 * and the build generates benches.inc, one RIDGE_BENCH(name) line per file. */
#define RIDGE_BENCH(name)                                                                     \
    extern const char ridge_bench_##name##_summary[];                                          \
    int ridge_bench_##name(const ridge_bench_opts *, int, char **);
#include "benches.inc"
#undef RIDGE_BENCH

/* ---- statistics ------------------------------------------------------------------------ */

typedef struct bench_stats {
    double median, p10, p90, p99, best, mean;
    size_t n;
} bench_stats;

/* Sorts `samples` in place and summarizes them. */
bench_stats bench_summarize(double *samples, size_t n);

/* Times fn(arg) `reps` times after `warmup` untimed calls; each sample in seconds. Returns the
 * summary; `samples` must hold reps entries (NULL: allocated internally). */
bench_stats bench_time(void (*fn)(void *), void *arg, int warmup, int reps, double *samples);

/* A context with `threads` threads and the options' ISA; on failure prints "bench <name>:
 * <why>" and returns NULL. */
ridge_ctx *bench_ctx(const ridge_bench_opts *o, int threads, const char *name);

/* Sleeps, letting spinning worker threads of any pool go idle between measurements. */
void bench_quiesce(int us);
/* Moves each worker of the OpenMP team (oneDNN's runtime) that shares the calling thread's CPU
 * to another CPU, unpinned after (omp-spread.c); call it before a oneDNN method's turn with
 * several threads, after bench_quiesce. A no-op without OpenMP. */
void bench_omp_spread(void);
/* BENCH_WAKE(call): `call` repeated, untimed, for BENCH_WAKE_NS, before a method's timed calls
 * with several threads (bench gemm, conv): on the VM these were measured on (Zen 4, KVM) an
 * idle vCPU ran slowly for about 1 ms after it woke, and every library's sub-millisecond
 * 2-thread calls then ran at the 1-thread rate (ridge's and OpenBLAS's always, BLIS's and
 * oneDNN's when their shared OpenMP team had fallen asleep). */
#define BENCH_WAKE_NS 2000000u
#define BENCH_WAKE(call)                                                                           \
    for (uint64_t bench_w0_ = ridge_time_ns(); ridge_time_ns() - bench_w0_ < BENCH_WAKE_NS;) call

/* ---- output ------------------------------------------------------------------------------ */

typedef enum bench_col_kind { BENCH_STR, BENCH_INT, BENCH_F1, BENCH_F2, BENCH_F3 } bench_col_kind;

typedef struct bench_col {
    const char *name;
    bench_col_kind kind;
} bench_col;

typedef struct bench_val {
    const char *s; /* BENCH_STR; NULL prints "-" / null */
    double v;      /* numbers; NaN prints "-" / null */
} bench_val;

#define BENCH_MAX_COLS 24
#define BENCH_MAX_ROWS 512

typedef struct bench_table {
    const ridge_bench_opts *opts;
    const char *title;
    int ncols, nrows;
    bench_col cols[BENCH_MAX_COLS];
    char *cells[BENCH_MAX_ROWS][BENCH_MAX_COLS];
} bench_table;

/* A table with these columns; rows are buffered and written by bench_table_end (so the
 * columns line up), as text or as one JSON object {"bench": title, "rows": [...]}. */
void bench_table_begin(bench_table *t, const ridge_bench_opts *opts, const char *title,
                       const bench_col *cols, int ncols);
void bench_table_row(bench_table *t, const bench_val *vals);
void bench_table_end(bench_table *t);

/* 1 if a bench's own arguments hold -h or --help, after printing its usage line (`own`: the
 * options of its own, or NULL) and its summary; else 0. */
int bench_help(int argc, char **argv, const char *name, const char *summary, const char *own);

/* For a bench with no options of its own: 0 when argv is empty, 1 after printing the help it
 * asked for, -1 after naming the option it does not know. */
int bench_no_options(int argc, char **argv, const char *name, const char *summary);

/* Prints a line of progress or context to stderr (never into JSON on stdout). */
void bench_note(const ridge_bench_opts *opts, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* RIDGE_BENCH_H */
