/* The profiler: records from kernel entry points (nested ones marked, not double counted),
 * the pool's task and wait records, the per-operator summary against a hand-made roof, the
 * Amdahl arithmetic, and the Chrome trace's JSON structure. */
#include <math.h>
#include <stdint.h>

#include "perf/json.h"
#include "ridge/ridge.h"
#include "test.h"

/* A roof with round numbers: 100 GFLOP/s for every fp32 ISA, 50 GB/s at every level. */
static ridge_roofline make_roof(int threads)
{
    ridge_roofline r;
    memset(&r, 0, sizeof r);
    r.version = RIDGE_ROOFLINE_VERSION;
    r.threads = threads;
    r.l1d = 32 << 10, r.l2 = 512 << 10, r.l3_usable = 32 << 20;
    r.npoints = 1;
    r.points[0].threads = threads;
    for (int p = 0; p < 3; p++) r.points[0].peak[p] = 100;
    for (int l = 0; l < RIDGE_LEVEL_COUNT; l++) r.points[0].read[l] = 50;
    r.points[0].copy = r.points[0].triad = 50;
    return r;
}

static const ridge_profile_row *row_of(const ridge_profile_summary *s, const char *op)
{
    for (size_t i = 0; i < s->nrows; i++)
        if (!strcmp(s->rows[i].op, op)) return &s->rows[i];
    return NULL;
}

static void test_records_and_summary(void)
{
    ridge_ctx *ctx = test_ctx(2, RIDGE_ISA_AUTO);
    if (!ctx) return;
    enum { M = 96, N = 80, K = 64, B = 8, IC = 50, OC = 30 };
    float *a = calloc(M * K, 4), *b = calloc(K * N, 4), *c = calloc(M * N, 4);
    float *x = calloc(B * IC, 4), *w = calloc(IC * OC, 4), *y = calloc(B * OC, 4);

    /* off: nothing is recorded */
    CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, M, N, K, 1, a, K, b, N, 0, c, N));
    const ridge_prof_record *r;
    CHECK(ridge_profile_records(ctx, &r) == 0);

    CHECK_OK(ridge_profile_start(ctx, 4096));
    uint64_t t0 = ridge_time_ns();
    for (int i = 0; i < 3; i++)
        CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, M, N, K, 1, a, K, b, N, 0, c, N));
    CHECK_OK(ridge_dense_forward(ctx, y, x, w, NULL, B, IC, OC, RIDGE_EPI_RELU));
    /* a failing call records nothing and leaves the depth balanced */
    CHECK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, M, N, K, 1, NULL, K, b, N, 0, c, N) ==
          RIDGE_EINVAL);
    CHECK_OK(ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, M, N, K, 1, a, K, b, N, 0, c, N));
    double wall = (double)(ridge_time_ns() - t0) * 1e-9;
    ridge_profile_stop(ctx);

    size_t n = ridge_profile_records(ctx, &r);
    int top_sgemm = 0, nested_sgemm = 0, dense = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(r[i].end_ns >= r[i].start_ns && r[i].thread >= 0 && r[i].thread < 2);
        if (!strcmp(r[i].op, "sgemm") && r[i].depth == 0) {
            top_sgemm++;
            CHECK(r[i].flops == 2.0 * M * N * K);
            CHECK(r[i].bytes == 4.0 * (M * K + K * N + M * N));
            CHECK(strcmp(r[i].shape, "96x80x64 NN") == 0);
        }
        if (!strncmp(r[i].op, "sgemm", 5) && r[i].depth == 1) nested_sgemm++;
        if (!strcmp(r[i].op, "dense.fwd")) {
            dense++;
            CHECK(r[i].depth == 0);
        }
    }
    CHECKF(top_sgemm == 4 && nested_sgemm == 1 && dense == 1, "%d %d %d", top_sgemm,
           nested_sgemm, dense);

    ridge_roofline roof = make_roof(2);
    ridge_profile_summary s;
    CHECK(ridge_profile_summarize(ctx, &roof, 0, 1, 0, &s) == RIDGE_EINVAL);
    CHECK_OK(ridge_profile_summarize(ctx, &roof, wall, 2, 0, &s));
    const ridge_profile_row *sg = row_of(&s, "sgemm"), *de = row_of(&s, "dense.fwd"),
                            *other = row_of(&s, "other");
    CHECK(sg && de && other && !row_of(&s, "sgemm_ex") && !row_of(&s, "pool.task"));
    if (sg && de && other) {
        CHECK(sg->calls == 4 && de->calls == 1);
        CHECK(sg->flops == 4 * 2.0 * M * N * K);
        CHECK(fabs(sg->intensity - (2.0 * M * N * K) / (4.0 * (M * K + K * N + M * N))) < 1e-9);
        /* operators + other = the wall time */
        double sum = 0, share = 0;
        for (size_t i = 0; i < s.nrows; i++) sum += s.rows[i].seconds, share += s.rows[i].share;
        CHECK(fabs(sum - wall) < 1e-9 * (1 + wall) && fabs(share - 1) < 1e-9);
        CHECK(fabs(s.covered_seconds + s.other_seconds - wall) < 1e-12 + 1e-9 * wall);
        CHECK(!strcmp(s.rows[s.nrows - 1].op, "other"));
        /* sorted by the Amdahl saving */
        for (size_t i = 0; i + 2 < s.nrows; i++)
            CHECK(s.rows[i].saved_seconds >= s.rows[i + 1].saved_seconds);
        /* the saving: time minus the time at 80% of the bound, never negative */
        double t80 = fmax(sg->flops / (0.8 * 100e9), sg->bytes / (0.8 * 50e9));
        CHECK(fabs(sg->saved_seconds - fmax(0, sg->seconds - t80)) < 1e-12);
        CHECK(sg->fraction > 0 && strcmp(sg->level, "-") != 0);
        CHECK(fabs(s.step_seconds - wall / 2) < 1e-12);
    }
    ridge_profile_summary_free(&s);
    ridge_profile_summary_free(&s); /* twice is fine */

    /* without a roof: rates, no verdict */
    CHECK_OK(ridge_profile_summarize(ctx, NULL, wall, 1, 1, &s));
    for (size_t i = 0; i < s.nrows; i++) CHECK(s.rows[i].fraction == 0);
    /* per layer: the sgemm shape is part of the key */
    CHECK(s.nrows >= 3 && (sg = row_of(&s, "sgemm")) && !strcmp(sg->shape, "96x80x64 NN"));
    ridge_profile_summary_free(&s);

    /* the trace parses as JSON, with one X event per record on the right thread */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(ridge_profile_write_trace(ctx, f));
        long len = ftell(f);
        rewind(f);
        char *text = calloc((size_t)len + 1, 1);
        CHECK(fread(text, 1, (size_t)len, f) == (size_t)len);
        fclose(f);
        ridge_json *doc = NULL;
        CHECK_OK(ridge_json_parse(text, &doc));
        const ridge_json *ev = doc ? ridge_json_get(doc, "traceEvents") : NULL;
        CHECK(ev && ev->type == RIDGE_JSON_ARRAY);
        size_t xs = 0;
        int fields_ok = 1;
        for (const ridge_json *e = ev ? ev->child : NULL; e; e = e->next) {
            const ridge_json *ph = ridge_json_get(e, "ph");
            if (!ph || ph->type != RIDGE_JSON_STRING || strcmp(ph->str, "X")) continue;
            xs++;
            const ridge_json *ts = ridge_json_get(e, "ts"), *dur = ridge_json_get(e, "dur"),
                             *tid = ridge_json_get(e, "tid"), *name = ridge_json_get(e, "name");
            fields_ok &= ts && dur && tid && name && ts->type == RIDGE_JSON_NUMBER &&
                         dur->num >= 0 && tid->num >= 0 && tid->num < 2;
        }
        CHECK(xs == n && fields_ok);
        ridge_json_free(doc);
        free(text);
    }
    free(a), free(b), free(c), free(x), free(w), free(y);
    ridge_ctx_destroy(ctx);
}

/* A layer's top-level records after one forward, one backward with dx and one without: the
 * forward counts f FLOPs, the backward 2 f + extra with dx and f + extra without. */
static void check_layer_counts(ridge_ctx *ctx, const char *fwd, const char *bwd, double f,
                               double extra)
{
    const ridge_prof_record *r;
    size_t n = ridge_profile_records(ctx, &r);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].depth != 0) continue;
        if (!strcmp(r[i].op, fwd)) {
            CHECK(r[i].flops == f);
            seen |= 1;
        }
        if (!strcmp(r[i].op, bwd)) {
            CHECKF(r[i].flops == (seen & 2 ? f : 2 * f) + extra, "%s flops %g", bwd, r[i].flops);
            seen |= seen & 2 ? 4 : 2;
        }
    }
    CHECKF(seen == 7, "%s records seen %d", fwd, seen);
}

/* The convolution layer's records: the backward counts two passes of the forward's FLOPs with
 * dx, one without (the first layer's dw and db only). */
static void test_conv_layer_counts(void)
{
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    ridge_conv2d_desc d;
    ridge_conv2d_desc_init(&d);
    d.n = 2, d.c_in = 3, d.h = d.w = 9, d.c_out = 16, d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = RIDGE_NHWC;
    const size_t nx = 2 * 9 * 9 * 3, ny = 2 * 9 * 9 * 16, nw = 16 * 3 * 9;
    float *x = calloc(nx, 4), *dx = calloc(nx, 4), *y = calloc(ny, 4), *dy = calloc(ny, 4);
    float *w = calloc(nw, 4), *dw = calloc(nw, 4), *db = calloc(16, 4);
    CHECK_OK(ridge_profile_start(ctx, 64));
    CHECK_OK(ridge_conv_layer_forward(ctx, y, x, w, NULL, &d, RIDGE_EPI_NONE));
    CHECK_OK(ridge_conv_layer_backward(ctx, dx, dw, db, dy, x, w, y, &d, RIDGE_EPI_NONE));
    CHECK_OK(ridge_conv_layer_backward(ctx, NULL, dw, db, dy, x, w, y, &d, RIDGE_EPI_NONE));
    ridge_profile_stop(ctx);
    check_layer_counts(ctx, "conv.fwd", "conv.bwd", ridge_conv2d_flops(&d), 0);
    free(x), free(dx), free(y), free(dy), free(w), free(dw), free(db);
    ridge_ctx_destroy(ctx);
}

/* The dense layer's records likewise: dW and dx are two products of the forward's FLOPs
 * (plus db's sums), and without dx one. */
static void test_dense_layer_counts(void)
{
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    const size_t B = 4, IC = 6, OC = 5;
    float *x = calloc(B * IC, 4), *dx = calloc(B * IC, 4), *y = calloc(B * OC, 4);
    float *dy = calloc(B * OC, 4), *w = calloc(OC * IC, 4), *dw = calloc(OC * IC, 4);
    float *db = calloc(OC, 4);
    CHECK_OK(ridge_profile_start(ctx, 64));
    CHECK_OK(ridge_dense_forward(ctx, y, x, w, NULL, B, IC, OC, RIDGE_EPI_NONE));
    CHECK_OK(ridge_dense_backward(ctx, dx, dw, db, dy, x, w, y, B, IC, OC, RIDGE_EPI_NONE));
    CHECK_OK(ridge_dense_backward(ctx, NULL, dw, db, dy, x, w, y, B, IC, OC, RIDGE_EPI_NONE));
    ridge_profile_stop(ctx);
    check_layer_counts(ctx, "dense.fwd", "dense.bwd", 2.0 * B * IC * OC, (double)B * OC);
    free(x), free(dx), free(y), free(dy), free(w), free(dw), free(db);
    ridge_ctx_destroy(ctx);
}

int main(void)
{
    test_records_and_summary();
    test_conv_layer_counts();
    test_dense_layer_counts();
    return test_finish("test-profile");
}
