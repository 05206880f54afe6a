/* Pieces `ridge train mlp`, `ridge eval mlp` and `ridge predict` share. */
#ifndef RIDGE_MLP_CLI_H
#define RIDGE_MLP_CLI_H

#include "cli.h"
#include "ridge/ridge.h"

#define MLP_DEFAULT_DATA "/usr/share/datasets/fashion-mnist"

/* Option values: print a message naming `opt` and return -1 if missing or malformed. */
int mlp_str_arg(const char *opt, const char *value, const char **out);
int mlp_float_arg(const char *opt, const char *value, double lo, double hi, double *out);

/* "784,128,10" into nlayers and sizes; prints why and returns -1 if malformed. */
int mlp_parse_layers(const char *s, ridge_mlp_config *c);
const char *mlp_format_layers(const ridge_mlp_config *c, char *buf, size_t cap);
int mlp_same_layers(const ridge_mlp_config *a, const ridge_mlp_config *b);

/* Mean and standard deviation of n u8 pixels scaled to [0, 1]. */
void mlp_input_stats(const uint8_t *px, size_t n, float *mean, float *std);

/* The model's input must be `pixels` wide and its output hold `classes`; prints a message
 * naming `source` (the checkpoint or --layers) and returns -1 if not. */
int mlp_check_data(const ridge_mlp *m, const char *source, size_t pixels, int classes);

/* What `ridge eval mlp|cnn` prints: the model (kind "mlp" or "cnn", described by desc under
 * the JSON key desc_key), the split, the loss, the accuracy and the C x C confusion matrix, as
 * one JSON line or as text. */
typedef struct eval_report {
    const char *model, *kind, *desc_key, *desc, *split, *data;
    unsigned epochs;
    size_t n, right, classes;
    double loss;
    const uint64_t *confusion;
} eval_report;
void eval_report_print(const eval_report *r, int json);

/* The options every `ridge eval` kind takes: --model (required unless --help), --data, --split
 * and --limit (0: all), plus the common ones into *c. Prints why and returns CLI_USAGE on a
 * bad or missing option, else CLI_OK; the caller prints its own help when c->help is set. */
typedef struct eval_args {
    const char *model, *data, *split;
    long limit;
} eval_args;
int eval_args_parse(const char *cmd, cli_common *c, eval_args *a, int argc, char **argv);

#endif /* RIDGE_MLP_CLI_H */
