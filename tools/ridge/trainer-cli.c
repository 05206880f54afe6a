/* The trainers' shared option table, parser and epoch loop (trainer-cli.h). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist-cli.h" /* mpi */
#include "mlp-cli.h"
#include "trainer-cli.h"

/* One option: its kind ('s' string, 'i' integer, 'f' number), where it goes, its range, the
 * trainers that take it, and whether a checkpoint fixes it (refused with --resume). */
typedef struct train_opt {
    const char *name;
    char kind;
    size_t off;
    long ilo, ihi;   /* integers */
    double flo, fhi; /* numbers */
    unsigned models;
    int fixed;
} train_opt;

#define S(f) 's', offsetof(train_opts, f), 0, 0, 0, 0
#define I(f, lo, hi) 'i', offsetof(train_opts, f), lo, hi, 0, 0
#define F(f, lo, hi) 'f', offsetof(train_opts, f), 0, 0, lo, hi
#define BOTH (TRAIN_MLP | TRAIN_CNN)
static const train_opt options[] = {
    {"--data", S(data), BOTH, 0},
    {"--save", S(save), BOTH, 0},
    {"--resume", S(resume), BOTH, 0},
    {"--layers", S(layers), TRAIN_MLP, 0}, /* checked against the checkpoint instead */
    {"--arch", S(arch), TRAIN_CNN, 1},
    {"--act", S(act), TRAIN_MLP, 1},
    {"--optimizer", S(optimizer), BOTH, 1},
    {"--schedule", S(schedule), BOTH, 1},
    {"--epochs", I(epochs, 1, 100000), BOTH, 0},
    {"--batch", I(batch, 1, 1 << 20), BOTH, 0},
    {"--warmup", I(warmup, 0, 1L << 40), BOTH, 1},
    {"--seed", I(seed, 0, 0x7fffffffffffffffL), BOTH, 1},
    {"--stop-after", I(stop_after, 1, 100000), BOTH, 0},
    {"--limit", I(limit, 1, 0x7fffffffL), BOTH, 0},
    {"--test-limit", I(test_limit, 1, 0x7fffffffL), TRAIN_CNN, 0},
    {"--lr", F(lr, 1e-9, 100), BOTH, 1},
    {"--momentum", F(momentum, 0, 0.9999), BOTH, 1},
    {"--weight-decay", F(weight_decay, 0, 10), BOTH, 1},
    {"--dropout", F(dropout, 0, 0.99), TRAIN_MLP, 1},
};
#undef S
#undef I
#undef F
#undef BOTH
enum { NOPTIONS = sizeof options / sizeof options[0] };

int train_opts_parse(train_opts *o, unsigned model, const char *cmd, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    cli_common_init(&o->c);
    o->data = MLP_DEFAULT_DATA, o->epochs = 10;
    o->batch = o->warmup = o->seed = o->limit = o->test_limit = o->stop_after = -1;
    o->lr = o->momentum = o->weight_decay = o->dropout = -1;
    int given[NOPTIONS] = {0};
    for (int i = 1; i < argc;) {
        int r = cli_common_parse(&o->c, argc, argv, &i);
        if (r < 0) return CLI_USAGE;
        if (r > 0) continue;
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            i++;
            continue;
        }
        int k = 0;
        while (k < NOPTIONS && (strcmp(a, options[k].name) || !(options[k].models & model))) k++;
        if (k == NOPTIONS) return cli_unknown(cmd, a);
        const train_opt *t = &options[k];
        char *field = (char *)o + t->off;
        int bad = t->kind == 's' ? mlp_str_arg(a, v, (const char **)(void *)field)
                  : t->kind == 'i' ? cli_int_arg(a, v, t->ilo, t->ihi, (long *)(void *)field)
                                   : mlp_float_arg(a, v, t->flo, t->fhi, (double *)(void *)field);
        if (bad) return CLI_USAGE;
        given[k] = 1;
        i += 2;
    }
    if (o->resume && !o->c.help)
        for (int k = 0; k < NOPTIONS; k++)
            if (given[k] && options[k].fixed) {
                fprintf(stderr, "ridge %s: %s cannot change with --resume (the checkpoint "
                        "fixes it, so that the run continues exactly)\n", cmd, options[k].name);
                return CLI_USAGE;
            }
    return CLI_OK;
}

int train_optim_config(const train_opts *o, const char *cmd, ridge_optim_config *oc)
{
    ridge_optim_config_init(oc);
    oc->schedule = RIDGE_LR_COSINE;
    oc->warmup = 100;
    if ((o->optimizer && ridge_optim_parse(o->optimizer, &oc->kind)) ||
        (o->schedule && ridge_lr_parse(o->schedule, &oc->schedule))) {
        fprintf(stderr, "ridge %s: %s\n", cmd, ridge_last_error());
        return CLI_USAGE;
    }
    if (oc->kind == RIDGE_OPTIM_SGD) oc->lr = 0.05f;
    if (o->lr > 0) oc->lr = (float)o->lr;
    if (o->momentum >= 0) oc->momentum = (float)o->momentum;
    if (o->weight_decay >= 0) oc->weight_decay = (float)o->weight_decay;
    if (o->warmup >= 0) oc->warmup = (uint64_t)o->warmup;
    return CLI_OK;
}

int train_load_data(const train_opts *o, const char *cmd, ridge_mnist *tr, ridge_mnist *te)
{
    if (ridge_mnist_load(o->data, "train", tr) || ridge_mnist_load(o->data, "t10k", te)) {
        fprintf(stderr, "ridge %s: %s\n", cmd, ridge_last_error());
        return CLI_FAIL;
    }
    if (te->rows != tr->rows || te->cols != tr->cols) {
        fprintf(stderr, "ridge %s: %s: test images are %zux%zu, training images %zux%zu\n", cmd,
                o->data, te->rows, te->cols, tr->rows, tr->cols);
        return CLI_FAIL;
    }
    return CLI_OK;
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

int train_run(const train_opts *o, ridge_ctx *ctx, const train_model *tm, const ridge_mnist *tr,
              size_t ntrain, const ridge_mnist *te, size_t ntest, int rank, int nranks)
{
    const int json = o->c.json;
    progress p = {.ctx = ctx, .tty = !o->quiet && isatty(2), .epochs = (unsigned)o->epochs};
    size_t right = 0;
    double test_loss = NAN;
    int first = 1;
    uint32_t *epoch = tm->epoch;
    if (*epoch >= (uint32_t)o->epochs && !json)
        printf("%s has %u epochs done already (--epochs %ld)\n", o->resume, *epoch, o->epochs);
    const uint32_t stop = o->stop_after > 0 && *epoch + (uint64_t)o->stop_after < (uint64_t)o->epochs
                              ? *epoch + (uint32_t)o->stop_after
                              : (uint32_t)o->epochs;
    while (*epoch < stop) {
        p.epoch = *epoch + 1;
        p.t0 = p.last = ridge_time_ns();
        double train_loss;
        if (tm->train_epoch(ctx, tm->model, tr->images, tr->labels, ntrain, on_step, &p,
                            &train_loss)) {
            if (p.tty) fputc('\n', stderr);
            fprintf(stderr, "ridge %s: epoch %u: %s\n", tm->cmd, p.epoch, ridge_last_error());
            return CLI_FAIL;
        }
        if (cli_profile_finished()) { /* `ridge profile` stopped the epoch: nothing to report */
            if (p.tty) fprintf(stderr, "\r\033[K");
            return CLI_OK;
        }
        float tl = (float)train_loss; /* mpi: the mean over the ranks' equal shares */
        if (nranks > 1 && cli_dist_mean(&tl, 1)) return CLI_FAIL;
        if (nranks > 1) train_loss = tl;
        double secs = (double)(ridge_time_ns() - p.t0) * 1e-9;
        if (p.tty) fprintf(stderr, "\r\033[K");
        if (tm->evaluate(ctx, tm->model, te->images, te->labels, ntest, &test_loss, &right,
                         NULL)) {
            fprintf(stderr, "ridge %s: %s\n", tm->cmd, ridge_last_error());
            return CLI_FAIL;
        }
        if (o->save && rank == 0 && tm->save(tm->model, o->save)) { /* mpi: rank 0 writes */
            fprintf(stderr, "ridge %s: %s\n", tm->cmd, ridge_last_error());
            return CLI_FAIL;
        }
        double acc = 100.0 * (double)right / (double)ntest;
        if (json)
            printf("%s{\"epoch\": %u, \"train_loss\": %.6f, \"test_loss\": %.6f, "
                   "\"test_accuracy\": %.4f, \"seconds\": %.3f, \"samples_per_s\": %.0f}",
                   first ? "" : ", ", p.epoch, train_loss, test_loss, acc, secs,
                   (double)ntrain / secs);
        else
            printf("epoch %u/%ld  train loss %.4f  test loss %.4f  test accuracy %.2f%%  "
                   "%.2f s (%.0f samples/s)\n",
                   p.epoch, o->epochs, train_loss, test_loss, acc, secs, (double)ntrain / secs);
        fflush(stdout);
        first = 0;
    }
    if (first &&
        tm->evaluate(ctx, tm->model, te->images, te->labels, ntest, &test_loss, &right, NULL)) {
        fprintf(stderr, "ridge %s: %s\n", tm->cmd, ridge_last_error());
        return CLI_FAIL;
    }
    double acc = 100.0 * (double)right / (double)ntest;
    if (json)
        printf("], \"test_loss\": %.6f, \"test_accuracy\": %.4f%s%s%s}\n", test_loss, acc,
               o->save ? ", \"saved\": \"" : "", o->save ? o->save : "", o->save ? "\"" : "");
    else
        printf("test accuracy %.2f%% (%zu/%zu)%s%s\n", acc, right, ntest,
               o->save ? ", saved to " : "", o->save ? o->save : "");
    return CLI_OK;
}
