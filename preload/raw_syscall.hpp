// Raw Linux system calls for the preload.
//
// Why not the libc wrappers: they set errno (which the application may be
// reading around our interception), several are cancellation points (a
// pthread_cancel must never land inside the recorder), and `syscall` itself
// is interposed by us. These inline versions return -errno on failure and
// touch nothing but registers, so they are safe in signal handlers, in the
// child of fork() and before the recorder is initialised.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace stacksage::preload::raw {

#if defined(__x86_64__)
inline long syscall6(long n, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                     long a6 = 0) {
    long ret;
    register long r10 __asm__("r10") = a4;
    register long r8 __asm__("r8") = a5;
    register long r9 __asm__("r9") = a6;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
inline long syscall6(long n, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                     long a6 = 0) {
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a1;
    register long x1 __asm__("x1") = a2;
    register long x2 __asm__("x2") = a3;
    register long x3 __asm__("x3") = a4;
    register long x4 __asm__("x4") = a5;
    register long x5 __asm__("x5") = a6;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
#error "stacksage's preload supports x86_64 and aarch64 Linux"
#endif

inline long write(int fd, const void* buf, std::size_t len) {
    return syscall6(SYS_write, fd, reinterpret_cast<long>(buf), static_cast<long>(len));
}
inline long read(int fd, void* buf, std::size_t len) {
    return syscall6(SYS_read, fd, reinterpret_cast<long>(buf), static_cast<long>(len));
}
inline long openat(int dirfd, const char* path, int flags, int mode = 0) {
    return syscall6(SYS_openat, dirfd, reinterpret_cast<long>(path), flags, mode);
}
inline long close(int fd) { return syscall6(SYS_close, fd); }
inline long mkdirat(int dirfd, const char* path, int mode) {
    return syscall6(SYS_mkdirat, dirfd, reinterpret_cast<long>(path), mode);
}
inline long linkat(int olddir, const char* oldpath, int newdir, const char* newpath) {
    return syscall6(SYS_linkat, olddir, reinterpret_cast<long>(oldpath), newdir,
                    reinterpret_cast<long>(newpath), 0);
}
inline long unlinkat(int dirfd, const char* path, int flags) {
    return syscall6(SYS_unlinkat, dirfd, reinterpret_cast<long>(path), flags);
}
inline long readlinkat(int dirfd, const char* path, char* buf, std::size_t len) {
    return syscall6(SYS_readlinkat, dirfd, reinterpret_cast<long>(path),
                    reinterpret_cast<long>(buf), static_cast<long>(len));
}
inline long fcntl(int fd, int cmd, long arg) { return syscall6(SYS_fcntl, fd, cmd, arg); }
inline long getdents64(int fd, void* buf, std::size_t len) {
    return syscall6(SYS_getdents64, fd, reinterpret_cast<long>(buf), static_cast<long>(len));
}
inline long pwrite(int fd, const void* buf, std::size_t len, std::uint64_t offset) {
    return syscall6(SYS_pwrite64, fd, reinterpret_cast<long>(buf), static_cast<long>(len),
                    static_cast<long>(offset));
}
inline long pread(int fd, void* buf, std::size_t len, std::uint64_t offset) {
    return syscall6(SYS_pread64, fd, reinterpret_cast<long>(buf), static_cast<long>(len),
                    static_cast<long>(offset));
}
inline long fallocate(int fd, int mode, std::uint64_t offset, std::uint64_t len) {
    return syscall6(SYS_fallocate, fd, mode, static_cast<long>(offset), static_cast<long>(len));
}
inline long ftruncate(int fd, std::uint64_t len) {
    return syscall6(SYS_ftruncate, fd, static_cast<long>(len));
}
// Returns the address, or -errno (a value in [-4095, -1]).
inline long mmap(void* addr, std::size_t len, int prot, int flags, int fd, std::uint64_t offset) {
    return syscall6(SYS_mmap, reinterpret_cast<long>(addr), static_cast<long>(len), prot, flags,
                    fd, static_cast<long>(offset));
}
inline long munmap(void* addr, std::size_t len) {
    return syscall6(SYS_munmap, reinterpret_cast<long>(addr), static_cast<long>(len));
}
inline long fstat(int fd, void* st) { return syscall6(SYS_fstat, fd, reinterpret_cast<long>(st)); }
inline long fstatat(int dirfd, const char* path, void* st, int flags) {
    return syscall6(SYS_newfstatat, dirfd, reinterpret_cast<long>(path), reinterpret_cast<long>(st), flags);
}
inline int getpid() { return static_cast<int>(syscall6(SYS_getpid)); }
inline int getppid() { return static_cast<int>(syscall6(SYS_getppid)); }
inline int gettid() { return static_cast<int>(syscall6(SYS_gettid)); }
// Returns the number of bytes the kernel wrote into mask, or -errno.
inline long sched_getaffinity(int tid, std::size_t size, void* mask) {
    return syscall6(SYS_sched_getaffinity, tid, static_cast<long>(size),
                    reinterpret_cast<long>(mask));
}
inline long getrusage(int who, void* usage) {
    return syscall6(SYS_getrusage, who, reinterpret_cast<long>(usage));
}
[[noreturn]] inline void exit_group(int status) {
    for (;;) syscall6(SYS_exit_group, status);
}
inline long tgkill(int pid, int tid, int sig) { return syscall6(SYS_tgkill, pid, tid, sig); }
inline long uname(void* buf) { return syscall6(SYS_uname, reinterpret_cast<long>(buf)); }
inline long getrlimit(int resource, void* rlim) {
    return syscall6(SYS_prlimit64, 0, resource, 0, reinterpret_cast<long>(rlim));
}

// Writes all of buf, retrying on EINTR and short writes. A lifecycle line is
// far below a page, so on a local file one call is all it ever takes.
inline long write_all(int fd, const char* buf, std::size_t len) {
    std::size_t done = 0;
    while (done < len) {
        long n = write(fd, buf + done, len - done);
        if (n == -4 /* EINTR */) continue;
        if (n <= 0) return n < 0 ? n : -5 /* EIO */;
        done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
}

// The same at a file offset (pwrite): all of buf, retrying on EINTR and
// short writes. \return the bytes written, or -errno (-EIO for a write of 0).
inline long pwrite_all(int fd, const char* buf, std::size_t len, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < len) {
        long n = pwrite(fd, buf + done, len - done, offset + done);
        if (n == -4 /* EINTR */) continue;
        if (n <= 0) return n < 0 ? n : -5 /* EIO */;
        done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
}

// Reads a whole small file (procfs, sysfs) into buf, NUL-terminated.
// Returns the length read, or -errno.
inline long read_small_file(int dirfd, const char* path, char* buf, std::size_t cap) {
    if (cap == 0) return -22;
    long fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return fd;
    std::size_t len = 0;
    while (len + 1 < cap) {
        long n = read(static_cast<int>(fd), buf + len, cap - 1 - len);
        if (n == -4) continue;
        if (n <= 0) break;
        len += static_cast<std::size_t>(n);
    }
    close(static_cast<int>(fd));
    buf[len] = '\0';
    return static_cast<long>(len);
}

}  // namespace stacksage::preload::raw
