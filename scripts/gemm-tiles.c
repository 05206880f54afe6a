/* Times ridge_sgemm on one shape with each AVX-512 tile forced in turn (8 x 32, 14 x 32,
 * 6 x 64), in one process and on the same operands, to see which tile a shape wants. Each
 * round runs the three tiles in a rotated order (round r starts with tile r mod 3, so none
 * always runs first or after the same neighbour), each with 3 untimed calls and then CALLS
 * timed ones (warm). Printed per tile: the median time per call, its GFLOP/s, and the median
 * and quartiles of the per-round ratio t(8 x 32) / t(tile) (> 1: the tile is faster than
 * 8 x 32). The tile is forced through the test hook ridge_gemm_set_tile_for_tests, which is
 * in the static library only; a plan's products (32-column panels) never take 6 x 64.
 *
 *   cc -O2 -Iinclude scripts/gemm-tiles.c build/libridge.a -lm -lpthread -o gemm-tiles
 *   RIDGE_NUM_THREADS=1 taskset -c 1 ./gemm-tiles 256 768 768 N N 15 3
 *
 * usage: gemm-tiles M N K TRANS_A(N|T) TRANS_B(N|T) ROUNDS CALLS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"
#include "ridge/ridge.h"

void ridge_gemm_set_tile_for_tests(int mr); /* src/gemm/gemm-internal.h */

#define MAX_ROUNDS 401

int main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s M N K TRANS_A(N|T) TRANS_B(N|T) ROUNDS CALLS\n", argv[0]);
        return 2;
    }
    size_t m = strtoul(argv[1], NULL, 10), n = strtoul(argv[2], NULL, 10);
    size_t k = strtoul(argv[3], NULL, 10);
    ridge_trans ta = argv[4][0] == 'T' ? RIDGE_TRANS : RIDGE_NO_TRANS;
    ridge_trans tb = argv[5][0] == 'T' ? RIDGE_TRANS : RIDGE_NO_TRANS;
    int rounds = atoi(argv[6]), calls = atoi(argv[7]);
    if (!m || !n || !k || rounds < 1 || rounds > MAX_ROUNDS || calls < 1) {
        fprintf(stderr, "%s: sizes >= 1, 1 <= ROUNDS <= %d, CALLS >= 1\n", argv[0], MAX_ROUNDS);
        return 2;
    }
    ridge_ctx *ctx;
    if (ridge_ctx_create(NULL, &ctx) != RIDGE_OK) {
        fprintf(stderr, "%s: %s\n", argv[0], ridge_last_error());
        return 1;
    }
    if (ridge_ctx_isa(ctx) != RIDGE_ISA_AVX512) {
        fprintf(stderr, "%s: the tiles compared are AVX-512 ones; this context runs another ISA\n",
                argv[0]);
        return 1;
    }
    float *a = malloc(m * k * sizeof(float)), *b = malloc(k * n * sizeof(float));
    float *c = malloc(m * n * sizeof(float));
    if (!a || !b || !c) {
        fprintf(stderr, "%s: out of memory\n", argv[0]);
        return 1;
    }
    for (size_t i = 0; i < m * k; i++) a[i] = (float)(i % 13) * 0.1f;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)(i % 7) * 0.1f;
    const size_t lda = ta == RIDGE_TRANS ? m : k, ldb = tb == RIDGE_TRANS ? k : n;
    static const int tiles[3] = {8, 14, 6};
    static double t[3][MAX_ROUNDS], ratio[3][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int i = 0; i < 3; i++) {
            const int q = (i + r) % 3;
            ridge_gemm_set_tile_for_tests(tiles[q]);
            for (int w = 0; w < 3; w++)
                ridge_sgemm(ctx, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
            double t0 = now();
            for (int j = 0; j < calls; j++)
                ridge_sgemm(ctx, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
            t[q][r] = (now() - t0) / calls;
        }
    ridge_gemm_set_tile_for_tests(0);
    for (int q = 0; q < 3; q++) {
        for (int r = 0; r < rounds; r++) ratio[q][r] = t[0][r] / t[q][r];
        qsort(t[q], (size_t)rounds, sizeof(double), cmpd);
        qsort(ratio[q], (size_t)rounds, sizeof(double), cmpd);
        const double med = t[q][rounds / 2];
        printf("%zux%zux%zu %c%c tile %2d: %.2f us  %.1f GFLOP/s  8x32/this %.3f [%.3f..%.3f]\n",
               m, n, k, argv[4][0], argv[5][0], tiles[q], med * 1e6, 2.0 * m * n * k / med * 1e-9,
               ratio[q][rounds / 2], ratio[q][rounds / 4], ratio[q][3 * rounds / 4]);
    }
    free(a), free(b), free(c);
    ridge_ctx_destroy(ctx);
    return 0;
}
