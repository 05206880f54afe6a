/* ridge/perf.h: the machine's measured roof, and the judgement of a kernel against it.
 *
 * A roofline profile (ridge_roofline) holds what probes measured on this machine, for each
 * thread count: the compute peaks (fp32 FMA per ISA, int8 and bf16 dot products) and the read
 * bandwidth of each memory level (L1, L2, L3, DRAM, plus STREAM copy and triad). A benchmark
 * gets the profile for its context once and judges every timed kernel against it:
 *
 *   ridge_roofline roof;
 *   if (ridge_roofline_for_ctx(ctx, RIDGE_ROOFLINE_QUICK, &roof)) ...   // cached or measured
 *   ridge_roofline_verdict v;
 *   ridge_roofline_judge(&roof, threads, ridge_roofline_peak_f32(isa),
 *                        2.0 * m * n * k,                  // FLOPs, counted from the shapes
 *                        4.0 * (m * k + k * n + m * n),    // compulsory bytes
 *                        4.0 * (m * k + k * n + m * n),    // working set (picks the level)
 *                        seconds, &v);
 *   printf("%.1f GFLOP/s = %.0f%% of the %s roof\n", v.gflops, 100 * v.fraction,
 *          ridge_roofline_wall_name(v.wall));
 *
 * Units everywhere: GFLOP/s = 1e9 FLOP/s (one FMA = 2 FLOP; for int8, GOP/s, one 8-bit
 * multiply-add = 2 OP), GB/s = 1e9 bytes/s, intensity in FLOP per byte, sizes in bytes, time
 * in seconds. A peak of 0 means "this CPU lacks it" (printed n/a, null in JSON).
 *
 * Rules for callers (DESIGN.md, "every operation can count itself"): count FLOPs analytically
 * from the shapes, and for reduced-arithmetic algorithms (Winograd, FFT) pass the direct
 * algorithm's count; compulsory bytes are each input read once plus each output written once.
 *
 * Ownership: the ridge_roofline struct is plain data (no pointers) owned by the caller; copy it
 * freely. Nothing here keeps global state except the cache files on disk.
 */
#ifndef RIDGE_PERF_H
#define RIDGE_PERF_H

#include "ridge/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The compute ceilings. The first three equal the ridge_isa values, so an fp32 kernel of ISA
 * `isa` uses ridge_roofline_peak_f32(isa). */
typedef enum ridge_roofline_peak {
    RIDGE_PEAK_F32_REF = 0,    /* scalar mul+add chains: what portable C gets without SIMD */
    RIDGE_PEAK_F32_AVX2 = 1,   /* 256-bit FMA */
    RIDGE_PEAK_F32_AVX512 = 2, /* 512-bit FMA */
    RIDGE_PEAK_I8_DOT = 3,     /* int8 dot product, vpdpbusd (AVX512-VNNI), GOP/s */
    RIDGE_PEAK_BF16_DOT = 4,   /* bf16 dot product, vdpbf16ps (AVX512-BF16) */
    RIDGE_PEAK_COUNT = 5,
} ridge_roofline_peak;

/* The memory levels, by where a working set fits. */
typedef enum ridge_roofline_level {
    RIDGE_LEVEL_L1 = 0,
    RIDGE_LEVEL_L2 = 1,
    RIDGE_LEVEL_L3 = 2,
    RIDGE_LEVEL_DRAM = 3,
    RIDGE_LEVEL_COUNT = 4,
} ridge_roofline_level;

typedef enum ridge_roofline_wall {
    RIDGE_WALL_COMPUTE = 0, /* intensity >= ridge point: the peak is the bound */
    RIDGE_WALL_MEMORY = 1,  /* intensity < ridge point: bandwidth x intensity is the bound */
} ridge_roofline_wall;

/* What was measured at one thread count (all threads running the probe at once). */
typedef struct ridge_roofline_point {
    int threads;
    double peak[RIDGE_PEAK_COUNT]; /* GFLOP/s (GOP/s for int8); 0: not on this CPU */
    double read[RIDGE_LEVEL_COUNT]; /* read bandwidth, GB/s, of an array sized for the level */
    double copy, triad;             /* STREAM copy (c = a) and triad (a = b + s*c) on arrays
                                     * several times the LLC, GB/s counting every array once */
} ridge_roofline_point;

#define RIDGE_ROOFLINE_VERSION 3
#define RIDGE_ROOFLINE_MAX_POINTS 16

typedef struct ridge_roofline {
    int version;        /* RIDGE_ROOFLINE_VERSION */
    char cpu[49];       /* ridge_cpu.brand: part of the cache key */
    int threads;        /* the context's thread count: the other part of the key */
    size_t l1d, l2, l3_usable; /* cache sizes (bytes) that picked the probe sizes and levels */
    int quick;          /* 1: measured with RIDGE_ROOFLINE_QUICK (fewer, shorter trials) */
    double seconds;     /* how long the measurement took */
    char measured_at[32]; /* UTC, ISO 8601 */
    int npoints;        /* points[0..npoints), in increasing thread count, the last = threads */
    ridge_roofline_point points[RIDGE_ROOFLINE_MAX_POINTS];
} ridge_roofline;

/* One kernel run judged against the roof. */
typedef struct ridge_roofline_verdict {
    double gflops;       /* achieved: flops / seconds / 1e9 */
    double gbs;          /* achieved: bytes / seconds / 1e9 */
    double intensity;    /* flops / bytes, FLOP/byte (INFINITY when bytes is 0) */
    ridge_roofline_level level; /* where the working set lives */
    double peak_gflops;  /* the compute ceiling at this thread count */
    double bw_gbs;       /* the bandwidth of `level` at this thread count */
    double ridge_point;  /* peak_gflops / bw_gbs: the intensity where the two walls meet */
    double bound_gflops; /* min(peak_gflops, intensity * bw_gbs) */
    double fraction;     /* gflops / bound_gflops (1 = at the roof) */
    ridge_roofline_wall wall; /* which wall bounds it */
} ridge_roofline_verdict;

/* Flags for ridge_roofline_measure and ridge_roofline_for_ctx. */
enum {
    RIDGE_ROOFLINE_QUICK = 1,   /* fewer, shorter trials (about 1 s on 2 threads) */
    RIDGE_ROOFLINE_REFRESH = 2, /* for_ctx: ignore the cache, measure, and save */
    RIDGE_ROOFLINE_VERBOSE = 4, /* print progress lines to stderr */
};

/* ---- getting a profile --------------------------------------------------------------------- */

/* Measures the roof with ctx's pool at thread counts 1..8, then 16, 32, ... and
 * ridge_ctx_threads(ctx); every probe is the best of many short trials (2-3 s on 2 threads,
 * RIDGE_ROOFLINE_QUICK about 1 s). Peaks the CPU lacks are 0. Allocates 3 arrays of 4 x the
 * usable L3 (at least 64 MiB each). Run it alone: other work on the machine lowers it. */
ridge_status ridge_roofline_measure(ridge_ctx *ctx, int flags, ridge_roofline *out);

/* The profile for this context: the cached one for (CPU brand, ridge_ctx_threads(ctx)) if
 * present, valid and taken with the cache sizes detected now (and not quick when
 * RIDGE_ROOFLINE_QUICK is absent from flags), else measured with `flags` and saved to the
 * cache. A failure to save is not an error. This is what a benchmark calls. */
ridge_status ridge_roofline_for_ctx(ridge_ctx *ctx, int flags, ridge_roofline *out);

/* The cache file for a profile keyed by (brand, threads):
 * $XDG_CACHE_HOME/ridge/roofline-<brand>-<threads>t.json, else ~/.cache/ridge/...; brand is
 * reduced to [A-Za-z0-9._-]. RIDGE_EINVAL if neither variable is set or buf is too small. */
ridge_status ridge_roofline_cache_path(const char *brand, int threads, char *buf, size_t size);

/* JSON (the format is docs/FORMATS.md, "roofline profile"). save writes a temporary file and
 * renames it, creating the directory if needed; load rejects a wrong version, missing fields
 * and absurd values with RIDGE_EFORMAT. */
ridge_status ridge_roofline_save(const ridge_roofline *roof, const char *path);
ridge_status ridge_roofline_load(const char *path, ridge_roofline *out);
/* The JSON text into buf (always NUL-terminated); returns the length it needs (excluding NUL),
 * as snprintf does. */
size_t ridge_roofline_to_json(const ridge_roofline *roof, char *buf, size_t size);
ridge_status ridge_roofline_from_json(const char *text, ridge_roofline *out);

/* ---- the judgement ------------------------------------------------------------------------- */

/* The level a working set of `bytes` lives in when split over `threads` threads: L1 and L2 are
 * private, so bytes/threads is compared with them; L3 is shared, so bytes is compared with
 * l3_usable; anything larger is DRAM. */
ridge_roofline_level ridge_roofline_level_of(const ridge_roofline *roof, int threads,
                                             double bytes);

/* The measured point for `threads`: the exact point, or one interpolated linearly between
 * the measured thread counts around it. RIDGE_EINVAL outside 1..roof->threads. */
ridge_status ridge_roofline_at(const ridge_roofline *roof, int threads, ridge_roofline_point *out);

/* The bandwidth ceiling of a level: the read bandwidth, and for DRAM the best of read, copy
 * and triad (a roof is the most the machine did). GB/s. */
double ridge_roofline_bandwidth(const ridge_roofline_point *p, ridge_roofline_level level);

/* Judges one run: `flops` done and `bytes` of compulsory traffic in `seconds`, with a working
 * set of `working_set` bytes, on `threads` threads, against the compute ceiling `peak`.
 * RIDGE_EINVAL for seconds <= 0, negative counts, a thread count outside the profile;
 * RIDGE_EUNSUPPORTED if the peak was not measured (the CPU lacks it). */
ridge_status ridge_roofline_judge(const ridge_roofline *roof, int threads,
                                  ridge_roofline_peak peak, double flops, double bytes,
                                  double working_set, double seconds,
                                  ridge_roofline_verdict *out);

/* (ridge_roofline_peak)isa, for an fp32 kernel compiled for `isa`. */
ridge_roofline_peak ridge_roofline_peak_f32(ridge_isa isa);

/* "f32-ref", "f32-avx2", "f32-avx512", "i8-dot", "bf16-dot"; "L1" "L2" "L3" "DRAM";
 * "compute" "memory". Never NULL. */
const char *ridge_roofline_peak_name(ridge_roofline_peak peak);
const char *ridge_roofline_level_name(ridge_roofline_level level);
const char *ridge_roofline_wall_name(ridge_roofline_wall wall);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_PERF_H */
