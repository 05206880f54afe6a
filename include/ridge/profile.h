/* ridge/profile.h: where the time goes. Turns the records a context collected while profiling
 * (ridge_profile_start in core.h) into a per-operator table judged against the measured
 * roofline, a Chrome/Perfetto trace, and points for the roofline chart.
 *
 *   ridge_profile_start(ctx, 1 << 20);
 *   ... run N training steps, timing them: wall seconds ...
 *   ridge_profile_stop(ctx);
 *   ridge_profile_summary s;
 *   ridge_profile_summarize(ctx, &roof, wall, N, 0, &s);   // roof: ridge_roofline_for_ctx
 *   for (size_t i = 0; i < s.nrows; i++) ... s.rows[i] ...
 *   ridge_profile_summary_free(&s);
 */
#ifndef RIDGE_PROFILE_H
#define RIDGE_PROFILE_H

#include <stdio.h>

#include "ridge/core.h"
#include "ridge/perf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The verdict on one operator, aggregated over its calls. */
typedef enum ridge_profile_wall {
    RIDGE_PROFILE_COMPUTE = 0, /* near the compute ceiling's side of the roof */
    RIDGE_PROFILE_MEMORY = 1,  /* near the bandwidth side */
    RIDGE_PROFILE_NEITHER = 2, /* under RIDGE_PROFILE_NEITHER_BELOW of its bound: overhead,
                                * imbalance, or a shape off the fast path; or no FLOPs/bytes */
} ridge_profile_wall;

/* An operator reaching less than this fraction of its roofline bound is "neither". */
#define RIDGE_PROFILE_NEITHER_BELOW 0.25
/* The Amdahl line assumes an operator could reach this fraction of its bound. */
#define RIDGE_PROFILE_TARGET 0.80

typedef struct ridge_profile_row {
    char op[48];          /* operator, e.g. "sgemm", "layernorm.fwd"; "other" for the rest */
    char shape[48];       /* with per_layer: the shape; else "" */
    char algo[48];        /* the kernel or algorithm of the first call */
    size_t calls;
    double seconds;       /* total over the profiled steps */
    double share;         /* seconds / the profiled wall time */
    double flops, bytes;  /* totals */
    double gflops, gbs, intensity;
    const char *level;    /* memory level of the largest working set: "L1" .. "DRAM" */
    double bound_gflops;  /* roofline bound at that level, at the context's thread count */
    double fraction;      /* gflops / bound_gflops (0 when there are no FLOPs) */
    ridge_profile_wall wall;
    double saved_seconds; /* time saved if the op reached RIDGE_PROFILE_TARGET of its bound */
} ridge_profile_row;

typedef struct ridge_profile_summary {
    int steps;
    double wall_seconds;     /* as measured by the caller */
    double step_seconds;     /* wall_seconds / steps */
    double covered_seconds;  /* sum over the top-level operators */
    double other_seconds;    /* wall - covered: the code between recorded operators */
    double pool_wait_seconds;/* caller waits for the slowest thread, inside the operators */
    double pool_task_seconds;/* sum of all threads' task time */
    int threads;
    size_t dropped;          /* records that did not fit the buffer */
    size_t nrows;            /* rows, sorted by saved_seconds (largest first), then "other" */
    ridge_profile_row *rows;
} ridge_profile_summary;

/* Aggregates the context's records (top-level ones only, so nothing is counted twice) by
 * operator, or by operator and shape when per_layer is set, and judges each against `roof`
 * at the context's thread count (`roof` may be NULL: no judgement, fractions 0). The rows
 * are allocated; free with ridge_profile_summary_free. RIDGE_EINVAL for steps < 1 or
 * wall_seconds <= 0. */
ridge_status ridge_profile_summarize(const ridge_ctx *ctx, const ridge_roofline *roof,
                                     double wall_seconds, int steps, int per_layer,
                                     ridge_profile_summary *out);
void ridge_profile_summary_free(ridge_profile_summary *s); /* NULL rows are fine */

/* "compute", "memory", "neither". */
const char *ridge_profile_wall_name(ridge_profile_wall w);

/* Writes every record as a Chrome trace (the JSON array format Perfetto opens): one
 * complete ("X") event per record, one track per thread, operators nested by time, with the
 * shape, algorithm and FLOPs as arguments. RIDGE_EIO if writing fails. */
ridge_status ridge_profile_write_trace(const ridge_ctx *ctx, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* RIDGE_PROFILE_H */
