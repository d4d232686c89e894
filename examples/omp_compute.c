/* An OpenMP program that creates its team once and computes: built with GCC
 * (libgomp) and with clang (LLVM libomp).
 * Usage: omp_compute [seconds]     compute for about that long (default 0.05)
 *        omp_compute --rounds N    a fixed amount of work (for timing runs)
 * Prints the team size and a checksum so the work cannot be optimised away. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    double seconds = 0.05;
    long fixed_rounds = 0;
    if (argc > 2 && strcmp(argv[1], "--rounds") == 0)
        fixed_rounds = atol(argv[2]);
    else if (argc > 1)
        seconds = atof(argv[1]);
    int team = 0;
    double sum = 0.0;
    double start = omp_get_wtime();
    long rounds = 0;
    do {
#pragma omp parallel reduction(+ : sum)
        {
#pragma omp single
            team = omp_get_num_threads();
#pragma omp for
            for (long i = 0; i < 2000000; ++i) sum += 1.0 / (double)(i + rounds + 1);
        }
        ++rounds;
    } while (fixed_rounds > 0 ? rounds < fixed_rounds : omp_get_wtime() - start < seconds);
    printf("omp_compute: team of %d, %ld rounds, checksum %.6f\n", team, rounds, sum);
    return 0;
}
