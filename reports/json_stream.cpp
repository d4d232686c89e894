#include "reports/json_stream.hpp"

#include <algorithm>
#include <future>
#include <thread>
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
    std::string text_of(const json& v, int depth) const {
        std::string text = v.dump(indent_, ' ', false, json::error_handler_t::replace);
        if (indent_ < 0 || depth == 0 || text.find('\n') == std::string::npos) return text;
        const std::string pad = newline_and_indent(depth);
        std::string out;
        out.reserve(text.size() + text.size() / 4);
        std::size_t from = 0;
        for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
            out.append(text, from, nl - from);
            out += pad;
            from = nl + 1;
        }
        out.append(text, from, std::string::npos);
        return out;
    }

    // The elements are made and turned into text on every core, a batch at
    // a time, and written in order: at a million ranks this is most of a
    // report's time, and each element reads only what the analysis left.
    void array(const StreamedArray& a, int depth) {
        if (a.count == 0) {
            sink_("[]");
            return;
        }
        sink_("[");
        const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
        // Batches of about kBatchBytes of text: a node's page data is tens
        // of KB, a flow's a hundred bytes; the first batch measures.
        constexpr std::size_t kBatchBytes = std::size_t{4} << 20;
        std::size_t batch = 16;
        std::vector<std::string> texts;
        for (std::size_t first = 0; first < a.count; first += texts.size()) {
            const std::size_t n = std::min(batch, a.count - first);
            texts.assign(n, std::string());
            auto render = [&](std::size_t from, std::size_t to) {
                for (std::size_t i = from; i < to; ++i) texts[i - first] = text_of(a.element(i), depth + 1);
            };
            const std::size_t parts = n < 16 ? 1 : threads;
            std::vector<std::future<void>> others;
            for (std::size_t p = 1; p < parts; ++p)
                others.push_back(std::async(std::launch::async, render, first + n * p / parts, first + n * (p + 1) / parts));
            render(first, first + n / parts);
            for (std::future<void>& other : others) other.get();  // rethrows what an element threw
            std::size_t bytes = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (first + i > 0) sink_(",");
                if (indent_ >= 0) sink_(newline_and_indent(depth + 1));
                sink_(texts[i]);
                bytes += texts[i].size();
            }
            batch = std::clamp<std::size_t>(kBatchBytes / std::max<std::size_t>(1, bytes / n), 16, 8192);
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
            else sink_(text_of(*all[i].value, 1));
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
