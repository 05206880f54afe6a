/* The roofline chart as SVG. Internal to ridge (the CLI's `ridge roofline --svg`). */
#ifndef RIDGE_PERF_SVG_H
#define RIDGE_PERF_SVG_H

#include <stdio.h>

#include "ridge/perf.h"

/* A measured kernel to place on the chart. */
typedef struct ridge_roofline_mark {
    const char *label;
    double intensity; /* FLOP/byte */
    double gflops;
} ridge_roofline_mark;

/* Writes a log-log roofline chart of `roof` at `threads` threads to f: x is arithmetic
 * intensity (FLOP/byte, powers of two), y is GFLOP/s (decades); one horizontal ceiling per
 * measured compute peak, one bandwidth slope per memory level up to the highest peak, a
 * marker at each level's ridge point, and the marks as labelled points (marks with a
 * non-finite or non-positive coordinate are left out). RIDGE_EINVAL if threads is outside
 * the profile, RIDGE_EIO if writing fails. */
ridge_status ridge_roofline_svg(const ridge_roofline *roof, int threads,
                                const ridge_roofline_mark *marks, size_t nmarks, FILE *f);

#endif /* RIDGE_PERF_SVG_H */
