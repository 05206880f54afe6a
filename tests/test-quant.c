/* quant: post-training int8 quantization of an MLP and of a CNN.
 *
 * Fast: a random MLP (3 layers, ReLU) on random images: the int8 logits must track the fp32
 * ones (every logit within 4% of the logits' spread, and the same argmax for >= 90% of the
 * images; the error sources are 8-bit weights per channel and 8-bit hidden activations, each
 * about 0.4% of its range); save/load gives the same logits bit for bit; a corrupt or truncated
 * file and unsupported activations are refused.
 * The same for a random CNN with every layer kind (conv + batch norm folded, max and average
 * pooling, dense + ReLU, dense), its batch norms given random statistics; and the int8 CNN
 * checkpoint's hostile headers (wrong magic, version, reserved bytes, truncation, a huge
 * architecture in a small file, CRC) are refused without allocating what they claim.
 * --full: train 784-128-10 on Fashion-MNIST for 2 epochs, and the default CNN for 1 epoch on
 * 20000 images, quantize with 1000 calibration images, and require each int8 test accuracy
 * within 0.5 points of the fp32 one. */
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

/* The int8 logits against the fp32 ones: max error over the spread, argmax agreement. */
static void compare_logits(const char *what, const float *ref, const float *got, size_t n,
                           size_t C, float tol)
{
    float lo = INFINITY, hi = -INFINITY, maxerr = 0;
    size_t agree = 0;
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
    CHECKF(maxerr <= tol * (hi - lo), "%s: int8 logits off by %g (spread %g)", what,
           (double)maxerr, (double)(hi - lo));
    CHECKF(agree >= n * 9 / 10, "%s: argmax agrees on %zu of %zu", what, agree, n);
    printf("%s: max logit error %.4f of a spread of %.3f, argmax agrees %zu/%zu\n", what,
           (double)maxerr, (double)(hi - lo), agree, n);
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
    float *got = malloc(n * C * sizeof(float));
    for (size_t r0 = 0; r0 < n; r0 += 150) {
        const float *lg;
        CHECK_OK(ridge_qmlp_forward(ctx, q, img + r0 * in, 150, &lg));
        memcpy(got + r0 * C, lg, 150 * C * sizeof(float));
    }
    compare_logits("random mlp", ref, got, n, C, 0.04f);

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
        fseek(f, 300, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, 300, SEEK_SET);
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

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Loads a copy of the file's bytes b (n) patched by fn, with the CRC fixed when crc is set. */
static ridge_status load_patched(ridge_ctx *ctx, const char *path, const unsigned char *b,
                                 size_t n, size_t at, const void *patch, size_t plen, int crc)
{
    unsigned char *c = malloc(n);
    memcpy(c, b, n);
    memcpy(c + at, patch, plen);
    if (crc) put32(c + n - 4, ridge_crc32(0, c, n - 4));
    FILE *f = fopen(path, "wb");
    if (f) fwrite(c, 1, n, f), fclose(f);
    free(c);
    ridge_qcnn *q = NULL;
    ridge_status st = ridge_qcnn_load(ctx, path, &q);
    CHECK(st || q);
    ridge_qcnn_destroy(q);
    return st;
}

static void test_random_cnn(ridge_ctx *ctx)
{
    ridge_cnn_config cfg;
    ridge_cnn_config_init(&cfg);
    cfg.in_h = cfg.in_w = 12, cfg.in_mean = 0.45f, cfg.in_std = 0.28f;
    CHECK_OK(ridge_cnn_arch_parse("conv3x3-8,bn,relu,maxpool2,conv3x3-12,bn,relu,avgpool2,"
                                  "dense-24,relu,dense-6", &cfg));
    ridge_optim_config oc;
    ridge_optim_config_init(&oc);
    ridge_cnn *m = NULL;
    CHECK_OK(ridge_cnn_create(&cfg, &oc, 32, 3, &m));
    if (!m) return;
    for (int l = 0; l < cfg.nlayers; l++) /* batch norms with statistics of their own */
        if (cfg.layers[l].kind == RIDGE_CNN_BN)
            for (int64_t c = 0; c < m->c[l]; c++) {
                m->w[l][c] = 0.5f + (float)(rnd() % 1000) * 1e-3f;
                m->b[l][c] = ((float)(rnd() % 1000) - 500.0f) * 4e-4f;
                m->run_mean[l][c] = ((float)(rnd() % 1000) - 500.0f) * 6e-4f;
                m->run_var[l][c] = 0.5f + (float)(rnd() % 1000) * 1.5e-3f;
            }
    const size_t n = 256, in = 144, C = 6;
    uint8_t *img = malloc(n * in);
    float *x = malloc(n * in * sizeof(float)), *ref = malloc(n * C * sizeof(float));
    float *got = malloc(n * C * sizeof(float));
    for (size_t i = 0; i < n * in; i++) { /* smooth-ish images: a ramp plus noise */
        img[i] = (uint8_t)((i % in) * 255 / in / 2 + rnd() % 128);
        x[i] = ((float)img[i] / 255.0f - cfg.in_mean) / cfg.in_std;
    }
    for (size_t r0 = 0; r0 < n; r0 += 128) {
        const float *lg;
        CHECK_OK(ridge_cnn_forward(ctx, m, x + r0 * in, 128, &lg));
        if (lg) memcpy(ref + r0 * C, lg, 128 * C * sizeof(float));
    }
    ridge_qcnn *q = NULL;
    CHECK_OK(ridge_qcnn_quantize(ctx, m, img, n, &q));
    if (!q) goto out;
    for (size_t r0 = 0; r0 < n; r0 += 128) {
        const float *lg;
        CHECK_OK(ridge_qcnn_forward(ctx, q, img + r0 * in, 128, &lg));
        if (lg) memcpy(got + r0 * C, lg, 128 * C * sizeof(float));
    }
    compare_logits("random cnn", ref, got, n, C, 0.03f);

    /* save / load: the same bits; a smaller batch gives the same logits */
    char path[] = "/tmp/ridge-test-qcnn-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    CHECK_OK(ridge_qcnn_save(q, path));
    ridge_qcnn *q2 = NULL;
    CHECK_OK(ridge_qcnn_load(ctx, path, &q2));
    if (q2) {
        const float *lg;
        CHECK_OK(ridge_qcnn_forward(ctx, q2, img, 7, &lg));
        CHECK(lg && !memcmp(lg, got, 7 * C * sizeof(float)));
        ridge_qcnn_destroy(q2);
        q2 = NULL;
    }
    /* hostile headers: each refused with RIDGE_EFORMAT and nothing allocated */
    unsigned char *b = malloc(1 << 16);
    FILE *f = fopen(path, "rb");
    size_t len = f ? fread(b, 1, 1 << 16, f) : 0;
    if (f) fclose(f);
    CHECK(len > 600 && len < (1 << 16));
    CHECK(load_patched(ctx, path, b, len, 0, "RIDGECNN", 8, 1) == RIDGE_EFORMAT);
    CHECK(strstr(ridge_last_error(), "magic") != NULL);
    unsigned char v[4];
    put32(v, 2);
    CHECK(load_patched(ctx, path, b, len, 8, v, 4, 1) == RIDGE_EFORMAT); /* version */
    put32(v, 256);
    CHECK(load_patched(ctx, path, b, len, 12, v, 4, 1) == RIDGE_EFORMAT); /* header size */
    CHECK(load_patched(ctx, path, b, len, 100, "x", 1, 1) == RIDGE_EFORMAT); /* reserved */
    CHECK(strstr(ridge_last_error(), "reserved") != NULL);
    put32(v, 1u << 30);
    CHECK(load_patched(ctx, path, b, len, 16, v, 4, 1) == RIDGE_EFORMAT); /* in_h 2^30 */
    char arch[RIDGE_CNN_ARCH_MAX] = "conv3x3-1000000,dense-1000000"; /* 10^12 weights */
    CHECK(load_patched(ctx, path, b, len, 256, arch, sizeof arch, 1) == RIDGE_EFORMAT);
    CHECK(strstr(ridge_last_error(), "implies") || strstr(ridge_last_error(), "overflow") ||
          strstr(ridge_last_error(), "floats"));
    memset(arch, 'a', sizeof arch); /* no NUL */
    CHECK(load_patched(ctx, path, b, len, 256, arch, sizeof arch, 1) == RIDGE_EFORMAT);
    unsigned char nan[4] = {0, 0, 0xc0, 0x7f}; /* the first layer's input scale: NaN */
    CHECK(load_patched(ctx, path, b, len, 512, nan, 4, 1) == RIDGE_EFORMAT);
    CHECK(load_patched(ctx, path, b, len, 700, "x", 1, 0) == RIDGE_EFORMAT); /* CRC */
    CHECK(strstr(ridge_last_error(), "CRC") != NULL);
    f = fopen(path, "wb");
    if (f) fwrite(b, 1, len - 9, f), fclose(f);
    CHECK(ridge_qcnn_load(ctx, path, &q2) == RIDGE_EFORMAT && !q2);
    CHECK(strstr(ridge_last_error(), "truncated") != NULL);
    free(b);
    unlink(path);
out:
    ridge_qcnn_destroy(q);
    /* a batch norm with nothing to fold into */
    ridge_cnn_destroy(m);
    m = NULL;
    CHECK_OK(ridge_cnn_arch_parse("conv3x3-4,relu,bn,maxpool2,dense-6", &cfg));
    CHECK_OK(ridge_cnn_create(&cfg, &oc, 32, 3, &m));
    q = NULL;
    if (m) CHECK(ridge_qcnn_quantize(ctx, m, img, n, &q) == RIDGE_EUNSUPPORTED && !q);
    ridge_cnn_destroy(m);
    free(img), free(x), free(ref), free(got);
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

    /* the default CNN, 1 epoch on 20000 images */
    ridge_cnn_config cc;
    ridge_cnn_config_init(&cc);
    CHECK_OK(ridge_cnn_arch_parse(RIDGE_CNN_DEFAULT_ARCH, &cc));
    ridge_cnn *mc = NULL;
    ridge_qcnn *qc = NULL;
    CHECK_OK(ridge_cnn_create(&cc, &oc, 64, 1, &mc));
    double loss;
    if (mc) CHECK_OK(ridge_cnn_train_epoch(ctx, mc, tr.images, tr.labels, 20000, NULL, NULL, &loss));
    c32 = c8 = 0;
    if (mc) CHECK_OK(ridge_cnn_evaluate(ctx, mc, te.images, te.labels, te.n, &l32, &c32, NULL));
    if (mc) CHECK_OK(ridge_qcnn_quantize(ctx, mc, tr.images, 1000, &qc));
    if (qc) CHECK_OK(ridge_qcnn_evaluate(ctx, qc, te.images, te.labels, te.n, &l8, &c8));
    a32 = 100.0 * (double)c32 / (double)te.n, a8 = 100.0 * (double)c8 / (double)te.n;
    printf("fashion-mnist default cnn, 1 epoch on 20000: fp32 %.2f%%, int8 %.2f%% (%+.2f points)\n",
           a32, a8, a8 - a32);
    CHECKF(a32 > 80.0 && a8 >= a32 - 0.5, "cnn: fp32 %.2f%%, int8 %.2f%%", a32, a8);
    ridge_qcnn_destroy(qc);
    ridge_cnn_destroy(mc);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
}

int main(int argc, char **argv)
{
    int full = argc > 1 && !strcmp(argv[1], "--full");
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AUTO);
    if (ctx) {
        test_random_mlp(ctx);
        test_random_cnn(ctx);
        if (full) test_fashion(ctx);
        ridge_ctx_destroy(ctx);
    }
    return test_finish("test-quant");
}
