#include "preload/sampling/backend.hpp"

#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {
constexpr const char* kNames[kBackendCount] = {"pebs", "ibs", "pagefault", "cpuclock", "papi"};
constexpr const char* kChoices = "choose from off, auto, pebs, ibs, pagefault, cpuclock, papi";

bool same(const char* a, std::size_t len, const char* word) {
    return std::strlen(word) == len && std::memcmp(a, word, len) == 0;
}

bool fail(char* error, std::size_t cap, const char* what, const char* item, std::size_t len) {
    TextBuffer t(error, cap);
    t.add("--sample: ").add(what);
    if (item != nullptr) t.add(" '").add(item, len).add("'");
    t.add(": ").add(kChoices);
    return false;
}
}  // namespace

const char* backend_name(Backend backend) {
    const auto i = static_cast<unsigned>(backend);
    return i < kBackendCount ? kNames[i] : "unknown";
}

bool backend_from_name(const char* name, std::size_t len, Backend& out) {
    if (name == nullptr) return false;
    for (int i = 0; i < kBackendCount; ++i) {
        if (same(name, len, kNames[i])) {
            out = static_cast<Backend>(i);
            return true;
        }
    }
    return false;
}

bool parse_backend_selection(const char* text, BackendSelection& out, char* error,
                             std::size_t error_cap) {
    out = BackendSelection{};
    if (text == nullptr || *text == '\0') return true;
    const std::size_t total = std::strlen(text);
    if (same(text, total, "off")) return true;
    if (same(text, total, "auto")) {
        out.automatic = true;
        return true;
    }
    const char* p = text;
    while (true) {
        const char* comma = std::strchr(p, ',');
        const std::size_t len = comma ? static_cast<std::size_t>(comma - p) : std::strlen(p);
        if (len == 0) return fail(error, error_cap, "empty item in the list", nullptr, 0);
        if (same(p, len, "auto") || same(p, len, "off"))
            return fail(error, error_cap, "'auto' and 'off' cannot be combined with other items",
                        nullptr, 0);
        Backend b;
        if (!backend_from_name(p, len, b)) return fail(error, error_cap, "unknown backend", p, len);
        if (out.backends & backend_bit(b))
            return fail(error, error_cap, "backend listed twice", p, len);
        out.backends |= backend_bit(b);
        if (comma == nullptr) break;
        p = comma + 1;
    }
    return true;
}

}  // namespace stacksage::sampling
