/* MPI + OpenMP: each rank opens an OpenMP team (libgomp) and the ranks
 * combine their results.
 * Usage: mpi_omp [seconds]     compute for about that long (default 0.05)
 *        mpi_omp --rounds N    a fixed amount of work (for timing runs)
 *        mpi_omp --rounds N --mib M
 *                              memory-bound instead: each rank's team
 *                              first-touches M MiB (one page fault per
 *                              4 KiB page, each thread its share) and each
 *                              round streams over it (for the sampler's
 *                              overhead on a real MPI+OpenMP run) */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double seconds = 0.05;
    long fixed_rounds = 0;
    size_t bytes = 0;
    if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
        fixed_rounds = atol(argv[2]);
        if (argc > 4 && strcmp(argv[3], "--mib") == 0) bytes = (size_t)atol(argv[4]) << 20;
    } else if (argc > 1)
        seconds = atof(argv[1]);
    unsigned char* buffer = NULL;
    if (bytes > 0) {
        buffer = malloc(bytes);
        if (buffer == NULL) {
            fprintf(stderr, "mpi_omp: cannot allocate %zu bytes\n", bytes);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < bytes; i += 4096) buffer[i] = (unsigned char)(i >> 12);
    }
    double local = 0.0;
    int team = 0;
    double start = MPI_Wtime();
    long rounds = 0;
    do {
#pragma omp parallel reduction(+ : local)
        {
#pragma omp single
            team = omp_get_num_threads();
            if (buffer != NULL) {
#pragma omp for schedule(static)
                for (size_t i = 0; i < bytes; i += 64) local += buffer[i];
            } else {
#pragma omp for
                for (long i = 0; i < 1000000; ++i) local += 1.0 / (double)(i + rank + rounds + 1);
            }
        }
        ++rounds;
        /* Every rank must agree on when to stop; rank 0's clock decides. */
        int more = fixed_rounds > 0 ? rounds < fixed_rounds : MPI_Wtime() - start < seconds;
        MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (!more) break;
    } while (1);
    double total = 0.0;
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("mpi_omp: %d ranks x %d threads, checksum %.6f\n", size, team, total);
    free(buffer);
    MPI_Finalize();
    return 0;
}
