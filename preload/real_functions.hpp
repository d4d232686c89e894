// The definitions our interposers forward to ("the next one" after us).
//
// Each is resolved on first use with dlsym(RTLD_NEXT), not in the
// constructor: another library's constructor may call pthread_create before
// ours has run, and the forwarders must work then too. The pointers are
// atomics so two threads resolving at once both see a whole pointer.
#pragma once

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <atomic>

namespace stacksage::preload::real {

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using PthreadExit = void (*)(void*);
using PthreadJoin = int (*)(pthread_t, void**);
using PthreadTimedjoin = int (*)(pthread_t, void**, const struct timespec*);
using PthreadClockjoin = int (*)(pthread_t, void**, clockid_t, const struct timespec*);
using PthreadSetname = int (*)(pthread_t, const char*);
using SchedSetaffinity = int (*)(pid_t, size_t, const cpu_set_t*);
using PthreadSetaffinity = int (*)(pthread_t, size_t, const cpu_set_t*);
using Syscall = long (*)(long, ...);
using Fork = pid_t (*)();
using Execve = int (*)(const char*, char* const[], char* const[]);
using Execvpe = int (*)(const char*, char* const[], char* const[]);
using Execv = int (*)(const char*, char* const[]);
using Fexecve = int (*)(int, char* const[], char* const[]);
using Execveat = int (*)(int, const char*, char* const[], char* const[], int);
using ExitFn = void (*)(int);
using Sigaction = int (*)(int, const struct sigaction*, struct sigaction*);
using Signal = sighandler_t (*)(int, sighandler_t);
using Sigignore = int (*)(int);
using Siginterrupt = int (*)(int, int);
using MainFn = int (*)(int, char**, char**);
using Mmap = void* (*)(void*, size_t, int, int, int, off_t);
using Munmap = int (*)(void*, size_t);
using LibcStartMain = int (*)(MainFn, int, char**, void (*)(), void (*)(), void (*)(), void*);

// Looks a symbol up once; nullptr only if no later object defines it.
void* resolve(std::atomic<void*>& slot, const char* name);

#define STACKSAGE_REAL_FUNCTION(Type, fn)                                      \
    inline Type fn() {                                                         \
        static std::atomic<void*> slot{nullptr};                               \
        void* p = slot.load(std::memory_order_acquire);                        \
        if (p == nullptr) p = resolve(slot, #fn);                              \
        return reinterpret_cast<Type>(p);                                      \
    }

STACKSAGE_REAL_FUNCTION(PthreadCreate, pthread_create)
STACKSAGE_REAL_FUNCTION(PthreadExit, pthread_exit)
STACKSAGE_REAL_FUNCTION(PthreadJoin, pthread_join)
STACKSAGE_REAL_FUNCTION(PthreadTimedjoin, pthread_timedjoin_np)
STACKSAGE_REAL_FUNCTION(PthreadClockjoin, pthread_clockjoin_np)
STACKSAGE_REAL_FUNCTION(PthreadSetname, pthread_setname_np)
STACKSAGE_REAL_FUNCTION(SchedSetaffinity, sched_setaffinity)
STACKSAGE_REAL_FUNCTION(PthreadSetaffinity, pthread_setaffinity_np)
STACKSAGE_REAL_FUNCTION(Syscall, syscall)
STACKSAGE_REAL_FUNCTION(Fork, fork)
STACKSAGE_REAL_FUNCTION(Execve, execve)
STACKSAGE_REAL_FUNCTION(Execvpe, execvpe)
STACKSAGE_REAL_FUNCTION(Execv, execv)
STACKSAGE_REAL_FUNCTION(Execv, execvp)
STACKSAGE_REAL_FUNCTION(Fexecve, fexecve)
STACKSAGE_REAL_FUNCTION(Execveat, execveat)
STACKSAGE_REAL_FUNCTION(ExitFn, _exit)
STACKSAGE_REAL_FUNCTION(ExitFn, _Exit)
STACKSAGE_REAL_FUNCTION(Sigaction, sigaction)
STACKSAGE_REAL_FUNCTION(Signal, signal)
STACKSAGE_REAL_FUNCTION(Signal, ssignal)
STACKSAGE_REAL_FUNCTION(Signal, bsd_signal)
STACKSAGE_REAL_FUNCTION(Signal, __sysv_signal)
STACKSAGE_REAL_FUNCTION(Signal, sysv_signal)
STACKSAGE_REAL_FUNCTION(Signal, sigset)
STACKSAGE_REAL_FUNCTION(Sigignore, sigignore)
STACKSAGE_REAL_FUNCTION(Siginterrupt, siginterrupt)
STACKSAGE_REAL_FUNCTION(LibcStartMain, __libc_start_main)
STACKSAGE_REAL_FUNCTION(Mmap, mmap)
STACKSAGE_REAL_FUNCTION(Munmap, munmap)

#undef STACKSAGE_REAL_FUNCTION

}  // namespace stacksage::preload::real
