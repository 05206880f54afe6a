/* The MLP's and the CNN's training step, epoch and evaluation (models/trainer.h).
 *
 * An epoch shuffles the n samples by (seed, epoch) and walks them in batches of t->batch (the
 * last one smaller). With data parallelism (dp->nranks = N > 1) every rank draws the same
 * permutation and takes rows [r*B/N, (r+1)*B/N) of each batch, so the N ranks together train on
 * one process's batches; the gradients of the ranks' mean losses, averaged, are the gradient of
 * the batch's mean loss because the shares are equal (an uneven split is refused: it would
 * need loss weights). */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"
#include "models/trainer.h"

ridge_status model_train_step(ridge_ctx *ctx, const model_trainer *t, const float *x,
                              const int32_t *y, size_t B, float *loss)
{
    ridge_status st = t->gradients(ctx, t->model, x, y, B, loss);
    if (st) return st;
    const ridge_data_parallel *dp = t->dp;
    if (dp && dp->nranks > 1 && (st = dp->grad_mean(t->grads, t->nparams))) return st; /* mpi */
    if ((st = ridge_optim_step(ctx, t->opt, t->params, t->grads, t->state, t->nparams,
                               *t->step)))
        return st;
    ++*t->step;
    return RIDGE_OK;
}

static ridge_status check_data(const char *fn, const model_trainer *t, const uint8_t *images,
                               const uint8_t *labels, size_t n)
{
    if (!t->model || !images || !labels || !n)
        return ridge_error(RIDGE_EINVAL, "%s_%s: NULL argument or no samples", t->name, fn);
    if (n > UINT32_MAX)
        return ridge_error(RIDGE_EINVAL, "%s_%s: %zu samples (max 2^32-1)", t->name, fn, n);
    for (size_t i = 0; i < n; i++)
        if (labels[i] >= t->classes)
            return ridge_error(RIDGE_EINVAL, "%s_%s: label %d of sample %zu, but the model has "
                               "%zu classes", t->name, fn, labels[i], i, t->classes);
    return RIDGE_OK;
}

ridge_status model_train_epoch(ridge_ctx *ctx, const model_trainer *t, const uint8_t *images,
                               const uint8_t *labels, size_t n,
                               int (*fn)(void *, size_t, size_t, double, size_t), void *arg,
                               double *mean_loss)
{
    ridge_status st = check_data("train_epoch", t, images, labels, n);
    if (st) return st;
    const size_t D = t->D, B = t->batch, steps = (n + B - 1) / B;
    const int nr = t->dp && t->dp->nranks > 1 ? t->dp->nranks : 1, rank = nr > 1 ? t->dp->rank : 0;
    if (rank < 0 || rank >= nr || B % (size_t)nr || (n % B) % (size_t)nr)
        return ridge_error(RIDGE_EINVAL, "%s_train_epoch: batch %zu (last %zu) does not split "
                           "evenly over %d ranks (rank %d)", t->name, B, n % B ? n % B : B, nr,
                           rank);
    uint32_t *perm = malloc(n * sizeof *perm);
    float *x = ridge_malloc(B * D * sizeof *x);
    int32_t *y = malloc(B * sizeof *y);
    if (!perm || !x || !y) {
        st = ridge_error(RIDGE_ENOMEM, "%s_train_epoch: out of memory", t->name);
        goto done;
    }
    ridge_rng rng;
    ridge_rng_seed(&rng, ridge_hash64(t->seed) ^ *t->epoch);
    ridge_rng_permutation(&rng, perm, (uint32_t)n);
    double total = 0;
    size_t s = 0;
    for (; s < steps; s++) {
        const size_t start = s * B, rows = RIDGE_MIN(B, n - start);
        const size_t mine = rows / (size_t)nr, first = start + (size_t)rank * mine; /* mpi */
        float loss;
        ridge_batch_u8(x, y, images, labels, perm, first, mine, D, t->in_mean, t->in_std);
        if ((st = model_train_step(ctx, t, x, y, mine, &loss))) goto done;
        total += (double)loss * (double)rows;
        if (fn && fn(arg, s + 1, steps, total / (double)(start + rows), start + rows)) {
            s++;
            break;
        }
    }
    if (mean_loss) *mean_loss = total / (double)RIDGE_MIN(n, s * B);
    if (s == steps) ++*t->epoch;
done:
    free(perm);
    ridge_free(x);
    free(y);
    return st;
}

ridge_status model_evaluate(ridge_ctx *ctx, const model_trainer *t, const uint8_t *images,
                            const uint8_t *labels, size_t n, double *loss, size_t *correct,
                            uint64_t *confusion)
{
    ridge_status st = check_data("evaluate", t, images, labels, n);
    if (st) return st;
    const size_t D = t->D, C = t->classes, B = t->eval_batch;
    float *x = ridge_malloc(B * D * sizeof *x);
    int32_t *y = malloc(B * sizeof *y);
    if (!x || !y) {
        st = ridge_error(RIDGE_ENOMEM, "%s_evaluate: out of memory", t->name);
        goto done;
    }
    if (confusion) memset(confusion, 0, C * C * sizeof *confusion);
    double total = 0;
    size_t right = 0;
    for (size_t start = 0; start < n; start += B) {
        const size_t rows = RIDGE_MIN(B, n - start);
        const float *logits;
        float l;
        size_t ok;
        ridge_batch_u8(x, y, images, labels, NULL, start, rows, D, t->in_mean, t->in_std);
        if ((st = t->forward(ctx, t->model, x, rows, &logits))) goto done;
        if (confusion)
            for (size_t r = 0; r < rows; r++) {
                size_t am = 0;
                for (size_t j = 1; j < C; j++)
                    if (logits[r * C + j] > logits[r * C + am]) am = j;
                confusion[(size_t)y[r] * C + am]++;
            }
        if ((st = ridge_softmax_xent(ctx, &l, NULL, &ok, logits, y, rows, C))) goto done;
        total += (double)l * (double)rows;
        right += ok;
    }
    if (loss) *loss = total / (double)n;
    if (correct) *correct = right;
done:
    ridge_free(x);
    free(y);
    return st;
}
