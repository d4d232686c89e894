#include "preload/cpu_mask.hpp"

#include "preload/number_digits.hpp"
#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

bool CpuMask::read_thread(int tid) {
    // The kernel writes cpumask_size() bytes, a multiple of 8, and says how many.
    long n = raw::sched_getaffinity(tid, kBytes, words);
    valid = n > 0;
    used_words = valid ? static_cast<unsigned>((static_cast<std::size_t>(n) + 7) / 8) : 0;
    return valid;
}

void CpuMask::assign(const void* mask, std::size_t size) {
    if (mask == nullptr) {
        clear();
        return;
    }
    std::size_t n = size < kBytes ? size : kBytes;
    used_words = static_cast<unsigned>((n + 7) / 8);
    if (used_words > 0) words[used_words - 1] = 0;  // a partial last word
    const auto* bytes = static_cast<const unsigned char*>(mask);
    auto* out = reinterpret_cast<unsigned char*>(words);
    for (std::size_t i = 0; i < n; ++i) out[i] = bytes[i];
    valid = true;
}

bool CpuMask::operator==(const CpuMask& other) const {
    if (valid != other.valid) return false;
    unsigned n = used_words > other.used_words ? used_words : other.used_words;
    for (unsigned i = 0; i < n; ++i)
        if (word(i) != other.word(i)) return false;
    return true;
}

unsigned CpuMask::count() const {
    // Kernighan's loop rather than __builtin_popcountll, which without
    // -mpopcnt calls into libgcc_s, a library the recorder does not link.
    unsigned n = 0;
    for (unsigned i = 0; i < used_words; ++i)
        for (std::uint64_t w = words[i]; w != 0; w &= w - 1) ++n;
    return n;
}

std::size_t CpuMask::max_list_length() const {
    const unsigned highest_cpu = used_words == 0 ? 0 : used_words * 64 - 1;
    return static_cast<std::size_t>(count()) * (decimal_length(highest_cpu) + 1);
}

namespace {
// Appends the decimal form of v; false when it does not fit.
bool put_uint(char* out, std::size_t cap, std::size_t& len, unsigned v) {
    const std::size_t n = decimal_length(v);
    if (len + n >= cap) return false;
    write_decimal(out + len, v);
    len += n;
    return true;
}
}  // namespace

// Next set bit at or after `from`, or `bits` when none. Whole zero words are
// skipped: masks are 4096 bits wide and usually hold a handful of CPUs, and
// this runs on the thread-creation path.
static unsigned next_set(const std::uint64_t* words, unsigned from, unsigned bits) {
    while (from < bits) {
        std::uint64_t w = words[from / 64] >> (from % 64);
        if (w != 0) return from + static_cast<unsigned>(__builtin_ctzll(w));
        from = (from / 64 + 1) * 64;
    }
    return bits;
}

// Next clear bit at or after `from`, or `bits` when none.
static unsigned next_clear(const std::uint64_t* words, unsigned from, unsigned bits) {
    while (from < bits) {
        std::uint64_t w = ~words[from / 64] >> (from % 64);
        if (w != 0) {
            unsigned at = from + static_cast<unsigned>(__builtin_ctzll(w));
            return at < bits ? at : bits;
        }
        from = (from / 64 + 1) * 64;
    }
    return bits;
}

std::size_t CpuMask::format_list(char* out, std::size_t cap) const {
    if (cap == 0) return 0;
    std::size_t len = 0;
    const unsigned bits = used_words * 64;
    bool first = true;
    for (unsigned cpu = next_set(words, 0, bits); cpu < bits;) {
        unsigned last = next_clear(words, cpu, bits) - 1;
        if (!first) {
            if (len + 1 >= cap) goto overflow;
            out[len++] = ',';
        }
        first = false;
        if (!put_uint(out, cap, len, cpu)) goto overflow;
        if (last != cpu) {
            if (len + 1 >= cap) goto overflow;
            out[len++] = '-';
            if (!put_uint(out, cap, len, last)) goto overflow;
        }
        cpu = next_set(words, last + 1, bits);
    }
    out[len] = '\0';
    return len;
overflow:
    out[0] = '\0';
    return 0;
}

}  // namespace stacksage::preload
