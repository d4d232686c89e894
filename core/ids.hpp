// Small integer handles for the things a Model owns.
//
// Components and DataPaths are addressed by index, never by pointer, so a
// model can be copied, written as one image and mapped anywhere (DESIGN.md).
// enum classes keep the two kinds of id from being mixed up.
#pragma once

#include <cstdint>
#include <functional>

namespace stacksage {

enum class ComponentId : std::uint32_t {};
enum class DataPathId : std::uint32_t {};

inline constexpr ComponentId kNoComponent{0xffffffffu};
inline constexpr DataPathId kNoDataPath{0xffffffffu};

constexpr std::uint32_t index_of(ComponentId id) { return static_cast<std::uint32_t>(id); }
constexpr std::uint32_t index_of(DataPathId id) { return static_cast<std::uint32_t>(id); }

}  // namespace stacksage
