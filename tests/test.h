/* A minimal test harness: CHECK records a failure and goes on; test_finish prints
 * "N passed, N failed" and returns the exit status (non-zero on any failure). */
#ifndef RIDGE_TEST_H
#define RIDGE_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ridge/ridge.h"

static int test_passed, test_failed, test_skipped;

/* Under AddressSanitizer, let huge allocations fail with NULL (what the tests check) instead
 * of aborting the process. Harmless without the sanitizer. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (cond) {                                                                            \
            test_passed++;                                                                     \
        } else {                                                                               \
            test_failed++;                                                                     \
            fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond);                   \
        }                                                                                      \
    } while (0)

/* CHECK with a printf-style explanation on failure. */
#define CHECKF(cond, ...)                                                                      \
    do {                                                                                       \
        if (cond) {                                                                            \
            test_passed++;                                                                     \
        } else {                                                                               \
            test_failed++;                                                                     \
            fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond);                    \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

/* A status call that must succeed; prints ridge_last_error() if it does not. */
#define CHECK_OK(call)                                                                         \
    do {                                                                                       \
        ridge_status st_ = (call);                                                             \
        CHECKF(st_ == RIDGE_OK, "%s: %s", ridge_status_str(st_), ridge_last_error());          \
    } while (0)

#define SKIP(...)                                                                              \
    do {                                                                                       \
        test_skipped++;                                                                        \
        printf("SKIP: ");                                                                      \
        printf(__VA_ARGS__);                                                                   \
        putchar('\n');                                                                         \
    } while (0)

static inline int test_finish(const char *name)
{
    printf("%s: %d passed, %d failed", name, test_passed, test_failed);
    if (test_skipped) printf(", %d skipped", test_skipped);
    putchar('\n');
    return test_failed ? 1 : 0;
}

/* A context with a given thread count and ISA; NULL (with a SKIP) if the CPU lacks the ISA. */
static inline ridge_ctx *test_ctx(int threads, ridge_isa isa)
{
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = threads;
    o.isa = isa;
    ridge_ctx *ctx = NULL;
    ridge_status st = ridge_ctx_create(&o, &ctx);
    if (st == RIDGE_EUNSUPPORTED) {
        SKIP("%s not supported by this CPU", ridge_isa_name(isa));
        return NULL;
    }
    CHECKF(st == RIDGE_OK, "ctx_create(%d, %s): %s", threads, ridge_isa_name(isa),
           ridge_last_error());
    return ctx;
}

#endif /* RIDGE_TEST_H */
