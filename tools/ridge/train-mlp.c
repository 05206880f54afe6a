/* ridge train mlp: trains an MLP classifier on an MNIST-format dataset, evaluating on the test
 * split after every epoch. Defaults: Fashion-MNIST from /usr/share/datasets/fashion-mnist,
 * 784-128-10 ReLU, batch 64, AdamW lr 1e-3 (weight decay 0.01) with a cosine schedule after
 * 100 warm-up steps, 10 epochs, seed 1. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mlp-cli.h"
#include "dist-cli.h" /* mpi */

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

typedef struct progress {
    ridge_ctx *ctx;
    int tty;
    unsigned epoch, epochs;
    uint64_t t0, last;
} progress;

static int on_step(void *arg, size_t step, size_t steps, double loss, size_t samples)
{
    progress *p = arg;
    if (cli_profile_step(p->ctx)) return 1; /* `ridge profile` has what it needs */
    uint64_t now = ridge_time_ns();
    if (!p->tty || (now - p->last < 100000000 && step < steps)) return 0;
    p->last = now;
    double s = (double)(now - p->t0) * 1e-9, rate = (double)samples / (s > 0 ? s : 1e-9);
    double eta = s / (double)step * (double)(steps - step) +
                 s / (double)step * (double)steps * (p->epochs - p->epoch);
    fprintf(stderr, "\r\033[Kepoch %u/%u  step %zu/%zu  loss %.4f  %.0f samples/s  ETA %.0f s",
            p->epoch, p->epochs, step, steps, loss, rate, eta);
    return 0;
}

typedef struct opts {
    const char *data, *save, *resume, *layers, *act, *optimizer, *schedule;
    long epochs, batch, warmup, seed, limit, stop_after;
    double lr, momentum, weight_decay, dropout;
    int quiet;
} opts;

int train_mlp(int argc, char **argv)
{
    cli_common c;
    cli_common_init(&c);
    opts o = {.data = MLP_DEFAULT_DATA, .epochs = 10, .batch = -1, .warmup = -1, .seed = -1,
              .lr = -1, .momentum = -1, .weight_decay = -1, .dropout = -1};
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--quiet")) {
            o.quiet = 1;
            i++;
            continue;
        }
        if (!strcmp(a, "--data")) bad = mlp_str_arg(a, v, &o.data);
        else if (!strcmp(a, "--save")) bad = mlp_str_arg(a, v, &o.save);
        else if (!strcmp(a, "--resume")) bad = mlp_str_arg(a, v, &o.resume);
        else if (!strcmp(a, "--layers")) bad = mlp_str_arg(a, v, &o.layers);
        else if (!strcmp(a, "--act")) bad = mlp_str_arg(a, v, &o.act);
        else if (!strcmp(a, "--optimizer")) bad = mlp_str_arg(a, v, &o.optimizer);
        else if (!strcmp(a, "--schedule")) bad = mlp_str_arg(a, v, &o.schedule);
        else if (!strcmp(a, "--epochs")) bad = cli_int_arg(a, v, 1, 100000, &o.epochs);
        else if (!strcmp(a, "--batch")) bad = cli_int_arg(a, v, 1, 1 << 20, &o.batch);
        else if (!strcmp(a, "--warmup")) bad = cli_int_arg(a, v, 0, 1L << 40, &o.warmup);
        else if (!strcmp(a, "--seed")) bad = cli_int_arg(a, v, 0, 0x7fffffffffffffffL, &o.seed);
        else if (!strcmp(a, "--stop-after")) bad = cli_int_arg(a, v, 1, 100000, &o.stop_after);
        else if (!strcmp(a, "--limit")) bad = cli_int_arg(a, v, 1, 0x7fffffffL, &o.limit);
        else if (!strcmp(a, "--lr")) bad = mlp_float_arg(a, v, 1e-9, 100, &o.lr);
        else if (!strcmp(a, "--momentum")) bad = mlp_float_arg(a, v, 0, 0.9999, &o.momentum);
        else if (!strcmp(a, "--weight-decay")) bad = mlp_float_arg(a, v, 0, 10, &o.weight_decay);
        else if (!strcmp(a, "--dropout")) bad = mlp_float_arg(a, v, 0, 0.99, &o.dropout);
        else return cli_unknown("train mlp", a);
        if (bad) return CLI_USAGE;
        i += 2;
    }
    if (c.help) {
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
    ridge_optim_config_init(&oc);
    oc.schedule = RIDGE_LR_COSINE;
    oc.warmup = 100;
    if ((o.optimizer && ridge_optim_parse(o.optimizer, &oc.kind)) ||
        (o.schedule && ridge_lr_parse(o.schedule, &oc.schedule))) {
        fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
        return CLI_USAGE;
    }
    if (oc.kind == RIDGE_OPTIM_SGD) oc.lr = 0.05f;
    if (o.resume) {
        const char *fixed[] = {o.act ? "--act" : NULL, o.optimizer ? "--optimizer" : NULL,
                               o.schedule ? "--schedule" : NULL, o.lr >= 0 ? "--lr" : NULL,
                               o.momentum >= 0 ? "--momentum" : NULL,
                               o.weight_decay >= 0 ? "--weight-decay" : NULL,
                               o.dropout >= 0 ? "--dropout" : NULL,
                               o.warmup >= 0 ? "--warmup" : NULL, o.seed >= 0 ? "--seed" : NULL};
        for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
            if (fixed[i]) {
                fprintf(stderr, "ridge train mlp: %s cannot change with --resume (the checkpoint "
                        "fixes it, so that the run continues exactly)\n", fixed[i]);
                return CLI_USAGE;
            }
    }

    int rank, nranks; /* mpi: under mpirun, each rank trains its share of every batch */
    if (cli_dist_init(&rank, &nranks)) return CLI_FAIL;
    ridge_ctx *ctx = cli_make_ctx(&c);
    if (!ctx) {
        cli_dist_end(CLI_FAIL, "no context"); /* mpi */
        return CLI_FAIL;
    }
    int rc = CLI_FAIL;
    ridge_mnist tr = {0}, te = {0};
    ridge_mlp *m = NULL;
    if (ridge_mnist_load(o.data, "train", &tr) || ridge_mnist_load(o.data, "t10k", &te)) {
        fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
        goto done;
    }
    const size_t pixels = tr.rows * tr.cols;
    if (te.rows * te.cols != pixels) {
        fprintf(stderr, "ridge train mlp: %s: test images are %zux%zu, training images %zux%zu\n",
                o.data, te.rows, te.cols, tr.rows, tr.cols);
        goto done;
    }
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
        if (o.lr > 0) oc.lr = (float)o.lr;
        if (o.momentum >= 0) oc.momentum = (float)o.momentum;
        if (o.weight_decay >= 0) oc.weight_decay = (float)o.weight_decay;
        if (o.warmup >= 0) oc.warmup = (uint64_t)o.warmup;
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

    if (nranks > 1) m->rank = rank, m->nranks = nranks, m->grad_mean = cli_dist_mean; /* mpi */
    char layers[256];
    mlp_format_layers(&m->cfg, layers, sizeof layers);
    if (!c.json)
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

    progress p = {.ctx = ctx, .tty = !o.quiet && isatty(2), .epochs = (unsigned)o.epochs};
    size_t right = 0;
    double test_loss = NAN;
    int first = 1;
    if (m->epoch >= (uint32_t)o.epochs && !c.json)
        printf("%s has %u epochs done already (--epochs %ld)\n", o.resume, m->epoch, o.epochs);
    const uint32_t stop = o.stop_after > 0 && m->epoch + (uint64_t)o.stop_after < (uint64_t)o.epochs
                              ? m->epoch + (uint32_t)o.stop_after
                              : (uint32_t)o.epochs;
    while (m->epoch < stop) {
        p.epoch = m->epoch + 1;
        p.t0 = p.last = ridge_time_ns();
        double train_loss;
        if (ridge_mlp_train_epoch(ctx, m, tr.images, tr.labels, ntrain, on_step, &p,
                                  &train_loss)) {
            if (p.tty) fputc('\n', stderr);
            fprintf(stderr, "ridge train mlp: epoch %u: %s\n", p.epoch, ridge_last_error());
            goto done;
        }
        if (cli_profile_finished()) { /* `ridge profile` stopped the epoch: nothing to report */
            if (p.tty) fprintf(stderr, "\r\033[K");
            rc = CLI_OK;
            goto done;
        }
        float tl = (float)train_loss; /* mpi: the mean over the ranks' equal shares */
        if (nranks > 1 && cli_dist_mean(&tl, 1)) goto done;
        if (nranks > 1) train_loss = tl;
        double secs = (double)(ridge_time_ns() - p.t0) * 1e-9;
        if (p.tty) fprintf(stderr, "\r\033[K");
        if (ridge_mlp_evaluate(ctx, m, te.images, te.labels, te.n, &test_loss, &right, NULL)) {
            fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
            goto done;
        }
        if (o.save && rank == 0 && ridge_mlp_save(m, o.save)) { /* mpi: rank 0 writes */
            fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
            goto done;
        }
        double acc = 100.0 * (double)right / (double)te.n;
        if (c.json)
            printf("%s{\"epoch\": %u, \"train_loss\": %.6f, \"test_loss\": %.6f, "
                   "\"test_accuracy\": %.4f, \"seconds\": %.3f, \"samples_per_s\": %.0f}",
                   first ? "" : ", ", p.epoch, train_loss, test_loss, acc, secs,
                   (double)ntrain / secs);
        else
            printf("epoch %u/%ld  train loss %.4f  test loss %.4f  test accuracy %.2f%%  "
                   "%.2f s (%.0f samples/s)\n",
                   p.epoch, o.epochs, train_loss, test_loss, acc, secs, (double)ntrain / secs);
        fflush(stdout);
        first = 0;
    }
    if (first && ridge_mlp_evaluate(ctx, m, te.images, te.labels, te.n, &test_loss, &right, NULL)) {
        fprintf(stderr, "ridge train mlp: %s\n", ridge_last_error());
        goto done;
    }
    double acc = 100.0 * (double)right / (double)te.n;
    if (c.json)
        printf("], \"test_loss\": %.6f, \"test_accuracy\": %.4f%s%s%s}\n", test_loss, acc,
               o.save ? ", \"saved\": \"" : "", o.save ? o.save : "", o.save ? "\"" : "");
    else
        printf("test accuracy %.2f%% (%zu/%zu)%s%s\n", acc, right, te.n,
               o.save ? ", saved to " : "", o.save ? o.save : "");
    rc = CLI_OK;
done:
    ridge_mlp_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    cli_dist_end(rc, "train mlp failed"); /* mpi */
    return rc;
}
