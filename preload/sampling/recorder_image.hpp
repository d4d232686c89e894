// The recorder's own image in memory: the loaded segments (code and data)
// of the module that holds the sampler, i.e. libstacksage-preload.so.
//
// Sampling runs in the application's threads, and so does the recorder when
// it writes an event: a page fault on its own buffers, log mapping or
// tables, taken by its own code, is the recorder's access, not the
// application's. The recorder's memory and files must never show in a
// report, so such samples (instruction or data address in this image) are
// counted apart (`recorder_samples` in the sample summary) and dropped.
#pragma once

#include <cstdint>

namespace stacksage::sampling {

struct AddressRange {
    std::uint64_t start = 0;
    std::uint64_t end = 0;  // one past the last byte; start == end: empty

    bool contains(std::uint64_t address) const { return address >= start && address < end; }
};

// \return from the lowest to the highest loaded byte of the module that
//         holds `address` (its PT_LOAD segments); empty when no loaded module
//         holds it. Found with dladdr and dl_iterate_phdr; no allocation.
AddressRange loaded_image_of(const void* address);

// As loaded_image_of, but empty when `address` lies in the executable
// itself: a program that links the sampler in (its tests) is all
// application, and only a preloaded recorder has an image of its own.
AddressRange library_image_of(const void* address);

// The image of the module the sampler is linked into; computed once by
// sampler_start (the preload's own image).
AddressRange recorder_image();
void set_recorder_image(AddressRange image);

}  // namespace stacksage::sampling
