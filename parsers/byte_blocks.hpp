// Byte classes of 16 bytes at a time, for the text scans of the XML checks.
//
// SSE2 is on every x86-64, and the XML checks touch every byte of a file:
// testing a block of 16 against a class is a handful of instructions where a
// table lookup per byte was most of the checks' time. Each function returns
// a 16-bit mask, bit i for byte i of the block. Callers keep a scalar path
// (STACKSAGE_BYTE_BLOCKS is 0 where SSE2 is missing) and must read whole
// blocks only inside their text.
#pragma once

#if defined(__SSE2__)
#include <emmintrin.h>
#define STACKSAGE_BYTE_BLOCKS 1
#else
#define STACKSAGE_BYTE_BLOCKS 0
#endif

namespace stacksage::byte_blocks {

#if STACKSAGE_BYTE_BLOCKS

using Block = __m128i;

// The 16 bytes at p (no alignment needed).
inline Block load16(const char* p) { return _mm_loadu_si128(reinterpret_cast<const Block*>(p)); }

// The bits of a byte-wise compare result.
inline unsigned bits_of(Block lanes) { return static_cast<unsigned>(_mm_movemask_epi8(lanes)); }

// Lanes equal to c.
inline Block equal(Block v, char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); }

// Lanes set in a or in b.
inline Block either(Block a, Block b) { return _mm_or_si128(a, b); }

// Lanes in [first, first + count), count at most 128: one signed compare
// once the range is shifted to start at -128.
inline Block in_range(Block v, char first, int count) {
    return _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(0x80 - first))),
                          _mm_set1_epi8(static_cast<char>(-128 + count)));
}

// Bits of the bytes in [a-z] or '_', and in [0-9] too when `digits`: the
// bytes of hwloc's names, and the common bytes of any XML name.
inline unsigned lower_name_bytes(Block v, bool digits) {
    Block lanes = either(in_range(v, 'a', 26), equal(v, '_'));
    if (digits) lanes = either(lanes, in_range(v, '0', 10));
    return bits_of(lanes);
}

#endif  // STACKSAGE_BYTE_BLOCKS

}  // namespace stacksage::byte_blocks
