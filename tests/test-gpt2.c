/* GPT-2: every layer's backward against central finite differences, the whole model against
 * an independent double-precision forward written here (loss, and every parameter's gradient
 * by finite differences in double), AdamW against its formula, determinism across thread
 * counts, refusals, and checkpoint round trips. Every ISA the CPU has. */
#include <math.h>
#include <unistd.h>

#include "models/gpt2-kernels.h"
#include "models/gpt2-layers.h"
#include "test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float urand(void) /* uniform in [-1, 1) */
{
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) * (2.0 / 16777216.0) - 1.0);
}

static float *frand(size_t n, float scale)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) x[i] = urand() * scale;
    return x;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

/* ---- layer checks: loss = sum(out * R); compare d loss / d x from backward with central
 * differences of the float forward. ---------------------------------------------------- */

typedef double (*loss_fn)(ridge_ctx *ctx, void *arg);

/* Checks grad (analytic) for every element of x against central differences of f. */
static void fd_check(const char *name, ridge_ctx *ctx, loss_fn f, void *arg, float *x,
                     const float *grad, size_t n, float eps, double tol)
{
    /* relative error, with a floor of a tenth of the largest gradient: float rounding in the
     * forward puts an absolute noise on every difference quotient */
    double worst = 0, gmax = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(grad[i]));
    for (size_t i = 0; i < n; i++) {
        float x0 = x[i];
        x[i] = x0 + eps;
        double lp = f(ctx, arg);
        x[i] = x0 - eps;
        double lm = f(ctx, arg);
        x[i] = x0;
        double fd = (lp - lm) / (2.0 * eps);
        double err = fabs(fd - grad[i]) / (0.1 * gmax + 1e-6 + fabs(fd));
        if (err > worst) worst = err, worst_i = i;
    }
    CHECKF(worst <= tol, "%s: worst relative error %.3g at %zu (tolerance %.3g)", name, worst,
           worst_i, tol);
}

enum { LB = 2, LT = 5, LC = 8, LNH = 2, LOC = 12, LV = 11, LVp = 16, LMAXT = 7 };

typedef struct layer_case {
    float *inp, *w, *b, *out, *R, *mean, *rstd, *res, *scratch;
    int *ids;
    size_t N, C, OC;
} layer_case;

static double ln_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    ridge_gpt2_layernorm_forward(ctx, k->out, k->mean, k->rstd, k->inp, k->w, k->b, k->N, k->C);
    return dot(k->out, k->R, k->N * k->C);
}

static double mm_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    ridge_gpt2_matmul_forward(ctx, k->out, k->inp, k->w, k->b, k->res, k->N, k->C, k->OC);
    return dot(k->out, k->R, k->N * k->OC);
}

static double att_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    ridge_gpt2_attention_forward(ctx, k->out, k->scratch, k->inp, LB, LT, k->C, LNH);
    return dot(k->out, k->R, k->N * k->C);
}

static double gelu_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    ridge_gpt2_gelu_forward(ctx, k->out, k->inp, k->N);
    return dot(k->out, k->R, k->N);
}

static double enc_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    ridge_gpt2_encoder_forward(ctx, k->out, k->ids, k->w, k->b, LB, LT, LC);
    return dot(k->out, k->R, k->N * LC);
}

static double ce_loss(ridge_ctx *ctx, void *p)
{
    layer_case *k = p;
    memcpy(k->out, k->inp, k->N * LVp * sizeof(float));
    ridge_gpt2_softmax_crossentropy_forward(ctx, k->out, k->mean, k->ids, k->N, LV, LVp);
    double s = 0;
    for (size_t i = 0; i < k->N; i++) s += k->mean[i];
    return s / (double)k->N;
}

static void test_layers(ridge_ctx *ctx)
{
    const size_t N = LB * LT;
    layer_case k = {.N = N, .C = LC, .OC = LOC};
    float *dinp, *dw, *db;

    /* layer norm */
    k.inp = frand(N * LC, 2.0f), k.w = frand(LC, 1.0f), k.b = frand(LC, 1.0f);
    k.out = malloc(N * LC * 4), k.R = frand(N * LC, 1.0f);
    k.mean = malloc(N * 4), k.rstd = malloc(N * 4);
    dinp = calloc(N * LC, 4), dw = calloc(LC, 4), db = calloc(LC, 4);
    ln_loss(ctx, &k);
    ridge_gpt2_layernorm_backward(ctx, dinp, dw, db, k.R, k.inp, k.w, k.mean, k.rstd, N, LC);
    fd_check("layernorm dinp", ctx, ln_loss, &k, k.inp, dinp, N * LC, 1e-2f, 2e-3);
    fd_check("layernorm dw", ctx, ln_loss, &k, k.w, dw, LC, 1e-2f, 2e-3);
    fd_check("layernorm db", ctx, ln_loss, &k, k.b, db, LC, 1e-2f, 2e-3);
    free(k.inp), free(k.w), free(k.b), free(k.out), free(k.R), free(dinp), free(dw), free(db);

    /* matmul, with bias and residual */
    k.inp = frand(N * LC, 1.0f), k.w = frand(LOC * LC, 1.0f), k.b = frand(LOC, 1.0f);
    k.res = frand(N * LOC, 1.0f), k.out = malloc(N * LOC * 4), k.R = frand(N * LOC, 1.0f);
    dinp = calloc(N * LC, 4), dw = calloc(LOC * LC, 4), db = calloc(LOC, 4);
    mm_loss(ctx, &k);
    CHECK_OK(ridge_gpt2_matmul_backward(ctx, dinp, dw, db, k.R, k.inp, k.w, N, LC, LOC));
    fd_check("matmul dinp", ctx, mm_loss, &k, k.inp, dinp, N * LC, 1e-2f, 1e-3);
    fd_check("matmul dw", ctx, mm_loss, &k, k.w, dw, LOC * LC, 1e-2f, 1e-3);
    fd_check("matmul dbias", ctx, mm_loss, &k, k.b, db, LOC, 1e-2f, 1e-3);
    /* backward accumulates into the parameter gradients */
    float *dw2 = malloc(LOC * LC * 4);
    memcpy(dw2, dw, LOC * LC * 4);
    CHECK_OK(ridge_gpt2_matmul_backward(ctx, NULL, dw, db, k.R, k.inp, k.w, N, LC, LOC));
    int acc = 1;
    for (size_t i = 0; i < LOC * LC; i++) acc &= fabsf(dw[i] - 2 * dw2[i]) <= 1e-5f * (1 + fabsf(dw[i]));
    CHECK(acc);
    free(dw2), free(k.res), k.res = NULL;
    free(k.inp), free(k.w), free(k.b), free(k.out), free(k.R), free(dinp), free(dw), free(db);

    /* attention (qkv scaled so the softmax is far from uniform); C = 40 and 2 heads: hs = 20,
     * vector blocks and a tail on either ISA */
    for (int shape = 0; shape < 2; shape++) {
        size_t C = shape ? 40 : LC;
        k.C = C;
        /* scores of order 1 either way (hs 20 sums more products) */
        k.inp = frand(N * 3 * C, shape ? 0.7f : 1.5f), k.out = malloc(N * C * 4);
        k.R = frand(N * C, 1.0f), k.scratch = malloc(LB * LNH * LT * 4);
        float *dqkv = malloc(N * 3 * C * 4), *out0 = malloc(N * C * 4);
        att_loss(ctx, &k);
        /* causal: changing the last position's q, k, v leaves the earlier outputs alone */
        memcpy(out0, k.out, N * C * 4);
        for (size_t e = 0; e < 3 * C; e++) k.inp[(LT - 1) * 3 * C + e] += 1.0f;
        att_loss(ctx, &k);
        CHECK(memcmp(out0, k.out, (LT - 1) * C * 4) == 0 && memcmp(out0, k.out, LT * C * 4) != 0);
        att_loss(ctx, &k);
        ridge_gpt2_attention_backward(ctx, dqkv, k.R, k.inp, k.out, k.scratch, LB, LT, C, LNH);
        fd_check(shape ? "attention dqkv (hs 20)" : "attention dqkv", ctx, att_loss, &k, k.inp,
                 dqkv, N * 3 * C, 1e-2f, 2e-3);
        free(k.inp), free(k.out), free(k.R), free(k.scratch), free(dqkv), free(out0);
    }
    k.C = LC;

    /* GELU over a range that covers both tails */
    const size_t G = 97;
    k.inp = frand(G, 5.0f), k.out = malloc(G * 4), k.R = frand(G, 1.0f), k.N = G;
    float *dg = malloc(G * 4);
    ridge_gpt2_gelu_backward(ctx, dg, k.inp, k.R, G);
    fd_check("gelu", ctx, gelu_loss, &k, k.inp, dg, G, 1e-2f, 2e-3);
    free(k.inp), free(k.out), free(k.R), free(dg);
    k.N = N;

    /* encoder, with a repeated token so its gradients add */
    int ids[LB * LT];
    for (size_t i = 0; i < N; i++) ids[i] = (int)(i * 7 % LV);
    ids[3] = ids[8];
    k.ids = ids, k.w = frand(LV * LC, 1.0f), k.b = frand(LMAXT * LC, 1.0f);
    k.out = malloc(N * LC * 4), k.R = frand(N * LC, 1.0f);
    float *dwte = calloc(LV * LC, 4), *dwpe = calloc(LMAXT * LC, 4);
    ridge_gpt2_encoder_backward(ctx, dwte, dwpe, k.R, ids, LB, LT, LC);
    fd_check("encoder dwte", ctx, enc_loss, &k, k.w, dwte, LV * LC, 1e-2f, 1e-3);
    fd_check("encoder dwpe", ctx, enc_loss, &k, k.b, dwpe, LMAXT * LC, 1e-2f, 1e-3);
    free(k.w), free(k.b), free(k.out), free(k.R), free(dwte), free(dwpe);

    /* softmax + cross-entropy (mean over rows); padding gets probability and gradient 0 */
    k.inp = frand(N * LVp, 3.0f), k.out = malloc(N * LVp * 4), k.mean = realloc(k.mean, N * 4);
    float *dl = malloc(N * LVp * 4);
    ce_loss(ctx, &k);
    int pad0 = 1;
    for (size_t r = 0; r < N; r++) {
        double s = 0;
        for (size_t i = 0; i < LVp; i++) s += k.out[r * LVp + i];
        pad0 &= fabs(s - 1) < 1e-5 && k.out[r * LVp + LV] == 0.0f;
    }
    CHECK(pad0);
    memcpy(dl, k.out, N * LVp * 4);
    ridge_gpt2_softmax_crossentropy_backward(ctx, dl, ids, 1.0f / N, N, LV, LVp);
    for (size_t r = 0; r < N; r++) pad0 &= dl[r * LVp + LVp - 1] == 0.0f;
    CHECK(pad0);
    fd_check("softmax cross-entropy", ctx, ce_loss, &k, k.inp, dl, N * LVp, 1e-2f, 2e-3);
    free(k.inp), free(k.out), free(dl), free(k.mean), free(k.rstd);
}

/* ---- each ISA's inner loops against the reference table, over edge shapes ------------- */

static double max_rel(const float *a, const float *b, size_t n)
{
    double w = 0;
    for (size_t i = 0; i < n; i++) w = fmax(w, fabs(a[i] - b[i]) / (1e-3 + fabs(b[i])));
    return w;
}

/* largest difference relative to the largest reference magnitude */
static double max_err(const float *a, const float *b, size_t n)
{
    double w = 0, mag = 1e-30;
    for (size_t i = 0; i < n; i++) w = fmax(w, fabs(a[i] - b[i])), mag = fmax(mag, fabs(b[i]));
    return w / mag;
}

static void test_kernels(ridge_isa isa)
{
    const ridge_cpu *cpu = ridge_cpu_get();
    if (!ridge_cpu_supports(cpu, isa)) {
        SKIP("gpt2 kernels: %s not supported by this CPU", ridge_isa_name(isa));
        return;
    }
    const gpt2_kernels *k = isa == RIDGE_ISA_AVX512 ? &ridge_gpt2_kernels__avx512
                                                   : &ridge_gpt2_kernels__avx2;
    const gpt2_kernels *r = &ridge_gpt2_kernels__ref;
    const size_t ns[] = {1, 7, 8, 9, 16, 17, 100, 50257};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        size_t n = ns[i];
        float *x = frand(n, 20.0f), *y = malloc(n * 4);
        memcpy(y, x, n * 4);
        k->softmax(x, n);
        r->softmax(y, n);
        double e = max_rel(x, y, n);
        /* exp within 2 ulp; the sums differ in order (lanes vs one chain): ~n eps at worst */
        double tol = 2e-6 + 1.2e-7 * sqrt((double)n) * 2;
        CHECKF(e < tol, "%s softmax n=%zu: rel err %.3g (tol %.3g)", ridge_isa_name(isa), n, e, tol);
        float *g = frand(n, 1.0f), *p2 = frand(n, 1.0f), *m1 = frand(n, 0.1f), *v1 = malloc(n * 4);
        for (size_t j = 0; j < n; j++) v1[j] = fabsf(g[j]) * 0.01f;
        float *p3 = malloc(n * 4), *m2 = malloc(n * 4), *v2 = malloc(n * 4);
        memcpy(p3, p2, n * 4), memcpy(m2, m1, n * 4), memcpy(v2, v1, n * 4);
        gpt2_adamw_args a = {1e-3f, 0.9f, 0.999f, 1e-8f, 0.1f, 1 - 0.9f * 0.9f, 1 - 0.999f * 0.999f};
        k->adamw(p2, g, m1, v1, n, &a);
        r->adamw(p3, g, m2, v2, n, &a);
        CHECKF(max_rel(p2, p3, n) < 1e-6 && max_rel(m1, m2, n) < 1e-6 && max_rel(v1, v2, n) < 1e-6,
               "%s adamw n=%zu", ridge_isa_name(isa), n);
        free(x), free(y), free(g), free(p2), free(m1), free(v1), free(p3), free(m2), free(v2);
    }
    const size_t hss[] = {1, 4, 8, 16, 20, 64}, Ts[] = {1, 5, 17, 70};
    for (size_t hi = 0; hi < 6; hi++)
        for (size_t ti = 0; ti < 4; ti++) {
            size_t hs = hss[hi], T = Ts[ti], C = 2 * hs; /* head 1 of 2: offsets matter */
            float *qkv = frand(T * 3 * C, 1.5f), *dout = frand(T * C, 1.0f);
            float *o1 = calloc(T * C, 4), *o2 = calloc(T * C, 4);
            float *l1 = malloc(T * 4), *l2 = malloc(T * 4);
            float *d1 = calloc(T * 3 * C, 4), *d2 = calloc(T * 3 * C, 4);
            k->att_fwd(o1 + hs, l1, qkv + hs, T, C, hs);
            r->att_fwd(o2 + hs, l2, qkv + hs, T, C, hs);
            k->att_bwd(d1 + hs, dout + hs, qkv + hs, o2 + hs, l2, T, C, hs);
            r->att_bwd(d2 + hs, dout + hs, qkv + hs, o2 + hs, l2, T, C, hs);
            /* lse enters as exp(s - lse): its absolute error is the probabilities' relative
             * error, so it is judged absolutely (up to its own size); at T = 1 it is a bare
             * dot product, whose relative error near 0 says nothing */
            double e2 = 0;
            for (size_t t = 0; t < T; t++)
                e2 = fmax(e2, fabs(l1[t] - l2[t]) / fmax(1.0, fabs(l2[t])));
            double e1 = max_err(o1, o2, T * C);
            double e3 = max_err(d1, d2, T * 3 * C);
            CHECKF(e1 < 1e-5 && e2 < 1e-5 && e3 < 1e-5,
                   "%s attention hs=%zu T=%zu: out %.3g lse %.3g dqkv %.3g", ridge_isa_name(isa),
                   hs, T, e1, e2, e3);
            /* head 0's columns untouched */
            int clean = 1;
            for (size_t t = 0; t < T; t++)
                for (size_t e = 0; e < hs; e++) clean &= o1[t * C + e] == 0 && d1[t * 3 * C + e] == 0;
            CHECK(clean);
            free(qkv), free(dout), free(o1), free(o2), free(l1), free(l2), free(d1), free(d2);
        }
}

/* ---- an independent double-precision GPT-2 forward ----------------------------------- */

static void ref_layernorm(double *out, const double *x, const double *w, const double *b,
                          size_t N, size_t C)
{
    for (size_t r = 0; r < N; r++) {
        double m = 0, v = 0;
        for (size_t c = 0; c < C; c++) m += x[r * C + c];
        m /= C;
        for (size_t c = 0; c < C; c++) v += (x[r * C + c] - m) * (x[r * C + c] - m);
        double s = 1 / sqrt(v / C + 1e-5);
        for (size_t c = 0; c < C; c++) out[r * C + c] = (x[r * C + c] - m) * s * w[c] + b[c];
    }
}

/* out (N,OC) = x (N,K) W^T + b */
static void ref_linear(double *out, const double *x, const double *W, const double *b, size_t N,
                       size_t K, size_t OC)
{
    for (size_t r = 0; r < N; r++)
        for (size_t o = 0; o < OC; o++) {
            double s = b ? b[o] : 0;
            for (size_t i = 0; i < K; i++) s += x[r * K + i] * W[o * K + i];
            out[r * OC + o] = s;
        }
}

static double ref_loss(const ridge_gpt2_config *c, const double *P, const int *in,
                       const int *tg, size_t B, size_t T)
{
    size_t sz[16], n;
    ridge_gpt2_param_sizes(c, sz, &n);
    const double *p[16];
    for (int i = 0, off = 0; i < 16; off += (int)sz[i], i++) p[i] = P + off;
    size_t C = c->channels, L = c->num_layers, NH = c->num_heads, hs = C / NH, N = B * T;
    size_t V = c->vocab_size, Vp = c->padded_vocab_size;
    double *x = malloc(N * C * 8), *h = malloc(N * C * 8), *qkv = malloc(N * 3 * C * 8);
    double *y = malloc(N * C * 8), *f = malloc(N * 4 * C * 8), *lg = malloc(N * Vp * 8);
    for (size_t r = 0; r < N; r++)
        for (size_t i = 0; i < C; i++) x[r * C + i] = p[0][in[r] * C + i] + p[1][(r % T) * C + i];
    for (size_t l = 0; l < L; l++) {
        ref_layernorm(h, x, p[2] + l * C, p[3] + l * C, N, C);
        ref_linear(qkv, h, p[4] + l * 3 * C * C, p[5] + l * 3 * C, N, C, 3 * C);
        for (size_t b = 0; b < B; b++)
            for (size_t hd = 0; hd < NH; hd++)
                for (size_t t = 0; t < T; t++) {
                    double a[64], mx = -1e300, sum = 0;
                    const double *q = qkv + (b * T + t) * 3 * C + hd * hs;
                    for (size_t u = 0; u <= t; u++) {
                        const double *k = qkv + (b * T + u) * 3 * C + C + hd * hs;
                        double s = 0;
                        for (size_t e = 0; e < hs; e++) s += q[e] * k[e];
                        a[u] = s / sqrt((double)hs);
                        if (a[u] > mx) mx = a[u];
                    }
                    for (size_t u = 0; u <= t; u++) sum += a[u] = exp(a[u] - mx);
                    for (size_t e = 0; e < hs; e++) {
                        double o = 0;
                        for (size_t u = 0; u <= t; u++)
                            o += a[u] / sum * qkv[(b * T + u) * 3 * C + 2 * C + hd * hs + e];
                        y[(b * T + t) * C + hd * hs + e] = o;
                    }
                }
        ref_linear(h, y, p[6] + l * C * C, p[7] + l * C, N, C, C);
        for (size_t i = 0; i < N * C; i++) x[i] += h[i];
        ref_layernorm(h, x, p[8] + l * C, p[9] + l * C, N, C);
        ref_linear(f, h, p[10] + l * 4 * C * C, p[11] + l * 4 * C, N, C, 4 * C);
        for (size_t i = 0; i < N * 4 * C; i++)
            f[i] = 0.5 * f[i] * (1 + tanh(sqrt(2 / M_PI) * (f[i] + 0.044715 * f[i] * f[i] * f[i])));
        ref_linear(h, f, p[12] + l * 4 * C * C, p[13] + l * C, N, 4 * C, C);
        for (size_t i = 0; i < N * C; i++) x[i] += h[i];
    }
    ref_layernorm(h, x, p[14], p[15], N, C);
    ref_linear(lg, h, p[0], NULL, N, C, Vp);
    double loss = 0;
    for (size_t r = 0; r < N; r++) {
        double mx = -1e300, s = 0;
        for (size_t i = 0; i < V; i++) mx = fmax(mx, lg[r * Vp + i]);
        for (size_t i = 0; i < V; i++) s += exp(lg[r * Vp + i] - mx);
        loss += -(lg[r * Vp + tg[r]] - mx - log(s));
    }
    free(x), free(h), free(qkv), free(y), free(f), free(lg);
    return loss / N;
}

/* A tiny model with parameters large enough that every path carries gradient. */
static const ridge_gpt2_config tiny = {8, 13, 16, 2, 2, 8};
enum { MB = 2, MT = 6 };

static void tiny_params(ridge_gpt2 *m)
{
    size_t n;
    float *p = ridge_gpt2_params(m, &n);
    for (size_t i = 0; i < n; i++) p[i] = urand() * 0.4f;
    size_t k;
    float *x = ridge_gpt2_param_tensor(m, 0, &k);
    memset(x + tiny.vocab_size * tiny.channels, 0,
           (k - (size_t)tiny.vocab_size * tiny.channels) * 4); /* padding rows stay 0 */
    for (int t = 2; t < 16; t += 6) { /* ln1w, ln2w, lnfw near 1 */
        x = ridge_gpt2_param_tensor(m, t, &k);
        for (size_t i = 0; i < k; i++) x[i] += 1.0f;
    }
}

static void tiny_batch(int *in, int *tg)
{
    for (int i = 0; i < MB * MT; i++) in[i] = (i * 5 + 3) % tiny.vocab_size;
    for (int i = 0; i < MB * MT; i++) tg[i] = (i * 7 + 1) % tiny.vocab_size;
}

/* The tiny model with tiny_params' weights, and the batch (NULL after a failed create). */
static ridge_gpt2 *tiny_model(ridge_ctx *ctx, int *in, int *tg)
{
    ridge_gpt2 *m = NULL;
    CHECK_OK(ridge_gpt2_create(ctx, &tiny, &m));
    if (!m) return NULL;
    tiny_params(m);
    tiny_batch(in, tg);
    return m;
}

static void test_model_vs_double(ridge_ctx *ctx)
{
    int in[MB * MT], tg[MB * MT];
    ridge_gpt2 *m = tiny_model(ctx, in, tg);
    if (!m) return;
    float loss = 0;
    CHECK_OK(ridge_gpt2_forward(m, in, tg, MB, MT, &loss));
    CHECK_OK(ridge_gpt2_zero_grad(m));
    CHECK_OK(ridge_gpt2_backward(m));
    size_t n;
    float *p = ridge_gpt2_params(m, &n), *g = ridge_gpt2_grads(m);
    double *P = malloc(n * sizeof *P);
    for (size_t i = 0; i < n; i++) P[i] = p[i];
    double ref = ref_loss(&tiny, P, in, tg, MB, MT);
    CHECKF(fabs(loss - ref) <= 1e-5 * fabs(ref), "loss %.8f vs double %.8f", loss, ref);
    /* every parameter's gradient against central differences of the double forward */
    double worst = 0, gmax = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < n; i++) {
        double x0 = P[i], e = 1e-5;
        P[i] = x0 + e;
        double lp = ref_loss(&tiny, P, in, tg, MB, MT);
        P[i] = x0 - e;
        double lm = ref_loss(&tiny, P, in, tg, MB, MT);
        P[i] = x0;
        double fd = (lp - lm) / (2 * e), err = fabs(fd - g[i]);
        gmax = fmax(gmax, fabs(fd));
        if (err > worst) worst = err, worst_i = i;
    }
    /* float analytic vs double numeric: errors are float rounding, relative to the largest */
    CHECKF(worst <= 1e-4 * gmax + 1e-7, "worst gradient error %.3g at param %zu (max |g| %.3g)",
           worst, worst_i, gmax);
    printf("model vs double (%s, %d threads): loss %.7f vs %.7f, worst grad error %.2g of %.2g\n",
           ridge_isa_name(ridge_ctx_isa(ctx)), ridge_ctx_threads(ctx), loss, ref, worst, gmax);
    free(P);
    ridge_gpt2_destroy(m);
}

/* ridge_gpt2_set_grads_ready: the ranges the backward pass hands over cover every gradient
 * exactly once, and each holds its final value when handed over (a snapshot then equals the
 * gradient at the end). */
typedef struct ready_log {
    const float *g;
    size_t n;
    unsigned char *seen;
    float *snap;
    int calls, bad;
} ready_log;

static ridge_status on_ready(void *arg, float *const *ptr, const size_t *len, int count)
{
    ready_log *r = arg;
    r->calls++;
    for (int i = 0; i < count; i++) {
        size_t off = (size_t)(ptr[i] - r->g);
        if (ptr[i] < r->g || off + len[i] > r->n) {
            r->bad++;
            continue;
        }
        for (size_t j = off; j < off + len[i]; j++) r->seen[j]++, r->snap[j] = r->g[j];
    }
    return RIDGE_OK;
}

static void test_grads_ready(ridge_ctx *ctx)
{
    int in[MB * MT], tg[MB * MT];
    ridge_gpt2 *m = tiny_model(ctx, in, tg);
    if (!m) return;
    size_t n;
    ridge_gpt2_params(m, &n);
    CHECK_OK(ridge_gpt2_zero_grad(m));
    ready_log r = {ridge_gpt2_grads(m), n, calloc(n, 1), malloc(n * sizeof(float)), 0, 0};
    ridge_gpt2_set_grads_ready(m, on_ready, &r);
    CHECK_OK(ridge_gpt2_forward(m, in, tg, MB, MT, NULL));
    CHECK_OK(ridge_gpt2_backward(m));
    size_t twice = 0, never = 0, changed = 0;
    for (size_t i = 0; i < n; i++) {
        twice += r.seen[i] > 1, never += r.seen[i] == 0;
        changed += r.seen[i] == 1 && memcmp(&r.snap[i], &r.g[i], sizeof(float)) != 0;
    }
    CHECKF(r.bad == 0 && twice == 0 && never == 0 && changed == 0 && r.calls == tiny.num_layers + 2,
           "grads ready: %d calls, %d outside, %zu twice, %zu never, %zu changed after",
           r.calls, r.bad, twice, never, changed);
    free(r.seen), free(r.snap);
    ridge_gpt2_destroy(m);
}

/* The same model on 1 and 2 threads: the same bits. */
static void test_determinism(ridge_isa isa)
{
    ridge_ctx *c1 = test_ctx(1, isa), *c2 = c1 ? test_ctx(2, isa) : NULL;
    if (!c2) {
        ridge_ctx_destroy(c1);
        return;
    }
    ridge_gpt2 *m1 = NULL, *m2 = NULL;
    ridge_gpt2_config cfg = {16, 50, 64, 2, 4, 32};
    CHECK_OK(ridge_gpt2_create(c1, &cfg, &m1));
    CHECK_OK(ridge_gpt2_create(c2, &cfg, &m2));
    if (m1 && m2) {
        ridge_gpt2_init_random(m1, 7);
        ridge_gpt2_init_random(m2, 7);
        int in[3 * 16], tg[3 * 16];
        for (int i = 0; i < 48; i++) in[i] = (i * 11) % 50, tg[i] = (i * 13 + 5) % 50;
        ridge_gpt2_adamw_opts o;
        ridge_gpt2_adamw_defaults(&o);
        float l1 = 0, l2 = 0, first = 0;
        for (int step = 1; step <= 3; step++) {
            CHECK_OK(ridge_gpt2_forward(m1, in, tg, 3, 16, &l1));
            CHECK_OK(ridge_gpt2_forward(m2, in, tg, 3, 16, &l2));
            if (step == 1) first = l1;
            CHECK(l1 == l2);
            CHECK_OK(ridge_gpt2_zero_grad(m1));
            CHECK_OK(ridge_gpt2_zero_grad(m2));
            CHECK_OK(ridge_gpt2_backward(m1));
            CHECK_OK(ridge_gpt2_backward(m2));
            CHECK_OK(ridge_gpt2_update(m1, &o, step));
            CHECK_OK(ridge_gpt2_update(m2, &o, step));
        }
        size_t n;
        float *p1 = ridge_gpt2_params(m1, &n), *p2 = ridge_gpt2_params(m2, NULL);
        CHECK(memcmp(p1, p2, n * 4) == 0);
        CHECK(memcmp(ridge_gpt2_grads(m1), ridge_gpt2_grads(m2), n * 4) == 0);
        /* random init: loss near ln(V) */
        CHECKF(fabsf(first - logf(50)) < 0.1f, "initial loss %f vs ln V %f", first, logf(50));
        CHECK(l1 < first);
    }
    ridge_gpt2_destroy(m1);
    ridge_gpt2_destroy(m2);
    ridge_ctx_destroy(c1);
    ridge_ctx_destroy(c2);
}

static void test_adamw(ridge_ctx *ctx)
{
    enum { n = 1000 };
    float *p = frand(n, 1), *g = frand(n, 1), *m = calloc(n, 4), *v = calloc(n, 4);
    double P[n], M[n] = {0}, Vv[n] = {0};
    for (int i = 0; i < n; i++) P[i] = p[i];
    int ok = 1;
    for (int t = 1; t <= 3; t++) {
        ridge_gpt2_adamw(ctx, p, g, m, v, n, t, 1e-2f, 0.9f, 0.999f, 1e-8f, 0.1f);
        for (int i = 0; i < n; i++) {
            M[i] = 0.9 * M[i] + 0.1 * g[i];
            Vv[i] = 0.999 * Vv[i] + 0.001 * g[i] * (double)g[i];
            double mh = M[i] / (1 - pow(0.9, t)), vh = Vv[i] / (1 - pow(0.999, t));
            P[i] -= 1e-2 * (mh / (sqrt(vh) + 1e-8) + 0.1 * P[i]);
            ok &= fabs(P[i] - p[i]) < 1e-5;
        }
    }
    CHECK(ok);
    free(p), free(g), free(m), free(v);
}

static void test_refusals_and_files(ridge_ctx *ctx)
{
    int in[MB * MT], tg[MB * MT];
    ridge_gpt2 *m = tiny_model(ctx, in, tg);
    if (!m) return;
    CHECK(ridge_gpt2_backward(m) == RIDGE_EINVAL); /* no forward yet */
    CHECK(ridge_gpt2_forward(m, in, tg, 1, 9, NULL) == RIDGE_EINVAL); /* T > maxT */
    CHECK(strstr(ridge_last_error(), "max_seq_len") != NULL);
    in[3] = tiny.vocab_size;
    CHECK(ridge_gpt2_forward(m, in, tg, MB, MT, NULL) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "inputs[3]") != NULL);
    tiny_batch(in, tg);
    tg[5] = -1;
    CHECK(ridge_gpt2_forward(m, in, tg, MB, MT, NULL) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "targets[5]") != NULL);
    tiny_batch(in, tg);
    float l1, l2;
    CHECK_OK(ridge_gpt2_forward(m, in, NULL, MB, MT, &l1)); /* inference only */
    CHECK(ridge_gpt2_probs(m) != NULL);
    CHECK(ridge_gpt2_backward(m) == RIDGE_EINVAL);
    CHECK_OK(ridge_gpt2_forward(m, in, tg, MB, MT, &l1));
    /* save, load: the same loss */
    char path[64];
    snprintf(path, sizeof path, "/tmp/ridge-test-gpt2-%d.bin", (int)getpid());
    CHECK_OK(ridge_gpt2_save(m, path));
    ridge_gpt2 *m2 = NULL;
    CHECK_OK(ridge_gpt2_load(ctx, path, &m2));
    if (m2) {
        CHECK(memcmp(ridge_gpt2_get_config(m2), &tiny, sizeof tiny) == 0);
        CHECK_OK(ridge_gpt2_forward(m2, in, tg, MB, MT, &l2));
        CHECK(l1 == l2);
        /* a smaller (B,T) after a larger one reuses the activations */
        CHECK_OK(ridge_gpt2_forward(m2, in, tg, 1, 3, &l2));
        ridge_gpt2_destroy(m2);
    }
    remove(path);
    CHECK(ridge_gpt2_load(ctx, path, &m2) == RIDGE_EIO && m2 == NULL);
    ridge_gpt2_destroy(m);
}

int main(void)
{
    test_kernels(RIDGE_ISA_AVX2);
    test_kernels(RIDGE_ISA_AVX512);
    const ridge_isa isas[] = {RIDGE_ISA_REF, RIDGE_ISA_AVX2, RIDGE_ISA_AVX512};
    for (int i = 0; i < 3; i++) {
        ridge_ctx *ctx = test_ctx(2, isas[i]);
        if (!ctx) continue;
        test_layers(ctx);
        test_model_vs_double(ctx);
        test_grads_ready(ctx);
        test_adamw(ctx);
        test_refusals_and_files(ctx);
        ridge_ctx_destroy(ctx);
        test_determinism(isas[i]);
    }
    return test_finish("test-gpt2");
}
