/* `ridge eval qmlp` and the evaluation `ridge quantize` prints. */
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"
#include "qmlp-cli.h"

int qmlp_cli_eval_both(ridge_ctx *ctx, ridge_mlp *m, ridge_qmlp *q, const ridge_mnist *d,
                       qmlp_eval_result *f32, qmlp_eval_result *i8)
{
    size_t right;
    uint64_t t0 = ridge_time_ns();
    if (m) {
        if (ridge_mlp_evaluate(ctx, m, d->images, d->labels, d->n, &f32->loss, &right, NULL)) {
            fprintf(stderr, "ridge: fp32 evaluation: %s\n", ridge_last_error());
            return -1;
        }
        f32->seconds = (double)(ridge_time_ns() - t0) * 1e-9;
        f32->accuracy = 100.0 * (double)right / (double)d->n;
    }
    t0 = ridge_time_ns();
    if (ridge_qmlp_evaluate(ctx, q, d->images, d->labels, d->n, &i8->loss, &right)) {
        fprintf(stderr, "ridge: int8 evaluation: %s\n", ridge_last_error());
        return -1;
    }
    i8->seconds = (double)(ridge_time_ns() - t0) * 1e-9;
    i8->accuracy = 100.0 * (double)right / (double)d->n;
    return 0;
}

int qmlp_cli_eval(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    const char *model = NULL, *data = MLP_DEFAULT_DATA, *split = "t10k";
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad;
        if (!strcmp(a, "--model")) bad = mlp_str_arg(a, v, &model);
        else if (!strcmp(a, "--data")) bad = mlp_str_arg(a, v, &data);
        else if (!strcmp(a, "--split")) bad = mlp_str_arg(a, v, &split);
        else return cli_unknown("eval qmlp", a);
        if (bad) return CLI_USAGE;
        i += 2;
    }
    if (c.help) {
        printf("usage: ridge eval qmlp --model FILE [options]\n\n"
               "Evaluates an int8 MLP checkpoint (from `ridge quantize`) on a split of an\n"
               "MNIST-format dataset: mean loss and accuracy.\n\n"
               "options:\n"
               "  --model FILE       the int8 checkpoint (required)\n"
               "  --data DIR         MNIST-format directory (default %s)\n"
               "  --split NAME       t10k (the test split, default) or train\n" CLI_COMMON_HELP,
               MLP_DEFAULT_DATA);
        return CLI_OK;
    }
    if (!model) {
        fprintf(stderr, "ridge eval qmlp: --model FILE is required\n");
        return CLI_USAGE;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist d = {0};
    ridge_qmlp *q = NULL;
    if (ridge_qmlp_load(ctx, model, &q) || ridge_mnist_load(data, split, &d)) {
        fprintf(stderr, "ridge eval qmlp: %s\n", ridge_last_error());
        goto done;
    }
    const ridge_mlp_config *cfg = ridge_qmlp_config(q);
    if (cfg->sizes[0] != d.rows * d.cols || (size_t)d.classes > cfg->sizes[cfg->nlayers]) {
        fprintf(stderr, "ridge eval qmlp: %s takes %zu inputs and %zu classes; %s has %zu pixels and %d classes\n",
                model, cfg->sizes[0], cfg->sizes[cfg->nlayers], data, d.rows * d.cols, d.classes);
        goto done;
    }
    qmlp_eval_result r;
    if (qmlp_cli_eval_both(ctx, NULL, q, &d, NULL, &r)) goto done;
    if (c.json)
        printf("{\"model\": \"%s\", \"dtype\": \"int8\", \"split\": \"%s\", \"images\": %zu, "
               "\"loss\": %.6f, \"accuracy\": %.4f, \"seconds\": %.4f}\n",
               model, split, d.n, r.loss, r.accuracy, r.seconds);
    else
        printf("%s: int8 mlp\n%s split of %s: %zu images\nloss %.4f  accuracy %.2f%%  (%.3f s)\n",
               model, split, data, d.n, r.loss, r.accuracy, r.seconds);
    rc = CLI_OK;
done:
    ridge_qmlp_destroy(q);
    ridge_mnist_free(&d);
    ridge_ctx_destroy(ctx);
    return rc;
}
