/* A monotonic nanosecond clock (vDSO clock_gettime: ~20 ns a call). */
#include <time.h>

#include "core/internal.h"

uint64_t ridge_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
