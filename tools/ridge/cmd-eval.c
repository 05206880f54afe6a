/* ridge eval <model> --model FILE: a checkpoint's loss and accuracy on a dataset split, with
 * the confusion matrix. Models are listed in EVAL_MODELS, as in cmd-train.c. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"
#include "quant-cli.h"

const char cmd_eval_summary[] = "evaluate a checkpoint (ridge eval mlp --model FILE)";

static int eval_mlp(int argc, char **argv);
int eval_cnn(int argc, char **argv); /* train-cnn.c */

#define EVAL_MODELS(MODEL)                                                                    \
    MODEL(mlp, "an MLP checkpoint from `ridge train mlp --save`")                              \
    MODEL(cnn, "a CNN checkpoint from `ridge train cnn --save`")                               \
    MODEL(qmlp, "an int8 MLP checkpoint from `ridge quantize`")                             \
    MODEL(qcnn, "an int8 CNN checkpoint from `ridge quantize`")
#define eval_qmlp quant_cli_eval
#define eval_qcnn quant_cli_eval

typedef struct eval_model {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} eval_model;

static const eval_model models[] = {
#define ENTRY(name, summary) {#name, summary, eval_##name},
    EVAL_MODELS(ENTRY)
#undef ENTRY
};

static void help(void)
{
    printf("usage: ridge eval [mlp|cnn|qmlp|qcnn] --model FILE [options]\n\n"
           "Evaluates a checkpoint on a split of an MNIST-format dataset: the mean loss, the\n"
           "accuracy and the confusion matrix (rows: true label, columns: prediction; not for\n"
           "the int8 models). Without a model name, the checkpoint's header says which.\n\n"
           "options:\n"
           "  --model FILE       the checkpoint (required)\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --split NAME       t10k (the test split, default) or train\n"
           "  --limit N          only the first N images\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA);
}

static int eval_mlp(int argc, char **argv)
{
    cli_common c;
    eval_args a;
    if (eval_args_parse("eval mlp", &c, &a, argc, argv)) return CLI_USAGE;
    const char *model = a.model, *data = a.data, *split = a.split;
    if (c.help) {
        help();
        return CLI_OK;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist d = {0};
    ridge_mlp *m = NULL;
    uint64_t *conf = NULL;
    if (ridge_mlp_load(model, &m) || ridge_mnist_load(data, split, &d)) {
        fprintf(stderr, "ridge eval mlp: %s\n", ridge_last_error());
        goto done;
    }
    if (mlp_check_data(m, model, d.rows * d.cols, d.classes)) goto done;
    if (a.limit > 0 && (size_t)a.limit < d.n) d.n = (size_t)a.limit;
    const size_t C = m->cfg.sizes[m->cfg.nlayers];
    conf = calloc(C * C, sizeof *conf);
    double loss;
    size_t right;
    if (!conf || ridge_mlp_evaluate(ctx, m, d.images, d.labels, d.n, &loss, &right, conf)) {
        fprintf(stderr, "ridge eval mlp: %s\n", conf ? ridge_last_error() : "out of memory");
        goto done;
    }
    char layers[256];
    mlp_format_layers(&m->cfg, layers, sizeof layers);
    const eval_report r = {model, "mlp", "layers", layers, split, data, m->epoch,
                               d.n, right, C, loss, conf};
    eval_report_print(&r, c.json);
    rc = CLI_OK;
done:
    free(conf);
    ridge_mlp_destroy(m);
    ridge_mnist_free(&d);
    ridge_ctx_destroy(ctx);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        if (argc >= 2) help();
        else fprintf(stderr, "usage: ridge eval [<model>] --model FILE (models: mlp, cnn, qmlp, qcnn)\n");
        return argc < 2 ? CLI_USAGE : CLI_OK;
    }
    const char *kind = argv[1];
    int shift = 1;
    if (kind[0] == '-') { /* no model named: the checkpoint's magic says which */
        const char *path = NULL;
        for (int i = 1; i + 1 < argc && !path; i++)
            if (!strcmp(argv[i], "--model")) path = argv[i + 1];
        if (!path) {
            fprintf(stderr, "ridge eval: --model FILE is required\n");
            return CLI_USAGE;
        }
        if (!(kind = quant_detect(path))) return CLI_FAIL;
        argv[0] = (char *)kind, shift = 0; /* the model's parser reads from argv[1] */
    }
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (!strcmp(kind, models[i].name)) return models[i].run(argc - shift, argv + shift);
    fprintf(stderr, "ridge eval: unknown model '%s' (models: mlp, cnn, qmlp, qcnn)\n", kind);
    return CLI_USAGE;
}
