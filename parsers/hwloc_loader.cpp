// Loading hwloc topologies: checks on the input, hwloc's settings, conversion.
//
// The XML file is read once, here, and handed to hwloc as a buffer: every
// problem users can cause is found on that one copy and reported with the
// file's name, before hwloc (which reports failures as a bare EINVAL, and may
// print to stderr) ever sees it.
#include "parsers/hwloc_loader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>

#include "core/cpuset.hpp"
#include "parsers/hwloc_convert.hpp"
#include "parsers/xml_wellformed.hpp"

namespace stacksage {
namespace {

Error load_error(const std::string& path, std::string_view reason, std::string_view what_to_do) {
    std::string message = "cannot load hwloc topology from '";
    message += path;
    message += "': ";
    message += reason;
    message += "; ";
    message += what_to_do;
    return make_error(std::move(message));
}

constexpr std::string_view kReexport = "export it again with `lstopo FILE.xml` (hwloc 2.x)";

// ---- reading ---------------------------------------------------------------

Result<std::string> read_whole_file(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        const int err = errno;
        if (err == ENOENT) return load_error(path, "no such file", "check the path");
        return load_error(path, std::strerror(err), "check the path and its permissions");
    }
    if (S_ISDIR(info.st_mode))
        return load_error(path, "it is a directory", "give the path of an XML file written by `lstopo FILE.xml`");
    if (!S_ISREG(info.st_mode))
        return load_error(path, "it is not a regular file (a device, FIFO or socket)",
                          "save the topology into a file first");
    if (info.st_size == 0) return load_error(path, "the file is empty", kReexport);
    if (info.st_size >= INT_MAX) return load_error(path, "the file is larger than 2 GiB", "give an hwloc XML topology file");

    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        return load_error(path, std::strerror(err), "make the file readable (chmod +r) or copy it somewhere readable");
    }
    std::string text(static_cast<std::size_t>(info.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return load_error(path, std::strerror(err), "check that the file is readable");
        }
        if (n == 0) break;  // shrank while we read it
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(got);
    if (text.empty()) return load_error(path, "the file is empty", kReexport);
    return text;
}

// ---- checking ----------------------------------------------------------------

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view skip_spaces(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    return s;
}

std::string_view trim_end(std::string_view s) {
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// Skips the XML declaration, comments and the DOCTYPE before the root
// element. Returns the text from the root element's '<' on, or nullopt when
// the prolog never ends.
std::optional<std::string_view> skip_prolog(std::string_view s) {
    for (;;) {
        s = skip_spaces(s);
        std::string_view end;
        if (s.starts_with("<?")) end = "?>";
        else if (s.starts_with("<!--")) end = "-->";
        else if (s.starts_with("<!")) {
            // DOCTYPE, possibly with an internal subset in brackets.
            const std::size_t bracket = s.find('[');
            const std::size_t close = s.find('>');
            std::size_t at = close;
            if (bracket != std::string_view::npos && bracket < close) {
                const std::size_t subset_end = s.find("]", bracket);
                at = subset_end == std::string_view::npos ? subset_end : s.find('>', subset_end);
            }
            if (at == std::string_view::npos) return std::nullopt;
            s.remove_prefix(at + 1);
            continue;
        } else
            return s;
        const std::size_t at = s.find(end);
        if (at == std::string_view::npos) return std::nullopt;
        s.remove_prefix(at + end.size());
    }
}

// The value of attribute `name` inside a start tag's text, or nullopt.
std::optional<std::string_view> attribute_in_tag(std::string_view tag, std::string_view name) {
    for (std::size_t at = tag.find(name); at != std::string_view::npos; at = tag.find(name, at + 1)) {
        if (at == 0 || !is_space(tag[at - 1])) continue;
        std::string_view rest = skip_spaces(tag.substr(at + name.size()));
        if (!rest.starts_with('=')) continue;
        rest = skip_spaces(rest.substr(1));
        if (rest.empty() || (rest.front() != '"' && rest.front() != '\'')) return std::nullopt;
        const char quote = rest.front();
        const std::size_t close = rest.find(quote, 1);
        if (close == std::string_view::npos) return std::nullopt;
        return rest.substr(1, close - 1);
    }
    return std::nullopt;
}

// "0x000000ff,0xffffffff", "0x1,,0x0", "0xf...f,0x1", "0x0": what
// hwloc_bitmap_sscanf reads (an empty word stands for zero). One pass, no
// search calls: every cpuset and nodeset of a file goes through here.
bool is_hwloc_bitmap(std::string_view v) {
    // hwloc counts the words from the second byte on, so a leading comma
    // makes one word more than it counted: an assertion aborts the process
    // (found by fuzzing). hwloc writes none.
    if (v.starts_with(',')) return false;
    if (v.starts_with("0xf...f")) {
        v.remove_prefix(7);
        if (v.empty()) return true;
        if (v.front() != ',') return false;
        v.remove_prefix(1);
    }
    static constexpr auto kHex = [] {
        std::array<bool, 256> t{};
        for (int c = 0; c < 256; ++c) t[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        return t;
    }();
    const char* p = v.data();
    const char* const end = p + v.size();
    while (true) {
        if (p == end) return false;  // empty, or ends with a comma: a bitmap is never empty
        if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
        const char* const word = p;
        while (p < end && kHex[static_cast<unsigned char>(*p)]) ++p;
        if (p - word > 16) return false;  // hwloc writes words of 64 bits at most
        if (p == end) return true;
        if (*p != ',') return false;
        ++p;  // hwloc writes zero words as nothing ("0x1,,0x0")
    }
}

// Larger than the OS index of any CPU or NUMA node of a real machine, small
// enough that a bitmap holding it is 128 KB.
constexpr unsigned long kMaxOsIndex = 1ul << 20;

// A decimal OS index below kMaxOsIndex.
bool is_small_index(std::string_view v) {
    if (v.empty() || v.size() > 7) return false;
    unsigned long n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + static_cast<unsigned long>(c - '0');
    }
    return n < kMaxOsIndex;
}

// The checks hwloc 2.9 does not make before relying on them (the fuzzer
// found crashes in hwloc_topology_load for each): every <object> has a type
// spelled as hwloc writes it (hwloc_type_sscanf would take "Ma" for
// Machine), every cpuset/nodeset attribute (of any element) is a bitmap, and CPU-side and
// memory objects carry the four sets hwloc always writes for them, and
// PUs and NUMA nodes their OS index.
// Names, too: hwloc's reader reads element names of [a-z0-9_] and attribute
// names of [a-z_] only, and on any other byte loses its place in the tag
// (an attribute "a3" made hwloc 2.9 crash on a file it otherwise reads with
// a warning; found by fuzzing). hwloc writes no other names; XML allows
// more, so the markup check alone lets them through.
// "" when the element is fine. Counts what the file-wide rules need in *facts.
struct HwlocFileFacts {
    // Given before the scan.
    bool v1_format = false;      // no version attribute: hwloc 1.x's format
    std::size_t text_size = 0;
    // Gathered by the scan.
    std::size_t objects = 0;
    std::size_t numa_nodes = 0;
    std::size_t memory_side_caches = 0;
    // The root object's sets and allowed sets ("" when absent).
    std::string_view root_cpuset, root_nodeset, root_allowed_cpuset, root_allowed_nodeset;
};

// A decimal count of at most `max`.
bool is_count_at_most(std::string_view v, unsigned long max, unsigned long* out) {
    if (v.empty() || v.size() > 9) return false;
    unsigned long n = 0;
    for (char c : v) {
        if (c < '0' || c > '9') return false;
        n = n * 10 + static_cast<unsigned long>(c - '0');
    }
    *out = n;
    return n <= max;
}

// Rules for elements other than objects (each from a crash of hwloc 2.9
// found by studying its XML import; tests/fuzz/regressions has a file for each).
std::string check_hwloc_other_element(std::string_view tag, std::span<const XmlAttribute> attributes,
                                      const HwlocFileFacts& facts) {
    for (const XmlAttribute& a : attributes) {
        // <distances2>, <distances2hetero>, 1.x <distances>: hwloc computes
        // nbobjs * nbobjs in 32 bits; 65537 wraps and hwloc reads past its
        // buffer, 2^31 wraps to 0 and it writes past it. The matrix's values
        // are in the file, so nbobjs^2 cannot exceed its size either.
        if (a.name == "nbobjs") {
            unsigned long n = 0;
            if (!is_count_at_most(a.raw_value, 65535, &n) || n * n > facts.text_size)
                return "<" + std::string(tag) + " nbobjs=\"" + std::string(a.raw_value.substr(0, 40)) +
                       "\">: more objects than the file can hold distances for";
        }
        // The two attributes hwloc computes itself: given values abort it.
        if (tag == "memattr" && a.name == "name" && (a.raw_value == "Capacity" || a.raw_value == "Locality"))
            return "<memattr name=\"" + std::string(a.raw_value) +
                   "\">: hwloc computes this attribute itself and never writes it";
    }
    return {};
}

bool is_hwloc_name(std::string_view name, bool digits) {
    if (name.empty()) return false;
    for (char c : name)
        if (!((c >= 'a' && c <= 'z') || c == '_' || (digits && c >= '0' && c <= '9'))) return false;
    return true;
}

std::string check_hwloc_element(std::string_view tag, std::span<const XmlAttribute> attributes, HwlocFileFacts* facts) {
    if (!is_hwloc_name(tag, /*digits=*/true))
        return "element <" + std::string(tag.substr(0, 40)) + ">: hwloc reads element names of a-z, 0-9 and _ only";
    static constexpr std::string_view kCpuSideTypes[] = {
        "Machine", "Package", "Die", "Core", "PU", "Group", "NUMANode", "MemCache",
        "L1Cache", "L2Cache", "L3Cache", "L4Cache", "L5Cache", "L1iCache", "L2iCache", "L3iCache",
        "System", "Socket", "Cache",  // hwloc 1.x names, which hwloc 2 still reads
    };
    static constexpr std::string_view kIoTypes[] = {"Bridge", "PCIDev", "OSDev", "Misc"};
    static constexpr std::string_view kRequiredSets[] = {"cpuset", "complete_cpuset", "nodeset", "complete_nodeset"};
    const bool object = tag == "object";
    std::string_view type;
    std::optional<std::string_view> os_index;
    unsigned sets_present = 0;
    for (const XmlAttribute& a : attributes) {
        if (!is_hwloc_name(a.name, /*digits=*/false))
            return "attribute " + std::string(a.name.substr(0, 40)) + " of <" + std::string(tag.substr(0, 40)) +
                   ">: hwloc reads attribute names of a-z and _ only";
        if (a.name == "type") type = a.raw_value;
        if (a.name == "os_index") os_index = a.raw_value;
        // The sets of every element: <cpukind cpuset>, <memattr_value
        // initiator_cpuset> too (the fuzzer made hwloc_bitmap_sscanf assert
        // on a cpukind's "5x00000303").
        if (a.name.ends_with("cpuset") || a.name.ends_with("nodeset")) {
            if (!is_hwloc_bitmap(a.raw_value))
                return "attribute " + std::string(a.name) + "=\"" + std::string(a.raw_value.substr(0, 40)) + "\"" +
                       (object ? "" : " of <" + std::string(tag.substr(0, 40)) + ">") + " is not an hwloc bitmap";
            for (unsigned i = 0; i < std::size(kRequiredSets); ++i)
                if (a.name == kRequiredSets[i]) sets_present |= 1u << i;
        }
    }
    if (!object) return check_hwloc_other_element(tag, attributes, *facts);
    if (type.empty()) return "an <object> without a type";
    auto in = [&](const auto& list) { return std::find(std::begin(list), std::end(list), type) != std::end(list); };
    // The first object is the root. hwloc drops a root it cannot use (a PCI
    // device whose bus id it cannot read, a 1.x cache without a depth) and
    // then inserts the root's children under nothing: it crashes (2.x) or
    // asserts (1.x). hwloc writes a Machine (1.x: System, or a NUMA node).
    if (facts->objects++ == 0) {
        if (!(type == "Machine" || type == "System" || (facts->v1_format && type == "NUMANode")))
            return "its root object is a " + std::string(type.substr(0, 40)) + ", not a Machine";
        for (const XmlAttribute& a : attributes) {
            if (a.name == "cpuset") facts->root_cpuset = a.raw_value;
            if (a.name == "nodeset") facts->root_nodeset = a.raw_value;
            if (a.name == "allowed_cpuset") facts->root_allowed_cpuset = a.raw_value;
            if (a.name == "allowed_nodeset") facts->root_allowed_nodeset = a.raw_value;
        }
    }
    if (in(kIoTypes)) return {};
    if (!in(kCpuSideTypes)) return "an <object> of unknown type \"" + std::string(type.substr(0, 40)) + "\"";
    if (type == "NUMANode") ++facts->numa_nodes;
    if (type == "MemCache") ++facts->memory_side_caches;
    for (unsigned i = 0; i < std::size(kRequiredSets); ++i)
        if (!(sets_present & (1u << i)))
            return "an <object type=\"" + std::string(type) + "\"> without its " + std::string(kRequiredSets[i]);
    // hwloc sets bit os_index of a PU or NUMA node in its bitmaps: without
    // one (hwloc then uses 2^32-1) or with a huge one, a file of a few KB
    // makes hwloc allocate and clear 512 MB per object (found by fuzzing).
    if (type == "PU" || type == "NUMANode") {
        if (!os_index) return "an <object type=\"" + std::string(type) + "\"> without its os_index";
        if (!is_small_index(*os_index))
            return "an <object type=\"" + std::string(type) + "\"> with os_index=\"" +
                   std::string(os_index->substr(0, 40)) + "\" (an OS index below " +
                   std::to_string(kMaxOsIndex) + " was expected)";
    }
    return {};
}

}  // namespace

Status check_hwloc_xml_text(std::string_view text, const std::string& path) {
    std::string_view s = text;
    if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);  // UTF-8 byte order mark
    s = skip_spaces(s);
    if (!s.starts_with('<'))
        return load_error(path, "it is not XML (it does not start with '<')",
                          "give an XML file written by `lstopo FILE.xml` or hwloc_topology_export_xml()");
    const std::optional<std::string_view> root = skip_prolog(s);
    if (!root || root->empty())
        return load_error(path, "the XML ends before its root element (truncated?)", kReexport);

    constexpr std::string_view open_tag = "<topology";
    const bool is_topology = root->starts_with(open_tag) && root->size() > open_tag.size() &&
                             (is_space((*root)[open_tag.size()]) || (*root)[open_tag.size()] == '>' ||
                              (*root)[open_tag.size()] == '/');
    if (!is_topology) {
        std::size_t name_end = 1;
        while (name_end < root->size() && !is_space((*root)[name_end]) && (*root)[name_end] != '>' &&
               (*root)[name_end] != '/')
            ++name_end;
        return load_error(path,
                          "it is XML but not an hwloc topology (its root element is " +
                              std::string(root->substr(0, std::min<std::size_t>(name_end, 40))) +
                              ">, not <topology>)",
                          "give an XML file written by `lstopo FILE.xml`");
    }

    const std::size_t tag_end = root->find('>');
    if (tag_end == std::string_view::npos)
        return load_error(path, "the file ends inside the <topology> tag (truncated?)", kReexport);
    // Without a version attribute the file is hwloc 1.x's format, which hwloc 2 reads.
    bool v1_format = true;
    if (const auto version = attribute_in_tag(root->substr(0, tag_end), "version")) {
        v1_format = false;
        unsigned major = 0;
        std::size_t digits = 0;
        while (digits < version->size() && (*version)[digits] >= '0' && (*version)[digits] <= '9' && digits < 6)
            major = major * 10 + static_cast<unsigned>((*version)[digits++] - '0');
        const unsigned readable_major = hwloc_get_api_version() >> 16;
        if (digits == 0 || major > readable_major) {
            // hwloc_get_api_version() is the API's version, not the release's:
            // only its major number says which formats the library reads.
            const std::string reason = "its XML format version \"" + std::string(*version) +
                                       "\" is not supported (the hwloc library used here reads formats 1.x to " +
                                       std::to_string(readable_major) + ".x)";
            return load_error(path, reason,
                              "export the topology in hwloc 2.x format (lstopo of hwloc 2.x, or a newer "
                              "lstopo's option to write the older format)");
        }
    }

    // A complete file ends with the root's end tag, maybe followed by comments.
    std::string_view tail = trim_end(text);
    while (tail.ends_with("-->")) {
        const std::size_t open = tail.rfind("<!--");
        if (open == std::string_view::npos) break;
        tail = trim_end(tail.substr(0, open));
    }
    if (!tail.ends_with("</topology>") && !root->substr(0, tag_end + 1).ends_with("/>"))
        return load_error(path, "it does not end with </topology>: the file is truncated", kReexport);
    // Last, the whole markup and what hwloc trusts in it: hwloc can crash on
    // malformed XML, and on objects without a type or a cpuset.
    HwlocFileFacts facts;
    facts.v1_format = v1_format;
    facts.text_size = text.size();
    const auto check_element = [&facts](std::string_view tag, std::span<const XmlAttribute> attributes) {
        return check_hwloc_element(tag, attributes, &facts);
    };
    if (XmlProblem problem; !is_well_formed_xml(text, &problem, check_element))
        return load_error(path,
                          "it is not valid hwloc XML (line " + std::to_string(problem.line) + ", column " +
                              std::to_string(problem.column) + ": " + problem.what + ")",
                          kReexport);
    // hwloc counts a memory-side cache as memory, so a file whose only memory
    // object is one passes hwloc's "no NUMA node" test, and hwloc's guess of
    // memory tiers then fails an assertion that aborts the process (found by
    // fuzzing; lstopo too). The guess is off (configure_hwloc_for_files), but
    // a user may turn it on; and hwloc always writes NUMA nodes below their
    // memory-side caches, so such a file is broken either way.
    if (facts.memory_side_caches > 0 && facts.numa_nodes == 0)
        return load_error(path,
                          "it is not valid hwloc XML (it has a memory-side cache, <object type=\"MemCache\">, "
                          "but no NUMA node)",
                          kReexport);
    // A root whose allowed sets share nothing with its sets leaves hwloc an
    // empty topology, and hwloc 2.9 then dereferences a NULL root.
    auto disjoint = [](std::string_view set, std::string_view allowed) {
        if (set.empty() || allowed.empty()) return false;
        const auto a = Cpuset::parse_hwloc_mask(set), b = Cpuset::parse_hwloc_mask(allowed);
        return a && b && !a->empty() && !a->intersects(*b);  // infinite forms do not parse: left to hwloc
    };
    if (disjoint(facts.root_cpuset, facts.root_allowed_cpuset) ||
        disjoint(facts.root_nodeset, facts.root_allowed_nodeset))
        return load_error(path,
                          "it is not valid hwloc XML (the root's allowed_cpuset or allowed_nodeset shares no CPU "
                          "or NUMA node with its cpuset or nodeset)",
                          kReexport);
    return Ok{};
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
    Result<std::string> text = read_whole_file(path);
    if (!text) return text.error();
    return load_hwloc_xml_text(*text, path, options);
}

Result<Model> load_hwloc_xml_text(const std::string& text, const std::string& name, const HwlocLoadOptions& options) {
    if (Status checked = check_hwloc_xml_text(text, name); !checked) return checked.error();

    configure_hwloc_for_files();
    TopologyHandle topo;
    if (!topo.init()) return load_error(name, "hwloc could not create a topology (out of memory?)", "try again");
    // The file is the truth: keep every object it has; I/O only on request.
    hwloc_topology_set_all_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!options.include_io) hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_NONE);
    // The size includes the terminating NUL, as hwloc's own exports do.
    if (hwloc_topology_set_xmlbuffer(topo.get(), text.c_str(), static_cast<int>(text.size() + 1)) < 0 ||
        hwloc_topology_load(topo.get()) < 0) {
        const int err = errno;
        return load_error(name,
                          std::string("hwloc rejected the XML (") + std::strerror(err) +
                              "): it is malformed, or describes an inconsistent topology",
                          "run `HWLOC_XML_VERBOSE=1 lstopo-no-graphics -i FILE` for hwloc's diagnostics, "
                          "or export the topology again");
    }
    // What the conversion refuses (a root that is not a Machine) comes from
    // the file: say which one.
    Result<Model> model = to_model(topo.get(), options);
    if (!model) return load_error(name, model.error().message, kReexport);
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
