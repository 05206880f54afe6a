/* Softmax cross-entropy, fused and stable: per row, one pass for the max, one for
 * sum(exp(x - max)) (accumulated in double), and, when the gradient is wanted, one that writes
 * (softmax - onehot) / B. loss_row = log(sum) - (x[label] - max). Rows are split across
 * threads; each row's loss goes to its own slot and the mean is summed serially in row
 * order, so the result does not depend on the thread count. */
#include <math.h>

#include "core/internal.h"
#include "ridge/nn.h"

typedef struct xent_args {
    float *dlogits;
    const float *logits;
    const int32_t *labels;
    double *row_loss;
    unsigned char *row_correct;
    size_t V;
    float inv_b;
} xent_args;

static void xent_rows(void *arg, size_t begin, size_t end, int ith)
{
    const xent_args *a = arg;
    const size_t V = a->V;
    for (size_t r = begin; r < end; r++) {
        const float *x = a->logits + r * V;
        float mx = x[0];
        size_t arg_max = 0;
        for (size_t j = 1; j < V; j++)
            if (x[j] > mx) mx = x[j], arg_max = j;
        double sum = 0;
        for (size_t j = 0; j < V; j++) sum += exp((double)(x[j] - mx));
        const size_t label = (size_t)a->labels[r];
        a->row_loss[r] = log(sum) - (double)(x[label] - mx);
        a->row_correct[r] = arg_max == label;
        if (a->dlogits) {
            float *d = a->dlogits + r * V;
            const float inv = (float)(1.0 / sum) * a->inv_b;
            for (size_t j = 0; j < V; j++) d[j] = expf(x[j] - mx) * inv; /* may alias x */
            d[label] -= a->inv_b;
        }
    }
}

static ridge_status ridge_softmax_xent_untimed(ridge_ctx *ctx, float *loss, float *dlogits, size_t *correct,
                                const float *logits, const int32_t *labels, size_t B, size_t V)
{
    if (!ctx || !loss || !logits || !labels)
        return ridge_error(RIDGE_EINVAL, "softmax_xent: NULL argument");
    if (B == 0 || V == 0)
        return ridge_error(RIDGE_EINVAL, "softmax_xent: B (%zu) and V (%zu) must be > 0", B, V);
    for (size_t r = 0; r < B; r++)
        if (labels[r] < 0 || (size_t)labels[r] >= V)
            return ridge_error(RIDGE_EINVAL, "softmax_xent: label %d of row %zu not in [0, %zu)",
                               labels[r], r, V);
    size_t bytes;
    ridge_status st = ridge_size_mul(B, sizeof(double) + 1, "softmax_xent: scratch", &bytes);
    if (st) return st;
    void *scratch;
    if ((st = ridge_ctx_scratch(ctx, bytes, &scratch))) return st;
    xent_args a = {dlogits, logits, labels, scratch, (unsigned char *)scratch + B * sizeof(double),
                   V, 1.0f / (float)B};
    if (B * V < 32768) xent_rows(&a, 0, B, 0);
    else ridge_parallel_for(ctx, B, 1, xent_rows, &a);
    double total = 0;
    size_t right = 0;
    for (size_t r = 0; r < B; r++) total += a.row_loss[r], right += a.row_correct[r];
    *loss = (float)(total / (double)B);
    if (correct) *correct = right;
    if (!isfinite(*loss))
        return ridge_error(RIDGE_EINVAL, "softmax_xent: the loss is %g (non-finite logits)",
                           *loss);
    return RIDGE_OK;
}

/* ridge_softmax_xent, recorded by the profiler as "softmax_xent". */
ridge_status ridge_softmax_xent(ridge_ctx *ctx, float *loss, float *dlogits, size_t *correct,
                                const float *logits, const int32_t *labels, size_t B, size_t V)
{
    uint64_t t0 = RIDGE_PROF_START(ctx);
    ridge_status st = ridge_softmax_xent_untimed(ctx, loss, dlogits, correct, logits, labels, B, V);
    RIDGE_PROF_END(ctx, t0, "softmax_xent", "", 5.0 * B * V, 4.0 * B * V * (dlogits ? 2 : 1), 4.0 * B * V * 2, "%zux%zu", B, V);
    return st;
}
