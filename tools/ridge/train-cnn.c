/* ridge train cnn / ridge eval cnn: a convolutional classifier on an MNIST-format dataset,
 * with the same options, progress, checkpoints and resume behaviour as `ridge train mlp`.
 * Defaults: Fashion-MNIST from /usr/share/datasets/fashion-mnist, the network
 * (RIDGE_CNN_DEFAULT_ARCH), batch 64, AdamW lr 1e-3 (weight decay 0.01) with a cosine
 * schedule after 100 warm-up steps, 10 epochs, seed 1. */
#include <stdlib.h>
#include <string.h>

#include "dist-cli.h" /* mpi */
#include "mlp-cli.h"
#include "trainer-cli.h"

int train_cnn(int argc, char **argv);
int eval_cnn(int argc, char **argv);

static void help(void)
{
    printf("usage: ridge train cnn [options]\n\n"
           "Trains a convolutional network on an MNIST-format dataset and reports, after each\n"
           "epoch, the training loss, the test loss and accuracy, and the epoch's time. The same\n"
           "seed, batch and thread count give the same losses; --resume continues bit for bit.\n"
           "\noptions:\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --arch LAYERS      the network, comma-separated (default\n"
           "                     %s):\n"
           "                     convKxK-C, convKxKsS-C, bn, relu, maxpoolK[sS], avgpoolK[sS],\n"
           "                     dense-N; the last is dense-<classes>\n"
           "  --epochs N         train until N epochs are done (default 10)\n"
           "  --batch N          batch size (default 64)\n"
           "  --optimizer NAME   adamw or sgd (default adamw)\n"
           "  --lr F             peak learning rate (default 1e-3 adamw, 0.05 sgd)\n"
           "  --momentum F       sgd momentum (default 0.9)\n"
           "  --weight-decay F   decoupled weight decay (default 0.01)\n"
           "  --schedule NAME    cosine (after warm-up, to 0 at the last epoch) or constant\n"
           "                     (default cosine)\n"
           "  --warmup N         warm-up steps for cosine (default 100)\n"
           "  --seed N           seed for initialization and shuffling (default 1)\n"
           "  --limit N          train on the first N training images only\n"
           "  --test-limit N     evaluate on the first N test images only\n"
           "  --save FILE        save a checkpoint after every epoch (atomically)\n"
           "  --resume FILE      continue from a checkpoint (its architecture, optimizer,\n"
           "                     batch and seed; --epochs may extend the run)\n"
           "  --stop-after N     stop after N epochs in this run\n"
           "  --quiet            no progress line\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA, RIDGE_CNN_DEFAULT_ARCH);
}

/* The images must be the model's input size and the labels fit its classes. */
static int check_data(const ridge_cnn *m, const char *source, const ridge_mnist *d)
{
    char arch[RIDGE_CNN_ARCH_MAX];
    ridge_cnn_arch_format(&m->cfg, arch, sizeof arch);
    if ((size_t)m->cfg.in_h != d->rows || (size_t)m->cfg.in_w != d->cols || m->cfg.in_c != 1) {
        fprintf(stderr, "ridge: %s: the model takes %lldx%lldx%lld images, the data has %zux%zu\n",
                source, (long long)m->cfg.in_h, (long long)m->cfg.in_w, (long long)m->cfg.in_c,
                d->rows, d->cols);
        return -1;
    }
    if (m->classes < (size_t)d->classes) {
        fprintf(stderr, "ridge: %s: the model has %zu outputs (%s), the labels need %d classes\n",
                source, m->classes, arch, d->classes);
        return -1;
    }
    return 0;
}

static ridge_status train_epoch(ridge_ctx *ctx, void *m, const uint8_t *images,
                                const uint8_t *labels, size_t n,
                                int (*fn)(void *, size_t, size_t, double, size_t), void *arg,
                                double *mean_loss)
{
    return ridge_cnn_train_epoch(ctx, m, images, labels, n, fn, arg, mean_loss);
}

static ridge_status evaluate(ridge_ctx *ctx, void *m, const uint8_t *images,
                             const uint8_t *labels, size_t n, double *loss, size_t *correct,
                             uint64_t *confusion)
{
    return ridge_cnn_evaluate(ctx, m, images, labels, n, loss, correct, confusion);
}

static ridge_status save(const void *m, const char *path)
{
    return ridge_cnn_save(m, path);
}

int train_cnn(int argc, char **argv)
{
    train_opts o;
    int rc = train_opts_parse(&o, TRAIN_CNN, "train cnn", argc, argv);
    if (rc) return rc;
    if (o.c.help) {
        help();
        return CLI_OK;
    }

    ridge_cnn_config cc;
    ridge_cnn_config_init(&cc);
    if (ridge_cnn_arch_parse(o.arch ? o.arch : RIDGE_CNN_DEFAULT_ARCH, &cc)) {
        fprintf(stderr, "ridge train cnn: --arch: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    ridge_optim_config oc;
    if ((rc = train_optim_config(&o, "train cnn", &oc))) return rc;

    int rank, nranks; /* mpi: under mpirun, each rank trains its share of every batch */
    if (cli_dist_init(&rank, &nranks)) return CLI_FAIL;
    ridge_ctx *ctx = cli_make_ctx(&o.c);
    if (!ctx) {
        cli_dist_end(CLI_FAIL, "no context"); /* mpi */
        return CLI_FAIL;
    }
    rc = CLI_FAIL;
    ridge_mnist tr = {0}, te = {0};
    ridge_cnn *m = NULL;
    if (train_load_data(&o, "train cnn", &tr, &te)) goto done;
    const size_t ntrain = o.limit > 0 && (size_t)o.limit < tr.n ? (size_t)o.limit : tr.n;
    const size_t ntest = o.test_limit > 0 && (size_t)o.test_limit < te.n ? (size_t)o.test_limit
                                                                          : te.n;
    if (o.resume) {
        if (ridge_cnn_load(o.resume, &m)) {
            fprintf(stderr, "ridge train cnn: %s\n", ridge_last_error());
            goto done;
        }
        if (o.batch > 0 && (size_t)o.batch != m->batch) {
            fprintf(stderr, "ridge train cnn: %s was trained with batch %zu, --batch asks for "
                    "%ld (resuming needs the same batch)\n", o.resume, m->batch, o.batch);
            rc = CLI_USAGE;
            goto done;
        }
    } else {
        cc.in_h = (int64_t)tr.rows, cc.in_w = (int64_t)tr.cols, cc.in_c = 1;
        mlp_input_stats(tr.images, ntrain * tr.rows * tr.cols, &cc.in_mean, &cc.in_std);
        const size_t batch = o.batch > 0 ? (size_t)o.batch : 64;
        oc.total = (uint64_t)o.epochs * ((ntrain + batch - 1) / batch);
        if (ridge_cnn_create(&cc, &oc, batch, o.seed >= 0 ? (uint64_t)o.seed : 1, &m)) {
            fprintf(stderr, "ridge train cnn: %s\n", ridge_last_error());
            rc = CLI_USAGE;
            goto done;
        }
    }
    if (check_data(m, o.resume ? o.resume : "--arch", &tr) ||
        check_data(m, o.resume ? o.resume : "--arch", &te)) {
        rc = CLI_USAGE;
        goto done;
    }

    m->dp = cli_dist_dp(rank, nranks); /* mpi */
    char arch[RIDGE_CNN_ARCH_MAX];
    ridge_cnn_arch_format(&m->cfg, arch, sizeof arch);
    if (!o.c.json)
        printf("cnn %s, %zu parameters, %s lr %g (%s), batch %zu, %zu training / %zu test images "
               "from %s, %d threads\n", arch, m->nparams, ridge_optim_name(m->opt.kind),
               m->opt.lr, ridge_lr_name(m->opt.schedule), m->batch, ntrain, ntest, o.data,
               ridge_ctx_threads(ctx));
    else
        printf("{\"model\": \"cnn\", \"arch\": \"%s\", \"parameters\": %zu, \"optimizer\": \"%s\", "
               "\"lr\": %g, \"schedule\": \"%s\", \"batch\": %zu, \"seed\": %llu, \"threads\": %d, "
               "\"train_images\": %zu, \"test_images\": %zu, \"epochs\": [",
               arch, m->nparams, ridge_optim_name(m->opt.kind), m->opt.lr,
               ridge_lr_name(m->opt.schedule), m->batch, (unsigned long long)m->seed,
               ridge_ctx_threads(ctx), ntrain, ntest);
    fflush(stdout);
    train_model tm = {"train cnn", m, &m->epoch, train_epoch, evaluate, save};
    rc = train_run(&o, ctx, &tm, &tr, ntrain, &te, ntest, rank, nranks);
done:
    ridge_cnn_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    cli_dist_end(rc, "train cnn failed"); /* mpi */
    return rc;
}

static void eval_help(void)
{
    printf("usage: ridge eval cnn --model FILE [options]\n\n"
           "Evaluates a CNN checkpoint (batch norms folded into the convolutions) on a split of\n"
           "an MNIST-format dataset: the mean loss, the accuracy and the confusion matrix (rows:\n"
           "true label, columns: prediction).\n\noptions:\n"
           "  --model FILE       the checkpoint (required)\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --split NAME       t10k (the test split, default) or train\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA);
}

int eval_cnn(int argc, char **argv)
{
    cli_common c;
    eval_args a;
    if (eval_args_parse("eval cnn", &c, &a, argc, argv)) return CLI_USAGE;
    const char *model = a.model, *data = a.data, *split = a.split;
    if (c.help) {
        eval_help();
        return CLI_OK;
    }
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) return CLI_FAIL;
    int rc = CLI_FAIL;
    ridge_mnist d = {0};
    ridge_cnn *m = NULL;
    uint64_t *conf = NULL;
    if (ridge_cnn_load(model, &m) || ridge_mnist_load(data, split, &d)) {
        fprintf(stderr, "ridge eval cnn: %s\n", ridge_last_error());
        goto done;
    }
    if (check_data(m, model, &d)) goto done;
    if (a.limit > 0 && (size_t)a.limit < d.n) d.n = (size_t)a.limit;
    const size_t C = m->classes;
    conf = calloc(C * C, sizeof *conf);
    double loss;
    size_t right;
    if (!conf || ridge_cnn_evaluate(ctx, m, d.images, d.labels, d.n, &loss, &right, conf)) {
        fprintf(stderr, "ridge eval cnn: %s\n", conf ? ridge_last_error() : "out of memory");
        goto done;
    }
    char arch[RIDGE_CNN_ARCH_MAX];
    ridge_cnn_arch_format(&m->cfg, arch, sizeof arch);
    const eval_report r = {model, "cnn", "arch", arch, split, data, m->epoch,
                               d.n, right, C, loss, conf};
    eval_report_print(&r, c.json);
    rc = CLI_OK;
done:
    free(conf);
    ridge_cnn_destroy(m);
    ridge_mnist_free(&d);
    ridge_ctx_destroy(ctx);
    return rc;
}
