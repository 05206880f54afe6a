/* The CNN model (issue 8): architecture strings; whole-model gradients (every parameter and
 * the input through conv, batch norm, pooling, dense, softmax cross-entropy) against central
 * finite differences of the model's own training loss; the inference path (batch norm folded
 * into the conv) against the unfolded layers; training on a Fashion-MNIST subset where the
 * loss must fall clearly; bit-exact resume across a checkpoint; corrupt checkpoints.
 * With --full: the default network on all of Fashion-MNIST for 10 epochs, >= 91%. With
 * --dump DIR: the files scripts/cnn-vs-pytorch.py compares with PyTorch. */
#include <math.h>
#include <unistd.h>

#include "test.h"
#include "ridge/io.h"

static char tmpdir[256];
static const char *tmp(const char *name)
{
    static char buf[2][512];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

static const char *fashion = "/usr/share/datasets/fashion-mnist";

static ridge_cnn *make(const char *arch, int64_t h, int64_t w, int64_t c, ridge_optim_kind k,
                       size_t batch, uint64_t seed)
{
    ridge_cnn_config cfg;
    ridge_cnn_config_init(&cfg);
    cfg.in_h = h, cfg.in_w = w, cfg.in_c = c;
    CHECK_OK(ridge_cnn_arch_parse(arch, &cfg));
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.kind = k;
    if (k == RIDGE_OPTIM_SGD) o.lr = 0.05f;
    ridge_cnn *m = NULL;
    CHECK_OK(ridge_cnn_create(&cfg, &o, batch, seed, &m));
    return m;
}

static void test_arch(void)
{
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    const char *good[] = {RIDGE_CNN_DEFAULT_ARCH, "conv5x5s2-8,relu,avgpool3s2,bn,dense-10",
                          "dense-10", "conv1x1-4,maxpool2,dense-64,relu,dense-3"};
    for (int i = 0; i < 4; i++) {
        char buf[RIDGE_CNN_ARCH_MAX];
        CHECK_OK(ridge_cnn_arch_parse(good[i], &c));
        CHECK_OK(ridge_cnn_config_check(&c));
        CHECK_OK(ridge_cnn_arch_format(&c, buf, sizeof buf));
        CHECKF(!strcmp(buf, good[i]), "'%s' formats as '%s'", good[i], buf);
    }
    CHECK_OK(ridge_cnn_arch_parse("conv3x3-4", &c));
    CHECK(ridge_cnn_config_check(&c) == RIDGE_EINVAL); /* last layer not dense */
    CHECK_OK(ridge_cnn_arch_parse("dense-10,relu", &c));
    CHECK(ridge_cnn_config_check(&c) == RIDGE_EINVAL);
    const char *bad[] = {"conv3x4-8,dense-10", "conv2x2-8,dense-10", "relu,dense-10",
                         "maxpool2,relu,dense-10", "conv3x3-8,relu,relu,dense-10", "dense-0",
                         "pool2,dense-10", "", "dense-10x"};
    for (int i = 0; i < 9; i++)
        CHECKF(ridge_cnn_arch_parse(bad[i], &c) == RIDGE_EINVAL, "'%s' accepted", bad[i]);
    CHECK(strstr(ridge_last_error(), "dense-10x") != NULL);
    CHECK_OK(ridge_cnn_arch_parse("maxpool29,dense-10", &c));
    CHECK(ridge_cnn_config_check(&c) == RIDGE_EINVAL); /* window larger than 28x28 */
}

/* ---- whole-model gradients ------------------------------------------------------------------- */

static double loss_of(ridge_ctx *ctx, ridge_cnn *m, const float *x, const int32_t *y, size_t B)
{
    /* the training loss (batch statistics) without touching params: gradients only */
    float l;
    CHECK_OK(ridge_cnn_gradients(ctx, m, x, y, B, &l));
    return l;
}

static void test_gradients(ridge_ctx *ctx)
{
    /* smooth everywhere (no ReLU or max kinks), so central differences are exact to O(h^2);
     * the ReLU and max pooling backward passes are checked layer by layer in test-nn-conv */
    const char *arch = "conv3x3-3,bn,avgpool2,conv3x3s2-4,bn,dense-5,dense-3";
    const size_t B = 3;
    ridge_cnn *m = make(arch, 8, 7, 2, RIDGE_OPTIM_ADAMW, B, 3);
    if (!m) return;
    const size_t D = 8 * 7 * 2;
    float x[3 * 8 * 7 * 2];
    int32_t y[3] = {0, 2, 1};
    unsigned s = 5;
    for (size_t i = 0; i < B * D; i++)
        s = s * 1664525u + 1013904223u, x[i] = (float)(s >> 9) / (1 << 22) - 1;
    float l0;
    CHECK_OK(ridge_cnn_gradients(ctx, m, x, y, B, &l0));
    float *g = malloc(m->nparams * 4);
    memcpy(g, m->grads, m->nparams * 4);
    double worst = 0;
    size_t checked = 0;
    for (int l = 0; l < m->cfg.nlayers; l++) {
        float *views[2] = {m->w[l], m->b[l]};
        size_t n[2] = {(size_t)(m->b[l] - m->w[l]), 0};
        if (m->cfg.layers[l].kind == RIDGE_CNN_MAXPOOL ||
            m->cfg.layers[l].kind == RIDGE_CNN_AVGPOOL)
            continue;
        n[1] = (size_t)m->c[l + 1];
        n[0] = m->cfg.layers[l].kind == RIDGE_CNN_BN ? n[1] : n[0];
        if (m->cfg.layers[l].kind == RIDGE_CNN_CONV)
            n[0] = (size_t)(m->cfg.layers[l].out * m->c[l] * 9);
        if (m->cfg.layers[l].kind == RIDGE_CNN_DENSE)
            n[0] = (size_t)(m->cfg.layers[l].out * m->h[l] * m->wd[l] * m->c[l]);
        for (int v = 0; v < 2; v++)
            for (size_t i = 0; i < n[v]; i++) {
                const float h = 1e-2f, keep = views[v][i];
                views[v][i] = keep + h;
                double lp = loss_of(ctx, m, x, y, B);
                views[v][i] = keep - h;
                double lm = loss_of(ctx, m, x, y, B);
                views[v][i] = keep;
                double fd = (lp - lm) / (2 * h), got = g[views[v] + i - m->params];
                double e = fabs(got - fd) / (2e-4 + 0.02 * fabs(fd));
                if (e > worst) worst = e;
                checked++;
            }
    }
    CHECKF(worst <= 1, "whole-model gradient vs finite differences: worst %.2f of tolerance "
           "(%zu parameters)", worst, checked);
    CHECK(checked == 54 + 3 + 3 + 3 + 108 + 4 + 4 + 4 + 80 + 5 + 15 + 3); /* every parameter */
    free(g);
    ridge_cnn_destroy(m);
}

/* ---- inference: folded batch norm against the unfolded layers -------------------------------- */

static void test_fold(ridge_ctx *ctx)
{
    ridge_cnn *m = make("conv3x3-4,bn,relu,dense-3", 5, 6, 2, RIDGE_OPTIM_ADAMW, 4, 9);
    if (!m) return;
    float x[4 * 60], y1[4 * 120], y2[4 * 120], ref[12];
    for (int i = 0; i < 4 * 60; i++) x[i] = sinf((float)i);
    for (int c = 0; c < 4; c++) { /* non-trivial statistics and affine */
        m->run_mean[1][c] = 0.1f * (float)c, m->run_var[1][c] = 0.5f + (float)c;
        m->w[1][c] = 1.5f - 0.2f * (float)c, m->b[1][c] = 0.3f * (float)c - 0.2f;
    }
    const float *logits;
    CHECK_OK(ridge_cnn_forward(ctx, m, x, 4, &logits));
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 4, d.c_in = 2, d.h = 5, d.w = 6, d.c_out = 4, d.r = d.s = 3, d.layout = RIDGE_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    CHECK_OK(ridge_conv_layer_forward(ctx, y1, x, m->w[0], m->b[0], &d, RIDGE_EPI_NONE));
    CHECK_OK(ridge_batchnorm_forward_infer(ctx, y2, y1, m->w[1], m->b[1], m->run_mean[1],
                                           m->run_var[1], 4 * 30, 4, 1e-5f, RIDGE_EPI_RELU));
    CHECK_OK(ridge_dense_forward(ctx, ref, y2, m->w[2], m->b[2], 4, 120, 3, RIDGE_EPI_NONE));
    double e = 0;
    for (int i = 0; i < 12; i++) e = fmax(e, fabs(logits[i] - ref[i]) / (1 + fabs(ref[i])));
    CHECKF(e < 1e-5, "folded inference vs unfolded layers: %.2e", e);
    ridge_cnn_destroy(m);
}

/* ---- training on a Fashion-MNIST subset, resume, checkpoints --------------------------------- */

static void test_training(ridge_ctx *ctx, const ridge_mnist *tr, const ridge_mnist *te)
{
    const size_t N = 3000, NT = 1000;
    ridge_cnn *m = make("conv3x3-8,bn,relu,maxpool2,conv3x3-16,bn,relu,maxpool2,dense-10", 28,
                        28, 1, RIDGE_OPTIM_ADAMW, 32, 1);
    if (!m) return;
    double l0, first, last = 0, tl;
    size_t right0, right;
    CHECK_OK(ridge_cnn_evaluate(ctx, m, te->images, te->labels, NT, &l0, &right0, NULL));
    CHECK_OK(ridge_cnn_train_epoch(ctx, m, tr->images, tr->labels, N, NULL, NULL, &first));
    CHECK_OK(ridge_cnn_train_epoch(ctx, m, tr->images, tr->labels, N, NULL, NULL, &last));
    uint64_t conf[100];
    CHECK_OK(ridge_cnn_evaluate(ctx, m, te->images, te->labels, NT, &tl, &right, conf));
    uint64_t sum = 0, diag = 0;
    for (int i = 0; i < 100; i++) sum += conf[i];
    for (int i = 0; i < 10; i++) diag += conf[i * 11];
    CHECK(sum == NT && diag == right);
    printf("subset: test loss %.3f -> %.3f, accuracy %.1f%% -> %.1f%%; train loss epoch 1 "
           "%.3f, epoch 2 %.3f\n", l0, tl, 100.0 * right0 / NT, 100.0 * right / NT, first, last);
    CHECKF(last < first && tl < 0.4 * l0, "loss did not fall clearly: test %g -> %g", l0, tl);
    CHECKF(right > 0.7 * NT, "test accuracy %zu/%zu after 2 epochs on %zu images", right, NT, N);
    CHECK(m->epoch == 2 && m->step == 2 * ((N + 31) / 32));
    ridge_cnn_destroy(m);
}

static void test_resume(ridge_ctx *ctx, const ridge_mnist *tr)
{
    const size_t N = 600;
    const char *arch = "conv3x3-4,bn,relu,maxpool2,dense-10";
    ridge_cnn *a = make(arch, 28, 28, 1, RIDGE_OPTIM_ADAMW, 50, 11);
    ridge_cnn *b = make(arch, 28, 28, 1, RIDGE_OPTIM_ADAMW, 50, 11);
    if (!a || !b) return;
    double la[2], lb[2];
    CHECK_OK(ridge_cnn_train_epoch(ctx, a, tr->images, tr->labels, N, NULL, NULL, &la[0]));
    CHECK_OK(ridge_cnn_train_epoch(ctx, b, tr->images, tr->labels, N, NULL, NULL, &lb[0]));
    CHECK_OK(ridge_cnn_save(b, tmp("resume.ridge")));
    ridge_cnn_destroy(b);
    b = NULL;
    CHECK_OK(ridge_cnn_load(tmp("resume.ridge"), &b));
    if (!b) return;
    CHECK(b->epoch == 1 && b->step == a->step && b->batch == 50);
    CHECK_OK(ridge_cnn_train_epoch(ctx, a, tr->images, tr->labels, N, NULL, NULL, &la[1]));
    CHECK_OK(ridge_cnn_train_epoch(ctx, b, tr->images, tr->labels, N, NULL, NULL, &lb[1]));
    CHECK(!memcmp(la, lb, sizeof la));
    CHECK(!memcmp(a->params, b->params, a->nparams * 4) &&
          !memcmp(a->buffers, b->buffers, a->nbuffers * 4) &&
          !memcmp(a->state, b->state, a->nstate * 4));
    ridge_cnn_destroy(a);
    ridge_cnn_destroy(b);
}

static long file_size(const char *p)
{
    FILE *f = fopen(p, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void mutate(const char *src, const char *dst, long at, unsigned char x, long len)
{
    long n = file_size(src);
    unsigned char *buf = malloc((size_t)n);
    FILE *f = fopen(src, "rb");
    CHECK(f && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    if (at >= 0) buf[at] ^= x;
    f = fopen(dst, "wb");
    fwrite(buf, 1, (size_t)(len >= 0 ? len : n), f);
    fclose(f);
    free(buf);
}

static void expect_load_fail(const char *path, const char *needle)
{
    ridge_cnn *m = (ridge_cnn *)1;
    ridge_status st = ridge_cnn_load(path, &m);
    CHECKF(st != RIDGE_OK && m == NULL, "%s loaded", path);
    CHECKF(strstr(ridge_last_error(), needle) != NULL, "'%s' lacks '%s'", ridge_last_error(),
           needle);
}

static void test_checkpoint_errors(void)
{
    ridge_cnn *m = make("conv3x3-4,bn,relu,maxpool2,dense-10", 28, 28, 1, RIDGE_OPTIM_SGD, 8, 5);
    if (!m) return;
    char good[512];
    snprintf(good, sizeof good, "%s", tmp("good.ridge"));
    CHECK_OK(ridge_cnn_save(m, good));
    long n = file_size(good);
    CHECK(n == 512 + 4 * (long)(m->nparams + m->nbuffers + m->nstate) + 4);
    ridge_cnn *r;
    CHECK_OK(ridge_cnn_load(good, &r));
    if (r) {
        CHECK(r->cfg.nlayers == 4 && r->opt.kind == RIDGE_OPTIM_SGD && r->seed == 5 &&
              !memcmp(r->params, m->params, m->nparams * 4) &&
              !memcmp(r->buffers, m->buffers, m->nbuffers * 4));
        ridge_cnn_destroy(r);
    }
    mutate(good, tmp("cut.ridge"), -1, 0, n - 1);
    expect_load_fail(tmp("cut.ridge"), "truncated");
    mutate(good, tmp("crc.ridge"), 600, 0x10, -1);
    expect_load_fail(tmp("crc.ridge"), "CRC");
    mutate(good, tmp("magic.ridge"), 0, 0x20, -1);
    expect_load_fail(tmp("magic.ridge"), "magic");
    mutate(good, tmp("arch.ridge"), 256 + 8, 0x01, -1); /* conv3x3-4 -> conv3x3-5 */
    expect_load_fail(tmp("arch.ridge"), "do not match");
    mutate(good, tmp("tok.ridge"), 256 + 1, 0x01, -1); /* "cnnv..." */
    expect_load_fail(tmp("tok.ridge"), "cannot read layer");
    mutate(good, tmp("res.ridge"), 200, 0x01, -1);
    expect_load_fail(tmp("res.ridge"), "reserved");
    expect_load_fail(tmp("none.ridge"), "cannot open");
    CHECK(ridge_cnn_save(m, tmp("nodir/x.ridge")) == RIDGE_EIO);
    ridge_cnn_destroy(m);
}

/* ---- --dump DIR: the inputs of scripts/cnn-vs-pytorch.py check ----------------------------------
 * The default network (seed 1, SGD lr 0.05 momentum 0.9 weight decay 0.01, constant schedule,
 * batch 64; SGD because AdamW's first steps move every weight by about lr * sign(gradient), so
 * gradients that are zero up to rounding flip weights by 2 lr and the runs drift) saved before any
 * step (init.ridge), the first 5 batches of the training set in order, normalized (x.f32,
 * NHWC; y.i32), and the loss of each of 5 training steps on them (losses.txt). */
static int dump(ridge_ctx *ctx, const ridge_mnist *tr, const char *dir)
{
    enum { B = 64, STEPS = 5 };
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    CHECK_OK(ridge_cnn_arch_parse(RIDGE_CNN_DEFAULT_ARCH, &c));
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.kind = RIDGE_OPTIM_SGD, o.lr = 0.05f;
    ridge_cnn *m = NULL;
    CHECK_OK(ridge_cnn_create(&c, &o, B, 1, &m));
    if (!m) return 1;
    char path[1024];
    snprintf(path, sizeof path, "%s/init.ridge", dir);
    CHECK_OK(ridge_cnn_save(m, path));
    float *x = malloc(sizeof(float) * B * STEPS * 784);
    int32_t *y = malloc(sizeof(int32_t) * B * STEPS);
    ridge_batch_u8(x, y, tr->images, tr->labels, NULL, 0, B * STEPS, 784, c.in_mean, c.in_std);
    snprintf(path, sizeof path, "%s/x.f32", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(x, sizeof(float), B * STEPS * 784, f) == B * STEPS * 784);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/y.i32", dir);
    f = fopen(path, "wb");
    CHECK(f && fwrite(y, sizeof(int32_t), B * STEPS, f) == B * STEPS);
    if (f) fclose(f);
    snprintf(path, sizeof path, "%s/losses.txt", dir);
    f = fopen(path, "w");
    for (int s = 0; s < STEPS && f; s++) {
        float loss;
        CHECK_OK(ridge_cnn_train_step(ctx, m, x + (size_t)s * B * 784, y + s * B, B, &loss));
        fprintf(f, "%.9g\n", loss);
    }
    if (f) fclose(f);
    free(x), free(y);
    ridge_cnn_destroy(m);
    return 0;
}

/* ---- --full ---------------------------------------------------------------------------------- */

static void test_full(ridge_ctx *ctx, const ridge_mnist *tr, const ridge_mnist *te)
{
    ridge_cnn_config c;
    ridge_cnn_config_init(&c);
    CHECK_OK(ridge_cnn_arch_parse(RIDGE_CNN_DEFAULT_ARCH, &c));
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.schedule = RIDGE_LR_COSINE; /* `ridge train cnn`'s defaults */
    o.warmup = 100;
    o.total = 10 * ((tr->n + 63) / 64);
    ridge_cnn *m;
    CHECK_OK(ridge_cnn_create(&c, &o, 64, 1, &m));
    size_t right = 0;
    for (int e = 0; e < 10 && m; e++) {
        double tl, el;
        uint64_t t0 = ridge_time_ns();
        CHECK_OK(ridge_cnn_train_epoch(ctx, m, tr->images, tr->labels, tr->n, NULL, NULL, &tl));
        double s = (double)(ridge_time_ns() - t0) * 1e-9;
        CHECK_OK(ridge_cnn_evaluate(ctx, m, te->images, te->labels, te->n, &el, &right, NULL));
        printf("epoch %d: train loss %.4f, test loss %.4f, accuracy %.2f%% (%.1f s)\n", e + 1,
               tl, el, 100.0 * right / te->n, s);
        fflush(stdout);
    }
    CHECKF(right >= 0.91 * te->n, "test accuracy %.2f%% < 91%%", 100.0 * right / te->n);
    ridge_cnn_destroy(m);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ridge-test-cnn-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd) != 0) return 1;
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AUTO);
    int full = argc > 1 && !strcmp(argv[1], "--full");
    ridge_mnist tr = {0}, te = {0};
    int have = !ridge_mnist_load(fashion, "train", &tr) && !ridge_mnist_load(fashion, "t10k", &te);
    if (!have) SKIP("Fashion-MNIST not found in %s: %s", fashion, ridge_last_error());
    if (argc > 2 && !strcmp(argv[1], "--dump")) {
        if (have) dump(ctx, &tr, argv[2]);
    } else if (full) {
        if (have) test_full(ctx, &tr, &te);
    } else {
        test_arch();
        test_gradients(ctx);
        test_fold(ctx);
        test_checkpoint_errors();
        if (have) test_training(ctx, &tr, &te), test_resume(ctx, &tr);
    }
    if (have) ridge_mnist_free(&tr), ridge_mnist_free(&te);
    ridge_ctx_destroy(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return test_finish("test-cnn");
}
