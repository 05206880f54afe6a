/* Pieces `ridge quantize` and `ridge eval qmlp` share. */
#ifndef RIDGE_QMLP_CLI_H
#define RIDGE_QMLP_CLI_H

#include "ridge/ridge.h"

typedef struct qmlp_eval_result {
    double accuracy; /* percent */
    double loss;     /* mean cross-entropy */
    double seconds;  /* wall time of the evaluation */
} qmlp_eval_result;

/* Evaluates the fp32 model m (if not NULL) and the int8 model q on d; prints the reason and
 * returns -1 on failure. */
int qmlp_cli_eval_both(ridge_ctx *ctx, ridge_mlp *m, ridge_qmlp *q, const ridge_mnist *d,
                       qmlp_eval_result *f32, qmlp_eval_result *i8);

/* `ridge eval qmlp --model FILE [--data DIR] [--split NAME]`: argv[0] is "qmlp". */
int qmlp_cli_eval(int argc, char **argv);

#endif /* RIDGE_QMLP_CLI_H */
