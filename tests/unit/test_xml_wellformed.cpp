#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

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
