#include "reports/json_stream.hpp"

#include <algorithm>
#include <vector>

namespace stacksage {

namespace {

using json = nlohmann::json;

class JsonTextWriter {
public:
    JsonTextWriter(const TextSink& sink, int indent) : sink_(sink), indent_(indent) {}

    // A value starting at the cursor, its inner lines indented as at `depth`:
    // dump() indents from column 0, and strings hold no raw newline (they
    // are escaped), so each newline of its text is followed by depth's
    // indentation.
    void value(const json& v, int depth) {
        const std::string text = v.dump(indent_, ' ', false, json::error_handler_t::replace);
        if (indent_ < 0 || depth == 0) {
            sink_(text);
            return;
        }
        const std::string pad = newline_and_indent(depth);
        std::size_t from = 0;
        for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
            sink_(std::string_view(text).substr(from, nl - from));
            sink_(pad);
            from = nl + 1;
        }
        sink_(std::string_view(text).substr(from));
    }

    void array(const StreamedArray& a, int depth) {
        if (a.count == 0) {
            sink_("[]");
            return;
        }
        sink_("[");
        for (std::size_t i = 0; i < a.count; ++i) {
            if (i > 0) sink_(",");
            if (indent_ >= 0) sink_(newline_and_indent(depth + 1));
            value(a.element(i), depth + 1);
        }
        if (indent_ >= 0) sink_(newline_and_indent(depth));
        sink_("]");
    }

    void object(const json& members, const std::map<std::string, StreamedArray, std::less<>>& streamed) {
        // nlohmann's objects are std::maps: keys in byte order, as the map's.
        struct Member {
            std::string_view key;
            const json* value;
            const StreamedArray* array;
        };
        std::vector<Member> all;
        for (auto it = members.begin(); it != members.end(); ++it)
            if (!streamed.contains(it.key())) all.push_back({it.key(), &it.value(), nullptr});
        for (const auto& [key, array] : streamed) all.push_back({key, nullptr, &array});
        std::sort(all.begin(), all.end(), [](const Member& a, const Member& b) { return a.key < b.key; });
        if (all.empty()) {
            sink_("{}");
            return;
        }
        sink_("{");
        for (std::size_t i = 0; i < all.size(); ++i) {
            if (i > 0) sink_(",");
            if (indent_ >= 0) sink_(newline_and_indent(1));
            sink_(json(all[i].key).dump(-1, ' ', false, json::error_handler_t::replace));
            sink_(indent_ >= 0 ? ": " : ":");
            if (all[i].array) array(*all[i].array, 1);
            else value(*all[i].value, 1);
        }
        if (indent_ >= 0) sink_("\n");
        sink_("}");
    }

private:
    std::string newline_and_indent(int depth) const {
        return "\n" + std::string(static_cast<std::size_t>(depth * indent_), ' ');
    }

    const TextSink& sink_;
    int indent_;
};

}  // namespace

void write_json_object(const TextSink& sink, const nlohmann::json& members,
                       const std::map<std::string, StreamedArray, std::less<>>& streamed, int indent) {
    JsonTextWriter(sink, indent).object(members, streamed);
}

}  // namespace stacksage
