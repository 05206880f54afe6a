/* quant: post-training int8 quantization of an MLP.
 *
 * Fast: a random MLP (3 layers, ReLU) on random images: the int8 logits must track the fp32
 * ones (every logit within 4% of the logits' spread, and the same argmax for >= 90% of the
 * images; the error sources are 8-bit weights per channel and 8-bit hidden activations, each
 * about 0.4% of its range); save/load gives the same logits bit for bit; a corrupt or truncated
 * file and unsupported activations are refused.
 * --full: train 784-128-10 on Fashion-MNIST for 2 epochs, quantize with 1000 calibration
 * images, and require the int8 test accuracy within 0.5 points of the fp32 one. */
#include <math.h>
#include <stdint.h>
#include <unistd.h>

#include "test.h"

static uint64_t rng = 12345;
static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

static void test_random_mlp(ridge_ctx *ctx)
{
    ridge_mlp_config cfg = {.nlayers = 3, .sizes = {50, 40, 24, 7}, .act = RIDGE_EPI_RELU,
                            .in_mean = 0.4f, .in_std = 0.3f};
    ridge_optim_config oc;
    ridge_optim_config_init(&oc);
    ridge_mlp *m = NULL;
    CHECK_OK(ridge_mlp_create(&cfg, &oc, 64, 7, &m));
    if (!m) return;
    const size_t n = 300, in = 50, C = 7;
    uint8_t *img = malloc(n * in);
    float *x = malloc(n * in * sizeof(float)), *ref = malloc(n * C * sizeof(float));
    for (size_t i = 0; i < n * in; i++) {
        img[i] = (uint8_t)rnd();
        x[i] = ((float)img[i] / 255.0f - cfg.in_mean) / cfg.in_std;
    }
    for (size_t r0 = 0; r0 < n; r0 += 100) { /* the fp32 logits */
        const float *lg;
        CHECK_OK(ridge_mlp_forward(ctx, m, x + r0 * in, 100, &lg));
        memcpy(ref + r0 * C, lg, 100 * C * sizeof(float));
    }
    ridge_qmlp *q = NULL;
    CHECK_OK(ridge_qmlp_quantize(ctx, m, img, n, &q));
    if (!q) goto out;
    float lo = INFINITY, hi = -INFINITY, maxerr = 0;
    size_t agree = 0;
    float *got = malloc(n * C * sizeof(float));
    for (size_t r0 = 0; r0 < n; r0 += 150) {
        const float *lg;
        CHECK_OK(ridge_qmlp_forward(ctx, q, img + r0 * in, 150, &lg));
        memcpy(got + r0 * C, lg, 150 * C * sizeof(float));
    }
    for (size_t i = 0; i < n; i++) {
        size_t a = 0, b = 0;
        for (size_t c = 0; c < C; c++) {
            float r = ref[i * C + c], g = got[i * C + c];
            lo = fminf(lo, r), hi = fmaxf(hi, r);
            maxerr = fmaxf(maxerr, fabsf(r - g));
            if (r > ref[i * C + a]) a = c;
            if (g > got[i * C + b]) b = c;
        }
        agree += a == b;
    }
    CHECKF(maxerr <= 0.04f * (hi - lo), "int8 logits off by %g (spread %g)", (double)maxerr,
           (double)(hi - lo));
    CHECKF(agree >= n * 9 / 10, "argmax agrees on %zu of %zu", agree, n);
    printf("random mlp: max logit error %.4f of a spread of %.3f, argmax agrees %zu/%zu\n",
           (double)maxerr, (double)(hi - lo), agree, n);

    /* save / load: the same bits; corruption is refused */
    char path[] = "/tmp/ridge-test-quant-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(ridge_qmlp_save(q, path));
    ridge_qmlp *q2 = NULL;
    CHECK_OK(ridge_qmlp_load(ctx, path, &q2));
    if (q2) {
        const float *lg;
        CHECK_OK(ridge_qmlp_forward(ctx, q2, img, 150, &lg));
        CHECK(!memcmp(lg, got, 150 * C * sizeof(float)));
        ridge_qmlp_destroy(q2);
        q2 = NULL;
    }
    FILE *f = fopen(path, "r+b");
    if (f) {
        fseek(f, 200, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, 200, SEEK_SET);
        fputc(ch ^ 1, f);
        fclose(f);
    }
    CHECK(ridge_qmlp_load(ctx, path, &q2) == RIDGE_EFORMAT && !q2);
    CHECK(strstr(ridge_last_error(), "CRC") != NULL);
    CHECK(truncate(path, 100) == 0);
    CHECK(ridge_qmlp_load(ctx, path, &q2) == RIDGE_EFORMAT && !q2);
    f = fopen(path, "wb");
    if (f) fputs("RIDGEMLP not this one", f), fclose(f);
    CHECK(ridge_qmlp_load(ctx, path, &q2) == RIDGE_EFORMAT);
    CHECK(strstr(ridge_last_error(), "magic") != NULL);
    unlink(path);
    free(got);
out:
    ridge_qmlp_destroy(q);
    /* tanh cannot be quantized this way */
    ridge_mlp_destroy(m);
    cfg.act = RIDGE_EPI_TANH;
    CHECK_OK(ridge_mlp_create(&cfg, &oc, 64, 7, &m));
    q = NULL;
    if (m) CHECK(ridge_qmlp_quantize(ctx, m, img, n, &q) == RIDGE_EUNSUPPORTED && !q);
    CHECK(ridge_qmlp_quantize(ctx, m, img, 0, &q) == RIDGE_EINVAL);
    ridge_mlp_destroy(m);
    free(img), free(x), free(ref);
}

static void test_fashion(ridge_ctx *ctx)
{
    ridge_mnist tr = {0}, te = {0};
    const char *dir = "/usr/share/datasets/fashion-mnist";
    if (ridge_mnist_load(dir, "train", &tr) || ridge_mnist_load(dir, "t10k", &te)) {
        SKIP("Fashion-MNIST not found in %s: %s", dir, ridge_last_error());
        return;
    }
    ridge_mlp_config cfg = {.nlayers = 2, .sizes = {784, 128, 10}, .act = RIDGE_EPI_RELU,
                            .in_mean = 0.2860f, .in_std = 0.3530f};
    ridge_optim_config oc;
    ridge_optim_config_init(&oc);
    ridge_mlp *m = NULL;
    ridge_qmlp *q = NULL;
    CHECK_OK(ridge_mlp_create(&cfg, &oc, 64, 1, &m));
    for (int e = 0; m && e < 2; e++) {
        double loss;
        CHECK_OK(ridge_mlp_train_epoch(ctx, m, tr.images, tr.labels, tr.n, NULL, NULL, &loss));
    }
    size_t c32 = 0, c8 = 0;
    double l32, l8;
    if (m) CHECK_OK(ridge_mlp_evaluate(ctx, m, te.images, te.labels, te.n, &l32, &c32, NULL));
    if (m) CHECK_OK(ridge_qmlp_quantize(ctx, m, tr.images, 1000, &q));
    if (q) CHECK_OK(ridge_qmlp_evaluate(ctx, q, te.images, te.labels, te.n, &l8, &c8));
    double a32 = 100.0 * (double)c32 / (double)te.n, a8 = 100.0 * (double)c8 / (double)te.n;
    printf("fashion-mnist 784-128-10, 2 epochs: fp32 %.2f%%, int8 %.2f%% (%+.2f points)\n", a32,
           a8, a8 - a32);
    CHECKF(a32 > 80.0 && a8 >= a32 - 0.5, "fp32 %.2f%%, int8 %.2f%%", a32, a8);
    ridge_qmlp_destroy(q);
    ridge_mlp_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
}

int main(int argc, char **argv)
{
    int full = argc > 1 && !strcmp(argv[1], "--full");
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AUTO);
    if (ctx) {
        test_random_mlp(ctx);
        if (full) test_fashion(ctx);
        ridge_ctx_destroy(ctx);
    }
    return test_finish("test-quant");
}
