#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "parsers/xml_wellformed.hpp"

using namespace stacksage;

TEST(XmlWellFormed, AcceptsWhatHwlocWrites) {
    for (auto& e : std::filesystem::directory_iterator(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml")) {
        if (e.path().extension() != ".xml") continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::string text{std::istreambuf_iterator<char>(in), {}};
        XmlProblem p;
        EXPECT_TRUE(is_well_formed_xml(text, &p)) << e.path() << ": line " << p.line << ": " << p.what;
    }
    EXPECT_TRUE(is_well_formed_xml("<?xml version=\"1.0\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
                                   "<topology version='2.0'><!-- c --><info name=\"a&amp;b&#65;&#x42;\"/>"
                                   "<![CDATA[x<y]]>text</topology>\n",
                                   nullptr));
}

TEST(XmlWellFormed, RefusesMalformedMarkupWithItsPlace) {
    struct Case {
        std::string_view text;
        const char* what;
        std::size_t line;
    };
    using namespace std::string_view_literals;
    const Case cases[] = {
        {"<topology\nversion=\"2.0 />", "attribute value is not closed", 2},
        {"<a b=\"1\" c=\"2,\"3\"/>", "attributes must be separated", 1},
        {"<a b=1/>", "must be quoted", 1},
        {"<a b=\"x<y\"/>", "'<' inside an attribute value", 1},
        {"<a><b></a>", "does not match", 1},
        {"<a>", "is not closed", 1},
        {"<a/><b/>", "second root", 1},
        {"<a>&bogus</a>", "not ended by ';'", 1},
        {"<a>& x</a>", "does not start a reference", 1},
        {"<a>\n  &bogus\n</a>", "not ended by ';'", 2},  // indentation is skipped quickly, text is not
        {"<a>\n<b x=\"1\0\"/></a>"sv, "a NUL byte", 2},  // sv: the literal keeps its NUL
        {"<a>\n  text &#xZ; <b/></a>", "malformed character reference", 2},
        {"<a><!-- never closed</a>", "comment is not closed", 1},
        {"", "no root element", 1},
        {"junk<a/>", "text outside the root", 1},
        {"<a\n\n b", "'=' expected", 3},
        {"</a>", "without a start tag", 1},
    };
    for (const auto& c : cases) {
        XmlProblem p;
        EXPECT_FALSE(is_well_formed_xml(c.text, &p)) << c.text;
        EXPECT_NE(p.what.find(c.what), std::string::npos) << c.text << " -> " << p.what;
        EXPECT_EQ(p.line, c.line) << c.text;
    }
}

namespace {

// The text in a heap block of exactly its size, so that AddressSanitizer
// reports any read past its end (the scans read 16 bytes at a time).
struct ExactText {
    std::unique_ptr<char[]> bytes;
    std::size_t size;
    explicit ExactText(std::string_view s) : bytes(new char[s.size()]), size(s.size()) {
        std::memcpy(bytes.get(), s.data(), s.size());
    }
    std::string_view view() const { return {bytes.get(), size}; }
};

struct Seen {
    std::vector<std::string> tags, names, values;
};

bool scan(std::string_view text, Seen* seen, XmlProblem* problem) {
    const ExactText exact(text);
    return is_well_formed_xml(exact.view(), problem, [&](std::string_view tag, std::span<const XmlAttribute> as) {
        seen->tags.emplace_back(tag);
        for (const XmlAttribute& a : as) {
            seen->names.emplace_back(a.name);
            seen->values.emplace_back(a.raw_value);
        }
        return std::string();
    });
}

}  // namespace

// Names, values and indentation are scanned 16 bytes at a time, with the
// rare bytes (upper case, '-', '.', tabs, references) left to a byte loop:
// every length across a block's end, every place of the rare byte, and
// texts that end right after it must give what a byte-by-byte reading gives.
TEST(XmlWellFormed, BlockScansAgreeWithTheByteRulesAtEveryLengthAndPlace) {
    for (std::size_t length = 1; length <= 40; ++length) {
        for (std::size_t place = 0; place < length; ++place) {
            for (char rare : {'A', '-', '.', '7', 'z'}) {
                std::string name(length, 'q');
                if (place > 0 || rare == 'A' || rare == 'z') name[place] = rare;  // names start with a letter
                const std::string value = std::string(place, '0') + "&amp;" + std::string(length - place, 'f');
                const std::string indent = std::string(place, ' ') + "\t" + std::string(length - place, ' ');
                const std::string text = "<r>\n" + indent + "<" + name + " " + name + "=\"" + value + "\"/>\n</r>";
                Seen seen;
                XmlProblem problem;
                ASSERT_TRUE(scan(text, &seen, &problem)) << text << ": " << problem.what;
                ASSERT_EQ(seen.tags.size(), 2u);
                EXPECT_EQ(seen.tags[1], name);
                ASSERT_EQ(seen.names.size(), 1u);
                EXPECT_EQ(seen.names[0], name);
                EXPECT_EQ(seen.values[0], value);
            }
            // A byte that ends a name, and one a value may not hold.
            std::string cut(length, 'q');
            cut[place] = '=';
            Seen seen;
            XmlProblem problem;
            const std::string bad_name = "<r " + cut + "\"1\"/>";
            EXPECT_FALSE(scan(bad_name, &seen, &problem) && seen.names.size() == 1 && seen.names[0] == cut)
                << bad_name;
            std::string lt(length, '0');
            lt[place] = '<';
            const std::string bad_value = "<r a=\"" + lt + "\"/>";
            EXPECT_FALSE(scan(bad_value, &seen, &problem)) << bad_value;
            EXPECT_NE(problem.what.find("'<' inside an attribute value"), std::string::npos) << bad_value;
        }
    }
    // Texts cut at every length: refused, never read past their end.
    const std::string whole = "<topology version=\"2.0\">\n  <object type=\"Machine\" cpuset=\"0x000000ff,0xffffffff\""
                              " complete_cpuset=\"0x0000ffff\">\n                    <info name=\"a\" value=\"b\"/>\n"
                              "  </object>\n</topology>\n";
    for (std::size_t n = 0; n < whole.size(); ++n) {
        Seen seen;
        XmlProblem problem;
        const bool ok = scan(std::string_view(whole).substr(0, n), &seen, &problem);
        EXPECT_EQ(ok, n >= whole.size() - 1) << n;  // only the final line break may go
    }
}
