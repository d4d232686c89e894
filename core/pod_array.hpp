// PodArray<T>: the storage of a Model's arrays.
//
// An array either owns its elements (a std::vector) or borrows them,
// read-only, from a mapped snapshot image (core/snapshot.hpp). Reads are the
// same either way (one pointer, one size), which is what lets a mapped model
// answer queries in place with no per-object rebuild. Writes need ownership:
// make_owned() copies borrowed elements first (Model does this once, for all
// its arrays, before its first change).
#pragma once

#include <cassert>
#include <cstddef>
#include <type_traits>
#include <vector>

namespace stacksage {

template <class T>
class PodArray {
    static_assert(std::is_trivially_copyable_v<T>, "PodArray holds plain data only");

public:
    PodArray() = default;
    PodArray(const PodArray& o) { *this = o; }
    PodArray& operator=(const PodArray& o) {
        if (this == &o) return *this;
        owned_ = o.owned_;
        borrowed_ = o.borrowed_;
        if (borrowed_) { data_ = o.data_; size_ = o.size_; }
        else sync();
        return *this;
    }
    PodArray(PodArray&& o) noexcept { *this = std::move(o); }
    PodArray& operator=(PodArray&& o) noexcept {
        owned_ = std::move(o.owned_);
        borrowed_ = o.borrowed_;
        if (borrowed_) { data_ = o.data_; size_ = o.size_; }
        else sync();
        o.owned_.clear();
        o.borrowed_ = false;
        o.sync();
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
    // Bytes reserved (owned) or mapped (borrowed).
    std::size_t capacity() const { return borrowed_ ? size_ : owned_.capacity(); }

    // Views `count` elements at `elements` without copying; the memory must
    // outlive this array (Model keeps the mapping alive).
    void borrow(const T* elements, std::size_t count) {
        owned_.clear();
        owned_.shrink_to_fit();
        borrowed_ = true;
        data_ = elements;
        size_ = count;
    }
    // Copies borrowed elements into owned storage (no-op when owned).
    void make_owned() {
        if (!borrowed_) return;
        owned_.assign(data_, data_ + size_);
        borrowed_ = false;
        sync();
    }

    // Writes: only on owned arrays.
    T& operator[](std::size_t i) { assert(!borrowed_); return owned_[i]; }
    T& back() { assert(!borrowed_); return owned_.back(); }
    void push_back(const T& v) { assert(!borrowed_); owned_.push_back(v); sync(); }
    template <class... A> T& emplace_back(A&&... a) {
        assert(!borrowed_);
        owned_.emplace_back(std::forward<A>(a)...);
        sync();
        return owned_.back();
    }
    void pop_back() { assert(!borrowed_); owned_.pop_back(); sync(); }
    void reserve(std::size_t n) { assert(!borrowed_); owned_.reserve(n); sync(); }
    void resize(std::size_t n) { assert(!borrowed_); owned_.resize(n); sync(); }
    template <class It> void append(It first, It last) {
        assert(!borrowed_);
        owned_.insert(owned_.end(), first, last);
        sync();
    }
    void clear() { owned_.clear(); borrowed_ = false; sync(); }

private:
    void sync() { data_ = owned_.data(); size_ = owned_.size(); }

    std::vector<T> owned_;
    const T* data_ = nullptr;
    std::size_t size_ = 0;
    bool borrowed_ = false;
};

}  // namespace stacksage
