/* A program of known shape for tests/parsers/test_code_location.cpp: main ->
 * outer_loop -> inner_touch -> copy_stack, which copies the user stack and
 * registers as the recorder's sample would carry them, with the process's
 * mappings, into the file named by argv[1]:
 *
 *   sink <address of the static `sink`>
 *   regs <ip> <sp> <bp>      (hex)
 *   stack <hex bytes from sp up>
 *   <the lines of /proc/self/maps>
 *
 * The lines the test expects are marked with comments "LINE:<name>". Built
 * with and without frame pointers and -g (tests/parsers/CMakeLists.txt). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t stack_end(uint64_t sp) {
    FILE* maps = fopen("/proc/self/maps", "r");
    char line[512];
    uint64_t end = 0;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long long a, b;
        if (sscanf(line, "%llx-%llx", &a, &b) == 2 && sp >= a && sp < b) end = b;
    }
    if (maps) fclose(maps);
    return end;
}

volatile uint64_t sink;

__attribute__((noinline)) void copy_stack(const char* out_path, size_t limit) {
    uint64_t ip, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
    uint64_t size = stack_end(sp) - sp;
    if (size > limit) size = limit;
    FILE* out = fopen(out_path, "w");
    if (!out) exit(2);
    fprintf(out, "sink %llx\nregs %llx %llx %llx\nstack ", (unsigned long long)(uintptr_t)&sink,
            (unsigned long long)ip, (unsigned long long)sp, (unsigned long long)bp);
    const unsigned char* p = (const unsigned char*)(uintptr_t)sp;
    for (uint64_t i = 0; i < size; ++i) fprintf(out, "%02x", p[i]);
    fputc('\n', out);
    FILE* maps = fopen("/proc/self/maps", "r");
    int c;
    while (maps && (c = fgetc(maps)) != EOF) fputc(c, out);
    if (maps) fclose(maps);
    fclose(out);
}

__attribute__((noinline)) void inner_touch(const char* out_path, size_t limit, double* data, int n) {
    for (int i = 0; i < n; ++i) data[i] = i;
    copy_stack(out_path, limit); /* LINE:inner_touch */
    sink += (uint64_t)data[n / 2];
}

__attribute__((noinline)) void outer_loop(const char* out_path, size_t limit) {
    double* data = malloc(4096 * sizeof(double));
    inner_touch(out_path, limit, data, 4096); /* LINE:outer_loop */
    sink += (uint64_t)data[7];
    free(data);
}

int main(int argc, char** argv) {
    if (argc < 2) return 1;
    size_t limit = argc > 2 ? (size_t)strtoull(argv[2], 0, 10) : (size_t)1 << 20;
    outer_loop(argv[1], limit); /* LINE:main */
    sink += 1;
    return 0;
}
