/* The MLP: whole-model gradients against finite differences of a double reference,
 * training on synthetic separable data (the loss must fall and the accuracy beat chance by a
 * wide margin), determinism, checkpoints (round trip, bit-exact resume, truncated, bad CRC,
 * bad fields, atomic save), NaN loss. With --full: Fashion-MNIST to the 88%. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
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

/* ---- whole-model gradient check -------------------------------------------------------------- */

typedef struct ref_model {
    const ridge_mlp *m;
    double *p;          /* a double copy of the parameter block */
    const float *x;
    const int32_t *y;
    size_t B;
} ref_model;

static double ref_act(ridge_epi_act a, double z)
{
    return a == RIDGE_EPI_RELU ? (z > 0 ? z : 0) : a == RIDGE_EPI_TANH ? tanh(z)
           : a == RIDGE_EPI_SIGMOID ? 1 / (1 + exp(-z)) : z;
}

static double ref_loss(void *arg)
{
    const ref_model *r = arg;
    const ridge_mlp_config *c = &r->m->cfg;
    double total = 0, h[2][64];
    for (size_t s = 0; s < r->B; s++) {
        for (size_t i = 0; i < c->sizes[0]; i++) h[0][i] = r->x[s * c->sizes[0] + i];
        int cur = 0;
        for (int l = 0; l < c->nlayers; l++) {
            const double *w = r->p + (r->m->w[l] - r->m->params);
            const double *b = r->p + (r->m->b[l] - r->m->params);
            for (size_t j = 0; j < c->sizes[l + 1]; j++) {
                double z = b[j];
                for (size_t i = 0; i < c->sizes[l]; i++) z += w[j * c->sizes[l] + i] * h[cur][i];
                h[cur ^ 1][j] = l + 1 < c->nlayers ? ref_act(c->act, z) : z;
            }
            cur ^= 1;
        }
        size_t V = c->sizes[c->nlayers];
        double mx = h[cur][0], sum = 0;
        for (size_t j = 1; j < V; j++) mx = fmax(mx, h[cur][j]);
        for (size_t j = 0; j < V; j++) sum += exp(h[cur][j] - mx);
        total += log(sum) + mx - h[cur][r->y[s]];
    }
    return total / (double)r->B;
}

static void test_gradients(ridge_ctx *ctx)
{
    const ridge_epi_act acts[] = {RIDGE_EPI_RELU, RIDGE_EPI_TANH, RIDGE_EPI_SIGMOID};
    for (int a = 0; a < 3; a++) {
        ridge_mlp_config c = {.nlayers = 3, .sizes = {13, 11, 7, 5}, .act = acts[a],
                              .in_mean = 0, .in_std = 1};
        ridge_optim_config o;
        ridge_optim_config_init(&o);
        ridge_mlp *m;
        CHECK_OK(ridge_mlp_create(&c, &o, 6, 42 + a, &m));
        if (!m) return;
        ridge_rng rng;
        ridge_rng_seed(&rng, 9);
        float x[6 * 13];
        int32_t y[6];
        for (int i = 0; i < 6 * 13; i++) x[i] = 2 * ridge_rng_uniform(&rng) - 1;
        for (int i = 0; i < 6; i++) y[i] = (int32_t)ridge_rng_below(&rng, 5);
        ref_model r = {m, malloc(m->nparams * sizeof(double)), x, y, 6};
        for (size_t i = 0; i < m->nparams; i++) r.p[i] = m->params[i];
        float loss;
        CHECK_OK(ridge_mlp_train_step(ctx, m, x, y, 6, &loss)); /* grads at the old params */
        double ref = ref_loss(&r);
        CHECKF(fabs(loss - ref) < 1e-5, "mlp loss %g vs %g", loss, ref);
        double worst = 0;
        for (size_t i = 0; i < m->nparams; i++) {
            const double h = 1e-6, keep = r.p[i];
            r.p[i] = keep + h;
            double lp = ref_loss(&r);
            r.p[i] = keep - h;
            double lm = ref_loss(&r);
            r.p[i] = keep;
            double fd = (lp - lm) / (2 * h);
            worst = fmax(worst, fabs(fd - m->grads[i]) / (fabs(fd) + 1e-3));
        }
        CHECKF(worst < 1e-3, "mlp %s gradients: worst relative error %g",
               ridge_nn_act_name(acts[a]), worst);
        free(r.p);
        ridge_mlp_destroy(m);
    }
}

/* ---- synthetic data: class k lights up pixel block k --------------------------------------- */

#define D 64
#define K 8
static void synth(uint8_t *img, uint8_t *lab, size_t n, uint64_t seed)
{
    ridge_rng r;
    ridge_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i++) {
        int k = (int)ridge_rng_below(&r, K);
        lab[i] = (uint8_t)k;
        for (int d = 0; d < D; d++) {
            int on = d / (D / K) == k;
            img[i * D + d] = (uint8_t)(ridge_rng_below(&r, 160) + (on ? 80 : 0));
        }
    }
}

static ridge_mlp *make(ridge_optim_kind kind, float dropout, uint64_t seed)
{
    ridge_mlp_config c = {.nlayers = 2, .sizes = {D, 32, K}, .act = RIDGE_EPI_RELU,
                          .dropout = dropout, .in_mean = 0.5f, .in_std = 0.3f};
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.kind = kind;
    o.lr = kind == RIDGE_OPTIM_SGD ? 0.05f : 2e-3f;
    o.schedule = RIDGE_LR_COSINE;
    o.warmup = 10;
    o.total = 200;
    ridge_mlp *m = NULL;
    CHECK_OK(ridge_mlp_create(&c, &o, 32, seed, &m));
    return m;
}

static void test_training(ridge_ctx *ctx)
{
    enum { N = 2000, NT = 1000 };
    static uint8_t img[N * D], lab[N], timg[NT * D], tlab[NT];
    synth(img, lab, N, 1);
    synth(timg, tlab, NT, 2);
    for (int kind = 0; kind < 2; kind++)
        for (int drop = 0; drop < 2; drop++) {
            ridge_mlp *m = make(kind, drop ? 0.2f : 0.0f, 7);
            if (!m) return;
            double l0, first, last = 0;
            size_t right;
            CHECK_OK(ridge_mlp_evaluate(ctx, m, timg, tlab, NT, &l0, &right, NULL));
            CHECK_OK(ridge_mlp_train_epoch(ctx, m, img, lab, N, NULL, NULL, &first));
            for (int e = 0; e < 2; e++)
                CHECK_OK(ridge_mlp_train_epoch(ctx, m, img, lab, N, NULL, NULL, &last));
            double tl;
            uint64_t conf[K * K];
            CHECK_OK(ridge_mlp_evaluate(ctx, m, timg, tlab, NT, &tl, &right, conf));
            uint64_t sum = 0, diag = 0;
            for (int i = 0; i < K * K; i++) sum += conf[i];
            for (int i = 0; i < K; i++) diag += conf[i * K + i];
            CHECK(sum == NT && diag == right);
            CHECKF(last < first && tl < 0.5 * l0, "%s dropout %d: loss %g -> %g, test %g -> %g",
                   ridge_optim_name(kind), drop, first, last, l0, tl);
            CHECKF(right > 0.9 * NT, "%s dropout %d: test accuracy %zu/%d (chance 1/%d)",
                   ridge_optim_name(kind), drop, right, NT, K);
            CHECK(m->epoch == 3 && m->step == 3 * ((N + 31) / 32));
            ridge_mlp_destroy(m);
        }
}

/* Two runs with one seed give the same bits; a save and resume at an epoch boundary too. */
static void test_determinism_and_resume(ridge_ctx *ctx)
{
    enum { N = 1000 };
    static uint8_t img[N * D], lab[N];
    synth(img, lab, N, 3);
    ridge_mlp *a = make(RIDGE_OPTIM_ADAMW, 0.1f, 11), *b = make(RIDGE_OPTIM_ADAMW, 0.1f, 11);
    if (!a || !b) return;
    double la[3], lb[3];
    for (int e = 0; e < 3; e++) {
        CHECK_OK(ridge_mlp_train_epoch(ctx, a, img, lab, N, NULL, NULL, &la[e]));
        if (e == 0) {
            CHECK_OK(ridge_mlp_train_epoch(ctx, b, img, lab, N, NULL, NULL, &lb[e]));
            CHECK_OK(ridge_mlp_save(b, tmp("resume.ridge")));
            ridge_mlp_destroy(b);
            b = NULL;
            CHECK_OK(ridge_mlp_load(tmp("resume.ridge"), &b));
            if (!b) return;
            CHECK(b->epoch == 1 && b->step == a->step && b->batch == 32);
        } else {
            CHECK_OK(ridge_mlp_train_epoch(ctx, b, img, lab, N, NULL, NULL, &lb[e]));
        }
    }
    CHECK(!memcmp(la, lb, sizeof la));
    CHECK(a->nparams == b->nparams && !memcmp(a->params, b->params, a->nparams * 4));
    CHECK(!memcmp(a->state, b->state, a->nstate * 4));
    ridge_mlp_destroy(a);
    ridge_mlp_destroy(b);
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

static void expect_load_fail(const char *path, const char *needle)
{
    ridge_mlp *m = (ridge_mlp *)1;
    ridge_status st = ridge_mlp_load(path, &m);
    CHECKF(st != RIDGE_OK && m == NULL, "%s loaded", path);
    CHECKF(strstr(ridge_last_error(), needle) != NULL, "'%s' lacks '%s'", ridge_last_error(),
           needle);
}

/* Rewrites `src` into `dst` with byte `at` xored by `x` (or cut to `len` if len >= 0). */
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

static void test_checkpoint_errors(void)
{
    ridge_mlp *m = make(RIDGE_OPTIM_SGD, 0, 5);
    if (!m) return;
    char good[512];
    snprintf(good, sizeof good, "%s", tmp("good.ridge"));
    CHECK_OK(ridge_mlp_save(m, good));
    CHECK_OK(ridge_mlp_save(m, good)); /* over an existing file */
    long n = file_size(good);
    CHECK(n == 256 + 4 * (long)(m->nparams + m->nstate) + 4);
    /* a save that fails half-way (the file size limit hit in a child process) reports EIO,
     * removes its temporary file and leaves the previous checkpoint intact */
    ridge_mlp *other = make(RIDGE_OPTIM_SGD, 0, 6);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {1000, 1000};
        setrlimit(RLIMIT_FSIZE, &rl);
        _exit(ridge_mlp_save(other, good) == RIDGE_EIO ? 0 : 1);
    }
    int wst = 0;
    CHECK(pid > 0 && waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    ridge_mlp_destroy(other);
    DIR *dir = opendir(tmpdir);
    int tmps = 0;
    for (struct dirent *e; dir && (e = readdir(dir));) tmps += strstr(e->d_name, ".tmp.") != NULL;
    if (dir) closedir(dir);
    CHECK(tmps == 0);
    ridge_mlp *r;
    CHECK_OK(ridge_mlp_load(good, &r));
    if (r) {
        CHECK(r->cfg.nlayers == 2 && r->cfg.sizes[1] == 32 && r->opt.kind == RIDGE_OPTIM_SGD &&
              r->opt.schedule == RIDGE_LR_COSINE && r->opt.total == 200 && r->seed == 5);
        CHECK(!memcmp(r->params, m->params, m->nparams * 4));
        ridge_mlp_destroy(r);
    }
    mutate(good, tmp("cut.ridge"), -1, 0, n - 1);
    expect_load_fail(tmp("cut.ridge"), "truncated");
    mutate(good, tmp("hdr.ridge"), -1, 0, 100);
    expect_load_fail(tmp("hdr.ridge"), "truncated");
    mutate(good, tmp("crc.ridge"), 300, 0x10, -1);
    expect_load_fail(tmp("crc.ridge"), "CRC");
    mutate(good, tmp("magic.ridge"), 0, 0x20, -1);
    expect_load_fail(tmp("magic.ridge"), "magic");
    mutate(good, tmp("ver.ridge"), 8, 0x02, -1);
    expect_load_fail(tmp("ver.ridge"), "version");
    mutate(good, tmp("nl.ridge"), 16, 0x40, -1);
    expect_load_fail(tmp("nl.ridge"), "nlayers");
    mutate(good, tmp("size.ridge"), 24, 0x01, -1); /* sizes[1] 32 -> 33 */
    expect_load_fail(tmp("size.ridge"), "do not match");
    mutate(good, tmp("act.ridge"), 88, 0x07, -1);
    expect_load_fail(tmp("act.ridge"), "activation");
    mutate(good, tmp("lr.ridge"), 115, 0xff, -1); /* lr's sign and exponent */
    expect_load_fail(tmp("lr.ridge"), "lr");
    mutate(good, tmp("res.ridge"), 200, 0x01, -1);
    expect_load_fail(tmp("res.ridge"), "reserved");
    expect_load_fail(tmp("none.ridge"), "cannot open");
    /* a failed save (no such directory) leaves nothing behind */
    CHECK(ridge_mlp_save(m, tmp("nodir/x.ridge")) == RIDGE_EIO);
    /* NaN loss is refused with the step named */
    m->w[0][0] = NAN;
    float x[D] = {0}, loss;
    int32_t y = 0;
    CHECK(ridge_mlp_train_step(NULL, m, x, &y, 1, &loss) == RIDGE_EINVAL);
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    for (int i = 0; i < D; i++) x[i] = 1;
    ridge_status st = ridge_mlp_train_step(ctx, m, x, &y, 1, &loss);
    CHECKF(st == RIDGE_EINVAL && strstr(ridge_last_error(), "nan"), "%s", ridge_last_error());
    ridge_ctx_destroy(ctx);
    ridge_mlp_destroy(m);
}

/* ---- --full: Fashion-MNIST ------------------------------------------------------------------- */

static void test_fashion(ridge_ctx *ctx, const char *dir)
{
    ridge_mnist tr, te;
    if (ridge_mnist_load(dir, "train", &tr) || ridge_mnist_load(dir, "t10k", &te)) {
        SKIP("Fashion-MNIST not found in %s: %s", dir, ridge_last_error());
        return;
    }
    ridge_mlp_config c = {.nlayers = 2, .sizes = {784, 128, 10}, .act = RIDGE_EPI_RELU,
                          .in_mean = 0.2860f, .in_std = 0.3530f};
    ridge_optim_config o;
    ridge_optim_config_init(&o);
    o.schedule = RIDGE_LR_COSINE; /* `ridge train mlp`'s defaults */
    o.warmup = 100;
    o.total = 10 * ((tr.n + 63) / 64);
    ridge_mlp *m;
    CHECK_OK(ridge_mlp_create(&c, &o, 64, 1, &m));
    size_t right = 0;
    for (int e = 0; e < 10 && m; e++) {
        double tl, el;
        CHECK_OK(ridge_mlp_train_epoch(ctx, m, tr.images, tr.labels, tr.n, NULL, NULL, &tl));
        CHECK_OK(ridge_mlp_evaluate(ctx, m, te.images, te.labels, te.n, &el, &right, NULL));
        printf("epoch %d: train loss %.4f, test loss %.4f, accuracy %.2f%%\n", e + 1, tl, el,
               100.0 * right / te.n);
    }
    CHECKF(right >= 0.88 * te.n, "test accuracy %.2f%% < 88%%", 100.0 * right / te.n);
    ridge_mlp_destroy(m);
    ridge_mnist_free(&tr);
    ridge_mnist_free(&te);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ridge-test-mlp-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", tmpdir);
    if (system(cmd) != 0) return 1;
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AUTO);
    if (argc > 1 && !strcmp(argv[1], "--full")) {
        test_fashion(ctx, argc > 2 ? argv[2] : "/usr/share/datasets/fashion-mnist");
    } else {
        test_gradients(ctx);
        test_training(ctx);
        test_determinism_and_resume(ctx);
        test_checkpoint_errors();
    }
    ridge_ctx_destroy(ctx);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0) return 1;
    return test_finish("test-mlp");
}
