/* What `ridge train mlp` and `ridge train cnn` share: one option table and parser, and the
 * epoch loop (progress line, evaluation after every epoch, checkpoints, the report, and the
 * data-parallel pieces: the ranks' mean training loss, rank 0 alone saving). */
#ifndef RIDGE_TRAINER_CLI_H
#define RIDGE_TRAINER_CLI_H

#include "cli.h"

enum { TRAIN_MLP = 1, TRAIN_CNN = 2 }; /* which trainers take an option */

/* Option values; numbers the command line did not give keep these defaults: epochs 10,
 * everything else -1 (strings NULL). */
typedef struct train_opts {
    cli_common c;
    const char *data, *save, *resume, *layers, *arch, *act, *optimizer, *schedule;
    long epochs, batch, warmup, seed, limit, test_limit, stop_after;
    double lr, momentum, weight_decay, dropout;
    int quiet;
} train_opts;

/* Parses argv[1..] for trainer `model` (TRAIN_MLP or TRAIN_CNN); `cmd` ("train mlp") names it
 * in messages. Options the checkpoint fixes are refused with --resume. Returns CLI_OK, or
 * CLI_USAGE after printing why. */
int train_opts_parse(train_opts *o, unsigned model, const char *cmd, int argc, char **argv);

/* The AdamW/SGD configuration the options ask for (cosine after 100 warm-up steps by default);
 * oc->total is left to the caller. Returns CLI_OK, or CLI_USAGE after printing why. */
int train_optim_config(const train_opts *o, const char *cmd, ridge_optim_config *oc);

/* Loads the "train" and "t10k" splits of o->data and checks that their images agree; prints
 * why and returns CLI_FAIL if not. */
int train_load_data(const train_opts *o, const char *cmd, ridge_mnist *tr, ridge_mnist *te);

/* A model as the epoch loop sees it. */
typedef struct train_model {
    const char *cmd; /* "train mlp" */
    void *model;
    uint32_t *epoch; /* epochs completed (the model's) */
    ridge_status (*train_epoch)(ridge_ctx *ctx, void *model, const uint8_t *images,
                                const uint8_t *labels, size_t n,
                                int (*fn)(void *, size_t, size_t, double, size_t), void *arg,
                                double *mean_loss);
    ridge_status (*evaluate)(ridge_ctx *ctx, void *model, const uint8_t *images,
                             const uint8_t *labels, size_t n, double *loss, size_t *correct,
                             uint64_t *confusion);
    ridge_status (*save)(const void *model, const char *path);
} train_model;

/* Trains until o->epochs are done (or o->stop_after more), printing a line (or a JSON object)
 * per epoch with the training loss, the test loss and accuracy over te's first ntest images,
 * then the final accuracy; the caller has printed the header (and, with --json, opened the
 * object up to `"epochs": [`). With nranks > 1 the training loss printed is the mean over the
 * ranks and rank 0 alone saves. Returns CLI_OK or CLI_FAIL (after printing why). */
int train_run(const train_opts *o, ridge_ctx *ctx, const train_model *tm, const ridge_mnist *tr,
              size_t ntrain, const ridge_mnist *te, size_t ntest, int rank, int nranks);

#endif /* RIDGE_TRAINER_CLI_H */
