/* CNN layers (issue 8): convolution layer, max/average pooling, batch normalization; each
 * backward against central finite differences (batch normalization's of an fp64 forward
 * written here; the others of the layers' own forward, which is linear or piecewise linear
 * with the kinks kept far from the step), ReLU variants against the masked linear backward,
 * thread-count independence, and bad arguments. */
#include <float.h>
#include <math.h>

#include "test.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(float *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) p[i] = frand(&seed);
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static double rel(double got, double want) { return fabs(got - want) / (1 + fabs(want)); }

/* ---- convolution layer ----------------------------------------------------------------------- */

static void test_conv_layer(ridge_ctx *ctx)
{
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 2, d.c_in = 3, d.h = 6, d.w = 5, d.c_out = 4, d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = RIDGE_NHWC;
    int64_t oh, ow;
    CHECK_OK(ridge_conv2d_desc_check(&d, &oh, &ow));
    size_t xn = (size_t)(d.n * d.h * d.w * d.c_in), yn = (size_t)(d.n * oh * ow * d.c_out);
    size_t wn = (size_t)(d.c_out * d.c_in * 9), bn = (size_t)d.c_out;
    float *x = malloc(xn * 4), *w = malloc(wn * 4), *b = malloc(bn * 4), *g = malloc(yn * 4);
    float *y = malloc(yn * 4), *dy = malloc(yn * 4), *dx = malloc(xn * 4), *dw = malloc(wn * 4);
    float *db = malloc(bn * 4), *rx = malloc(xn * 4), *rw = malloc(wn * 4), *rb = malloc(bn * 4);
    fill(x, xn, 1), fill(w, wn, 2), fill(b, bn, 3), fill(g, yn, 4);
    /* act none: finite differences of L = sum(g * y) (linear: any step is exact up to rounding) */
    CHECK_OK(ridge_conv_layer_forward(ctx, y, x, w, b, &d, RIDGE_EPI_NONE));
    memcpy(dy, g, yn * 4);
    CHECK_OK(ridge_conv_layer_backward(ctx, dx, dw, db, dy, x, w, y, &d, RIDGE_EPI_NONE));
    double worst = 0;
    float *vs[3] = {x, w, b}, *gs[3] = {dx, dw, db};
    size_t ns[3] = {xn, wn, bn};
    for (int v = 0; v < 3; v++)
        for (size_t i = 0; i < ns[v]; i++) {
            const float h = 0.25f, keep = vs[v][i];
            vs[v][i] = keep + h;
            CHECK_OK(ridge_conv_layer_forward(ctx, y, x, w, b, &d, RIDGE_EPI_NONE));
            double lp = dot(g, y, yn);
            vs[v][i] = keep - h;
            CHECK_OK(ridge_conv_layer_forward(ctx, y, x, w, b, &d, RIDGE_EPI_NONE));
            double lm = dot(g, y, yn);
            vs[v][i] = keep;
            worst = fmax(worst, rel(gs[v][i], (lp - lm) / (2 * h)));
        }
    CHECKF(worst < 1e-4, "conv layer finite differences: %.2e", worst);
    /* relu: the masked linear backward */
    CHECK_OK(ridge_conv_layer_forward(ctx, y, x, w, b, &d, RIDGE_EPI_RELU));
    memcpy(dy, g, yn * 4);
    CHECK_OK(ridge_conv_layer_backward(ctx, dx, dw, db, dy, x, w, y, &d, RIDGE_EPI_RELU));
    int same = 1;
    for (size_t i = 0; i < yn; i++) {
        g[i] = y[i] > 0 ? g[i] : 0.0f;
        same &= dy[i] == g[i];
    }
    CHECK(same);
    CHECK_OK(ridge_conv2d_backward_data_ref(&d, rx, g, w));
    CHECK_OK(ridge_conv2d_backward_weights_ref(&d, rw, rb, x, g));
    worst = 0;
    for (size_t i = 0; i < xn; i++) worst = fmax(worst, rel(dx[i], rx[i]));
    for (size_t i = 0; i < wn; i++) worst = fmax(worst, rel(dw[i], rw[i]));
    for (size_t i = 0; i < bn; i++) worst = fmax(worst, rel(db[i], rb[i]));
    CHECKF(worst < 1e-5, "conv layer relu backward vs reference: %.2e", worst);
    CHECK(ridge_conv_layer_forward(ctx, y, x, w, b, &d, RIDGE_EPI_GELU_TANH) == RIDGE_EINVAL);
    free(x), free(w), free(b), free(g), free(y), free(dy), free(dx), free(dw), free(db);
    free(rx), free(rw), free(rb);
}

/* ---- pooling --------------------------------------------------------------------------------- */

static void test_pool(ridge_ctx *ctx, ridge_pool_kind kind, int64_t k, int64_t stride,
                      int64_t pad, int64_t h, int64_t w)
{
    ridge_pool2d_desc d = {.n = 2, .c = 3, .h = h, .w = w, .r = k, .s = k, .stride_h = stride,
                           .stride_w = stride, .pad_top = pad, .pad_bottom = pad, .pad_left = pad,
                           .pad_right = pad, .kind = kind, .layout = RIDGE_NHWC};
    int64_t oh, ow;
    CHECK_OK(ridge_pool2d_desc_check(&d, &oh, &ow));
    size_t xn = (size_t)(d.n * h * w * d.c), yn = (size_t)(d.n * oh * ow * d.c);
    float *x = malloc(xn * 4), *y = malloc(yn * 4), *g = malloc(yn * 4), *dx = malloc(xn * 4);
    int32_t *am = malloc(yn * 4);
    /* distinct values 0.01 apart in a scrambled order: no ties, kinks far from the step */
    for (size_t i = 0; i < xn; i++) x[i] = (float)((i * 7919) % xn) * 0.01f;
    fill(g, yn, 9);
    CHECK_OK(ridge_pool2d_forward_argmax(ctx, &d, x, y, am));
    /* the same outputs as the inference forward */
    float *y2 = malloc(yn * 4);
    CHECK_OK(ridge_pool2d_forward(ctx, &d, x, y2));
    CHECK(!memcmp(y, y2, yn * 4));
    free(y2);
    CHECK_OK(ridge_pool2d_backward(ctx, &d, dx, g, am));
    double worst = 0;
    for (size_t i = 0; i < xn; i++) {
        const float hs = 1e-3f, keep = x[i];
        x[i] = keep + hs;
        CHECK_OK(ridge_pool2d_forward(ctx, &d, x, y));
        double lp = dot(g, y, yn);
        x[i] = keep - hs;
        CHECK_OK(ridge_pool2d_forward(ctx, &d, x, y));
        double lm = dot(g, y, yn);
        x[i] = keep;
        worst = fmax(worst, rel(dx[i], (lp - lm) / (2 * hs)));
    }
    CHECKF(worst < 2e-3, "%s pool k%lld s%lld p%lld on %lldx%lld: finite differences %.2e",
           kind == RIDGE_POOL_MAX ? "max" : "avg", (long long)k, (long long)stride,
           (long long)pad, (long long)h, (long long)w, worst);
    free(x), free(y), free(g), free(dx), free(am);
}

/* The training pooling pair on every ISA the CPU has, against the scalar build bit for bit and
 * against a plain max: channels past one vector (C = 37), ties, a NaN, windows that tile the
 * image (the backward's select path) with a row and a column left over, windows that overlap
 * (its scatter), and 2 x 2 windows whose last row and column the bottom and right padding
 * cut (clamped, so not the tiled paths: until session 26 the backward took them as tiled and
 * touched a row and a column past the image). */
static void test_pool_isas(void)
{
    const struct {
        int64_t k, stride, h, w, c, pad_end; /* pad_end: bottom and right */
    } sh[] = {{2, 2, 9, 7, 37, 0}, {2, 2, 8, 8, 16, 0}, {3, 2, 7, 9, 20, 0}, {2, 2, 7, 5, 16, 1}};
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    for (size_t t = 0; t < sizeof sh / sizeof sh[0]; t++) {
        ridge_pool2d_desc d = {.n = 3, .c = sh[t].c, .h = sh[t].h, .w = sh[t].w, .r = sh[t].k,
                               .s = sh[t].k, .stride_h = sh[t].stride, .stride_w = sh[t].stride,
                               .pad_bottom = sh[t].pad_end, .pad_right = sh[t].pad_end,
                               .kind = RIDGE_POOL_MAX, .layout = RIDGE_NHWC};
        int64_t oh, ow;
        CHECK_OK(ridge_pool2d_desc_check(&d, &oh, &ow));
        const size_t xn = (size_t)(d.n * d.h * d.w * d.c), yn = (size_t)(d.n * oh * ow * d.c);
        float *x = malloc(xn * 4), *g = malloc(yn * 4), *y[3], *dx[3];
        int32_t *am[3];
        fill(g, yn, 51);
        /* many ties: a pixel's value repeats over runs of 3 pixels, so that a window's cells
         * tie in every channel in many windows (with i * 7 % 5, cells C floats apart never
         * tied for these C) */
        for (size_t i = 0; i < xn; i++)
            x[i] = (float)(int)((i / (size_t)d.c / 3 + i % (size_t)d.c) % 2);
        x[xn / 2] = NAN;
        for (int k = 0; k < 3; k++)
            y[k] = malloc(yn * 4), dx[k] = malloc(xn * 4), am[k] = malloc(yn * 4);
        for (int k = 0; k < 3; k++) {
            ridge_ctx *ctx = test_ctx(k == 1 ? 1 : 2, isas[k]);
            if (!ctx) { /* SKIP printed: the scalar results stand in */
                memcpy(y[k], y[0], yn * 4), memcpy(dx[k], dx[0], xn * 4);
                memcpy(am[k], am[0], yn * 4);
                continue;
            }
            CHECK_OK(ridge_pool2d_forward_argmax(ctx, &d, x, y[k], am[k]));
            CHECK_OK(ridge_pool2d_backward(ctx, &d, dx[k], g, am[k]));
            ridge_ctx_destroy(ctx);
        }
        /* the forward: the window's max (NaN wins), its first cell among ties */
        size_t bad = 0;
        for (int64_t n = 0; n < d.n; n++)
            for (int64_t i = 0; i < oh; i++)
                for (int64_t j = 0; j < ow; j++)
                    for (int64_t c = 0; c < d.c; c++) {
                        const size_t q = (size_t)(((n * oh + i) * ow + j) * d.c + c);
                        float m = 0;
                        int32_t at = -1;
                        const int64_t h0 = i * d.stride_h, w0 = j * d.stride_w;
                        const int64_t h1 = h0 + d.r < d.h ? h0 + d.r : d.h;
                        const int64_t w1 = w0 + d.s < d.w ? w0 + d.s : d.w;
                        for (int64_t ih = h0; ih < h1; ih++)
                            for (int64_t iw = w0; iw < w1; iw++) {
                                const int32_t o = (int32_t)((ih * d.w + iw) * d.c + c);
                                const float v = x[n * d.h * d.w * d.c + o];
                                if (at < 0 || (v > m) || (v != v && m == m)) m = v, at = o;
                            }
                        bad += am[0][q] != at || !(y[0][q] == m || (m != m && y[0][q] != y[0][q]));
                    }
        CHECKF(bad == 0, "max pool %lldx%lld/%lld on %lldx%lldx%lld: %zu outputs differ from the "
               "plain max", (long long)d.r, (long long)d.s, (long long)d.stride_h,
               (long long)d.h, (long long)d.w, (long long)d.c, bad);
        /* the backward: each winner gets the sum of its windows' dy, every other cell 0 */
        double *want = calloc(xn, sizeof(double));
        for (int64_t n = 0; n < d.n; n++)
            for (size_t q = 0; q < (size_t)(oh * ow * d.c); q++)
                want[(size_t)(n * d.h * d.w * d.c) + (size_t)am[0][n * oh * ow * d.c + q]] +=
                    g[(size_t)(n * oh * ow * d.c) + q];
        double worst = 0;
        for (size_t i = 0; i < xn; i++) worst = fmax(worst, fabs(dx[0][i] - want[i]));
        CHECKF(worst < 1e-6, "max pool backward: %.2e from the scatter", worst);
        for (int k = 1; k < 3; k++)
            CHECKF(!memcmp(y[k], y[0], yn * 4) && !memcmp(am[k], am[0], yn * 4) &&
                       !memcmp(dx[k], dx[0], xn * 4),
                   "max pool %lldx%lldx%lld: %s differs from the scalar build", (long long)d.h,
                   (long long)d.w, (long long)d.c, ridge_isa_name(isas[k]));
        for (int k = 0; k < 3; k++) free(y[k]), free(dx[k]), free(am[k]);
        free(x), free(g), free(want);
    }
}

/* ---- batch normalization --------------------------------------------------------------------- */

static double bn_loss64(const float *x, const double *dx, size_t which, double hstep,
                        const float *gamma, const float *beta, const float *g, size_t rows,
                        size_t C, float eps, double *ymax_err, const float *yf)
{
    /* which: 0 x, 1 gamma, 2 beta; dx: the index perturbed (as a double offset) */
    double L = 0;
    for (size_t c = 0; c < C; c++) {
        double m = 0, v = 0;
        for (size_t r = 0; r < rows; r++) {
            double xv = x[r * C + c] + (which == 0 && *dx == (double)(r * C + c) ? hstep : 0);
            m += xv;
        }
        m /= (double)rows;
        for (size_t r = 0; r < rows; r++) {
            double xv = x[r * C + c] + (which == 0 && *dx == (double)(r * C + c) ? hstep : 0);
            v += (xv - m) * (xv - m);
        }
        v /= (double)rows;
        double ga = gamma[c] + (which == 1 && *dx == (double)c ? hstep : 0);
        double be = beta[c] + (which == 2 && *dx == (double)c ? hstep : 0);
        for (size_t r = 0; r < rows; r++) {
            double xv = x[r * C + c] + (which == 0 && *dx == (double)(r * C + c) ? hstep : 0);
            double y = ga * (xv - m) / sqrt(v + eps) + be;
            if (ymax_err) *ymax_err = fmax(*ymax_err, rel(yf[r * C + c], y));
            L += y * g[r * C + c];
        }
    }
    return L;
}

static void test_batchnorm(ridge_ctx *c1, ridge_ctx *c2)
{
    const size_t rows = 37, C = 5;
    const float eps = 1e-5f;
    float *x = malloc(rows * C * 4), *y = malloc(rows * C * 4), *y2 = malloc(rows * C * 4);
    float *g = malloc(rows * C * 4), *dy = malloc(rows * C * 4), *dx = malloc(rows * C * 4);
    float gamma[5], beta[5], mean[5], rstd[5], dgamma[5], dbeta[5], rm[5], rv[5];
    fill(x, rows * C, 5), fill(g, rows * C, 6), fill(gamma, C, 7), fill(beta, C, 8);
    for (size_t i = 0; i < rows * C; i++) x[i] = x[i] * 3 + (float)(i % C); /* offset means */
    for (size_t c = 0; c < C; c++) rm[c] = 0, rv[c] = 1;
    CHECK_OK(ridge_batchnorm_forward_train(c1, y, mean, rstd, rm, rv, x, gamma, beta, rows, C,
                                           eps, 0.1f, RIDGE_EPI_NONE));
    double yerr = 0, zero = -1;
    bn_loss64(x, &zero, 9, 0, gamma, beta, g, rows, C, eps, &yerr, y);
    CHECKF(yerr < 1e-5, "batchnorm forward vs fp64: %.2e", yerr);
    /* running statistics: PyTorch's update with the unbiased variance */
    double err = 0;
    for (size_t c = 0; c < C; c++) {
        double m = 0, v = 0;
        for (size_t r = 0; r < rows; r++) m += x[r * C + c];
        m /= rows;
        for (size_t r = 0; r < rows; r++) v += (x[r * C + c] - m) * (x[r * C + c] - m);
        err = fmax(err, rel(rm[c], 0.1 * m));
        err = fmax(err, rel(rv[c], 0.9 + 0.1 * v / (rows - 1)));
    }
    CHECKF(err < 1e-5, "batchnorm running statistics: %.2e", err);
    memcpy(dy, g, rows * C * 4);
    CHECK_OK(ridge_batchnorm_backward(c1, dx, dgamma, dbeta, dy, x, y, mean, rstd, gamma, rows,
                                      C, RIDGE_EPI_NONE));
    double worst = 0;
    const double h = 1e-4;
    for (int which = 0; which < 3; which++) {
        size_t n = which == 0 ? rows * C : C;
        const float *got = which == 0 ? dx : which == 1 ? dgamma : dbeta;
        for (size_t i = 0; i < n; i++) {
            double idx = (double)i;
            double lp =
                bn_loss64(x, &idx, (size_t)which, h, gamma, beta, g, rows, C, eps, NULL, NULL);
            double lm =
                bn_loss64(x, &idx, (size_t)which, -h, gamma, beta, g, rows, C, eps, NULL, NULL);
            worst = fmax(worst, rel(got[i], (lp - lm) / (2 * h)));
        }
    }
    CHECKF(worst < 1e-4, "batchnorm finite differences (fp64 forward): %.2e", worst);
    /* relu: forward clamps, backward is the masked linear one; 2 threads give the same bits */
    float dx2[5 * 37], dg2[5], db2[5];
    CHECK_OK(ridge_batchnorm_forward_train(c2, y2, mean, rstd, NULL, NULL, x, gamma, beta, rows,
                                           C, eps, 0.1f, RIDGE_EPI_RELU));
    int ok = 1;
    for (size_t i = 0; i < rows * C; i++) ok &= y2[i] == (y[i] > 0 ? y[i] : 0.0f);
    CHECK(ok);
    memcpy(dy, g, rows * C * 4);
    CHECK_OK(ridge_batchnorm_backward(c2, dx2, dg2, db2, dy, x, y2, mean, rstd, gamma, rows, C,
                                      RIDGE_EPI_RELU));
    for (size_t i = 0; i < rows * C; i++) g[i] = y2[i] > 0 ? g[i] : 0.0f;
    CHECK_OK(ridge_batchnorm_backward(c1, dx, dgamma, dbeta, g, x, y, mean, rstd, gamma, rows,
                                      C, RIDGE_EPI_NONE));
    CHECK(!memcmp(dx, dx2, sizeof dx2) && !memcmp(dgamma, dg2, sizeof dg2) &&
          !memcmp(dbeta, db2, sizeof db2));
    /* inference with the running statistics equals a train-mode formula with them */
    CHECK_OK(ridge_batchnorm_forward_infer(c1, y, x, gamma, beta, rm, rv, rows, C, eps,
                                           RIDGE_EPI_NONE));
    err = 0;
    for (size_t i = 0; i < rows * C; i++) {
        size_t c = i % C;
        err = fmax(err, rel(y[i], gamma[c] * (x[i] - rm[c]) / sqrt(rv[c] + eps) + beta[c]));
    }
    CHECKF(err < 1e-5, "batchnorm inference: %.2e", err);
    CHECK(ridge_batchnorm_forward_train(c1, y, mean, rstd, NULL, NULL, x, gamma, beta, 0, C,
                                        eps, 0.1f, RIDGE_EPI_NONE) == RIDGE_EINVAL);
    free(x), free(y), free(y2), free(g), free(dy), free(dx);
}

/* Shapes past one block of rows (bn-kernels.h: BN_BLOCK = 64) and one group of 16 channels,
 * with a mean far above the spread (1000 + [-1, 2]: E[x^2] - E[x]^2 would lose every digit of
 * the variance in float, and most in double): the statistics and the backward against fp64,
 * dx written over dy, and every ISA the CPU has giving the bits of the scalar build. */
static void test_batchnorm_shapes(void)
{
    const struct {
        size_t rows, C;
    } sh[] = {{64, 16}, {65, 16}, {200, 37}, {1000, 64}, {3 * 64 + 7, 5}, {50, 1},
              /* chunks (batchnorm.c: 32 of them) of several blocks each */
              {32 * 64 * 2 + 13, 16}, {32 * 70, 37}};
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    for (size_t t = 0; t < sizeof sh / sizeof sh[0]; t++) {
        const size_t rows = sh[t].rows, C = sh[t].C, n = rows * C;
        float *x = malloc(n * 4), *g = malloc(n * 4), *y[3], *dx[3];
        float *gamma = malloc(C * 4), *beta = malloc(C * 4), *st[3], *dgb[3];
        fill(x, n, 40), fill(g, n, 41), fill(gamma, C, 42), fill(beta, C, 43);
        /* plus a step every 16 rows, so that blocks of rows differ in mean (the M2 merge) */
        for (size_t i = 0; i < n; i++) x[i] = 1000.0f + x[i] + 0.25f * (float)(i / C / 16 % 5);
        for (int k = 0; k < 3; k++) {
            y[k] = malloc(n * 4), dx[k] = malloc(n * 4);
            st[k] = malloc(2 * C * 4), dgb[k] = malloc(2 * C * 4);
        }
        /* the scalar loops on 2 threads, AVX2 on 2, AVX-512 on 1 */
        for (int k = 0; k < 3; k++) {
            ridge_ctx *ctx = test_ctx(k == 2 ? 1 : 2, isas[k]);
            if (!ctx) { /* SKIP printed; the scalar results stand in */
                memcpy(y[k], y[0], n * 4), memcpy(dx[k], dx[0], n * 4);
                memcpy(st[k], st[0], 2 * C * 4), memcpy(dgb[k], dgb[0], 2 * C * 4);
                continue;
            }
            CHECK_OK(ridge_batchnorm_forward_train(ctx, y[k], st[k], st[k] + C, NULL, NULL, x,
                                                   gamma, beta, rows, C, 1e-5f, 0.1f,
                                                   RIDGE_EPI_RELU));
            memcpy(dx[k], g, n * 4); /* dx = dy: written over */
            CHECK_OK(ridge_batchnorm_backward(ctx, dx[k], dgb[k], dgb[k] + C, dx[k], x, y[k],
                                              st[k], st[k] + C, gamma, rows, C,
                                              RIDGE_EPI_RELU));
            ridge_ctx_destroy(ctx);
        }
        /* fp64: mean, variance, y, and the backward's closed form on the masked dy */
        double worst_stat = 0, worst_y = 0, worst_dx = 0;
        for (size_t c = 0; c < C; c++) {
            double m = 0, v = 0, s0 = 0, s1 = 0;
            for (size_t r = 0; r < rows; r++) m += x[r * C + c];
            m /= (double)rows;
            for (size_t r = 0; r < rows; r++) v += (x[r * C + c] - m) * (x[r * C + c] - m);
            v /= (double)rows;
            const double rs = 1.0 / sqrt(v + 1e-5);
            /* the mean within its float rounding (an ulp of 1000 is 6e-5, a tenth of the
             * spread's 1e-3), rstd to 1e-5 */
            worst_stat = fmax(worst_stat, fabs(st[0][c] - m) / (fabs(m) * FLT_EPSILON + 1e-7));
            worst_stat = fmax(worst_stat, rel(st[0][C + c], rs) / 1e-5);
            for (size_t r = 0; r < rows; r++) {
                const size_t i = r * C + c;
                const double pre = gamma[c] * (x[i] - m) * rs + beta[c];
                worst_y = fmax(worst_y, fabs(y[0][i] - fmax(pre, 0)) / (fabs(gamma[c]) + 1e-6));
                const double gm = y[0][i] > 0 ? g[i] : 0; /* the mask of the y given */
                s0 += gm, s1 += gm * (x[i] - m) * rs;
            }
            for (size_t r = 0; r < rows; r++) {
                const size_t i = r * C + c;
                const double gm = y[0][i] > 0 ? g[i] : 0;
                const double want =
                    gamma[c] * rs * (gm - s0 / (double)rows - (x[i] - m) * rs * s1 / (double)rows);
                worst_dx = fmax(worst_dx, fabs(dx[0][i] - want) / (fabs(gamma[c]) * rs + 1e-6));
            }
        }
        CHECKF(worst_stat <= 1, "batchnorm %zux%zu, mean 1000: statistics off by %.2f of the bound",
               rows, C, worst_stat);
        CHECKF(worst_y < 1e-3 && worst_dx < 1e-3,
               "batchnorm %zux%zu, mean 1000: y off by %.2e, dx by %.2e (per gamma rstd)", rows,
               C, worst_y, worst_dx);
        for (int k = 1; k < 3; k++)
            CHECKF(!memcmp(y[k], y[0], n * 4) && !memcmp(dx[k], dx[0], n * 4) &&
                       !memcmp(st[k], st[0], 2 * C * 4) && !memcmp(dgb[k], dgb[0], 2 * C * 4),
                   "batchnorm %zux%zu: %s differs from the scalar build", rows, C,
                   ridge_isa_name(isas[k]));
        for (int k = 0; k < 3; k++) free(y[k]), free(dx[k]), free(st[k]), free(dgb[k]);
        free(x), free(g), free(gamma), free(beta);
    }
}

int main(void)
{
    ridge_ctx *c1 = test_ctx(1, RIDGE_ISA_AUTO), *c2 = test_ctx(2, RIDGE_ISA_AUTO);
    if (!c1 || !c2) return test_finish("test-nn-conv");
    test_conv_layer(c2);
    test_pool(c2, RIDGE_POOL_MAX, 2, 2, 0, 6, 7);
    test_pool(c2, RIDGE_POOL_MAX, 3, 2, 1, 7, 6);
    test_pool(c2, RIDGE_POOL_AVG, 2, 2, 0, 6, 7);
    test_pool(c2, RIDGE_POOL_AVG, 3, 1, 1, 5, 5);
    test_pool(c2, RIDGE_POOL_MAX, 3, 1, 1, 5, 6);
    ridge_pool2d_desc nchw = {.n = 1, .c = 2, .h = 4, .w = 4, .r = 2, .s = 2, .stride_h = 2,
                              .stride_w = 2, .kind = RIDGE_POOL_MAX, .layout = RIDGE_NCHW};
    float b[32] = {0};
    int32_t am[8];
    CHECK(ridge_pool2d_forward_argmax(c1, &nchw, b, b + 16, am) == RIDGE_EUNSUPPORTED);
    CHECK(ridge_pool2d_backward(c1, &nchw, b, b + 16, am) == RIDGE_EUNSUPPORTED);
    nchw.layout = RIDGE_NHWC;
    CHECK(ridge_pool2d_backward(c1, &nchw, b, b + 16, NULL) == RIDGE_EINVAL);
    test_pool_isas();
    test_batchnorm(c1, c2);
    test_batchnorm_shapes();
    ridge_ctx_destroy(c1);
    ridge_ctx_destroy(c2);
    return test_finish("test-nn-conv");
}
