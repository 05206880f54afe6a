/* ridge train <model>: the dispatch to each model's trainer.
 *
 * To add a model: write `int train_<name>(int argc, char **argv)` (argv[0] is the model's
 * name) in tools/ridge/train-<name>.c and add one MODEL line to TRAIN_MODELS below. (Files
 * named cmd-*.c are subcommands, so a trainer's file must not be named that way.) */
#include <string.h>

#include "cli.h"

#define TRAIN_MODELS(MODEL)                                                                   \
    MODEL(mlp, "multilayer perceptron on an MNIST-format dataset (default: Fashion-MNIST)")   \
    MODEL(cnn, "convolutional network on an MNIST-format dataset (default: Fashion-MNIST)")   \
    MODEL(gpt2, "GPT-2 on llm.c's checkpoint and token shards, as llm.c's train_gpt2.c")

#define DECLARE(name, summary) int train_##name(int argc, char **argv);
TRAIN_MODELS(DECLARE)
#undef DECLARE

typedef struct train_model {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} train_model;

static const train_model models[] = {
#define ENTRY(name, summary) {#name, summary, train_##name},
    TRAIN_MODELS(ENTRY)
#undef ENTRY
};

const char cmd_train_summary[] = "train a model: mlp or cnn on Fashion-MNIST, gpt2 on llm.c files";

static void usage(FILE *f)
{
    fprintf(f, "usage: ridge train <model> [options]   (ridge train <model> --help)\n\nmodels:\n");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        fprintf(f, "  %-8s %s\n", models[i].name, models[i].summary);
}

int cmd_train(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (!strcmp(argv[1], models[i].name)) return models[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ridge train: unknown model '%s' (see 'ridge train --help')\n", argv[1]);
    return CLI_USAGE;
}
