/* A program of known shape for tests/parsers/test_code_location.cpp: main ->
 * outer_loop -> inner_touch -> copy_stack, which copies the user stack and
 * registers as the recorder's sample would carry them, with the process's
 * mappings, into the file named by argv[1] (argv[2]: at most that many
 * bytes of stack):
 *
 *   sink <address of the static `sink`>
 *   regs <ip> <sp> <bp>      (hex)
 *   stack <hex bytes from sp up>
 *   <the lines of /proc/self/maps>
 *
 * With argv[3] "perf", the kernel takes the sample instead: a software
 * page-fault event on this thread (perf_event_open, PERF_SAMPLE_IP |
 * CALLCHAIN | REGS_USER | STACK_USER, as the recorder opens it) while
 * inner_touch first touches fresh pages; the first sample is written as
 * above, with a line "chain <the kernel's frame-pointer call chain>".
 * Exit status 3: the kernel refused the event.
 *
 * The lines the test expects are marked with comments "LINE:<name>". Built
 * with and without frame pointers and -g (tests/parsers/CMakeLists.txt). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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

enum { kRingPages = 64, kPage = 4096 };

/* The page-fault event on this thread, disabled, and its ring buffer. */
static int open_page_fault_event(void** ring) {
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = (1ULL << PERF_REG_X86_IP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_BP);
    a.sample_stack_user = 16384;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.exclude_callchain_kernel = 1;
    a.disabled = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
    if (fd < 0) return -1;
    *ring = mmap(NULL, (1 + kRingPages) * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return *ring == MAP_FAILED ? -1 : fd;
}

/* The first sample of the ring, as the file format above says. */
static void write_first_sample(const char* out_path, void* ring) {
    struct perf_event_mmap_page* meta = ring;
    const unsigned char* data = (const unsigned char*)ring + kPage;
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE), at = 0;
    while (at < head) {
        const struct perf_event_header* h = (const void*)(data + at);
        if (h->type == PERF_RECORD_SAMPLE) {
            const uint64_t* p = (const uint64_t*)(h + 1);
            uint64_t ip = *p++, nr = *p++;
            const uint64_t* chain = p;
            p += nr;
            uint64_t abi = *p++, bp = 0, sp = 0, rip = 0;
            if (abi != PERF_SAMPLE_REGS_ABI_NONE) { bp = *p++; sp = *p++; rip = *p++; }
            uint64_t size = *p++;
            const unsigned char* stack = (const unsigned char*)p;
            uint64_t dyn_size = size ? *(const uint64_t*)(stack + size) : 0;
            FILE* out = fopen(out_path, "w");
            if (!out) exit(2);
            fprintf(out, "sink %llx\nregs %llx %llx %llx\nstack ", (unsigned long long)(uintptr_t)&sink,
                    (unsigned long long)rip, (unsigned long long)sp, (unsigned long long)bp);
            for (uint64_t i = 0; i < dyn_size; ++i) fprintf(out, "%02x", stack[i]);
            fprintf(out, "\nsample_ip %llx\nchain", (unsigned long long)ip);
            for (uint64_t i = 0; i < nr; ++i) fprintf(out, " %llx", (unsigned long long)chain[i]);
            fputc('\n', out);
            FILE* maps = fopen("/proc/self/maps", "r");
            int c;
            while (maps && (c = fgetc(maps)) != EOF) fputc(c, out);
            if (maps) fclose(maps);
            fclose(out);
            return;
        }
        at += h->size;
    }
    exit(4);  /* no sample */
}

__attribute__((noinline)) void inner_touch(const char* out_path, size_t limit, double* data, int n, int perf) {
    void* ring = NULL;
    int fd = perf ? open_page_fault_event(&ring) : -1;
    if (perf && fd < 0) exit(3);
    if (perf) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    for (int i = 0; i < n; ++i) data[i] = i; /* LINE:first_touch */
    if (perf) {
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        write_first_sample(out_path, ring);
    } else {
        copy_stack(out_path, limit); /* LINE:inner_touch */
    }
    sink += (uint64_t)data[n / 2];
}

__attribute__((noinline)) void outer_loop(const char* out_path, size_t limit, int perf) {
    /* Fresh pages: each first store faults. */
    const int n = 4 * kPage / (int)sizeof(double);
    double* data = mmap(NULL, (size_t)n * sizeof(double), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED) exit(2);
    inner_touch(out_path, limit, data, n, perf); /* LINE:outer_loop */
    sink += (uint64_t)data[7];
    munmap(data, (size_t)n * sizeof(double));
}

int main(int argc, char** argv) {
    if (argc < 2) return 1;
    size_t limit = argc > 2 ? (size_t)strtoull(argv[2], 0, 10) : (size_t)1 << 20;
    outer_loop(argv[1], limit, argc > 3 && strcmp(argv[3], "perf") == 0); /* LINE:main */
    sink += 1;
    return 0;
}
