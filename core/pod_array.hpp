// PodArray<T>: the storage of a Model's arrays.
//
// An array either owns its elements (malloc'ed, grown with realloc) or borrows them,
// read-only, from a mapped snapshot image (core/snapshot.hpp). Reads are the
// same either way (one pointer, one size), which is what lets a mapped model
// answer queries in place with no per-object rebuild. Writes need ownership:
// make_owned() copies borrowed elements first (Model does this once, for all
// its arrays, before its first change).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <new>
#include <type_traits>
#include <utility>

namespace stacksage {

template <class T>
class PodArray {
    static_assert(std::is_trivially_copyable_v<T>, "PodArray holds plain data only");

public:
    PodArray() = default;
    ~PodArray() { std::free(owned_); }
    PodArray(const PodArray& o) { *this = o; }
    PodArray& operator=(const PodArray& o) {
        if (this == &o) return *this;
        if (o.borrowed_) {
            borrow(o.data_, o.size_);
        } else {
            size_ = 0;
            borrowed_ = false;
            reserve(o.size_);
            if (o.size_ != 0) std::memcpy(owned_, o.data_, o.size_ * sizeof(T));
            size_ = o.size_;
            data_ = owned_;
        }
        return *this;
    }
    PodArray(PodArray&& o) noexcept { *this = std::move(o); }
    PodArray& operator=(PodArray&& o) noexcept {
        if (this == &o) return *this;
        std::free(owned_);
        owned_ = std::exchange(o.owned_, nullptr);
        capacity_ = std::exchange(o.capacity_, 0);
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
        borrowed_ = std::exchange(o.borrowed_, false);
        return *this;
    }

    // Reads.
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const T* data() const { return data_; }
    const T& operator[](std::size_t i) const { return data_[i]; }
    const T& back() const { return data_[size_ - 1]; }
    const T* begin() const { return data_; }
    const T* end() const { return data_ + size_; }
    bool borrowed() const { return borrowed_; }
    // Elements reserved (owned) or mapped (borrowed).
    std::size_t capacity() const { return borrowed_ ? size_ : capacity_; }

    // Views `count` elements at `elements` without copying; the memory must
    // outlive this array (Model keeps the mapping alive).
    void borrow(const T* elements, std::size_t count) {
        std::free(owned_);
        owned_ = nullptr;
        capacity_ = 0;
        borrowed_ = true;
        data_ = elements;
        size_ = count;
    }
    // Copies borrowed elements into owned storage (no-op when owned).
    void make_owned() {
        if (!borrowed_) return;
        const T* from = data_;
        const std::size_t n = size_;
        borrowed_ = false;
        size_ = 0;
        reserve(n);
        if (n != 0) std::memcpy(owned_, from, n * sizeof(T));
        size_ = n;
        data_ = owned_;
    }

    // Writes: only on owned arrays.
    T& operator[](std::size_t i) { assert(!borrowed_); return owned_[i]; }
    T& back() { assert(!borrowed_); return owned_[size_ - 1]; }
    void push_back(const T& v) {
        assert(!borrowed_);
        if (size_ == capacity_) {
            const T copy = v;  // v may be one of ours, moved by the growth
            grow_for(size_ + 1);
            owned_[size_++] = copy;
        } else {
            owned_[size_++] = v;
        }
    }
    template <class... A> T& emplace_back(A&&... a) {
        assert(!borrowed_);
        T value(std::forward<A>(a)...);
        push_back(value);
        return owned_[size_ - 1];
    }
    void pop_back() { assert(!borrowed_); --size_; }
    void reserve(std::size_t n) {
        assert(!borrowed_);
        if (n > capacity_) reallocate(n);
    }
    void resize(std::size_t n) {
        assert(!borrowed_);
        if (n > capacity_) reallocate(n);
        for (std::size_t i = size_; i < n; ++i) new (owned_ + i) T();
        size_ = n;
    }
// GCC 12 cannot see that `from` below is outside the block realloc moves
// (the branch proves it) and warns; the warning is wrong here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuse-after-free"
#endif
    template <class It> void append(It first, It last) {
        assert(!borrowed_);
        const auto count = static_cast<std::size_t>(std::distance(first, last));
        if (count == 0) return;
        if constexpr (std::is_pointer_v<It>) {
            // The range may lie in this array, which the growth may move.
            const T* from = first;
            if (owned_ != nullptr && from >= owned_ && from < owned_ + capacity_) {
                const std::size_t at = static_cast<std::size_t>(from - owned_);
                grow_for(size_ + count);
                std::memmove(owned_ + size_, owned_ + at, count * sizeof(T));
            } else {
                grow_for(size_ + count);
                std::memcpy(owned_ + size_, from, count * sizeof(T));
            }
        } else {
            grow_for(size_ + count);
            std::copy(first, last, owned_ + size_);
        }
        size_ += count;
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    void clear() {
        if (borrowed_) {
            data_ = nullptr;
            borrowed_ = false;
        }
        size_ = 0;
    }

private:
    // Geometric growth through realloc: the elements are plain bytes, so a
    // large array grows in place or is moved by the kernel's page remapping
    // (glibc uses mremap for big blocks) instead of being copied into fresh
    // memory that must be faulted in again. That is most of what creating a
    // component costs when the model's size is not known in advance.
    void grow_for(std::size_t need) {
        if (need <= capacity_) return;
        std::size_t n = capacity_ < 8 ? 8 : capacity_ * 2;
        if (n < need) n = need;
        reallocate(n);
    }
    void reallocate(std::size_t n) {
        void* p = std::realloc(owned_, n * sizeof(T));
        if (p == nullptr) throw std::bad_alloc();
        owned_ = static_cast<T*>(p);
        capacity_ = n;
        data_ = owned_;
    }

    T* owned_ = nullptr;           // owned storage (malloc'ed), capacity_ elements
    std::size_t capacity_ = 0;
    const T* data_ = nullptr;      // owned_, or the borrowed elements
    std::size_t size_ = 0;
    bool borrowed_ = false;
};

}  // namespace stacksage
