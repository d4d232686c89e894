// What an exec hands to the next image (preload/exec_environment.hpp):
// whether that image will be recorded, and a relative STACKSAGE_OUTPUT made
// absolute so that an image started after a chdir() writes where its parent
// did.
#include "preload/exec_environment.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace stacksage::preload;

namespace {
constexpr char kLibrary[] = "libstacksage-preload.so";
}  // namespace

TEST(PreloadExecEnvironment, AnEnvironmentThatCarriesTheRecorderIsFollowed) {
    char* env[] = {const_cast<char*>("PATH=/bin"),
                   const_cast<char*>("LD_PRELOAD=/opt/asan.so:/opt/stacksage/lib/libstacksage-preload.so"),
                   const_cast<char*>("STACKSAGE_OUTPUT=/tmp/out"), nullptr};
    EXPECT_EQ(why_exec_runs_untraced(env, kLibrary), nullptr);
    // Entries may be separated by spaces too, as the dynamic linker reads them.
    char* spaced[] = {const_cast<char*>("LD_PRELOAD=libx.so libstacksage-preload.so"),
                      const_cast<char*>("STACKSAGE_OUTPUT=out"), nullptr};
    EXPECT_EQ(why_exec_runs_untraced(spaced, kLibrary), nullptr);
}

TEST(PreloadExecEnvironment, EachWayOfDroppingTheRecorderIsNamed) {
    char* cleared[] = {nullptr};
    EXPECT_STREQ(why_exec_runs_untraced(cleared, kLibrary), "the environment passed to exec has no LD_PRELOAD");
    EXPECT_STREQ(why_exec_runs_untraced(nullptr, kLibrary), "the environment passed to exec has no LD_PRELOAD");
    char* emptied[] = {const_cast<char*>("LD_PRELOAD="), const_cast<char*>("STACKSAGE_OUTPUT=/o"), nullptr};
    EXPECT_STREQ(why_exec_runs_untraced(emptied, kLibrary), "the environment passed to exec has no LD_PRELOAD");
    // A name that only ends like the recorder's is another library.
    char* other[] = {const_cast<char*>("LD_PRELOAD=/lib/not-libstacksage-preload.so"),
                     const_cast<char*>("STACKSAGE_OUTPUT=/o"), nullptr};
    EXPECT_STREQ(why_exec_runs_untraced(other, kLibrary),
                 "LD_PRELOAD in the environment passed to exec does not name the recorder");
    char* no_output[] = {const_cast<char*>("LD_PRELOAD=/x/libstacksage-preload.so"), nullptr};
    EXPECT_STREQ(why_exec_runs_untraced(no_output, kLibrary),
                 "the environment passed to exec has no STACKSAGE_OUTPUT");
}

TEST(PreloadExecEnvironment, ARelativeOutputStillAsGivenIsMadeAbsolute) {
    char absolute[] = "STACKSAGE_OUTPUT=/home/u/run/out";
    char* env[] = {const_cast<char*>("A=1"), const_cast<char*>("STACKSAGE_OUTPUT=out"), const_cast<char*>("B=2"),
                   nullptr};
    char* storage[8];
    char* const* result = with_absolute_output(env, "out", absolute, storage, 8);
    ASSERT_EQ(result, storage);
    EXPECT_STREQ(result[0], "A=1");
    EXPECT_STREQ(result[1], absolute);
    EXPECT_STREQ(result[2], "B=2");
    EXPECT_EQ(result[3], nullptr);
    EXPECT_STREQ(env[1], "STACKSAGE_OUTPUT=out");  // the application's array is left as it was
}

TEST(PreloadExecEnvironment, AnOutputTheApplicationChangedOrNoRoomIsLeftAlone) {
    char absolute[] = "STACKSAGE_OUTPUT=/home/u/run/out";
    char* changed[] = {const_cast<char*>("STACKSAGE_OUTPUT=elsewhere"), nullptr};
    char* storage[5];
    EXPECT_EQ(with_absolute_output(changed, "out", absolute, storage, 4), nullptr);
    char* none[] = {const_cast<char*>("A=1"), nullptr};
    EXPECT_EQ(with_absolute_output(none, "out", absolute, storage, 4), nullptr);
    char* big[] = {const_cast<char*>("A=1"), const_cast<char*>("B=1"), const_cast<char*>("STACKSAGE_OUTPUT=out"),
                   const_cast<char*>("C=1"), nullptr};
    EXPECT_EQ(with_absolute_output(big, "out", absolute, storage, 4), nullptr);  // 5 pointers needed
    EXPECT_NE(with_absolute_output(big, "out", absolute, storage, 5), nullptr);
    EXPECT_EQ(with_absolute_output(nullptr, "out", absolute, storage, 4), nullptr);
}
