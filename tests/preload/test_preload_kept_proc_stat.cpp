// The recorder's kept /proc/self/stat (preload/kept_proc_stat.hpp): read
// again and again without opening a descriptor, so it never takes, even for
// a moment, a low number the application is about to get.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <string>

#include "preload/kept_proc_stat.hpp"

using namespace stacksage::preload;

TEST(KeptProcStat, IsReadWithoutOpeningADescriptor) {
    keep_process_stat_open();
    // No number left to open: a read that opened the file would fail (EMFILE).
    const int lowest_free = ::dup(0);
    ASSERT_GE(lowest_free, 0);
    ::close(lowest_free);
    rlimit saved{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
    rlimit none_left = saved;
    none_left.rlim_cur = static_cast<rlim_t>(lowest_free);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &none_left), 0);
    ASSERT_LT(::dup(0), 0) << "the limit leaves a number free";
    char text[1024];
    const long first = read_process_stat(text, sizeof text);
    const std::string first_text = first > 0 ? std::string(text, static_cast<std::size_t>(first)) : "";
    const long again = read_process_stat(text, sizeof text);
    ::setrlimit(RLIMIT_NOFILE, &saved);
    ASSERT_GT(first, 0) << "read_process_stat opened the file: " << first;
    EXPECT_GT(again, 0);
    EXPECT_EQ(first_text.rfind(std::to_string(::getpid()) + " (", 0), 0u) << first_text;
    EXPECT_EQ(std::string(text).rfind(std::to_string(::getpid()) + " (", 0), 0u) << text;
}

// The application closed it (closefrom): still read, by opening it that once.
TEST(KeptProcStat, IsStillReadOnceTheApplicationClosedIt) {
    keep_process_stat_open();
    ::closefrom(3);
    char text[1024];
    ASSERT_GT(read_process_stat(text, sizeof text), 0);
    EXPECT_EQ(std::string(text).rfind(std::to_string(::getpid()) + " (", 0), 0u) << text;
}
