/* The ridge CLI's shared pieces: the subcommand list, common options, context creation. */
#ifndef RIDGE_CLI_H
#define RIDGE_CLI_H

#include <stdio.h>

#include "ridge/ridge.h"

/* Exit codes: 0 success, 1 the work failed (a wrong result, an I/O error), 2 bad usage. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* Every subcommand is a file cmd-<name>.c that defines
 *   const char cmd_<name>_summary[] = "one line for `ridge --help`";
 *   int cmd_<name>(int argc, char **argv);      (argv[0] is the subcommand's name)
 * and the build generates commands.inc, one RIDGE_COMMAND(name) line per file. */
#define RIDGE_COMMAND(name)                                                                   \
    extern const char cmd_##name##_summary[];                                                  \
    int cmd_##name(int argc, char **argv);
#include "commands.inc"
#undef RIDGE_COMMAND

/* Options every subcommand takes. */
typedef struct cli_common {
    int threads;   /* --threads N (0: default) */
    ridge_isa isa; /* --isa ref|avx2|avx512 */
    int json;      /* --json */
    int help;      /* --help / -h */
} cli_common;

#define CLI_COMMON_HELP                                                                       \
    "  --threads N        threads to use (default: $RIDGE_NUM_THREADS, else all CPUs)\n"     \
    "  --isa ISA          kernels to use: ref, avx2, avx512 (default: $RIDGE_ISA, else best)\n" \
    "  --json             machine-readable output on stdout\n"                               \
    "  -h, --help         show this help\n"

void cli_common_init(cli_common *c);

/* If argv[*i] is a common option, consumes it (and its value), advances *i and returns 1;
 * returns 0 if it is not one, -1 (after printing a message) if its value is bad. */
int cli_common_parse(cli_common *c, int argc, char **argv, int *i);

/* Parses an integer option value in [lo, hi]; prints a message naming `opt` and returns -1
 * if it is missing or malformed. */
int cli_int_arg(const char *opt, const char *value, long lo, long hi, long *out);

/* One of a subcommand's own options, for cli_parse. `names` lists its spellings separated by
 * '|' ("-o|--output"); exactly one of the targets is set: a flag (set to 1), a string value,
 * or an integer value in [lo, hi]. */
typedef struct cli_opt {
    const char *names;
    int *flag;
    const char **str;
    long *num;
    long lo, hi;
} cli_opt;

/* Parses argv[1..]: the common options into *c and the subcommand's own through `opts` (ended
 * by an entry with names NULL). Returns CLI_OK, or CLI_USAGE after printing what is wrong
 * (an unknown option, a missing or malformed value) with `cmd` in the message. */
int cli_parse(const char *cmd, cli_common *c, const cli_opt *opts, int argc, char **argv);

/* Creates a context for the common options; prints the reason and returns NULL on failure. */
ridge_ctx *cli_make_ctx(const cli_common *c);

/* Prints "ridge <cmd>: unknown option 'x'" and the hint to use --help; returns CLI_USAGE. */
int cli_unknown(const char *cmd, const char *arg);

/* ---- `ridge profile train ...`: hooks the trainers call ---------------------------------- */

/* Trainers call cli_profile_step(ctx) after each optimizer step and stop training when it
 * returns 1 (the profile is complete and printed). A trainer that does other work between
 * steps (validation, sampling) also calls cli_profile_begin(ctx) at the start of each step,
 * so only the steps are recorded and timed. Both are no-ops returning 0 unless
 * `ridge profile` is running. */
void cli_profile_begin(ridge_ctx *ctx);
int cli_profile_step(ridge_ctx *ctx);
/* 1 once the profile is complete: the trainer skips what would follow (evaluation, saving). */
int cli_profile_finished(void);

#endif /* RIDGE_CLI_H */
