#include "parsers/image_notes.hpp"

#include <cstdint>
#include <string>
#include <string_view>

#include "parsers/event_log_reader.hpp"

namespace stacksage {

namespace {

using Level = LoadNote::Level;

// One row per thing a log can hold that the user should hear of. A row
// gives a count (no note when it is 0) and either the text that follows the
// count ("3" + " torn line(s) ...") or, where the count alone does not say
// it, a function that writes the whole message.
struct ImageNoteRule {
    Level level;
    std::uint64_t (*count)(const ProcessImage&);
    std::string_view after_count;
    std::string (*message)(const ProcessImage&) = nullptr;
};

std::string unknown_events_message(const ProcessImage& image) {
    std::string names;
    for (const auto& [name, count] : image.summary.unknown_events)
        names += (names.empty() ? "" : ", ") + name + " (" + std::to_string(count) + ")";
    return "events unknown to this stacksage were skipped: " + names + "; a newer recorder wrote them";
}

std::string newer_schema_message(const ProcessImage& image) {
    return "written with event-log schema " + std::to_string(image.summary.newest_version) +
           " (this stacksage reads " + std::to_string(kEventLogSchemaVersion) +
           "); read as far as the fields it knows";
}

std::string clipped_masks_message(const ProcessImage& image) {
    return std::to_string(image.masks_clipped) + " mask(s) name CPUs numbered " + std::to_string(kMaxCpuInLog) +
           " or more (up to " + std::to_string(image.highest_clipped_cpu) +
           "), which no Linux kernel numbers: those CPUs are left out (a mask left empty counts as not recorded)";
}

std::string masks_changed_unseen_message(const ProcessImage& image) {
    return std::to_string(image.masks_changed_unseen) +
           " thread(s) ended with a CPU mask other than the one recorded last (" +
           image.mask_changed_unseen_example +
           "): something the recorder does not intercept changed it (a raw system call, `taskset -p`, a change of "
           "the cgroup's cpuset); when is not known, so their placement is judged with the masks recorded";
}

const ImageNoteRule kImageNoteRules[] = {
    {Level::Info, [](const ProcessImage& i) -> std::uint64_t { return i.summary.torn_last_line; },
     "",
     [](const ProcessImage&) -> std::string {
         return "the last line is torn (the process was killed while writing, or the disk filled up); it is "
                "ignored";
     }},
    {Level::Info, [](const ProcessImage& i) -> std::uint64_t { return i.summary.torn_lines; },
     " torn line(s) among NUL bytes (the process was killed while writing them); they are ignored"},
    {Level::Info, [](const ProcessImage& i) -> std::uint64_t { return i.summary.unknown_events.size(); }, "",
     unknown_events_message},
    {Level::Info,
     [](const ProcessImage& i) -> std::uint64_t { return i.summary.newest_version > kEventLogSchemaVersion; }, "",
     newer_schema_message},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.summary.negative_time_events; },
     " event(s) with a negative time (\"t\") were skipped: the recorder never writes one, so the file was "
     "altered after the run"},
    {Level::Info, [](const ProcessImage& i) -> std::uint64_t { return i.summary.truncated_events; },
     " event(s) were too long for the recorder and lost their details"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.summary.invalid_id_events; },
     " event(s) with a pid or tid of 0 or less were skipped: the recorder writes the kernel's ids, always "
     "positive, so the file was altered after the run"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.invalid_tids; },
     " thread(s) listed in MPI snapshots have a tid of 0 or less (the recorder lists the kernel's tasks, always "
     "positive): they are ignored"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.duplicate_tid_starts; },
     " thread_start event(s) name the tid of a thread of this process still running (its thread_end is missing, "
     "or the file was altered): the kernel gives a tid to one thread at a time, so the earlier thread is taken to "
     "end where the later one starts"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.duplicate_tid_starts_ignored; },
     " thread_start event(s) name the tid of the main thread, or of a thread that started later, which the "
     "kernel cannot have given twice: they are ignored"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.masks_unreadable; },
     " cpuset field(s) are not CPU lists the recorder writes (junk, or CPU numbers of a million and more): they "
     "are ignored, as if the mask were not recorded"},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.masks_clipped; }, "",
     clipped_masks_message},
    {Level::Info, [](const ProcessImage& i) -> std::uint64_t { return i.masks_changed_unseen; }, "",
     masks_changed_unseen_message},
    {Level::Warning, [](const ProcessImage& i) -> std::uint64_t { return i.threads_untraced; },
     " thread creation(s) could not be followed by the recorder; those threads are missing"},
};

}  // namespace

std::vector<LoadNote> notes_of_image(const ProcessImage& image) {
    std::vector<LoadNote> notes;
    for (const ImageNoteRule& rule : kImageNoteRules) {
        const std::uint64_t n = rule.count(image);
        if (n == 0) continue;
        notes.push_back({rule.level, {},
                         rule.message ? rule.message(image) : std::to_string(n) + std::string(rule.after_count)});
    }
    for (const std::string& n : image.notes) notes.push_back({Level::Info, {}, n});
    return notes;
}

}  // namespace stacksage
