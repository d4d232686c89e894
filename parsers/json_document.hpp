// JsonDocument: a small, fast reader for one JSON text (one event-log line).
//
// Event logs hold millions of short, flat objects. nlohmann::json builds a
// tree of maps and strings for each; this reader parses into one flat array
// of values whose strings point into the line itself (or into one arena when
// they hold escapes), and is reused line after line without allocating once
// its buffers have grown. It reads standard JSON (RFC 8259) and nothing else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stacksage {

enum class JsonType : std::uint8_t { Null, Bool, Int, Float, String, Array, Object };

class JsonDocument {
public:
    // Index of a value in the document; the root is 0.
    using ValueIndex = std::uint32_t;
    static constexpr ValueIndex kNone = 0xffffffffu;

    // Parses text, replacing what the document held. The text must outlive
    // the document's use (strings without escapes point into it).
    //
    // \return true when text is exactly one JSON value, optionally surrounded
    //         by whitespace.
    // \return false otherwise; error() then says what and error_offset() where.
    bool parse(std::string_view text);

    std::string_view error() const { return error_; }
    std::size_t error_offset() const { return error_offset_; }

    // Every read below takes any index: one the document does not hold
    // (kNone, or the root after a parse that failed before its first value)
    // reads as Null, empty or kNone, never past the values held.
    ValueIndex root() const { return 0; }
    JsonType type(ValueIndex v) const { return holds(v) ? values_[v].type : JsonType::Null; }
    bool is_null(ValueIndex v) const { return type(v) == JsonType::Null; }

    // Member of an object by key: the first match; kNone when v is not an
    // object or has no such member. Linear in the object's size.
    ValueIndex find(ValueIndex object, std::string_view key) const;
    // Children of an array or object, in order: first, then next().
    ValueIndex first_child(ValueIndex v) const;
    ValueIndex next(ValueIndex v) const { return holds(v) ? values_[v].next : kNone; }
    std::uint32_t size(ValueIndex v) const;   // members or elements; 0 for scalars
    std::string_view key(ValueIndex member) const { return holds(member) ? values_[member].key : std::string_view(); }

    // Typed reads; nullopt when the value is of another type. Integers are
    // also readable as doubles; doubles are not readable as integers.
    std::optional<std::int64_t> as_int(ValueIndex v) const;
    std::optional<double> as_double(ValueIndex v) const;
    std::optional<bool> as_bool(ValueIndex v) const;
    std::optional<std::string_view> as_string(ValueIndex v) const;

    // Shorthands on the root object: nullopt when the key is absent or of
    // another type.
    std::optional<std::int64_t> get_int(std::string_view key) const { return as_int(find(0, key)); }
    std::optional<double> get_double(std::string_view key) const { return as_double(find(0, key)); }
    std::optional<bool> get_bool(std::string_view key) const { return as_bool(find(0, key)); }
    std::optional<std::string_view> get_string(std::string_view key) const {
        return as_string(find(0, key));
    }

private:
    struct Value {
        JsonType type = JsonType::Null;
        bool boolean = false;
        std::uint32_t count = 0;        // children of arrays and objects
        ValueIndex first = kNone;       // first child
        ValueIndex next = kNone;        // next sibling
        std::int64_t integer = 0;
        double number = 0;
        std::string_view text;          // decoded string
        std::string_view key;           // member name when inside an object
    };

    bool holds(ValueIndex v) const { return v < values_.size(); }
    bool parse_value(std::size_t depth, ValueIndex& out);
    bool parse_string(std::string_view& out);
    bool parse_number(Value& v);
    bool fail(std::string_view why);
    void skip_space();

    std::vector<Value> values_;
    std::string arena_;  // decoded strings that held escapes; never reallocates during a parse
    std::string_view text_;
    std::size_t at_ = 0;
    std::string_view error_;
    std::size_t error_offset_ = 0;
};

}  // namespace stacksage
