/* Tests of src/perf: the judgement arithmetic on hand-computed cases, the profile's JSON round
 * trip and validation, the cache, the JSON reader, and (quick) a real measurement's sanity:
 * every probe ran, the ISAs the CPU lacks are 0. No speed is asserted. */
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "perf/json.h"
#include "test.h"

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

/* A made-up machine with round numbers: one point at 1 thread, one at 4. */
static ridge_roofline fake_roof(void)
{
    ridge_roofline r;
    memset(&r, 0, sizeof r);
    r.version = RIDGE_ROOFLINE_VERSION;
    strcpy(r.cpu, "Test CPU \"quoted\" 3000");
    r.threads = 4;
    r.l1d = 32 << 10;
    r.l2 = 512 << 10;
    r.l3_usable = 32 << 20;
    r.quick = 1;
    r.seconds = 1.5;
    strcpy(r.measured_at, "2026-11-30T10:00:00Z");
    r.npoints = 2;
    ridge_roofline_point *p = &r.points[0];
    p->threads = 1;
    p->peak[RIDGE_PEAK_F32_REF] = 10;
    p->peak[RIDGE_PEAK_F32_AVX2] = 100;
    p->read[RIDGE_LEVEL_L1] = 200;
    p->read[RIDGE_LEVEL_L2] = 100;
    p->read[RIDGE_LEVEL_L3] = 40;
    p->read[RIDGE_LEVEL_DRAM] = 20;
    p->copy = 18;
    p->triad = 25;
    r.points[1] = *p;
    p = &r.points[1];
    p->threads = 4;
    p->peak[RIDGE_PEAK_F32_REF] = 40;
    p->peak[RIDGE_PEAK_F32_AVX2] = 400;
    p->read[RIDGE_LEVEL_L1] = 800;
    p->read[RIDGE_LEVEL_L2] = 400;
    p->read[RIDGE_LEVEL_L3] = 100;
    p->read[RIDGE_LEVEL_DRAM] = 35.5;
    p->copy = 30;
    p->triad = 32;
    return r;
}

static void test_judge(void)
{
    ridge_roofline r = fake_roof();
    ridge_roofline_verdict v;

    /* a 1024^3 SGEMM: 2n^3 FLOPs over 3 n^2 floats = 170.7 FLOP/byte; 12 MiB lives in L3
     * (40 GB/s), so the ridge point is 100 / 40 = 2.5: compute bound, bound = 100 GFLOP/s */
    double n = 1024, flops = 2 * n * n * n, bytes = 4 * 3 * n * n;
    double sec = flops / 50e9; /* runs at 50 GFLOP/s */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, flops, bytes, bytes, sec, &v));
    CHECK(fabs(v.intensity - 170.6667) < 1e-3);
    CHECK(v.level == RIDGE_LEVEL_L3);
    CHECK(NEAR(v.ridge_point, 2.5));
    CHECK(v.wall == RIDGE_WALL_COMPUTE);
    CHECK(NEAR(v.bound_gflops, 100));
    CHECK(NEAR(v.gflops, 50));
    CHECK(NEAR(v.fraction, 0.5));
    CHECK(NEAR(v.gbs, bytes / sec * 1e-9));

    /* a depthwise convolution at 2.25 FLOP/byte, same level: memory bound by 2.25 x 40 = 90 */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, 2.25e8, 1e8, 20e6, 0.01, &v));
    CHECK(NEAR(v.intensity, 2.25));
    CHECK(v.wall == RIDGE_WALL_MEMORY);
    CHECK(NEAR(v.bound_gflops, 90));
    CHECK(NEAR(v.gflops, 22.5));
    CHECK(NEAR(v.gbs, 10));
    CHECK(NEAR(v.fraction, 0.25));

    /* exactly at the ridge point counts as compute bound, bound = peak */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, 2.5e9, 1e9, 20e6, 1, &v));
    CHECK(v.wall == RIDGE_WALL_COMPUTE && NEAR(v.bound_gflops, 100));

    /* DRAM: the roof is the best of read, copy, triad = 25 GB/s; the scalar peak 10 -> ridge 0.4 */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_REF, 1e8, 1e9, 1e9, 0.1, &v));
    CHECK(v.level == RIDGE_LEVEL_DRAM);
    CHECK(NEAR(v.bw_gbs, 25) && NEAR(v.ridge_point, 0.4));
    CHECK(v.wall == RIDGE_WALL_MEMORY && NEAR(v.bound_gflops, 2.5) && NEAR(v.fraction, 0.4));

    /* levels: private caches compare per thread, L3 the total */
    CHECK(ridge_roofline_level_of(&r, 1, 32 << 10) == RIDGE_LEVEL_L1);
    CHECK(ridge_roofline_level_of(&r, 1, (32 << 10) + 1) == RIDGE_LEVEL_L2);
    CHECK(ridge_roofline_level_of(&r, 4, 4 * (32 << 10)) == RIDGE_LEVEL_L1);
    CHECK(ridge_roofline_level_of(&r, 4, 4 * (512 << 10)) == RIDGE_LEVEL_L2);
    CHECK(ridge_roofline_level_of(&r, 4, 32 << 20) == RIDGE_LEVEL_L3);
    CHECK(ridge_roofline_level_of(&r, 4, (32 << 20) + 1.0) == RIDGE_LEVEL_DRAM);

    /* thread counts between measured points are interpolated: 2 threads is 1/3 of the way */
    ridge_roofline_point p;
    CHECK_OK(ridge_roofline_at(&r, 2, &p));
    CHECK(p.threads == 2 && NEAR(p.peak[RIDGE_PEAK_F32_AVX2], 200));
    CHECK(NEAR(p.read[RIDGE_LEVEL_DRAM], 20 + 15.5 / 3) && NEAR(p.copy, 22));
    CHECK_OK(ridge_roofline_judge(&r, 4, RIDGE_PEAK_F32_AVX2, 4e9, 1e6, 1e5, 0.02, &v));
    CHECK(NEAR(v.peak_gflops, 400) && v.level == RIDGE_LEVEL_L1 && NEAR(v.fraction, 0.5));

    /* no FLOPs (a copy): judged by bytes against the level's bandwidth */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, 0, 4e8, 1e9, 0.04, &v));
    CHECK(v.intensity == 0 && v.wall == RIDGE_WALL_MEMORY && NEAR(v.fraction, 10.0 / 25));
    /* no bytes: infinite intensity, compute bound */
    CHECK_OK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, 1e9, 0, 0, 0.1, &v));
    CHECK(isinf(v.intensity) && v.wall == RIDGE_WALL_COMPUTE && NEAR(v.fraction, 0.1));

    /* refusals */
    CHECK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, 1, 1, 1, 0, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, -1, 1, 1, 1, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_F32_AVX2, NAN, 1, 1, 1, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 5, RIDGE_PEAK_F32_AVX2, 1, 1, 1, 1, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 0, RIDGE_PEAK_F32_AVX2, 1, 1, 1, 1, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_COUNT, 1, 1, 1, 1, &v) == RIDGE_EINVAL);
    CHECK(ridge_roofline_judge(&r, 1, RIDGE_PEAK_BF16_DOT, 1, 1, 1, 1, &v) == RIDGE_EUNSUPPORTED);
    CHECK(strstr(ridge_last_error(), "bf16-dot") != NULL);

    CHECK(ridge_roofline_peak_f32(RIDGE_ISA_AVX512) == RIDGE_PEAK_F32_AVX512);
    CHECK(ridge_roofline_peak_f32(RIDGE_ISA_AVX2) == RIDGE_PEAK_F32_AVX2);
    CHECK(ridge_roofline_peak_f32(RIDGE_ISA_REF) == RIDGE_PEAK_F32_REF);
    CHECK(!strcmp(ridge_roofline_level_name(RIDGE_LEVEL_DRAM), "DRAM"));
    CHECK(!strcmp(ridge_roofline_wall_name(RIDGE_WALL_MEMORY), "memory"));
}

static int same_roof(const ridge_roofline *a, const ridge_roofline *b)
{
    if (a->version != b->version || strcmp(a->cpu, b->cpu) || a->threads != b->threads ||
        a->l1d != b->l1d || a->l2 != b->l2 || a->l3_usable != b->l3_usable ||
        a->quick != b->quick || !NEAR(a->seconds, b->seconds) ||
        strcmp(a->measured_at, b->measured_at) || a->npoints != b->npoints)
        return 0;
    for (int i = 0; i < a->npoints; i++) {
        const ridge_roofline_point *p = &a->points[i], *q = &b->points[i];
        if (p->threads != q->threads || p->copy != q->copy || p->triad != q->triad) return 0;
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
            if (p->peak[k] != q->peak[k]) return 0;
        for (int k = 0; k < RIDGE_LEVEL_COUNT; k++)
            if (p->read[k] != q->read[k]) return 0;
    }
    return 1;
}

/* Replaces the first `from` in the profile's JSON by `to` and checks the result is refused. */
static void check_refused(const char *json, const char *from, const char *to)
{
    char buf[8192];
    const char *at = strstr(json, from);
    CHECKF(at != NULL, "'%s' not in the JSON", from);
    if (!at) return;
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - json), json, to, at + strlen(from));
    ridge_roofline r;
    ridge_status st = ridge_roofline_from_json(buf, &r);
    CHECKF(st == RIDGE_EFORMAT, "'%s' -> '%s' was accepted (%s)", from, to, ridge_status_str(st));
}

static void test_json_roundtrip(void)
{
    ridge_roofline r = fake_roof(), back;
    char json[8192];
    size_t n = ridge_roofline_to_json(&r, json, sizeof json);
    CHECK(n > 0 && n < sizeof json && strlen(json) == n);
    CHECK(ridge_roofline_to_json(&r, NULL, 0) == n);
    char tiny[16];
    CHECK(ridge_roofline_to_json(&r, tiny, sizeof tiny) == n && strlen(tiny) == 15);
    CHECK_OK(ridge_roofline_from_json(json, &back));
    CHECK(same_roof(&r, &back));
    CHECK(strstr(json, "\"f32-avx512\": null") != NULL); /* absent peaks are null */
    CHECK(back.points[0].peak[RIDGE_PEAK_F32_AVX512] == 0);

    /* what a damaged or foreign file looks like is refused, with a reason */
    check_refused(json, "\"version\": 3", "\"version\": 2");
    check_refused(json, "\"format\": \"ridge-roofline\"", "\"format\": \"other\"");
    check_refused(json, "\"L2\": 100", "\"L2\": -100");
    check_refused(json, "\"L2\": 100", "\"L2\": null");
    check_refused(json, "\"L2\": 100", "\"L2\": \"fast\"");
    check_refused(json, "\"f32-ref\": 10", "\"f32-ref\": null");
    check_refused(json, "\"threads\": 4,\n", "\"threads\": 3,\n"); /* no point for 3 */
    check_refused(json, "\"threads\": 4,\n     \"peak\"", "\"threads\": 1,\n     \"peak\"");
    check_refused(json, "\"quick\": true", "\"quick\": 1");
    check_refused(json, "\"l1d\": 32768", "\"l1d\": 1e300");
    check_refused(json, "\"points\": [", "\"points\": 7, \"x\": [");
    json[n / 2] = 0; /* truncated */
    CHECK(ridge_roofline_from_json(json, &back) == RIDGE_EFORMAT);
    CHECK(strstr(ridge_last_error(), "line") != NULL);
}

static void test_json_reader(void)
{
    ridge_json *v;
    CHECK_OK(ridge_json_parse(" {\"a\": [1, -2.5e1, true, false, null], \"b\": \"x\\\"y\\n\\u0041\","
                              " \"c\": {}, \"d\": []} ", &v));
    if (v) {
        const ridge_json *a = ridge_json_get(v, "a"), *b = ridge_json_get(v, "b");
        CHECK(a && a->type == RIDGE_JSON_ARRAY && a->child && a->child->num == 1);
        CHECK(a && a->child->next->num == -25 && a->child->next->next->type == RIDGE_JSON_BOOL);
        CHECK(a && a->child->next->next->next->next->type == RIDGE_JSON_NULL);
        CHECK(b && b->type == RIDGE_JSON_STRING && !strcmp(b->str, "x\"y\nA"));
        CHECK(ridge_json_get(v, "c")->type == RIDGE_JSON_OBJECT && !ridge_json_get(v, "c")->child);
        CHECK(ridge_json_get(v, "zz") == NULL);
        ridge_json_free(v);
    }
    const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "{\"a\": 1,}", "[1] 2", "\"abc",
                         "tru", "+1", "[0x10]", "[01]", "[1.]", "[-]", "[.5]", "[1e]", "{\"a\": \"\\q\"}", "[1e999]", "{1: 2}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ridge_status st = ridge_json_parse(bad[i], &v);
        CHECKF(st == RIDGE_EFORMAT && v == NULL, "'%s' accepted", bad[i]);
    }
    char deep[200];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    CHECK(ridge_json_parse(deep, &v) == RIDGE_EFORMAT);
}

static void test_cache(const char *dir)
{
    char path[4096];
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK_OK(ridge_roofline_cache_path("AMD EPYC 9B45 128-Core/x", 2, path, sizeof path));
    char want[4200];
    snprintf(want, sizeof want, "%s/ridge/roofline-AMD_EPYC_9B45_128-Core_x-2t.json", dir);
    CHECKF(!strcmp(path, want), "%s", path);
    char small[8];
    CHECK(ridge_roofline_cache_path("x", 1, small, sizeof small) == RIDGE_EINVAL);

    /* save and load through a file, creating the directory */
    ridge_roofline r = fake_roof(), back;
    CHECK_OK(ridge_roofline_save(&r, path));
    CHECK_OK(ridge_roofline_load(path, &back));
    CHECK(same_roof(&r, &back));
    CHECK(ridge_roofline_load("/nonexistent/roof.json", &back) == RIDGE_EIO);

    /* for_ctx uses a cached profile for this CPU and thread count instead of measuring */
    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_AUTO);
    if (!ctx) return;
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    r = fake_roof();
    snprintf(r.cpu, sizeof r.cpu, "%s", cpu->brand);
    r.threads = 1;
    r.npoints = 1;
    r.l1d = cpu->l1d, r.l2 = cpu->l2, r.l3_usable = cpu->l3_usable;
    CHECK_OK(ridge_roofline_cache_path(cpu->brand, 1, path, sizeof path));
    CHECK_OK(ridge_roofline_save(&r, path));
    uint64_t t0 = ridge_time_ns();
    CHECK_OK(ridge_roofline_for_ctx(ctx, RIDGE_ROOFLINE_QUICK, &back));
    CHECK(same_roof(&r, &back));
    CHECK(ridge_time_ns() - t0 < 500000000u); /* loaded, not measured (which takes seconds) */
    /* one saved with other cache sizes is measured again (and replaced) */
    r.l2 = cpu->l2 / 2;
    CHECK_OK(ridge_roofline_save(&r, path));
    CHECK_OK(ridge_roofline_for_ctx(ctx, RIDGE_ROOFLINE_QUICK, &back));
    CHECK(back.l2 == cpu->l2 && !same_roof(&r, &back));
    CHECK_OK(ridge_roofline_load(path, &back));
    CHECK(back.l2 == cpu->l2);
    ridge_ctx_destroy(ctx);
}

/* A real quick measurement: every probe the CPU has gives a positive rate, the rest are 0. */
static void test_measure(void)
{
    ridge_ctx *ctx = test_ctx(0, RIDGE_ISA_AUTO);
    if (!ctx) return;
    const ridge_cpu *cpu = ridge_ctx_cpu(ctx);
    ridge_roofline r;
    CHECK_OK(ridge_roofline_measure(ctx, RIDGE_ROOFLINE_QUICK, &r));
    CHECK(r.threads == ridge_ctx_threads(ctx) && r.npoints >= 1 && r.quick);
    CHECK(r.points[r.npoints - 1].threads == r.threads && r.points[0].threads == 1);
    int avx512 = ridge_cpu_supports(cpu, RIDGE_ISA_AVX512);
    const int have[RIDGE_PEAK_COUNT] = {1, ridge_cpu_supports(cpu, RIDGE_ISA_AVX2), avx512,
                                        avx512 && cpu->avx512_vnni, avx512 && cpu->avx512_bf16};
    for (int i = 0; i < r.npoints; i++) {
        const ridge_roofline_point *p = &r.points[i];
        for (int k = 0; k < RIDGE_PEAK_COUNT; k++)
            CHECKF(have[k] ? p->peak[k] > 0 : p->peak[k] == 0, "%d threads: %s = %g", p->threads,
                   ridge_roofline_peak_name(k), p->peak[k]);
        for (int k = 0; k < RIDGE_LEVEL_COUNT; k++)
            CHECKF(p->read[k] > 0 && isfinite(p->read[k]), "read %s = %g",
                   ridge_roofline_level_name(k), p->read[k]);
        CHECK(p->copy > 0 && p->triad > 0);
    }
    /* and it survives its own JSON */
    char json[8192];
    ridge_roofline back;
    ridge_roofline_to_json(&r, json, sizeof json);
    CHECK_OK(ridge_roofline_from_json(json, &back));
    CHECK(back.npoints == r.npoints);
    printf("quick measurement took %.2f s\n", r.seconds);
    ridge_ctx_destroy(ctx);
}

int main(void)
{
    char dir[] = "/tmp/ridge-test-perf-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_judge();
    test_json_roundtrip();
    test_json_reader();
    test_cache(dir);
    test_measure();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
    return test_finish("test-perf");
}
