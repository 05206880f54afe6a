/* The roofline probes: tiny loops that run one resource flat out, one ISA per file
 * (probe-<isa>.c), each compiled with only its own ISA's flags. measure.c times them on 1..N
 * threads and keeps the best of several trials. Internal to ridge.
 *
 * Compute probes run `iters` iterations of RIDGE_PROBE_CHAINS independent accumulator chains
 * held in registers (FMA latency 4-5 cycles x 2 pipes needs at least 8-10 chains in flight)
 * and return the operations done (FLOP, or OP for int8). Memory probes stream arrays of `n`
 * floats (n a multiple of RIDGE_PROBE_BLOCK, 64-byte aligned) and return the bytes moved.
 * Every probe folds its results into a value the caller stores to a volatile sink, so the
 * compiler cannot drop the work. */
#ifndef RIDGE_PERF_PROBE_H
#define RIDGE_PERF_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define RIDGE_PROBE_BLOCK 256 /* floats: the unit of every memory probe's loop (1 KiB) */

typedef struct ridge_probe_result {
    double ops;  /* FLOPs / OPs / bytes done */
    float sink;  /* a value derived from every result, for the caller to store */
} ridge_probe_result;

typedef ridge_probe_result (*ridge_probe_compute_fn)(uint64_t iters);
typedef ridge_probe_result (*ridge_probe_read_fn)(const float *a, size_t n, uint64_t reps);
typedef ridge_probe_result (*ridge_probe_copy_fn)(float *c, const float *a, size_t n);
typedef ridge_probe_result (*ridge_probe_triad_fn)(float *a, const float *b, const float *c,
                                                   size_t n);

/* fp32 multiply-add peaks */
ridge_probe_result ridge_probe_fma__scalar(uint64_t iters); /* mulss + addss, no FMA */
ridge_probe_result ridge_probe_fma__avx2(uint64_t iters);
ridge_probe_result ridge_probe_fma__avx512(uint64_t iters);
/* dot-product peaks */
ridge_probe_result ridge_probe_dot_i8__vnni(uint64_t iters);   /* vpdpbusd zmm */
ridge_probe_result ridge_probe_dot_bf16__bf16(uint64_t iters); /* vdpbf16ps zmm */

/* read: sums a[0..n) `reps` times; copy: c = a; triad: a = b + 3*c (STREAM's kernels, each
 * array counted once). One set per ISA; measure.c uses the widest the CPU has. */
ridge_probe_result ridge_probe_read__scalar(const float *a, size_t n, uint64_t reps);
ridge_probe_result ridge_probe_copy__scalar(float *c, const float *a, size_t n);
ridge_probe_result ridge_probe_triad__scalar(float *a, const float *b, const float *c, size_t n);
ridge_probe_result ridge_probe_read__avx2(const float *a, size_t n, uint64_t reps);
ridge_probe_result ridge_probe_copy__avx2(float *c, const float *a, size_t n);
ridge_probe_result ridge_probe_triad__avx2(float *a, const float *b, const float *c, size_t n);
ridge_probe_result ridge_probe_read__avx512(const float *a, size_t n, uint64_t reps);
ridge_probe_result ridge_probe_copy__avx512(float *c, const float *a, size_t n);
ridge_probe_result ridge_probe_triad__avx512(float *a, const float *b, const float *c, size_t n);

#endif /* RIDGE_PERF_PROBE_H */
