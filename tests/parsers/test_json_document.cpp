// JsonDocument: the event-log line reader.
#include <gtest/gtest.h>

#include "parsers/json_document.hpp"

using namespace stacksage;

TEST(JsonDocument, ReadsAFlatEvent) {
    JsonDocument d;
    ASSERT_TRUE(d.parse(R"({"v":1,"ev":"thread_start","t":2041038295268,"pid":11076,"cpuset":"0-1","x":null,"b":true,"f":-1.5e3})"));
    EXPECT_EQ(d.get_int("v"), 1);
    EXPECT_EQ(d.get_string("ev"), "thread_start");
    EXPECT_EQ(d.get_int("t"), 2041038295268);
    EXPECT_EQ(d.get_string("cpuset"), "0-1");
    EXPECT_TRUE(d.is_null(d.find(d.root(), "x")));
    EXPECT_EQ(d.get_bool("b"), true);
    EXPECT_EQ(d.get_double("f"), -1500.0);
    EXPECT_FALSE(d.get_int("f"));       // a double is not an integer
    EXPECT_FALSE(d.get_int("missing"));
    EXPECT_FALSE(d.get_string("pid"));  // wrong type
}

TEST(JsonDocument, ReadsNestedObjectsAndArrays) {
    JsonDocument d;
    ASSERT_TRUE(d.parse(R"({"env":{"OMP_NUM_THREADS":"4","OMP_PLACES":"cores"},"threads":[{"tid":1,"cpuset":"0"},{"tid":2}],"e":[],"o":{}})"));
    const auto env = d.find(d.root(), "env");
    EXPECT_EQ(d.size(env), 2u);
    EXPECT_EQ(d.as_string(d.find(env, "OMP_PLACES")), "cores");
    const auto threads = d.find(d.root(), "threads");
    std::vector<std::int64_t> tids;
    for (auto t = d.first_child(threads); t != JsonDocument::kNone; t = d.next(t)) tids.push_back(*d.as_int(d.find(t, "tid")));
    EXPECT_EQ(tids, (std::vector<std::int64_t>{1, 2}));
    EXPECT_EQ(d.size(d.find(d.root(), "e")), 0u);
    EXPECT_EQ(d.first_child(d.find(d.root(), "o")), JsonDocument::kNone);
}

TEST(JsonDocument, DecodesEscapes) {
    JsonDocument d;
    ASSERT_TRUE(d.parse(R"({"s":"a\"b\\c\/d\n\u00e9\ud83d\ude00","t":"plain"})"));
    EXPECT_EQ(d.get_string("s"), "a\"b\\c/d\n\xC3\xA9\xF0\x9F\x98\x80");
    EXPECT_EQ(d.get_string("t"), "plain");
}

TEST(JsonDocument, KeepsUnsignedValuesBeyondInt64AsDoubles) {
    JsonDocument d;
    ASSERT_TRUE(d.parse(R"({"u":18446744073709551615})"));
    EXPECT_FALSE(d.get_int("u"));
    EXPECT_NEAR(*d.get_double("u"), 1.8446744073709552e19, 1e5);
}

TEST(JsonDocument, RefusesBrokenText) {
    JsonDocument d;
    for (const char* bad : {"", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\" 1}", "[1 2]", "{\"a\":tru}", "{\"a\":01}",
                            "{\"a\":\"x", "{\"a\":\"\\q\"}", "{} x", "{\"a\":\"\x01\"}", "nul", "{\"v\":1,\"ev\":\"thr"}) {
        EXPECT_FALSE(d.parse(bad)) << bad;
        EXPECT_FALSE(d.error().empty()) << bad;
    }
}

TEST(JsonDocument, AFailedParseLeavesNoValueToRead) {
    // Text that fails before its first value leaves the document empty:
    // every read must say so rather than read past the values it holds.
    for (const char* empty : {"", " ", "\r\r", "\t\n"}) {
        JsonDocument d;
        EXPECT_FALSE(d.parse(empty));
        EXPECT_EQ(d.type(d.root()), JsonType::Null) << empty;
        EXPECT_EQ(d.size(d.root()), 0u);
        EXPECT_EQ(d.first_child(d.root()), JsonDocument::kNone);
        EXPECT_EQ(d.next(d.root()), JsonDocument::kNone);
        EXPECT_TRUE(d.key(d.root()).empty());
        EXPECT_FALSE(d.get_int("v"));
    }
}

TEST(JsonDocument, LimitsNesting) {
    JsonDocument d;
    EXPECT_FALSE(d.parse(std::string(200, '[') + std::string(200, ']')));
    EXPECT_TRUE(d.parse(std::string(20, '[') + std::string(20, ']')));
}

TEST(JsonDocument, IsReusable) {
    JsonDocument d;
    ASSERT_TRUE(d.parse(R"({"a":"x\ty"})"));
    ASSERT_TRUE(d.parse(R"({"b":2})"));
    EXPECT_FALSE(d.get_string("a"));
    EXPECT_EQ(d.get_int("b"), 2);
}
