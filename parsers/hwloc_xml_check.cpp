// The checks on hwloc XML text before hwloc reads it (see hwloc_xml_check.hpp).
//
// hwloc 2.9's XML reader trusts its input: each rule below comes from a file
// on which it crashed, aborted or allocated gigabytes (found by fuzzing or by
// studying its import code; docs/RELIABILITY.md lists them, and
// tests/fuzz/regressions holds a file for each).
#include "parsers/hwloc_xml_check.hpp"

#include <hwloc.h>

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>

#include "parsers/byte_blocks.hpp"

#include "parsers/hwloc_load_error.hpp"
#include "parsers/xml_wellformed.hpp"

namespace stacksage {
namespace {

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
        const bool prefixed = end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
        if (prefixed) p += 2;
        const char* const word = p;
        while (p < end && kHex[static_cast<unsigned char>(*p)]) ++p;
        if (p - word > 16) return false;  // hwloc writes words of 64 bits at most
        // "0x" without digits: hwloc_bitmap_sscanf fails, hwloc keeps an
        // empty set, and a root with an empty complete_cpuset made hwloc
        // crash (found by fuzzing). hwloc writes a zero word as "0x0" or as
        // nothing ("0x1,,0x0").
        if (prefixed && p == word) return false;
        if (p == end) return true;
        if (*p != ',') return false;
        ++p;
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

// An hwloc bitmap, freed on scope exit.
class HwlocBitmap {
public:
    HwlocBitmap() : bitmap_(hwloc_bitmap_alloc()) {}
    HwlocBitmap(const HwlocBitmap&) = delete;
    HwlocBitmap& operator=(const HwlocBitmap&) = delete;
    ~HwlocBitmap() { hwloc_bitmap_free(bitmap_); }
    hwloc_bitmap_t get() const { return bitmap_; }
    // Reads `text` as hwloc reads a set attribute; false when hwloc cannot
    // (or there was no memory for the bitmap).
    bool read(std::string_view text) {
        return bitmap_ && hwloc_bitmap_sscanf(bitmap_, std::string(text).c_str()) == 0;
    }

private:
    hwloc_bitmap_t bitmap_;
};

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
    std::string_view text;       // the whole file
    // Gathered by the scan.
    std::size_t objects = 0;
    std::size_t numa_nodes = 0;
    std::size_t memory_side_caches = 0;
    // The root object's sets, complete sets and allowed sets ("" when absent).
    std::string_view root_cpuset, root_nodeset, root_complete_cpuset, root_complete_nodeset, root_allowed_cpuset,
        root_allowed_nodeset;
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
            if (!is_count_at_most(a.raw_value, 65535, &n) || n * n > facts.text.size())
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

// Byte classes of hwloc's names: bit 1 for attribute names, bit 2 for
// element names (a table: this runs on every name of the file).
constexpr std::array<unsigned char, 256> kHwlocNameChars = [] {
    std::array<unsigned char, 256> t{};
    for (int c = 'a'; c <= 'z'; ++c) t[c] = 3;
    t['_'] = 3;
    for (int c = '0'; c <= '9'; ++c) t[c] = 2;
    return t;
}();

// `text_end`: the end of the text `name` lies in; whole 16-byte blocks may be
// read past the name's end, inside the text (names are a third of a file's
// bytes).
bool is_hwloc_name(std::string_view name, bool digits, [[maybe_unused]] const char* text_end) {
    if (name.empty()) return false;
    const char* p = name.data();
    std::size_t n = name.size();
#if STACKSAGE_BYTE_BLOCKS
    for (; n > 0 && p + 16 <= text_end; p += 16, n -= std::min<std::size_t>(n, 16)) {
        const unsigned ok = byte_blocks::lower_name_bytes(byte_blocks::load16(p), digits);
        const unsigned want = n >= 16 ? 0xffffu : (1u << n) - 1;
        if ((ok & want) != want) return false;
        if (n <= 16) return true;
    }
#endif
    const unsigned char need = digits ? 2 : 1;
    unsigned char all = need;
    for (; n > 0; ++p, --n) all &= kHwlocNameChars[static_cast<unsigned char>(*p)];
    return all == need;
}

// What an object's type attribute names: where it belongs in the rules.
enum class HwlocTypeClass { kUnknown, kIo, kCpuSide, kNumaNode, kMemCache, kPu, kMachine, kSystem };

// Exact type names as hwloc writes them (hwloc_type_sscanf would take "Ma"
// for Machine). A switch on the length: this runs for every object.
HwlocTypeClass classify_hwloc_type(std::string_view t) {
    using enum HwlocTypeClass;
    switch (t.size()) {
        case 2: return t == "PU" ? kPu : kUnknown;
        case 3: return t == "Die" ? kCpuSide : kUnknown;
        case 4:
            if (t == "Core") return kCpuSide;
            if (t == "Misc") return kIo;
            return kUnknown;
        case 5:
            if (t == "Group" || t == "Cache") return kCpuSide;  // Cache: hwloc 1.x
            if (t == "OSDev") return kIo;
            return kUnknown;
        case 6:
            if (t == "Socket") return kCpuSide;  // hwloc 1.x
            if (t == "System") return kSystem;   // hwloc 1.x
            if (t == "Bridge" || t == "PCIDev") return kIo;
            return kUnknown;
        case 7:
            if (t == "Machine") return kMachine;
            if (t == "Package") return kCpuSide;
            if (t[0] == 'L' && t[1] >= '1' && t[1] <= '5' && t.substr(2) == "Cache") return kCpuSide;
            return kUnknown;
        case 8:
            if (t == "NUMANode") return kNumaNode;
            if (t == "MemCache") return kMemCache;
            if (t[0] == 'L' && t[1] >= '1' && t[1] <= '3' && t.substr(2) == "iCache") return kCpuSide;
            return kUnknown;
        default: return kUnknown;
    }
}

// Bit of each set hwloc always writes for CPU-side and memory objects, or 0.
constexpr std::string_view kRequiredSets[] = {"cpuset", "complete_cpuset", "nodeset", "complete_nodeset"};
constexpr unsigned kAllRequiredSets = 0xf;
unsigned required_set_bit(std::string_view name) {
    for (unsigned i = 0; i < std::size(kRequiredSets); ++i)
        if (name == kRequiredSets[i]) return 1u << i;
    return 0;
}

// Any attribute holding a set: "cpuset", "complete_nodeset",
// "initiator_cpuset"... (the names end with cpuset or nodeset).
bool is_set_attribute(std::string_view name) {
    if (name.size() < 6 || name.back() != 't') return false;
    return name.ends_with("cpuset") || name.ends_with("nodeset");
}

std::string check_hwloc_element(std::string_view tag, std::span<const XmlAttribute> attributes, HwlocFileFacts* facts) {
    const char* const text_end = facts->text.data() + facts->text.size();
    if (!is_hwloc_name(tag, /*digits=*/true, text_end))
        return "element <" + std::string(tag.substr(0, 40)) + ">: hwloc reads element names of a-z, 0-9 and _ only";
    const bool object = tag == "object";
    std::string_view type;
    std::optional<std::string_view> os_index;
    unsigned sets_present = 0;
    for (const XmlAttribute& a : attributes) {
        if (!is_hwloc_name(a.name, /*digits=*/false, text_end))
            return "attribute " + std::string(a.name.substr(0, 40)) + " of <" + std::string(tag.substr(0, 40)) +
                   ">: hwloc reads attribute names of a-z and _ only";
        // Likewise hwloc reads only name="value": white space around '=' or
        // single quotes (both XML) make it lose its place and crash (found
        // by fuzzing). Name and value are views into the text: what lies
        // between them is exactly `="`, or something else.
        const char* const name_end = a.name.data() + a.name.size();
        if (a.raw_value.data() != name_end + 2 || name_end[0] != '=' || name_end[1] != '"')
            return "attribute " + std::string(a.name.substr(0, 40)) + " of <" + std::string(tag.substr(0, 40)) +
                   ">: hwloc reads only name=\"value\" (no white space around '=', double quotes)";
        if (a.name.size() == 4 && a.name == "type") type = a.raw_value;
        else if (a.name.size() == 8 && a.name == "os_index") os_index = a.raw_value;
        // The sets of every element: <cpukind cpuset>, <memattr_value
        // initiator_cpuset> too (the fuzzer made hwloc_bitmap_sscanf assert
        // on a cpukind's "5x00000303").
        else if (is_set_attribute(a.name)) {
            if (!is_hwloc_bitmap(a.raw_value))
                return "attribute " + std::string(a.name) + "=\"" + std::string(a.raw_value.substr(0, 40)) + "\"" +
                       (object ? "" : " of <" + std::string(tag.substr(0, 40)) + ">") + " is not an hwloc bitmap";
            sets_present |= required_set_bit(a.name);
        }
    }
    if (!object) return check_hwloc_other_element(tag, attributes, *facts);
    if (type.empty()) return "an <object> without a type";
    const HwlocTypeClass type_class = classify_hwloc_type(type);
    // The first object is the root. hwloc drops a root it cannot use (a PCI
    // device whose bus id it cannot read, a 1.x cache without a depth) and
    // then inserts the root's children under nothing: it crashes (2.x) or
    // asserts (1.x). hwloc writes a Machine (1.x: System, or a NUMA node).
    if (facts->objects++ == 0) {
        if (!(type_class == HwlocTypeClass::kMachine || type_class == HwlocTypeClass::kSystem ||
              (facts->v1_format && type_class == HwlocTypeClass::kNumaNode)))
            return "its root object is a " + std::string(type.substr(0, 40)) + ", not a Machine";
        for (const XmlAttribute& a : attributes) {
            if (a.name == "cpuset") facts->root_cpuset = a.raw_value;
            if (a.name == "nodeset") facts->root_nodeset = a.raw_value;
            if (a.name == "complete_cpuset") facts->root_complete_cpuset = a.raw_value;
            if (a.name == "complete_nodeset") facts->root_complete_nodeset = a.raw_value;
            if (a.name == "allowed_cpuset") facts->root_allowed_cpuset = a.raw_value;
            if (a.name == "allowed_nodeset") facts->root_allowed_nodeset = a.raw_value;
        }
    }
    switch (type_class) {
        case HwlocTypeClass::kIo: return {};
        case HwlocTypeClass::kUnknown:
            return "an <object> of unknown type \"" + std::string(type.substr(0, 40)) + "\"";
        case HwlocTypeClass::kNumaNode: ++facts->numa_nodes; break;
        case HwlocTypeClass::kMemCache: ++facts->memory_side_caches; break;
        default: break;
    }
    if (sets_present != kAllRequiredSets)
        for (unsigned i = 0; i < std::size(kRequiredSets); ++i)
            if (!(sets_present & (1u << i)))
                return "an <object type=\"" + std::string(type) + "\"> without its " + std::string(kRequiredSets[i]);
    // hwloc sets bit os_index of a PU or NUMA node in its bitmaps: without
    // one (hwloc then uses 2^32-1) or with a huge one, a file of a few KB
    // makes hwloc allocate and clear 512 MB per object (found by fuzzing).
    if (type_class == HwlocTypeClass::kPu || type_class == HwlocTypeClass::kNumaNode) {
        if (!os_index) return "an <object type=\"" + std::string(type) + "\"> without its os_index";
        if (!is_small_index(*os_index))
            return "an <object type=\"" + std::string(type) + "\"> with os_index=\"" +
                   std::string(os_index->substr(0, 40)) + "\" (an OS index below " +
                   std::to_string(kMaxOsIndex) + " was expected)";
    }
    return {};
}

}  // namespace

namespace {

// Whether nothing of the root's set is left once hwloc keeps only what is
// also in its complete and allowed sets (a set hwloc's parser rejects is
// left to hwloc).
bool nothing_left(std::string_view set, std::string_view complete, std::string_view allowed) {
    if (set.empty()) return false;
    HwlocBitmap left, other;
    if (!left.read(set) || hwloc_bitmap_iszero(left.get())) return false;
    for (const std::string_view given : {complete, allowed}) {
        if (given.empty()) continue;
        if (!other.read(given)) return false;  // left to hwloc
        hwloc_bitmap_and(left.get(), left.get(), other.get());
    }
    return hwloc_bitmap_iszero(left.get()) != 0;
}

// The file's head and tail: XML, an hwloc <topology> root of a format
// version the library reads, not cut short. Sets v1_format (no version
// attribute: hwloc 1.x's format).
Status check_topology_frame(std::string_view text, const std::string& path, bool& v1_format) {
    std::string_view s = text;
    if (s.starts_with("\xEF\xBB\xBF")) s.remove_prefix(3);  // UTF-8 byte order mark
    s = skip_spaces(s);
    if (!s.starts_with('<'))
        return hwloc_load_error(path, "it is not XML (it does not start with '<')",
                          "give an XML file written by `lstopo FILE.xml` or hwloc_topology_export_xml()");
    const std::optional<std::string_view> root = skip_prolog(s);
    if (!root || root->empty())
        return hwloc_load_error(path, "the XML ends before its root element (truncated?)", kReexport);

    constexpr std::string_view open_tag = "<topology";
    const bool is_topology = root->starts_with(open_tag) && root->size() > open_tag.size() &&
                             (is_space((*root)[open_tag.size()]) || (*root)[open_tag.size()] == '>' ||
                              (*root)[open_tag.size()] == '/');
    if (!is_topology) {
        std::size_t name_end = 1;
        while (name_end < root->size() && !is_space((*root)[name_end]) && (*root)[name_end] != '>' &&
               (*root)[name_end] != '/')
            ++name_end;
        return hwloc_load_error(path,
                          "it is XML but not an hwloc topology (its root element is " +
                              std::string(root->substr(0, std::min<std::size_t>(name_end, 40))) +
                              ">, not <topology>)",
                          "give an XML file written by `lstopo FILE.xml`");
    }

    const std::size_t tag_end = root->find('>');
    if (tag_end == std::string_view::npos)
        return hwloc_load_error(path, "the file ends inside the <topology> tag (truncated?)", kReexport);
    // Without a version attribute the file is hwloc 1.x's format, which hwloc 2 reads.
    v1_format = true;
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
            return hwloc_load_error(path, reason,
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
        return hwloc_load_error(path, "it does not end with </topology>: the file is truncated", kReexport);
    return Ok{};
}

// The whole markup and what hwloc trusts in it: hwloc can crash on
// malformed XML, and on objects without a type or a cpuset.
Status check_topology_content(std::string_view text, const std::string& path, bool v1_format) {
    HwlocFileFacts facts;
    facts.v1_format = v1_format;
    facts.text = text;
    const auto check_element = [&facts](std::string_view tag, std::span<const XmlAttribute> attributes) {
        return check_hwloc_element(tag, attributes, &facts);
    };
    if (XmlProblem problem; !is_well_formed_xml(text, &problem, check_element))
        return hwloc_load_error(path,
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
        return hwloc_load_error(path,
                          "it is not valid hwloc XML (it has a memory-side cache, <object type=\"MemCache\">, "
                          "but no NUMA node)",
                          kReexport);
    // hwloc keeps of the root's CPUs (and NUMA nodes) those that are also in
    // its complete and allowed sets: when none is left, hwloc 2.9 prints
    // "Topology became empty" and then dereferences a NULL root (crash; the
    // allowed sets found by study, the complete set by the fuzzer: a root
    // without children whose cpuset and complete_cpuset are disjoint, or
    // share only CPUs outside allowed_cpuset). hwloc writes sets and allowed
    // sets within the complete sets, so no file it wrote is refused.
    // The sets are read with hwloc's own parser, so that the rule sees what
    // hwloc will (the fuzzer's second file: a complete_cpuset with an empty
    // "0x" word, which hwloc reads and Cpuset does not); the syntax checks
    // above keep hwloc_bitmap_sscanf from asserting.
    if (nothing_left(facts.root_cpuset, facts.root_complete_cpuset, facts.root_allowed_cpuset) ||
        nothing_left(facts.root_nodeset, facts.root_complete_nodeset, facts.root_allowed_nodeset))
        return hwloc_load_error(path,
                          "it is not valid hwloc XML (the root's cpuset or nodeset shares no CPU or NUMA node "
                          "with its complete and allowed sets)",
                          kReexport);
    return Ok{};
}

}  // namespace

Status check_hwloc_xml_text(std::string_view text, const std::string& path) {
    bool v1_format = true;
    if (Status frame = check_topology_frame(text, path, v1_format); !frame) return frame;
    return check_topology_content(text, path, v1_format);
}

}  // namespace stacksage
