/* Read bandwidth of one thread against the size of the array read, 1 MiB to 256 MiB: where the
 * roofline's single L3 figure (measured on a few L2s' worth of data) stops holding as an array
 * approaches the usable L3. Each size is summed with AVX-512 loads, best of many passes.
 *
 *   cc -O2 -mavx512f scripts/read-bandwidth.c -o read-bw
 *   ./read-bw */
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "timing.h"

int main(void)
{
    const size_t mib[] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};
    for (size_t s = 0; s < sizeof mib / sizeof mib[0]; s++) {
        const size_t bytes = mib[s] << 20, n = bytes / sizeof(float);
        float *a = aligned_alloc(64, bytes);
        if (!a) return 1;
        for (size_t i = 0; i < n; i++) a[i] = 1.0f;
        int passes = (int)(512.0 * (1 << 20) / (double)bytes);
        if (passes < 3) passes = 3;
        double best = 1e30;
        for (int r = 0; r < passes; r++) {
            double t = now();
            __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
            for (size_t i = 0; i < n; i += 64) {
                s0 = _mm512_add_ps(s0, _mm512_load_ps(a + i));
                s1 = _mm512_add_ps(s1, _mm512_load_ps(a + i + 16));
                s2 = _mm512_add_ps(s2, _mm512_load_ps(a + i + 32));
                s3 = _mm512_add_ps(s3, _mm512_load_ps(a + i + 48));
            }
            t = now() - t;
            volatile float sink = _mm512_reduce_add_ps(
                _mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
            (void)sink;
            if (t < best) best = t;
        }
        printf("%4zu MiB: %6.1f GB/s (best of %d)\n", mib[s], (double)bytes / best / 1e9, passes);
        free(a);
    }
    return 0;
}
