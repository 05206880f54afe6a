/* Pieces `ridge quantize` and `ridge eval qmlp|qcnn` share. */
#ifndef RIDGE_QUANT_CLI_H
#define RIDGE_QUANT_CLI_H

#include "ridge/ridge.h"

/* What a checkpoint holds, from its magic: "mlp", "cnn", "qmlp", "qcnn", or NULL (prints why:
 * cannot open, or not a ridge checkpoint). */
const char *quant_detect(const char *path);

/* An int8 model of either kind (one of the two is set). */
typedef struct quant_model {
    ridge_qmlp *mlp;
    ridge_qcnn *cnn;
} quant_model;

typedef struct quant_eval_result {
    double accuracy; /* percent */
    double loss;     /* mean cross-entropy */
    double seconds;  /* wall time of the evaluation */
} quant_eval_result;

/* Evaluates q on d: prints the reason and returns -1 on failure. */
int quant_eval(ridge_ctx *ctx, const quant_model *q, const ridge_mnist *d, quant_eval_result *r);

/* Whether d fits a CNN configuration's input and classes; prints why not (-1). */
int quant_check_cnn_data(const ridge_cnn_config *c, size_t classes, const char *source,
                         const ridge_mnist *d);

/* `ridge eval qmlp|qcnn --model FILE [--data DIR] [--split NAME]`: argv[0] is the kind. */
int quant_cli_eval(int argc, char **argv);

#endif /* RIDGE_QUANT_CLI_H */
