// Typed attribute keys: a key that carries the type of the values it holds,
// so that reading an int attribute as a string does not compile.
//
// A schema declares names with their types (AttrName); a Model interns a
// name into a Key of the same type (Model::get / Model::set take Keys).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stacksage {

class Cpuset;

// An interned attribute name, numbered per Model (Model::key).
using AttrKey = std::uint32_t;

// The number of no key: what a Key holds when the Model it was looked up in
// does not have the name (a model only read, never given that attribute).
// No attribute carries it, so reading it finds nothing.
inline constexpr AttrKey kAbsentKey = 0xffffffffu;

// What a reader gets for a value of type T, and what a writer gives.
template <class T> struct AttrTypes;
template <> struct AttrTypes<std::int64_t> {
    using Read = std::int64_t;
    using Write = std::int64_t;
};
template <> struct AttrTypes<double> {
    using Read = double;
    using Write = double;
};
template <> struct AttrTypes<std::string> {
    using Read = std::string_view;  // points into the Model: valid until it changes
    using Write = std::string_view;
};
template <> struct AttrTypes<Cpuset> {
    using Read = Cpuset;
    using Write = const Cpuset&;
};

// A name the schema declares with the type of its values. It is the name
// (a string_view), so it also works where only the name is wanted.
template <class T> struct AttrName : std::string_view {
    using value_type = T;
    constexpr explicit AttrName(const char* name) : std::string_view(name) {}
};

// An attribute key of one Model with the type of its values.
template <class T> struct Key {
    using value_type = T;
    AttrKey id = kAbsentKey;
    // False for a key the model does not have (kAbsentKey).
    constexpr bool present() const { return id != kAbsentKey; }
    friend constexpr bool operator==(Key, Key) = default;
};

// A key every Model has, at a fixed number (attribute_keys.hpp): also usable
// as a plain AttrKey, as the untyped Model calls take.
template <class T> struct FixedKey : Key<T> {
    constexpr explicit FixedKey(AttrKey number) : Key<T>{number} {}
    constexpr operator AttrKey() const { return this->id; }
};

}  // namespace stacksage
