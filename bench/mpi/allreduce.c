/* ridge-mpi-allreduce: the time of one in-place MPI_Allreduce (float sum) over MPI_COMM_WORLD
 * for the gradient sizes that matter here (1 float: latency; the d2 GPT-2 of tests/cli-dist.sh;
 * the 124M GPT-2), to put measured alpha and beta into the model of docs/PERFORMANCE.md ## mpi.
 * Each size: a barrier before every call, one warm-up call, then reps calls; prints the mean and
 * the best, and bytes/best. Built with -DRIDGE_WITH_MPI=ON; run with
 *     flock /tmp/ridge-bench.lock mpirun -np 2 --oversubscribe --allow-run-as-root \
 *         build/ridge-mpi-allreduce */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const size_t sizes[] = {1, 1024, 262144, 417280, 124475904};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t n = sizes[k];
        float *x = malloc(n * sizeof *x);
        if (!x) MPI_Abort(MPI_COMM_WORLD, 1);
        for (size_t i = 0; i < n; i++) x[i] = 0.0f; /* stays 0: no overflow or denormals */
        const int reps = n > 1000000 ? 5 : 200;
        double best = 1e30, total = 0;
        for (int i = 0; i <= reps; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            t = MPI_Wtime() - t;
            if (i) total += t, best = t < best ? t : best; /* i == 0: warm-up */
        }
        if (rank == 0)
            printf("%d ranks, allreduce of %zu floats (%.1f MB): mean %.3f ms, best %.3f ms, "
                   "%.2f GB/s (bytes/best)\n", size, n, (double)n * 4 / 1e6, total / reps * 1e3,
                   best * 1e3, (double)n * 4 / best / 1e9);
        free(x);
    }
    MPI_Finalize();
    return 0;
}
