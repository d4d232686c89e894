// Loading hwloc topologies: reading the file, the checks (hwloc_xml_check.cpp),
// hwloc's settings, the conversion.
//
// The XML file is read once, here, and handed to hwloc as a buffer: every
// problem users can cause is found on that one copy and reported with the
// file's name, before hwloc (which reports failures as a bare EINVAL, and may
// print to stderr) ever sees it.
#include "parsers/hwloc_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "parsers/hwloc_convert.hpp"
#include "parsers/hwloc_load_error.hpp"
#include "parsers/input_file.hpp"

namespace stacksage {

// ---- reading ---------------------------------------------------------------

Result<std::string> read_hwloc_xml_file(const std::string& path) {
    std::string text;
    if (auto problem = read_input_file(path, input_limits::kTopologyXml, "an hwloc topology", text)) {
        using Kind = InputProblem::Kind;
        switch (problem->kind) {
            case Kind::Missing: return hwloc_load_error(path, problem->reason, "check the path");
            case Kind::Directory:
                return hwloc_load_error(path, problem->reason, "give the path of an XML file written by `lstopo FILE.xml`");
            case Kind::NotRegular: return hwloc_load_error(path, problem->reason, "save the topology into a file first");
            case Kind::TooLarge: return hwloc_load_error(path, problem->reason, "give an hwloc XML topology file");
            case Kind::Unreadable:
                return hwloc_load_error(path, problem->reason,
                                        problem->error_number == EACCES || problem->error_number == EPERM
                                            ? "make the file readable (chmod +r) or copy it somewhere readable"
                                            : "check the path and that the file is readable");
        }
    }
    // Said as what was read: files of /proc report a size of 0 whatever
    // they hold, so an empty file is one that gave no byte.
    if (text.empty()) return hwloc_load_error(path, "the file is empty (reading it gave no byte)", kReexport);
    return text;
}

namespace {

// ---- hwloc -------------------------------------------------------------------

// How hwloc should read files, set once in the environment (hwloc has no
// API for either) and without overwriting what the user set:
//  - its built-in XML reader: faster than libxml2 for its own files;
//  - no guessed memory tiers: the file is the truth, and hwloc 2.9's guess
//    asserts (aborting the process) when a file's memory objects leave no
//    NUMA node, e.g. a memory-side cache whose NUMA node hwloc dropped
//    (found by fuzzing). Models of the 531 real XMLs of tests/data are the
//    same with and without the guess.
void configure_hwloc_for_files() {
    static std::once_flag once;
    std::call_once(once, [] {
        ::setenv("HWLOC_LIBXML_IMPORT", "0", 0);
        ::setenv("HWLOC_MEMTIERS_GUESS", "none", 0);
    });
}

// hwloc loads its plugins (dlopen) when the first topology is created and
// unloads them when the last one is destroyed: 3 ms per load, more than
// loading most XML files. One empty topology, kept until the process exits,
// keeps them loaded.
void keep_hwloc_components_loaded() {
    struct Anchor {
        hwloc_topology_t topo = nullptr;
        Anchor() { hwloc_topology_init(&topo); }
        ~Anchor() {
            if (topo) hwloc_topology_destroy(topo);
        }
    };
    static Anchor anchor;
}

class TopologyHandle {
public:
    TopologyHandle() = default;
    TopologyHandle(const TopologyHandle&) = delete;
    TopologyHandle& operator=(const TopologyHandle&) = delete;
    ~TopologyHandle() {
        if (topo_) hwloc_topology_destroy(topo_);
    }
    bool init() {
        keep_hwloc_components_loaded();
        return hwloc_topology_init(&topo_) == 0;
    }
    hwloc_topology_t get() const { return topo_; }

private:
    hwloc_topology_t topo_ = nullptr;
};

Result<Model> to_model(hwloc_topology_t topo, const HwlocLoadOptions& options) {
    Model model;
    const ComponentId root = model.add_component(ComponentType::Topology, kNoComponent);
    Result<ComponentId> node = add_hwloc_topology(model, topo, root, options);
    if (!node) return node.error();
    return model;
}

}  // namespace

Result<Model> load_hwloc_xml(const std::string& path, const HwlocLoadOptions& options) {
    Result<std::string> text = read_hwloc_xml_file(path);
    if (!text) return text.error();
    return load_hwloc_xml_text(*text, path, options);
}

Result<Model> load_hwloc_xml_text(const std::string& text, const std::string& name, const HwlocLoadOptions& options) {
    if (Status checked = check_hwloc_xml_text(text, name); !checked) return checked.error();

    configure_hwloc_for_files();
    TopologyHandle topo;
    if (!topo.init()) return hwloc_load_error(name, "hwloc could not create a topology (out of memory?)", "try again");
    // The file is the truth: keep every object it has; I/O only on request.
    hwloc_topology_set_all_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!options.include_io) hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
    // hwloc's reader takes only ' ', '\t' and '\n' for white space: it
    // refuses a file with Windows line ends, and a '\r' inside a tag makes it
    // lose its place and crash (found by fuzzing). XML reads every '\r' as
    // white space, and so do we: hwloc gets a copy with spaces instead
    // (same length, so positions stay the same).
    std::string without_cr;
    const std::string* for_hwloc = &text;
    if (text.find('\r') != std::string::npos) {
        without_cr = text;
        std::replace(without_cr.begin(), without_cr.end(), '\r', ' ');
        for_hwloc = &without_cr;
    }
    // The size includes the terminating NUL, as hwloc's own exports do.
    if (hwloc_topology_set_xmlbuffer(topo.get(), for_hwloc->c_str(), static_cast<int>(for_hwloc->size() + 1)) < 0 ||
        hwloc_topology_load(topo.get()) < 0) {
        const int err = errno;
        return hwloc_load_error(name,
                          std::string("hwloc rejected the XML (") + std::strerror(err) +
                              "): it is malformed, or describes an inconsistent topology",
                          "run `HWLOC_XML_VERBOSE=1 lstopo-no-graphics -i FILE` for hwloc's diagnostics, "
                          "or export the topology again");
    }
    // What the conversion refuses (a root that is not a Machine) comes from
    // the file: say which one.
    Result<Model> model = to_model(topo.get(), options);
    if (!model) return hwloc_load_error(name, model.error().message, kReexport);
    return model;
}

Result<Model> discover_this_machine(const HwlocLoadOptions& options) {
    TopologyHandle topo;
    if (!topo.init()) return make_error("hwloc could not create a topology (out of memory?); try again");
    hwloc_topology_set_all_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
    // hwloc's guesses of groups are only kept when they add structure.
    hwloc_topology_set_type_filter(topo.get(), HWLOC_OBJ_GROUP, HWLOC_TYPE_FILTER_KEEP_STRUCTURE);
    hwloc_topology_set_io_types_filter(topo.get(), options.include_io ? HWLOC_TYPE_FILTER_KEEP_IMPORTANT
                                                                      : HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo.get()) < 0) {
        const int err = errno;
        return make_error(std::string("hwloc could not discover this machine's topology (") + std::strerror(err) +
                          "); check that /sys and /proc are mounted, or load an XML file written by "
                          "`lstopo FILE.xml` on this machine instead");
    }
    return to_model(topo.get(), options);
}

}  // namespace stacksage
