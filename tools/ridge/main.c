/* ridge: the command-line tool. One subcommand per file (cmd-<name>.c); the build lists them
 * in commands.inc. */
#include <string.h>

#include "cli.h"

typedef struct command {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
#define RIDGE_COMMAND(name) {#name, cmd_##name##_summary, cmd_##name},
#include "commands.inc"
#undef RIDGE_COMMAND
};

static void usage(FILE *f)
{
    fprintf(f, "ridge %s: neural-network kernels and training on the CPU, measured against\n"
               "the machine's own roof.\n\n"
               "usage: ridge <command> [options]   (ridge <command> --help for its options)\n\n"
               "commands:\n",
            RIDGE_VERSION_STRING);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nenvironment:\n"
               "  RIDGE_NUM_THREADS  threads (default: all CPUs)\n"
               "  RIDGE_ISA          ref | avx2 | avx512 (default: the best the CPU has)\n"
               "  RIDGE_SPIN_US      how long idle pool workers spin before sleeping (default 50)\n"
               "  RIDGE_VERBOSE=1    print what was chosen\n"
               "  RIDGE_CONV_TUNE=1  convolution layers time their algorithms once per shape\n"
               "                     and keep the fastest (saved in ~/.cache/ridge for later runs)\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ridge %s\n", RIDGE_VERSION_STRING);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ridge: unknown command '%s' (see 'ridge --help')\n", argv[1]);
    return CLI_USAGE;
}
