// Enums that are written as words (in the model, the event log, the
// reports): one table of words per enum, in the enum's order, read both
// ways through these two functions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace stacksage {

// The word of `value`: words[value].
template <class Enum, std::size_t N>
constexpr std::string_view word_of(const std::array<std::string_view, N>& words, Enum value) {
    return words[static_cast<std::size_t>(value)];
}

// The value whose word is `word`; nullopt for a word the table lacks.
template <class Enum, std::size_t N>
constexpr std::optional<Enum> enum_of_word(const std::array<std::string_view, N>& words, std::string_view word) {
    for (std::size_t i = 0; i < N; ++i)
        if (words[i] == word) return static_cast<Enum>(i);
    return std::nullopt;
}

}  // namespace stacksage
