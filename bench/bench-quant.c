/* `ridge bench quant`: inference time of the int8 CNN (ridge/quant.h) against the fp32 CNN it
 * was quantized from, per batch of images, on the default architecture (conv3x3-32, bn, relu,
 * maxpool2, conv3x3-64, bn, relu, maxpool2, dense-128, relu, dense-10, 28x28x1 inputs).
 *
 * The model is randomly initialized (seed 1; its batch norms get non-trivial statistics):
 * neither path's time depends on the weights' values. It is quantized on 256 random images,
 * and the int8 logits are checked against the fp32 ones first (max error within 5% of their
 * spread, argmax agreeing on 90%). Then, per batch size, the two forwards run in interleaved
 * rounds: median and best ms per batch, and the ratio fp32 / int8 of the medians. The fp32
 * forward takes normalized floats and the int8 one the u8 pixels themselves (it needs no
 * normalization pass); both run their batch norms folded into the convolutions. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define QB_MAX(a, b) ((a) > (b) ? (a) : (b))

const char ridge_bench_quant_summary[] =
    "int8 CNN inference vs the fp32 CNN (default architecture), ms per batch of 1, 16, 128";

typedef struct qcall {
    ridge_ctx *ctx;
    ridge_cnn *m;
    ridge_qcnn *q;
    const float *x;
    const uint8_t *img;
    size_t B;
    int int8, failed;
} qcall;

static void qcall_run(void *arg)
{
    qcall *g = arg;
    const float *lg;
    ridge_status st = g->int8 ? ridge_qcnn_forward(g->ctx, g->q, g->img, g->B, &lg)
                              : ridge_cnn_forward(g->ctx, g->m, g->x, g->B, &lg);
    if (st) g->failed = 1;
}

/* The int8 logits against the fp32 ones on n images: 0 if they agree. */
static int check(ridge_ctx *ctx, ridge_cnn *m, ridge_qcnn *q, const float *x, const uint8_t *img,
                 size_t n)
{
    const size_t C = m->classes;
    float *ref = malloc(n * C * sizeof(float));
    const float *lg;
    int rc = -1;
    if (!ref || ridge_cnn_forward(ctx, m, x, n, &lg)) goto out;
    memcpy(ref, lg, n * C * sizeof(float));
    if (ridge_qcnn_forward(ctx, q, img, n, &lg)) goto out;
    float lo = INFINITY, hi = -INFINITY, err = 0;
    size_t agree = 0;
    for (size_t i = 0; i < n; i++) {
        size_t a = 0, b = 0;
        for (size_t c = 0; c < C; c++) {
            lo = fminf(lo, ref[i * C + c]), hi = fmaxf(hi, ref[i * C + c]);
            err = fmaxf(err, fabsf(ref[i * C + c] - lg[i * C + c]));
            if (ref[i * C + c] > ref[i * C + a]) a = c;
            if (lg[i * C + c] > lg[i * C + b]) b = c;
        }
        agree += a == b;
    }
    rc = err <= 0.05f * (hi - lo) && agree >= n * 9 / 10 ? 0 : -1;
    if (rc)
        fprintf(stderr, "bench quant: int8 logits off by %g (spread %g), argmax agrees %zu/%zu\n",
                (double)err, (double)(hi - lo), agree, n);
out:
    free(ref);
    return rc;
}

int ridge_bench_quant(const ridge_bench_opts *o, int argc, char **argv)
{
    int own = bench_no_options(argc, argv, "quant", ridge_bench_quant_summary);
    if (own) return own > 0 ? 0 : BENCH_USAGE;
    const size_t n = 128, in = 28 * 28;
    const size_t batches[] = {1, 16, 128};
    ridge_cnn_config cfg;
    ridge_cnn_config_init(&cfg);
    ridge_optim_config oc;
    ridge_optim_config_init(&oc);
    ridge_cnn *m = NULL;
    ridge_qcnn *q = NULL;
    uint8_t *img = malloc(n * in);
    float *x = malloc(n * in * sizeof(float));
    int rc = -1, max_threads = o->threads > 0 ? o->threads : ridge_cpu_get()->logical_cpus;
    if (!img || !x || ridge_cnn_arch_parse(RIDGE_CNN_DEFAULT_ARCH, &cfg) ||
        ridge_cnn_create(&cfg, &oc, 64, 1, &m)) {
        fprintf(stderr, "bench quant: %s\n", img && x ? ridge_last_error() : "out of memory");
        goto out;
    }
    uint64_t r = 7;
    for (int l = 0; l < cfg.nlayers; l++)
        for (int64_t c = 0; cfg.layers[l].kind == RIDGE_CNN_BN && c < m->c[l]; c++) {
            r = r * 6364136223846793005ull + 1;
            m->run_mean[l][c] = (float)((r >> 40) % 1000) * 1e-4f;
            m->run_var[l][c] = 0.02f + (float)((r >> 20) % 1000) * 1e-4f;
        }
    for (size_t i = 0; i < n * in; i++) {
        r = r * 6364136223846793005ull + 1;
        img[i] = (uint8_t)(r >> 56);
        x[i] = ((float)img[i] / 255.0f - cfg.in_mean) / cfg.in_std;
    }
    static const bench_col cols[] = {
        {"batch", BENCH_INT},   {"thr", BENCH_INT},      {"f32_ms", BENCH_F3},
        {"f32_best", BENCH_F3}, {"i8_ms", BENCH_F3},     {"i8_best", BENCH_F3},
        {"f32_img_s", BENCH_F1}, {"i8_img_s", BENCH_F1}, {"f32_x_i8", BENCH_F2},
    };
    bench_table t;
    bench_table_begin(&t, o, "quant: int8 CNN vs fp32 CNN inference, default architecture, "
                      "ms per batch (median over interleaved rounds)", cols,
                      (int)(sizeof cols / sizeof cols[0]));
    const int counts[2] = {1, max_threads};
    rc = 0;
    for (int ti = 0; ti < (max_threads > 1 ? 2 : 1) && !rc; ti++) {
        ridge_ctx *ctx = bench_ctx(o, counts[ti], "quant");
        if (!ctx) {
            rc = -1;
            break;
        }
        if ((!q && ridge_qcnn_quantize(ctx, m, img, n, &q)) ||
            check(ctx, m, q, x, img, n)) {
            fprintf(stderr, "bench quant: %s\n", ridge_last_error());
            ridge_ctx_destroy(ctx);
            rc = -1;
            break;
        }
        bench_note(o, "bench quant: %d thread%s, %s", counts[ti], counts[ti] > 1 ? "s" : "",
                   ridge_lowp_describe(ctx));
        for (size_t bi = 0; bi < sizeof batches / sizeof batches[0] && !rc; bi++) {
            const size_t B = batches[bi];
            qcall g[2] = {{ctx, m, q, x, img, B, 0, 0}, {ctx, m, q, x, img, B, 1, 0}};
            double est = 0;
            for (int i = 0; i < 2; i++) { /* warm-up and an estimate */
                uint64_t t0 = ridge_time_ns();
                qcall_run(&g[i]);
                est = QB_MAX(est, (double)(ridge_time_ns() - t0) * 1e-9);
            }
            int rounds = (int)((o->quick ? 0.3 : 2.0) / (2 * QB_MAX(est, 1e-6)));
            rounds = rounds < 5 ? 5 : rounds > 200 ? 200 : rounds;
            double *smp[2] = {malloc((size_t)rounds * sizeof(double)),
                              malloc((size_t)rounds * sizeof(double))};
            if (!smp[0] || !smp[1]) rc = -1;
            for (int k = 0; k < rounds && !rc; k++)
                for (int i = 0; i < 2; i++) {
                    uint64_t t0 = ridge_time_ns();
                    qcall_run(&g[i]);
                    smp[i][k] = (double)(ridge_time_ns() - t0) * 1e-9;
                }
            if (g[0].failed || g[1].failed) {
                fprintf(stderr, "bench quant: %s\n", ridge_last_error());
                rc = -1;
            }
            if (!rc) {
                bench_stats sf = bench_summarize(smp[0], (size_t)rounds);
                bench_stats s8 = bench_summarize(smp[1], (size_t)rounds);
                bench_val row[] = {{NULL, (double)B}, {NULL, counts[ti]},
                                   {NULL, sf.median * 1e3}, {NULL, sf.best * 1e3},
                                   {NULL, s8.median * 1e3}, {NULL, s8.best * 1e3},
                                   {NULL, (double)B / sf.median}, {NULL, (double)B / s8.median},
                                   {NULL, sf.median / s8.median}};
                bench_table_row(&t, row);
            }
            free(smp[0]), free(smp[1]);
        }
        ridge_ctx_destroy(ctx);
    }
    bench_table_end(&t);
out:
    ridge_qcnn_destroy(q);
    ridge_cnn_destroy(m);
    free(img), free(x);
    return rc;
}
