#include "analysis/runtime_stacking.hpp"

#include <algorithm>
#include <set>

namespace stacksage {

std::string_view kNoStacking() { return "no runtime stacking"; }

RuntimeStacking summarize_runtime_stacking(const RunView& view, std::uint32_t process) {
    const ProcessView& p = view.processes[process];
    RuntimeStacking s;
    s.process = process;
    auto use = [&](const RuntimeName& r) -> RuntimeUse& {
        for (RuntimeUse& u : s.runtimes)
            if (u.name == r.name) return u;
        s.runtimes.push_back({r.name, r.family, 0, 0});
        return s.runtimes.back();
    };
    for (std::uint32_t f : p.flows) {
        RuntimeUse& u = use(view.runtime_of(view.flows[f]));
        ++u.flows;
        if (!view.flows[f].service) ++u.active;
    }
    const bool has_mpi = std::any_of(s.runtimes.begin(), s.runtimes.end(),
                                     [](const RuntimeUse& u) { return u.family == RuntimeFamily::MPI; });
    if (p.mpi && !has_mpi) use({"MPI", RuntimeFamily::MPI});
    std::stable_sort(s.runtimes.begin(), s.runtimes.end(), [](const RuntimeUse& a, const RuntimeUse& b) {
        const bool aa = a.family == RuntimeFamily::Application, ba = b.family == RuntimeFamily::Application;
        if (aa != ba) return aa;
        return a.flows > b.flows;
    });

    // Programming models are counted by family (Open MPI's own threads and
    // its PMIx helpers are one model, MPI). The application counts as a model
    // of its own only when it created threads besides its main thread.
    std::set<RuntimeFamily> families;
    bool library = false;
    for (const RuntimeUse& u : s.runtimes) {
        if (u.family == RuntimeFamily::Application) {
            if (u.flows > 1) families.insert(u.family);
            continue;
        }
        if (u.family == RuntimeFamily::Unknown) continue;  // threads of unknown origin decide nothing
        families.insert(u.family);
        if (u.family == RuntimeFamily::MathLibrary || u.family == RuntimeFamily::Accelerator ||
            u.family == RuntimeFamily::Library)
            library = true;
    }
    const std::size_t models = families.size();
    if (models <= 1)
        s.category = std::string(kNoStacking());
    else if (library)
        s.category = "explicit inter-application through a library";
    else
        s.category = "explicit intra-application";
    return s;
}

}  // namespace stacksage
