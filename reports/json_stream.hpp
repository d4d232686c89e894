// JSON text written piece by piece, exactly as nlohmann::json::dump would
// write the whole document: a report of a million ranks is never one
// document in memory (its DOM takes about ten times its text), only one
// element of its large arrays at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace stacksage {

// Receives the text in pieces, in order.
using TextSink = std::function<void(std::string_view)>;

// An array member of an object, made one element at a time. element() is
// called from several threads at once (for different i): it must only read
// shared data.
struct StreamedArray {
    std::size_t count = 0;
    std::function<nlohmann::json(std::size_t)> element;  // element(i), i < count
};

// Writes the object `members` plus the `streamed` arrays as its further
// members, in nlohmann's key order, in the text dump(indent, ' ', false,
// error_handler_t::replace) gives (indent -1: compact). A key in both is
// written once, from `streamed`.
void write_json_object(const TextSink& sink, const nlohmann::json& members,
                       const std::map<std::string, StreamedArray, std::less<>>& streamed, int indent);

// A sink that gathers the pieces into one string (tests, small reports).
inline TextSink string_sink(std::string& out) {
    return [&out](std::string_view piece) { out.append(piece); };
}

}  // namespace stacksage
