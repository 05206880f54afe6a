/* nn layers: forwards against double-precision references, every backward against central
 * finite differences of the double reference (h = 1e-6), optimizers against hand-written
 * double updates, dropout's mask and thread independence, RNG, CRC-32, parameter layout. */
#include <math.h>

#include "test.h"

static ridge_rng rng;
static float frand(float lo, float hi) { return lo + (hi - lo) * ridge_rng_uniform(&rng); }
static void fill(float *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) p[i] = frand(lo, hi);
}

static double act_d(ridge_epi_act act, double z)
{
    switch (act) {
    case RIDGE_EPI_RELU: return z > 0 ? z : 0;
    case RIDGE_EPI_TANH: return tanh(z);
    case RIDGE_EPI_SIGMOID: return 1 / (1 + exp(-z));
    default: return z;
    }
}

/* Double reference of the dense layer, and L = sum(g .* y). */
static double dense_ref(double *y, const double *x, const double *w, const double *b, size_t B,
                        size_t IC, size_t OC, ridge_epi_act act, const float *g)
{
    double L = 0;
    for (size_t r = 0; r < B; r++)
        for (size_t j = 0; j < OC; j++) {
            double z = b ? b[j] : 0;
            for (size_t i = 0; i < IC; i++) z += x[r * IC + i] * w[j * IC + i];
            double v = act_d(act, z);
            if (y) y[r * OC + j] = v;
            if (g) L += g[r * OC + j] * v;
        }
    return L;
}

static double *to_d(const float *p, size_t n)
{
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) d[i] = p[i];
    return d;
}

/* Compares the analytic gradient `an` of n elements of `v` with central differences of L. */
static void fd_check(const char *what, const float *an, double *v, size_t n, double (*L)(void *),
                     void *ctx, double tol)
{
    double worst = 0;
    size_t at = 0, step = n > 300 ? n / 300 : 1; /* at most ~300 points, spread out */
    for (size_t i = 0; i < n; i += step) {
        const double h = 1e-6, keep = v[i];
        v[i] = keep + h;
        double lp = L(ctx);
        v[i] = keep - h;
        double lm = L(ctx);
        v[i] = keep;
        double fd = (lp - lm) / (2 * h);
        double err = fabs(fd - an[i]) / (fabs(fd) + 1e-3);
        if (err > worst) worst = err, at = i;
    }
    CHECKF(worst <= tol, "%s: worst relative error %.3g at %zu", what, worst, at);
}

typedef struct dense_case {
    double *x, *w, *b;
    size_t B, IC, OC;
    ridge_epi_act act;
    const float *g;
} dense_case;

static double dense_loss(void *p)
{
    dense_case *c = p;
    return dense_ref(NULL, c->x, c->w, c->b, c->B, c->IC, c->OC, c->act, c->g);
}

/* The analytic gradients of L = sum(g .* y) in double, for the pass without finite
 * differences: worst relative error of dx, dw, db against them. */
static double dense_grad_err(const dense_case *c, const float *dx, const float *dw,
                             const float *db)
{
    const size_t B = c->B, IC = c->IC, OC = c->OC;
    double worst = 0, *dz = malloc(B * OC * sizeof *dz);
    for (size_t r = 0; r < B; r++)
        for (size_t j = 0; j < OC; j++) {
            double z = c->b ? c->b[j] : 0;
            for (size_t i = 0; i < IC; i++) z += c->x[r * IC + i] * c->w[j * IC + i];
            double y = act_d(c->act, z), d = 1;
            if (c->act == RIDGE_EPI_RELU) d = z > 0;
            if (c->act == RIDGE_EPI_TANH) d = 1 - y * y;
            if (c->act == RIDGE_EPI_SIGMOID) d = y * (1 - y);
            dz[r * OC + j] = c->g[r * OC + j] * d;
        }
    for (size_t r = 0; r < B; r++)
        for (size_t i = 0; i < IC; i++) {
            double v = 0;
            for (size_t j = 0; j < OC; j++) v += dz[r * OC + j] * c->w[j * IC + i];
            worst = fmax(worst, fabs(dx[r * IC + i] - v) / (fabs(v) + 1e-3));
        }
    for (size_t j = 0; j < OC; j++) {
        double vb = 0;
        for (size_t r = 0; r < B; r++) vb += dz[r * OC + j];
        if (c->b) worst = fmax(worst, fabs(db[j] - vb) / (fabs(vb) + 1e-3));
        for (size_t i = 0; i < IC; i++) {
            double v = 0;
            for (size_t r = 0; r < B; r++) v += dz[r * OC + j] * c->x[r * IC + i];
            worst = fmax(worst, fabs(dw[j * IC + i] - v) / (fabs(v) + 1e-3));
        }
    }
    free(dz);
    return worst;
}

/* fd: check the backward against finite differences (the 1-thread pass); otherwise against
 * the analytic double gradients (cheaper; the 2-thread pass). */
static void test_dense(ridge_ctx *ctx, const char *isa, int fd)
{
    const size_t shapes[][3] = {{1, 1, 1},  {1, 784, 128}, {2, 5, 3},   {7, 17, 10},
                                {33, 31, 5}, {64, 64, 10},  {3, 100, 65}};
    const ridge_epi_act acts[] = {RIDGE_EPI_NONE, RIDGE_EPI_RELU, RIDGE_EPI_TANH, RIDGE_EPI_SIGMOID};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t a = 0; a < 4; a++)
            for (int bias = 0; bias < 2; bias++) {
                size_t B = shapes[s][0], IC = shapes[s][1], OC = shapes[s][2];
                ridge_epi_act act = acts[a];
                float *x = malloc(B * IC * 4), *w = malloc(OC * IC * 4), *b = malloc(OC * 4);
                float *y = malloc(B * OC * 4), *g = malloc(B * OC * 4), *dy = malloc(B * OC * 4);
                float *dx = malloc(B * IC * 4), *dw = malloc(OC * IC * 4), *db = malloc(OC * 4);
                fill(x, B * IC, -1, 1);
                fill(w, OC * IC, -1 / sqrtf((float)IC), 1 / sqrtf((float)IC));
                fill(b, OC, -0.5f, 0.5f);
                fill(g, B * OC, -1, 1);
                CHECK_OK(ridge_dense_forward(ctx, y, x, w, bias ? b : NULL, B, IC, OC, act));
                dense_case c = {to_d(x, B * IC), to_d(w, OC * IC), bias ? to_d(b, OC) : NULL,
                                B, IC, OC, act, g};
                double *yr = malloc(B * OC * sizeof *yr);
                dense_ref(yr, c.x, c.w, c.b, B, IC, OC, act, NULL);
                double worst = 0;
                for (size_t i = 0; i < B * OC; i++)
                    worst = fmax(worst, fabs(y[i] - yr[i]) / (1 + fabs(yr[i])));
                CHECKF(worst < 2e-5, "%s dense fwd %zux%zux%zu %s bias %d: err %.3g", isa, B,
                       IC, OC, ridge_nn_act_name(act), bias, worst);
                memcpy(dy, g, B * OC * 4);
                CHECK_OK(ridge_dense_backward(ctx, dx, dw, bias ? db : NULL, dy, x, w, y, B, IC,
                                              OC, act));
                /* finite differences over every input for small shapes, a sample for large */
                if (!fd) {
                    double err = dense_grad_err(&c, dx, dw, db);
                    CHECKF(err < 1e-3, "%s dense backward %zux%zux%zu %s: err %.3g", isa, B, IC,
                           OC, ridge_nn_act_name(act), err);
                } else if (B * IC * OC <= 20000) {
                    char what[128];
                    snprintf(what, sizeof what, "%s dense dx %zux%zux%zu %s", isa, B, IC, OC,
                             ridge_nn_act_name(act));
                    fd_check(what, dx, c.x, B * IC, dense_loss, &c, 1e-3);
                    what[strlen(isa) + 7] = 'w';
                    fd_check(what, dw, c.w, OC * IC, dense_loss, &c, 1e-3);
                    if (bias) {
                        what[strlen(isa) + 7] = 'b';
                        fd_check(what, db, c.b, OC, dense_loss, &c, 1e-3);
                    }
                } else {
                    fd_check("dense db (B=1, 784x128)", db, c.b ? c.b : c.x, bias ? OC : 0,
                             dense_loss, &c, 1e-3);
                    fd_check("dense dw sample", dw, c.w, 200, dense_loss, &c, 1e-3);
                }
                free(c.x), free(c.w), free(c.b), free(yr);
                free(x), free(w), free(b), free(y), free(g), free(dy), free(dx), free(dw), free(db);
            }
    /* bad arguments */
    float one = 1;
    CHECK(ridge_dense_forward(ctx, &one, &one, &one, NULL, 0, 1, 1, RIDGE_EPI_NONE) ==
          RIDGE_EINVAL);
    CHECK(ridge_dense_forward(ctx, &one, NULL, &one, NULL, 1, 1, 1, RIDGE_EPI_NONE) ==
          RIDGE_EINVAL);
    CHECK(ridge_dense_backward(ctx, NULL, &one, NULL, &one, &one, &one, &one, 1, 1, 1,
                               RIDGE_EPI_GELU_TANH) == RIDGE_EUNSUPPORTED);
}

typedef struct xent_case {
    double *z;
    const int32_t *lab;
    size_t B, V;
} xent_case;

static double xent_loss(void *p)
{
    xent_case *c = p;
    double L = 0;
    for (size_t r = 0; r < c->B; r++) {
        const double *z = c->z + r * c->V;
        double mx = z[0], s = 0;
        for (size_t j = 1; j < c->V; j++) mx = fmax(mx, z[j]);
        for (size_t j = 0; j < c->V; j++) s += exp(z[j] - mx);
        L += log(s) + mx - z[c->lab[r]];
    }
    return L / (double)c->B;
}

static void test_xent(ridge_ctx *ctx)
{
    const size_t shapes[][2] = {{1, 1}, {1, 10}, {5, 3}, {64, 10}, {3, 257}, {40, 1000}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t B = shapes[s][0], V = shapes[s][1];
        float *z = malloc(B * V * 4), *d = malloc(B * V * 4);
        int32_t *lab = malloc(B * 4);
        fill(z, B * V, -4, 4);
        for (size_t r = 0; r < B; r++) lab[r] = (int32_t)ridge_rng_below(&rng, (uint32_t)V);
        float loss;
        size_t right;
        CHECK_OK(ridge_softmax_xent(ctx, &loss, d, &right, z, lab, B, V));
        xent_case c = {to_d(z, B * V), lab, B, V};
        double ref = xent_loss(&c);
        CHECKF(fabs(loss - ref) < 1e-5 * (1 + ref), "xent %zux%zu: %g vs %g", B, V, loss, ref);
        size_t right_ref = 0;
        for (size_t r = 0; r < B; r++) {
            size_t am = 0;
            for (size_t j = 1; j < V; j++)
                if (z[r * V + j] > z[r * V + am]) am = j;
            right_ref += am == (size_t)lab[r];
        }
        CHECK(right == right_ref);
        if (B * V <= 4000) fd_check("xent dlogits", d, c.z, B * V, xent_loss, &c, 1e-3);
        /* in place (dlogits == logits) gives the same gradient */
        float *z2 = malloc(B * V * 4);
        memcpy(z2, z, B * V * 4);
        CHECK_OK(ridge_softmax_xent(ctx, &loss, z2, NULL, z2, lab, B, V));
        CHECK(!memcmp(z2, d, B * V * 4));
        free(z2), free(c.z), free(z), free(d), free(lab);
    }
    /* stability: huge logits give a finite loss; bad labels and NaN are refused */
    float big[3] = {1000, 999, -1000};
    int32_t l0 = 1, bad = 3;
    float loss;
    CHECK_OK(ridge_softmax_xent(ctx, &loss, NULL, NULL, big, &l0, 1, 3));
    CHECKF(fabs(loss - 1.3132617) < 1e-5, "stable loss %g", loss);
    CHECK(ridge_softmax_xent(ctx, &loss, NULL, NULL, big, &bad, 1, 3) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "label 3") != NULL);
    big[0] = NAN;
    CHECK(ridge_softmax_xent(ctx, &loss, NULL, NULL, big, &l0, 1, 3) == RIDGE_EINVAL);
}

static void test_dropout(ridge_ctx *ctx1, ridge_ctx *ctx2)
{
    const size_t n = 200003;
    float *x = malloc(n * 4), *y1 = malloc(n * 4), *y2 = malloc(n * 4), *dx = malloc(n * 4);
    fill(x, n, 0.5f, 1.5f);
    CHECK_OK(ridge_dropout_forward(ctx1, y1, x, n, 0.0f, 7, 0));
    CHECK(!memcmp(x, y1, n * 4));
    CHECK_OK(ridge_dropout_forward(ctx1, y1, x, n, 0.3f, 7, 100));
    CHECK_OK(ridge_dropout_forward(ctx2, y2, x, n, 0.3f, 7, 100));
    CHECK(!memcmp(y1, y2, n * 4)); /* thread count does not matter */
    size_t kept = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (y1[i] != 0) kept++;
        if (y1[i] != 0 && y1[i] != x[i] * (1.0f / (1.0f - 0.3f))) bad++;
    }
    CHECKF(fabs((double)kept / n - 0.7) < 0.005, "kept fraction %g", (double)kept / n);
    CHECK(bad == 0);
    /* the backward is the same linear map: dx = y/x * dy for dy = 1 */
    for (size_t i = 0; i < n; i++) y2[i] = 1.0f;
    CHECK_OK(ridge_dropout_backward(ctx2, dx, y2, n, 0.3f, 7, 100));
    for (size_t i = 0; i < n; i++)
        if (dx[i] != (y1[i] != 0 ? 1.0f / (1.0f - 0.3f) : 0.0f)) bad++;
    CHECK(bad == 0);
    /* another offset is another mask */
    CHECK_OK(ridge_dropout_forward(ctx1, y2, x, n, 0.3f, 7, 101));
    CHECK(memcmp(y1, y2, n * 4) != 0);
    CHECK(ridge_dropout_forward(ctx1, y2, x, n, 1.0f, 7, 0) == RIDGE_EINVAL);
    free(x), free(y1), free(y2), free(dx);
}

static void test_optim(ridge_ctx *ctx)
{
    const size_t n = 70001; /* above the threaded threshold */
    float *p = malloc(n * 4), *g = malloc(n * 4), *st = calloc(2 * n, 4);
    double *pr = malloc(n * 8), *m = calloc(n, 8), *v = calloc(n, 8);
    for (int kind = 0; kind < 2; kind++) {
        ridge_optim_config c;
        ridge_optim_config_init(&c);
        c.kind = kind;
        c.lr = 0.01f;
        c.weight_decay = 0.1f;
        fill(p, n, -1, 1);
        for (size_t i = 0; i < n; i++) pr[i] = p[i], m[i] = v[i] = 0;
        memset(st, 0, 2 * n * 4);
        double worst = 0;
        for (uint64_t t = 0; t < 5; t++) {
            fill(g, n, -1, 1);
            CHECK_OK(ridge_optim_step(ctx, &c, p, g, st, n, t));
            for (size_t i = 0; i < n; i++) {
                if (kind == RIDGE_OPTIM_SGD) {
                    double gg = g[i] + 0.1 * pr[i];
                    m[i] = 0.9 * m[i] + gg;
                    pr[i] -= 0.01 * m[i];
                } else {
                    m[i] = 0.9 * m[i] + 0.1 * g[i];
                    v[i] = 0.999 * v[i] + 0.001 * (double)g[i] * g[i];
                    double mh = m[i] / (1 - pow(0.9, t + 1)), vh = v[i] / (1 - pow(0.999, t + 1));
                    pr[i] = pr[i] * (1 - 0.01 * 0.1) - 0.01 * mh / (sqrt(vh) + 1e-8);
                }
                worst = fmax(worst, fabs(p[i] - pr[i]));
            }
        }
        CHECKF(worst < 1e-5, "%s: worst error %g", ridge_optim_name(c.kind), worst);
    }
    ridge_optim_config c;
    ridge_optim_config_init(&c);
    c.schedule = RIDGE_LR_COSINE;
    c.lr = 1.0f;
    c.warmup = 10;
    c.total = 110;
    c.min_lr_frac = 0.1f;
    CHECK(fabsf(ridge_lr_at(&c, 0) - 0.1f) < 1e-6f && fabsf(ridge_lr_at(&c, 9) - 1.0f) < 1e-6f);
    CHECK(fabsf(ridge_lr_at(&c, 60) - 0.55f) < 1e-6f);
    CHECK(fabsf(ridge_lr_at(&c, 110) - 0.1f) < 1e-6f && fabsf(ridge_lr_at(&c, 999) - 0.1f) < 1e-6f);
    c.lr = -1;
    CHECK(ridge_optim_step(ctx, &c, p, g, st, n, 0) == RIDGE_EINVAL);
    free(p), free(g), free(st), free(pr), free(m), free(v);
}

/* Every ISA's optimizer kernel gives the reference's bits (one template, IEEE-exact ops). */
static void test_optim_isas(void)
{
    const size_t n = 100003;
    float *p0 = malloc(n * 4), *g = malloc(n * 4), *pr = malloc(n * 4), *px = malloc(n * 4);
    float *sr = malloc(2 * n * 4), *sx = malloc(2 * n * 4);
    fill(p0, n, -1, 1);
    fill(g, n, -1, 1);
    const ridge_isa isas[] = {RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    ridge_ctx *ref = test_ctx(2, RIDGE_ISA_REF);
    for (int i = 0; i < 2; i++) {
        ridge_ctx *ctx = test_ctx(2, isas[i]);
        if (!ctx) continue;
        for (int kind = 0; kind < 2; kind++) {
            ridge_optim_config c;
            ridge_optim_config_init(&c);
            c.kind = kind;
            memcpy(pr, p0, n * 4), memcpy(px, p0, n * 4);
            memset(sr, 0, 2 * n * 4), memset(sx, 0, 2 * n * 4);
            for (uint64_t t = 0; t < 3; t++) {
                CHECK_OK(ridge_optim_step(ref, &c, pr, g, sr, n, t));
                CHECK_OK(ridge_optim_step(ctx, &c, px, g, sx, n, t));
            }
            CHECKF(!memcmp(pr, px, n * 4) && !memcmp(sr, sx, 2 * n * 4), "%s %s differs from ref",
                   ridge_isa_name(isas[i]), ridge_optim_name(c.kind));
        }
        ridge_ctx_destroy(ctx);
    }
    ridge_ctx_destroy(ref);
    free(p0), free(g), free(pr), free(px), free(sr), free(sx);
}

static void test_util(void)
{
    CHECK(ridge_crc32(0, "123456789", 9) == 0xCBF43926u);
    CHECK(ridge_crc32(ridge_crc32(0, "1234", 4), "56789", 5) == 0xCBF43926u);
    uint32_t perm[1000], seen[1000] = {0};
    ridge_rng r;
    ridge_rng_seed(&r, 5);
    ridge_rng_permutation(&r, perm, 1000);
    int ok = 1;
    for (int i = 0; i < 1000; i++) ok &= perm[i] < 1000 && !seen[perm[i]]++;
    CHECK(ok);
    ridge_rng r2;
    ridge_rng_seed(&r2, 5);
    CHECK(ridge_rng_next(&r2) != ridge_rng_next(&r)); /* streams move on */
    ridge_rng_seed(&r, 5);
    ridge_rng_seed(&r2, 5);
    CHECK(ridge_rng_next(&r2) == ridge_rng_next(&r));
    size_t sizes[] = {1, 100, 16, 0, 3}, off[5], total;
    CHECK_OK(ridge_params_layout(sizes, 5, off, &total));
    CHECK(off[0] == 0 && off[1] == 16 && off[2] == 128 && off[3] == 144 && off[4] == 144 &&
          total == 160);
    size_t huge[] = {SIZE_MAX / 2, SIZE_MAX / 2};
    CHECK(ridge_params_layout(huge, 2, off, &total) == RIDGE_EOVERFLOW);
    /* batches: normalization and gather */
    uint8_t data[3 * 2] = {0, 255, 51, 102, 10, 20}, lab[3] = {4, 5, 6};
    uint32_t pm[3] = {2, 0, 1};
    float xb[4];
    int32_t yb[2];
    ridge_batch_u8(xb, yb, data, lab, pm, 1, 2, 2, 0.5f, 0.25f);
    CHECK(fabsf(xb[0] + 2) < 1e-6f && fabsf(xb[1] - 2) < 1e-6f && yb[0] == 4 && yb[1] == 5);
}

int main(void)
{
    ridge_rng_seed(&rng, 1234);
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    for (int i = 0; i < 3; i++)
        for (int threads = 1; threads <= 2; threads++) {
            ridge_ctx *ctx = test_ctx(threads, isas[i]);
            if (!ctx) break;
            test_dense(ctx, ridge_isa_name(isas[i]), threads == 1);
            ridge_ctx_destroy(ctx);
        }
    ridge_ctx *c1 = test_ctx(1, RIDGE_ISA_AUTO), *c2 = test_ctx(2, RIDGE_ISA_AUTO);
    test_xent(c2);
    test_dropout(c1, c2);
    test_optim(c2);
    test_optim_isas();
    test_util();
    ridge_ctx_destroy(c1);
    ridge_ctx_destroy(c2);
    return test_finish("test-nn");
}
