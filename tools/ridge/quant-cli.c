/* `ridge eval qmlp|qcnn`, and the checkpoint detection and evaluation `ridge quantize` uses. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "mlp-cli.h"
#include "quant-cli.h"

const char *quant_detect(const char *path)
{
    static const struct { const char *magic, *kind; } kinds[] = {
        {"RIDGEMLP", "mlp"}, {"RIDGECNN", "cnn"}, {"RIDGEQ8M", "qmlp"}, {"RIDGEQ8C", "qcnn"}};
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ridge: %s: cannot open: %s\n", path, strerror(errno));
        return NULL;
    }
    char m[8] = {0};
    size_t got = fread(m, 1, 8, f);
    fclose(f);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && got == 8; i++)
        if (!memcmp(m, kinds[i].magic, 8)) return kinds[i].kind;
    fprintf(stderr, "ridge: %s: not a ridge checkpoint (bad magic)\n", path);
    return NULL;
}

int quant_eval(ridge_ctx *ctx, const quant_model *q, const ridge_mnist *d, quant_eval_result *r)
{
    size_t right;
    uint64_t t0 = ridge_time_ns();
    ridge_status st = q->mlp ? ridge_qmlp_evaluate(ctx, q->mlp, d->images, d->labels, d->n, &r->loss, &right)
                             : ridge_qcnn_evaluate(ctx, q->cnn, d->images, d->labels, d->n, &r->loss, &right);
    if (st) {
        fprintf(stderr, "ridge: int8 evaluation: %s\n", ridge_last_error());
        return -1;
    }
    r->seconds = (double)(ridge_time_ns() - t0) * 1e-9;
    r->accuracy = 100.0 * (double)right / (double)d->n;
    return 0;
}

int quant_check_cnn_data(const ridge_cnn_config *c, size_t classes, const char *source,
                         const ridge_mnist *d)
{
    if ((size_t)c->in_h != d->rows || (size_t)c->in_w != d->cols || c->in_c != 1) {
        fprintf(stderr, "ridge: %s: the model takes %lldx%lldx%lld images, the data has %zux%zu\n",
                source, (long long)c->in_h, (long long)c->in_w, (long long)c->in_c, d->rows,
                d->cols);
        return -1;
    }
    if (classes < (size_t)d->classes) {
        fprintf(stderr, "ridge: %s: the model has %zu outputs, the labels need %d classes\n",
                source, classes, d->classes);
        return -1;
    }
    return 0;
}

int quant_cli_eval(int argc, char **argv)
{
    const int cnn = !strcmp(argv[0], "qcnn");
    const char *name = cnn ? "eval qcnn" : "eval qmlp";
    cli_common c;
    eval_args a;
    if (eval_args_parse(name, &c, &a, argc, argv)) return CLI_USAGE;
    const char *model = a.model, *data = a.data, *split = a.split;
    if (c.help) {
        printf("usage: ridge %s --model FILE [options]\n\n"
               "Evaluates an int8 %s checkpoint (from `ridge quantize`) on a split of an\n"
               "MNIST-format dataset: mean loss and accuracy.\n\n"
               "options:\n"
               "  --model FILE       the int8 checkpoint (required)\n"
               "  --data DIR         MNIST-format directory (default %s)\n"
               "  --split NAME       t10k (the test split, default) or train\n"
               "  --limit N          only the first N images\n" CLI_COMMON_HELP,
               name, cnn ? "CNN" : "MLP", MLP_DEFAULT_DATA);
        return CLI_OK;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist d = {0};
    quant_model q = {0};
    if ((cnn ? ridge_qcnn_load(ctx, model, &q.cnn) : ridge_qmlp_load(ctx, model, &q.mlp)) ||
        ridge_mnist_load(data, split, &d)) {
        fprintf(stderr, "ridge %s: %s\n", name, ridge_last_error());
        goto done;
    }
    char arch[RIDGE_CNN_ARCH_MAX];
    if (cnn) {
        const ridge_cnn_config *cfg = ridge_qcnn_config(q.cnn);
        const ridge_cnn_layer *last = &cfg->layers[cfg->nlayers - 1];
        if (quant_check_cnn_data(cfg, (size_t)last->out, model, &d)) goto done;
        ridge_cnn_arch_format(cfg, arch, sizeof arch);
    } else {
        const ridge_mlp_config *cfg = ridge_qmlp_config(q.mlp);
        if (cfg->sizes[0] != d.rows * d.cols || (size_t)d.classes > cfg->sizes[cfg->nlayers]) {
            fprintf(stderr, "ridge %s: %s takes %zu inputs and %zu classes; %s has %zu pixels and %d classes\n",
                    name, model, cfg->sizes[0], cfg->sizes[cfg->nlayers], data, d.rows * d.cols, d.classes);
            goto done;
        }
        mlp_format_layers(cfg, arch, sizeof arch);
    }
    if (a.limit > 0 && (size_t)a.limit < d.n) d.n = (size_t)a.limit;
    quant_eval_result r;
    if (quant_eval(ctx, &q, &d, &r)) goto done;
    if (c.json)
        printf("{\"model\": \"%s\", \"kind\": \"%s\", \"arch\": \"%s\", \"dtype\": \"int8\", "
               "\"split\": \"%s\", \"images\": %zu, \"loss\": %.6f, \"accuracy\": %.4f, "
               "\"seconds\": %.4f}\n", model, argv[0], arch, split, d.n, r.loss, r.accuracy, r.seconds);
    else
        printf("%s: int8 %s %s\n%s split of %s: %zu images\nloss %.4f  accuracy %.2f%%  (%.3f s)\n",
               model, cnn ? "cnn" : "mlp", arch, split, data, d.n, r.loss, r.accuracy, r.seconds);
    rc = CLI_OK;
done:
    ridge_qmlp_destroy(q.mlp);
    ridge_qcnn_destroy(q.cnn);
    ridge_mnist_free(&d);
    ridge_ctx_destroy(ctx);
    return rc;
}
