// The call sites and data objects of one sampling summary, resolved after
// the run: each site's call path (the kernel's frame-pointer chain the
// recorder kept, or its stack copy unwound here, StackUnwinder) symbolized
// (Symbolizer), its innermost frame in user code picked as "the site"; each
// object given a label ("heap block of 80 MiB allocated at mesh.c:88 in
// init_mesh", "static `mesh` in app", "stack of thread 1234"). What could not
// be unwound or symbolized is counted with its reason and said in notes().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "parsers/code_location/code_location.hpp"
#include "parsers/code_location/module_file.hpp"
#include "parsers/code_location/module_symbols.hpp"
#include "parsers/code_location/process_address_space.hpp"
#include "parsers/code_location/stack_unwinder.hpp"
#include "parsers/code_location/symbolizer.hpp"
#include "parsers/sample_summary.hpp"

namespace stacksage {

struct ResolvedSite {
    std::int64_t id = -1;
    std::vector<CodeLocation> call_path;  // the sampled instruction first, then its callers outward
    std::size_t user_frame = 0;           // call_path index of the innermost frame in user code
    std::string unwind;                   // the recorder's word: "callchain", "stack", "none"
    UnwindOutcome outcome = UnwindOutcome::Complete;  // with unwind "stack": how the unwind ended
    std::uint64_t samples = 0;

    // The innermost frame in user code (the site named in reports).
    const CodeLocation& site() const { return call_path[user_frame]; }
    // "init_mesh (mesh.c:102) < main (mesh.c:140)": at most max_frames
    // frames from the site outward, "< ..." when there are more.
    std::string call_path_text(std::size_t max_frames = 8) const;
};

struct ResolvedObject {
    std::int64_t id = -1;
    std::string kind;   // the recorder's word: "heap", "mmap", "static", "stack", "unknown"
    std::string label;  // "heap block of 80 MiB allocated at mesh.c:88 in init_mesh"
    std::string name;   // for sentences: "`mesh`", "the heap block allocated at mesh.c:88 in init_mesh"
};

// "mesh.c:88 in init_mesh", "init_mesh in app", "app+0x1f40".
std::string where(const CodeLocation& location);
// True for system libraries and the recorder itself (/lib, /usr/lib, ld.so,
// libstacksage), whose frames are passed over when picking a site.
bool is_system_module(std::string_view path);

// What resolving one summary leaves for the next ones of the same run: the
// opened module files and their symbols, by the files' own addresses.
struct CodeFilesCache {
    ModuleFiles files;
    ModuleSymbolTables symbols;
};

class AttributionResolver {
public:
    // Resolves every site and object of summary (which must outlive it).
    // shared: the cache of the run's other summaries (it must outlive the
    // resolver); nullptr: one of its own.
    explicit AttributionResolver(const SampleSummary& summary, CodeFilesCache* shared = nullptr);

    // \return the resolved site or object with this id; nullptr for -1 or an id the summary lacks.
    const ResolvedSite* site(std::int64_t id) const;
    const ResolvedObject* object(std::int64_t id) const;

    // Sites whose stack copy could not be unwound to the end, by outcome.
    const std::map<UnwindOutcome, std::uint64_t>& unwind_failures() const { return unwind_failures_; }
    // Frames that lack a function or a line, by reason, with the modules behind them.
    const std::map<CodeGap, std::uint64_t>& frame_gaps() const { return frame_gaps_; }
    const std::map<CodeGap, std::set<std::string>>& gap_modules() const { return gap_modules_; }

    // Complete sentences for the report's notes: per thread, the samples
    // whose call path was cut short and why; per reason, the modules left at
    // module + offset or function only; what the recorder dropped.
    std::vector<std::string> notes() const;

private:
    const SampleSummary& summary_;
    ProcessAddressSpace space_;
    std::unique_ptr<CodeFilesCache> own_cache_;
    CodeFilesCache& cache_;
    Symbolizer symbols_;
    StackUnwinder unwinder_;
    std::map<std::int64_t, ResolvedSite> sites_;
    std::map<std::int64_t, ResolvedObject> objects_;
    std::map<UnwindOutcome, std::uint64_t> unwind_failures_;
    std::map<CodeGap, std::uint64_t> frame_gaps_;
    std::map<CodeGap, std::set<std::string>> gap_modules_;

    ResolvedSite resolve_site(const SampledSite& site);
    ResolvedObject resolve_object(const SampledObject& object);
};

}  // namespace stacksage
