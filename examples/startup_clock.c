/* Prints CLOCK_MONOTONIC in nanoseconds as main starts; the preload
 * benchmark compares it with the recorder's process_start time to measure
 * the recorder's cost before main. */
#include <stdio.h>
#include <time.h>

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    return 0;
}
