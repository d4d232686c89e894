#include "preload/real_functions.hpp"

#include <dlfcn.h>

namespace stacksage::preload::real {

void* resolve(std::atomic<void*>& slot, const char* name) {
    // Racing resolvers store the same value; no lock needed.
    void* p = dlsym(RTLD_NEXT, name);
    if (p != nullptr) slot.store(p, std::memory_order_release);
    return p;
}

}  // namespace stacksage::preload::real
