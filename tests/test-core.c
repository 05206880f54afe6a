/* Status codes, the last-error message, CPU detection, ISA choice, context options, memory. */
#include <pthread.h>
#include <stdint.h>

#include "core/internal.h"
#include "test.h"

static void *other_thread_error(void *arg)
{
    (void)arg;
    /* a fresh thread starts with no error, and setting one here does not leak back */
    int clean = ridge_last_error()[0] == 0;
    ridge_error(RIDGE_EIO, "from the other thread");
    return (void *)(intptr_t)clean;
}

static void test_status(void)
{
    for (int s = RIDGE_OK; s <= RIDGE_EINTERNAL; s++) {
        const char *n = ridge_status_str((ridge_status)s);
        CHECK(n && *n && strcmp(n, "unknown status") != 0);
    }
    CHECK(strcmp(ridge_status_str((ridge_status)99), "unknown status") == 0);
    CHECK(ridge_error(RIDGE_EINVAL, "x = %d", 42) == RIDGE_EINVAL);
    CHECK(strcmp(ridge_last_error(), "x = 42") == 0);
    pthread_t th;
    void *clean = NULL;
    CHECK(pthread_create(&th, NULL, other_thread_error, NULL) == 0);
    pthread_join(th, &clean);
    CHECK(clean == (void *)1);
    CHECK(strcmp(ridge_last_error(), "x = 42") == 0);
}

static void test_cpu(void)
{
    const ridge_cpu *c = ridge_cpu_get();
    CHECK(c == ridge_cpu_get());
    printf("cpu: %s (%s), family %d model %d, %d cpus\n", c->brand, c->vendor, c->family,
           c->model, c->logical_cpus);
    printf("cpu: avx2 %d fma %d avx512f %d bw %d vl %d dq %d vnni %d bf16 %d avx_vnni %d "
           "os_ymm %d os_zmm %d\n",
           c->avx2, c->fma, c->avx512f, c->avx512bw, c->avx512vl, c->avx512dq, c->avx512_vnni,
           c->avx512_bf16, c->avx_vnni, c->os_ymm, c->os_zmm);
    printf("cpu: l1d %zu l2 %zu l3 %zu (usable %zu) line %zu\n", c->l1d, c->l2, c->l3,
           c->l3_usable, c->line);
    CHECK(c->logical_cpus >= 1);
    CHECK(c->vendor[0] != 0);
    CHECK(c->l1d >= 4096 && c->l2 >= c->l1d);
    CHECK(c->line >= 16 && c->line <= 256);
    CHECK(c->l3_usable <= c->l3 || c->l3 == 0);
    /* the OS-state bits gate the features that need them */
    CHECK(!c->avx2 || c->os_ymm);
    CHECK(!c->avx512f || c->os_zmm);
    CHECK(!c->os_zmm || c->os_ymm);
#if defined(__x86_64__)
    CHECK(c->sse42); /* every x86-64 CPU ridge can meet has SSE4.2 */
#endif
    ridge_isa best = ridge_cpu_best_isa(c);
    CHECK(ridge_cpu_supports(c, best));
    CHECK(ridge_cpu_supports(c, RIDGE_ISA_REF));
    if (best == RIDGE_ISA_AVX512) CHECK(ridge_cpu_supports(c, RIDGE_ISA_AVX2));
    if (c->avx512f && c->avx512bw && c->avx512vl && c->avx512dq) CHECK(best == RIDGE_ISA_AVX512);
}

/* The legacy AMD leaves, with the registers a Zen 5 VM ("Virtual Turin-like") returned while
 * its leaf 0x8000001D was empty: L1d 48 KiB, L2 1 MiB, L3 1016 x 512 KiB (the socket's). */
static void test_cpu_legacy_leaves(void)
{
    ridge_cpu c = {0};
    ridge_cpu_legacy_amd_caches(&c, 0x300c0140u, 0x04006140u, 0x0fe09140u);
    CHECK(c.l1d == 48u << 10 && c.line == 64);
    CHECK(c.l2 == 1u << 20);
    CHECK(c.l3 == (size_t)1016 << 19);
    /* levels already known stay; zero fields in the leaves fill nothing */
    ridge_cpu d = {0};
    d.l1d = 32u << 10, d.line = 64, d.l2 = 512u << 10;
    ridge_cpu_legacy_amd_caches(&d, 0x300c0140u, 0x04006140u, 0);
    CHECK(d.l1d == 32u << 10 && d.l2 == 512u << 10 && d.l3 == 0);
}

/* The usable L3: AMD's chiplet cap of 32 MiB for every vendor but Intel, whose mesh L3 a core
 * reaches whole, capped at 96 MiB; a smaller L3 is all usable. */
static void test_cpu_l3_usable(void)
{
    const size_t mib = (size_t)1 << 20;
    CHECK(ridge_cpu_l3_usable("GenuineIntel", 480 * mib) == 96 * mib);
    CHECK(ridge_cpu_l3_usable("GenuineIntel", 36 * mib) == 36 * mib);
    CHECK(ridge_cpu_l3_usable("AuthenticAMD", 1016 * mib / 2) == 32 * mib);
    CHECK(ridge_cpu_l3_usable("AuthenticAMD", 16 * mib) == 16 * mib);
    CHECK(ridge_cpu_l3_usable("unknown", 64 * mib) == 32 * mib);
    CHECK(ridge_cpu_l3_usable("GenuineIntel", 0) == 0);
    const ridge_cpu *c = ridge_cpu_get();
    CHECK(c->l3_usable == ridge_cpu_l3_usable(c->vendor, c->l3));
}

static void test_isa_names(void)
{
    ridge_isa isa;
    const char *names[] = {"ref", "avx2", "avx512", "auto"};
    for (int i = 0; i < 4; i++) {
        CHECK_OK(ridge_isa_parse(names[i], &isa));
        CHECK(strcmp(ridge_isa_name(isa), names[i]) == 0);
    }
    CHECK(ridge_isa_parse("sse9", &isa) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "sse9") != NULL);
    CHECK(ridge_isa_parse("", &isa) == RIDGE_EINVAL);
    CHECK(ridge_isa_parse(NULL, &isa) == RIDGE_EINVAL);
}

static void test_ctx_options(void)
{
    ridge_ctx *ctx = (ridge_ctx *)1;
    ridge_ctx_options o;

    /* defaults */
    unsetenv("RIDGE_NUM_THREADS");
    unsetenv("RIDGE_ISA");
    CHECK_OK(ridge_ctx_create(NULL, &ctx));
    CHECK(ridge_ctx_threads(ctx) == ridge_cpu_get()->logical_cpus);
    CHECK(ridge_ctx_isa(ctx) == ridge_cpu_best_isa(ridge_cpu_get()));
    ridge_ctx_destroy(ctx);
    ridge_ctx_destroy(NULL);

    /* bad options are refused with a message and a NULL context */
    ridge_ctx_options_init(&o);
    o.threads = -3;
    ctx = (ridge_ctx *)1;
    CHECK(ridge_ctx_create(&o, &ctx) == RIDGE_EINVAL && ctx == NULL);
    CHECK(strstr(ridge_last_error(), "threads") != NULL);
    ridge_ctx_options_init(&o);
    o.isa = (ridge_isa)17;
    CHECK(ridge_ctx_create(&o, &ctx) == RIDGE_EINVAL && ctx == NULL);
    CHECK(ridge_ctx_create(NULL, NULL) == RIDGE_EINVAL);

    /* the environment */
    setenv("RIDGE_NUM_THREADS", "3", 1);
    setenv("RIDGE_ISA", "ref", 1);
    CHECK_OK(ridge_ctx_create(NULL, &ctx));
    CHECK(ridge_ctx_threads(ctx) == 3);
    CHECK(ridge_ctx_isa(ctx) == RIDGE_ISA_REF);
    ridge_ctx_destroy(ctx);
    /* explicit options beat the environment */
    ridge_ctx_options_init(&o);
    o.threads = 2;
    o.isa = RIDGE_ISA_REF;
    CHECK_OK(ridge_ctx_create(&o, &ctx));
    CHECK(ridge_ctx_threads(ctx) == 2);
    ridge_ctx_destroy(ctx);
    setenv("RIDGE_NUM_THREADS", "two", 1);
    CHECK(ridge_ctx_create(NULL, &ctx) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "RIDGE_NUM_THREADS") != NULL);
    unsetenv("RIDGE_NUM_THREADS");
    setenv("RIDGE_ISA", "mmx", 1);
    CHECK(ridge_ctx_create(NULL, &ctx) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "RIDGE_ISA") != NULL);
    unsetenv("RIDGE_ISA");
    setenv("RIDGE_SPIN_US", "-5", 1);
    CHECK(ridge_ctx_create(NULL, &ctx) == RIDGE_EINVAL);
    unsetenv("RIDGE_SPIN_US");
    setenv("RIDGE_CONV_TUNE", "2", 1);
    CHECK(ridge_ctx_create(NULL, &ctx) == RIDGE_EINVAL);
    CHECK(strstr(ridge_last_error(), "RIDGE_CONV_TUNE") != NULL);
    unsetenv("RIDGE_CONV_TUNE");
    ridge_ctx_options_init(&o);
    o.conv_tune = 2;
    CHECK(ridge_ctx_create(&o, &ctx) == RIDGE_EINVAL && ctx == NULL);
    CHECK(strstr(ridge_last_error(), "conv_tune") != NULL);

    /* every ISA: either supported, or refused as unsupported */
    for (int isa = RIDGE_ISA_REF; isa <= RIDGE_ISA_AVX512; isa++) {
        ridge_ctx_options_init(&o);
        o.isa = (ridge_isa)isa;
        o.threads = 1;
        ridge_status st = ridge_ctx_create(&o, &ctx);
        if (ridge_cpu_supports(ridge_cpu_get(), (ridge_isa)isa)) {
            CHECK(st == RIDGE_OK && ridge_ctx_isa(ctx) == isa);
            ridge_ctx_destroy(ctx);
        } else {
            CHECK(st == RIDGE_EUNSUPPORTED);
            SKIP("%s: not supported by this CPU", ridge_isa_name((ridge_isa)isa));
        }
    }
}

static void test_memory(void)
{
    for (size_t n = 1; n < 5000; n = n * 3 + 1) {
        unsigned char *p = ridge_malloc(n);
        CHECK(p && ((uintptr_t)p & 63) == 0);
        memset(p, 0xab, n);
        ridge_free(p);
    }
    CHECK(ridge_malloc(0) == NULL);
    CHECK(ridge_malloc(SIZE_MAX) == NULL);
    CHECK(ridge_calloc(SIZE_MAX / 2, 3) == NULL);
    int *z = ridge_calloc(100, sizeof(int));
    CHECK(z != NULL);
    int all_zero = 1;
    for (int i = 0; i < 100; i++) all_zero &= z[i] == 0;
    CHECK(all_zero);
    ridge_free(z);
    ridge_free(NULL);

    size_t out = 0;
    CHECK_OK(ridge_size_mul(1000, 1000, "a", &out));
    CHECK(out == 1000000);
    CHECK(ridge_size_mul(SIZE_MAX / 2, 3, "tensor", &out) == RIDGE_EOVERFLOW);
    CHECK(strstr(ridge_last_error(), "tensor") != NULL);

    ridge_ctx *ctx = test_ctx(1, RIDGE_ISA_REF);
    if (!ctx) return;
    void *a = NULL, *b = NULL;
    CHECK_OK(ridge_ctx_scratch(ctx, 100, &a));
    CHECK(a && ((uintptr_t)a & 63) == 0);
    memset(a, 1, 100);
    CHECK_OK(ridge_ctx_scratch(ctx, 50, &b));
    CHECK(a == b); /* a smaller request reuses the block */
    CHECK_OK(ridge_ctx_scratch(ctx, 1 << 20, &b));
    CHECK(b && ((uintptr_t)b & 63) == 0);
    memset(b, 2, 1 << 20);
    CHECK_OK(ridge_ctx_scratch(ctx, 0, &b));
    CHECK(b != NULL);
    CHECK(ridge_ctx_scratch(ctx, SIZE_MAX - 10, &b) == RIDGE_ENOMEM && b == NULL);
    ridge_ctx_destroy(ctx);
}

static void test_timer(void)
{
    uint64_t t0 = ridge_time_ns(), prev = t0;
    int monotonic = 1;
    for (int i = 0; i < 1000; i++) {
        uint64_t t = ridge_time_ns();
        monotonic &= t >= prev;
        prev = t;
    }
    CHECK(monotonic);
    CHECK(t0 > 0);
}

int main(void)
{
    test_status();
    test_cpu();
    test_cpu_legacy_leaves();
    test_cpu_l3_usable();
    test_isa_names();
    test_ctx_options();
    test_memory();
    test_timer();
    return test_finish("test-core");
}
