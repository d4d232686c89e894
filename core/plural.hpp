// Counted nouns for the reports and the advice: "1 process", "3 processes",
// "2 cores". One helper, so that no caller builds a plural by appending "s"
// to a word that takes "es" ("processs").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace stacksage {

// The English plural of a singular noun: "es" after s, x, z, ch and sh
// ("process" -> "processes"), "s" otherwise ("core" -> "cores", "CPU" ->
// "CPUs", "OpenMP thread" -> "OpenMP threads": the last word decides).
inline std::string plural_of(std::string_view noun) {
    std::string s(noun);
    const bool sibilant =
        s.ends_with("s") || s.ends_with("x") || s.ends_with("z") || s.ends_with("ch") || s.ends_with("sh");
    return s + (sibilant && !s.empty() ? "es" : "s");
}

// "1 core", "2 cores": n and the noun in the number n takes.
inline std::string counted(std::size_t n, std::string_view noun) {
    return std::to_string(n) + " " + (n == 1 ? std::string(noun) : plural_of(noun));
}

// As counted(), for nouns whose plural is irregular or that are phrases
// whose plural is not at the end: n, then `one` or `many`.
inline std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

}  // namespace stacksage
