/* Write bandwidth of plain against non-temporal AVX-512 stores, one buffer per thread, for
 * the choice of when conv streams its output (conv_stream_choice). Best of 15 passes.
 *
 *   cc -O2 -mavx512f scripts/store-bandwidth.c -lpthread -o store-bw
 *   ./store-bw 6 2     (MiB written in all, threads) */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

#define MAX_THREADS 64

static size_t per_thread; /* floats */
static float *bufs[MAX_THREADS];
static int streamed;

static void *fill(void *arg)
{
    float *y = bufs[(size_t)arg];
    const __m512 v = _mm512_set1_ps(1.0f);
    for (size_t i = 0; i < per_thread; i += 16) {
        if (streamed) _mm512_stream_ps(y + i, v);
        else _mm512_store_ps(y + i, v);
    }
    _mm_sfence();
    return NULL;
}

int main(int argc, char **argv)
{
    const double mib = argc > 1 ? atof(argv[1]) : 6;
    const int th = argc > 2 ? atoi(argv[2]) : 1;
    if (mib <= 0 || th < 1 || th > MAX_THREADS) {
        fprintf(stderr, "usage: %s MIB THREADS\n", argv[0]);
        return 2;
    }
    per_thread = ((size_t)(mib * 1048576 / 4) / (size_t)th + 15) & ~(size_t)15;
    for (int t = 0; t < th; t++) {
        bufs[t] = aligned_alloc(64, per_thread * 4);
        if (!bufs[t]) return fprintf(stderr, "out of memory\n"), 1;
        for (size_t i = 0; i < per_thread; i++) bufs[t][i] = 0;
    }
    for (streamed = 0; streamed < 2; streamed++) {
        double best = 1e30;
        for (int r = 0; r < 15; r++) {
            pthread_t p[MAX_THREADS];
            double t0 = now();
            for (int t = 0; t < th; t++) pthread_create(&p[t], NULL, fill, (void *)(size_t)t);
            for (int t = 0; t < th; t++) pthread_join(p[t], NULL);
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        printf("%-14s %.1f MiB, %d thread%s: best %.3f ms, %.1f GB/s\n",
               streamed ? "non-temporal" : "plain", mib, th, th > 1 ? "s" : "", best * 1e3,
               (double)per_thread * 4 * th / best / 1e9);
    }
    return 0;
}
