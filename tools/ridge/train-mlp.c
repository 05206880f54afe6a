/* ridge train mlp: trains an MLP classifier on an MNIST-format dataset, evaluating on the test
 * split after every epoch. Defaults: Fashion-MNIST from /usr/share/datasets/fashion-mnist,
 * 784-128-10 ReLU, batch 64, AdamW lr 1e-3 (weight decay 0.01) with a cosine schedule after
 * 100 warm-up steps, 10 epochs, seed 1. */
#include "dist-cli.h" /* mpi */
#include "mlp-cli.h"
#include "trainer-cli.h"

int train_mlp(int argc, char **argv);

static void help(void)
{
    printf("usage: ridge train mlp [options]\n\n"
           "Trains a multilayer perceptron on an MNIST-format dataset and reports, after each\n"
           "epoch, the training loss and the test loss and accuracy. The same seed, batch and\n"
           "thread count give the same losses; --resume continues bit for bit.\n\noptions:\n"
           "  --data DIR         MNIST-format directory (default %s)\n"
           "  --layers A,B,..,Z  layer sizes, inputs first (default: pixels,128,classes)\n"
           "  --act NAME         hidden activation: relu, tanh, sigmoid, none (default relu)\n"
           "  --dropout P        dropout after each hidden activation (default 0)\n"
           "  --epochs N         train until N epochs are done (default 10)\n"
           "  --batch N          batch size (default 64)\n"
           "  --optimizer NAME   adamw or sgd (default adamw)\n"
           "  --lr F             peak learning rate (default 1e-3 adamw, 0.05 sgd)\n"
           "  --momentum F       sgd momentum (default 0.9)\n"
           "  --weight-decay F   decoupled weight decay (default 0.01)\n"
           "  --schedule NAME    cosine (after warm-up, to 0 at the last epoch) or constant\n"
           "                     (default cosine)\n"
           "  --warmup N         warm-up steps for cosine (default 100)\n"
           "  --seed N           seed for initialization, shuffling and dropout (default 1)\n"
           "  --limit N          use only the first N images of each split (quick runs)\n"
           "  --save FILE        save a checkpoint after every epoch (atomically)\n"
           "  --resume FILE      continue from a checkpoint (its architecture, optimizer,\n"
           "                     batch and seed; --epochs may extend the run)\n"
           "  --stop-after N     stop after N epochs in this run (resume later with the same\n"
           "                     --epochs: the result is the same as one uninterrupted run)\n"
           "  --quiet            no progress line\n" CLI_COMMON_HELP,
           MLP_DEFAULT_DATA);
}

static ridge_status train_epoch(ridge_ctx *ctx, void *m, const uint8_t *images,
                                const uint8_t *labels, size_t n,
                                int (*fn)(void *, size_t, size_t, double, size_t), void *arg,
                                double *mean_loss)
{
    return ridge_mlp_train_epoch(ctx, m, images, labels, n, fn, arg, mean_loss);
}

static ridge_status evaluate(ridge_ctx *ctx, void *m, const uint8_t *images,
                             const uint8_t *labels, size_t n, double *loss, size_t *correct,
                             uint64_t *confusion)
{
    return ridge_mlp_evaluate(ctx, m, images, labels, n, loss, correct, confusion);
}

static ridge_status save(const void *m, const char *path)
{
    return ridge_mlp_save(m, path);
}

int train_mlp(int argc, char **argv)
{
    train_opts o;
    int rc = train_opts_parse(&o, TRAIN_MLP, "train mlp", argc, argv);
    if (rc) return rc;
    if (o.c.help) {
        help();
        return CLI_OK;
    }

    /* what the command line asks for, before looking at data or checkpoint */
    ridge_mlp_config mc = {.act = RIDGE_EPI_RELU};
    if (o.layers && mlp_parse_layers(o.layers, &mc)) return CLI_USAGE;
    if (o.act && ridge_nn_act_parse(o.act, &mc.act)) {
        fprintf(stderr, "ridge train mlp: --act: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    ridge_optim_config oc;
    if ((rc = train_optim_config(&o, "train mlp", &oc))) return rc;

    int rank, nranks; /* mpi: under mpirun, each rank trains its share of every batch */
    if (cli_dist_init(&rank, &nranks)) return CLI_FAIL;
    ridge_ctx *ctx = cli_make_ctx(&o.c);
    if (!ctx) {
        cli_dist_end(CLI_FAIL, "no context"); /* mpi */
        return CLI_FAIL;
    }
    rc = CLI_FAIL;
    ridge_mnist tr = {0}, te = {0};
    ridge_mlp *m = NULL;
    if (train_load_data(&o, "train mlp", &tr, &te)) goto done;
    const size_t pixels = tr.rows * tr.cols;
    const int classes = tr.classes > te.classes ? tr.classes : te.classes;
    const size_t ntrain = o.limit > 0 && (size_t)o.limit < tr.n ? (size_t)o.limit : tr.n;
    if (o.limit > 0 && (size_t)o.limit < te.n) te.n = (size_t)o.limit;

    if (o.resume) {
        if (ridge_mlp_load(o.resume, &m)) {
            fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
            goto done;
        }
        if (o.layers && !mlp_same_layers(&mc, &m->cfg)) {
            char want[256], have[256];
            fprintf(stderr, "ridge train mlp: %s has layers %s, but --layers asks for %s\n",
                    o.resume, mlp_format_layers(&m->cfg, have, sizeof have),
                    mlp_format_layers(&mc, want, sizeof want));
            rc = CLI_USAGE;
            goto done;
        }
        if (o.batch > 0 && (size_t)o.batch != m->batch) {
            fprintf(stderr, "ridge train mlp: %s was trained with batch %zu, --batch asks for "
                    "%ld (resuming needs the same batch)\n", o.resume, m->batch, o.batch);
            rc = CLI_USAGE;
            goto done;
        }
    } else {
        if (!o.layers) {
            mc.nlayers = 2;
            mc.sizes[0] = pixels;
            mc.sizes[1] = 128;
            mc.sizes[2] = (size_t)classes;
        }
        mc.dropout = o.dropout > 0 ? (float)o.dropout : 0.0f;
        mlp_input_stats(tr.images, ntrain * pixels, &mc.in_mean, &mc.in_std);
        const size_t batch = o.batch > 0 ? (size_t)o.batch : 64;
        oc.total = (uint64_t)o.epochs * ((ntrain + batch - 1) / batch);
        if (ridge_mlp_create(&mc, &oc, batch, o.seed >= 0 ? (uint64_t)o.seed : 1, &m)) {
            fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
            rc = CLI_USAGE;
            goto done;
        }
    }
    if (mlp_check_data(m, o.resume ? o.resume : "--layers", pixels, classes)) {
        rc = CLI_USAGE;
        goto done;
    }

    m->dp = cli_dist_dp(rank, nranks); /* mpi */
    char layers[256];
    mlp_format_layers(&m->cfg, layers, sizeof layers);
    if (!o.c.json)
        printf("mlp %s %s, %s lr %g (%s), batch %zu, %zu training / %zu test images from %s, "
               "%d threads\n",
               layers, ridge_nn_act_name(m->cfg.act), ridge_optim_name(m->opt.kind), m->opt.lr,
               ridge_lr_name(m->opt.schedule), m->batch, ntrain, te.n, o.data,
               ridge_ctx_threads(ctx));
    else
        printf("{\"model\": \"mlp\", \"layers\": \"%s\", \"act\": \"%s\", \"optimizer\": \"%s\", "
               "\"lr\": %g, \"schedule\": \"%s\", \"batch\": %zu, \"seed\": %llu, \"threads\": %d, "
               "\"train_images\": %zu, \"test_images\": %zu, \"epochs\": [",
               layers, ridge_nn_act_name(m->cfg.act), ridge_optim_name(m->opt.kind), m->opt.lr,
               ridge_lr_name(m->opt.schedule), m->batch, (unsigned long long)m->seed,
               ridge_ctx_threads(ctx), ntrain, te.n);
    fflush(stdout);
    train_model tm = {"train mlp", m, &m->epoch, train_epoch, evaluate, save};
    rc = train_run(&o, ctx, &tm, &tr, ntrain, &te, te.n, rank, nranks);
done:
    ridge_mlp_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    cli_dist_end(rc, "train mlp failed"); /* mpi */
    return rc;
}
