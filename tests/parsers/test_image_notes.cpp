// The notes one process image's log gives the report: one per thing found,
// none for a clean log, in a fixed order, each at its level.
#include "parsers/image_notes.hpp"

#include <gtest/gtest.h>

namespace stacksage {
namespace {

TEST(ImageNotes, ACleanLogHasNone) { EXPECT_TRUE(notes_of_image(ProcessImage{}).empty()); }

TEST(ImageNotes, EveryCountGivesOneNoteInTheReportsOrder) {
    ProcessImage image;
    image.summary.torn_last_line = true;
    image.summary.torn_lines = 2;
    image.summary.unknown_events = {{"gpu_launch", 3}, {"io", 1}};
    image.summary.newest_version = kEventLogSchemaVersion + 1;
    image.summary.negative_time_events = 4;
    image.summary.truncated_events = 5;
    image.summary.invalid_id_events = 6;
    image.invalid_tids = 7;
    image.duplicate_tid_starts = 8;
    image.duplicate_tid_starts_ignored = 9;
    image.masks_unreadable = 10;
    image.masks_clipped = 11;
    image.highest_clipped_cpu = 5000000;
    image.masks_changed_unseen = 2;
    image.mask_changed_unseen_example = "thread 4712: 0-7 recorded last, 3 at its end";
    image.threads_untraced = 12;
    image.notes = {"the interpreter's own note"};

    const std::vector<LoadNote> notes = notes_of_image(image);
    ASSERT_EQ(notes.size(), 15u);
    using L = LoadNote::Level;
    const L levels[] = {L::Info,    L::Info,    L::Info,    L::Info,    L::Warning, L::Info, L::Warning, L::Warning,
                        L::Warning, L::Warning, L::Warning, L::Warning, L::Info,    L::Warning, L::Info};
    const char* starts[] = {"the last line is torn",
                            "2 torn line(s) among NUL bytes",
                            "events unknown to this stacksage were skipped: gpu_launch (3), io (1); a newer",
                            "written with event-log schema ",
                            "4 event(s) with a negative time",
                            "5 event(s) were too long",
                            "6 event(s) with a pid or tid of 0 or less",
                            "7 thread(s) listed in MPI snapshots",
                            "8 thread_start event(s) name the tid of a thread of this process still running",
                            "9 thread_start event(s) name the tid of the main thread",
                            "10 cpuset field(s) are not CPU lists",
                            "11 mask(s) name CPUs numbered 16384 or more (up to 5000000)",
                            "2 thread(s) ended with a CPU mask other than the one recorded last (thread 4712: 0-7 "
                            "recorded last, 3 at its end): something the recorder does not intercept",
                            "12 thread creation(s) could not be followed",
                            "the interpreter's own note"};
    for (std::size_t i = 0; i < notes.size(); ++i) {
        EXPECT_EQ(notes[i].level, levels[i]) << i;
        EXPECT_TRUE(notes[i].message.starts_with(starts[i])) << i << ": " << notes[i].message;
        EXPECT_TRUE(notes[i].file.empty()) << i;
    }
}

TEST(ImageNotes, OnlyTheCountsThatAreSetGiveNotes) {
    ProcessImage image;
    image.threads_untraced = 1;
    image.summary.newest_version = kEventLogSchemaVersion;  // the version read: nothing to say
    const std::vector<LoadNote> notes = notes_of_image(image);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].level, LoadNote::Level::Warning);
    EXPECT_EQ(notes[0].message,
              "1 thread creation(s) could not be followed by the recorder; those threads are missing");
}

}  // namespace
}  // namespace stacksage
