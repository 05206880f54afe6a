/* The cost of one profiler record: an 8x8x8 sgemm with profiling off and on, best of 15
 * interleaved rounds of 100,000 calls. Build and run against a build tree:
 *   cc -O2 -Iinclude scripts/profile-cost.c build/libridge.a -lm -lpthread -o profile-cost
 *   ./profile-cost */
#include <ridge/ridge.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    ridge_ctx_options o;
    ridge_ctx_options_init(&o);
    o.threads = 1;
    ridge_ctx *ctx;
    if (ridge_ctx_create(&o, &ctx))
        return 1;
    float a[64] = {0}, b[64] = {0}, c[64];
    double best_on = 1e9, best_off = 1e9;
    int N = 100000;
    for (int r = 0; r < 15; r++) {
        for (int on = 0; on < 2; on++) {
            if (on)
                ridge_profile_start(ctx, N + 10);
            uint64_t t0 = ridge_time_ns();
            for (int i = 0; i < N; i++)
                ridge_sgemm(ctx, RIDGE_NO_TRANS, RIDGE_NO_TRANS, 8, 8, 8, 1, a, 8, b, 8, 0, c, 8);
            double ns = (double)(ridge_time_ns() - t0) / N;
            if (on) {
                ridge_profile_stop(ctx);
                if (ns < best_on)
                    best_on = ns;
            } else if (ns < best_off)
                best_off = ns;
        }
    }
    printf("8x8x8 sgemm: %.1f ns/call off, %.1f ns/call profiled: %.1f ns per record\n", best_off,
           best_on, best_on - best_off);
    ridge_ctx_destroy(ctx);
    return 0;
}
