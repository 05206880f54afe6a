/* The smallest program that uses an installed ridge: create a context, run a parallel task,
 * print what was chosen. CI builds it against the installed library, through pkg-config and
 * through CMake's find_package(ridge). */
#include <stdatomic.h>
#include <stdio.h>

#include <ridge/ridge.h>

static _Atomic long total;

static void add_range(void *arg, size_t begin, size_t end, int ith)
{
    (void)arg, (void)ith;
    long s = 0;
    for (size_t i = begin; i < end; i++) s += (long)i;
    atomic_fetch_add(&total, s);
}

int main(void)
{
    ridge_ctx *ctx;
    if (ridge_ctx_create(NULL, &ctx) != RIDGE_OK) {
        fprintf(stderr, "consumer: %s\n", ridge_last_error());
        return 1;
    }
    ridge_parallel_for(ctx, 1000, 16, add_range, NULL);
    printf("ridge %s: %d threads, %s kernels, sum 0..999 = %ld\n", RIDGE_VERSION_STRING,
           ridge_ctx_threads(ctx), ridge_isa_name(ridge_ctx_isa(ctx)), (long)total);
    ridge_ctx_destroy(ctx);
    return total == 499500 ? 0 : 1;
}
