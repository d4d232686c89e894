#include "preload/proc_cgroup.hpp"

#include <cstring>

namespace stacksage::preload {

bool names_controller(const char* controllers, const char* controller) {
    const std::size_t want = std::strlen(controller);
    for (const char* p = controllers; *p != '\0';) {
        const char* comma = std::strchr(p, ',');
        const std::size_t n = comma ? static_cast<std::size_t>(comma - p) : std::strlen(p);
        if (n == want && std::memcmp(p, controller, n) == 0) return true;
        if (comma == nullptr) break;
        p = comma + 1;
    }
    return false;
}

CgroupPlacement parse_proc_cgroup(char* text, const char* controller) {
    CgroupPlacement placement;
    for (char* line = text; line != nullptr && *line != '\0';) {
        char* next = std::strchr(line, '\n');
        if (next) *next++ = '\0';
        char* first = std::strchr(line, ':');
        char* second = first ? std::strchr(first + 1, ':') : nullptr;
        if (second != nullptr) {
            *second = '\0';
            const char* controllers = first + 1;
            const char* path = second + 1;
            if (line[0] == '0' && line + 1 == first && *controllers == '\0') {
                placement.v2_path = path;
            } else if (names_controller(controllers, controller)) {
                placement.v1_controllers = controllers;
                placement.v1_path = path;
            }
        }
        line = next;
    }
    return placement;
}

}  // namespace stacksage::preload
