/* An OpenMP program that creates its team once and computes: built with GCC
 * (libgomp) and with clang (LLVM libomp).
 * Usage: omp_compute [seconds [serial]]  compute for about that long (default
 *                                        0.05), then the main thread alone
 *                                        for `serial` seconds (the team idle)
 *        omp_compute --rounds N          a fixed amount of work (for timing runs)
 * Prints the team size and a checksum so the work cannot be optimised away. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    double seconds = 0.05, serial = 0.0;
    long fixed_rounds = 0;
    if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
        fixed_rounds = atol(argv[2]);
    } else if (argc > 1) {
        seconds = atof(argv[1]);
        if (argc > 2) serial = atof(argv[2]);
    }
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
    /* The team's threads stay alive, idle, until the process exits: GNU
     * OpenMP never joins them. */
    const double serial_start = omp_get_wtime();
    while (omp_get_wtime() - serial_start < serial)
        for (long i = 0; i < 100000; ++i) sum += 1.0 / (double)(i + 1);
    printf("omp_compute: team of %d, %ld rounds, checksum %.6f\n", team, rounds, sum);
    return 0;
}
