/* Where the OpenMP team that oneDNN runs on sits, before a peer's timed turn.
 *
 * Linux often wakes a sleeping thread on the CPU of the thread that woke it. After the benches'
 * pause between methods (bench_quiesce), libgomp's worker slept, and the next parallel region
 * woke it onto the caller's CPU, where the two then took turns: `ridge bench conv --peers
 * --threads 2`, pointwise 64 -> 64 on 56 x 56, ran oneDNN's 2-thread calls at 0.06 ms with the
 * team on two CPUs and at 0.87-0.94 ms with both threads on one, in about half the rounds (Zen 5
 * VM, 2 vCPUs, session 52). Ridge's pool corrects this itself (src/core/pool.c,
 * move_off_caller); this gives oneDNN the same correction, so that the bench measures it at its
 * best: in one parallel region, each worker that shares the caller's CPU narrows its affinity
 * to another allowed CPU (the kernel moves it at once) and restores its mask, so nothing stays
 * pinned. */
#include <pthread.h>
#include <sched.h>

#include "bench.h"

#ifdef RIDGE_HAVE_OPENMP
#include <omp.h>

void bench_omp_spread(void)
{
    int caller = -1;
#pragma omp parallel
    {
#pragma omp master
        caller = sched_getcpu();
#pragma omp barrier
        const int t = omp_get_thread_num();
        cpu_set_t allowed, one;
        if (t > 0 && caller >= 0 && sched_getcpu() == caller &&
            !pthread_getaffinity_np(pthread_self(), sizeof allowed, &allowed) &&
            CPU_COUNT(&allowed) > 1) {
            /* worker t takes the t-th allowed CPU other than the caller's, round the list */
            int k = (t - 1) % (CPU_COUNT(&allowed) - (CPU_ISSET(caller, &allowed) ? 1 : 0)),
                to = -1;
            for (int c = 0; c < CPU_SETSIZE && to < 0; c++)
                if (c != caller && CPU_ISSET(c, &allowed) && k-- == 0) to = c;
            CPU_ZERO(&one);
            CPU_SET(to, &one);
            if (!pthread_setaffinity_np(pthread_self(), sizeof one, &one))
                pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
        }
    }
}
#else
void bench_omp_spread(void) {}
#endif
