/* What the measurement programs in scripts/ share: a monotonic clock in seconds and the
 * comparison of doubles for qsort (medians, percentiles). Header-only: each program still
 * builds alone with the command in its header comment. */
#ifndef RIDGE_SCRIPTS_TIMING_H
#define RIDGE_SCRIPTS_TIMING_H

#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static inline int cmpd(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
