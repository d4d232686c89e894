// bench_xml_readers: our XML well-formedness scan (parsers/xml_wellformed)
// against libxml2 on every real topology in tests/data/hwloc-xml (issue 19,
// part 6; docs/PERFORMANCE.md, section "Readers against the libraries").
//
//   bench_xml_readers [--check] [google-benchmark flags]
//
// Rows, per file (all of them, each read into memory once):
//   xml/ours/<file>          is_well_formed_xml with an element callback that
//                            looks at every attribute (as the loader's hwloc
//                            checks do), nothing else
//   xml/ours_all_checks/<f>  check_hwloc_xml_text: the scan with the loader's
//                            hwloc rules, what really runs before hwloc
//   xml/libxml2_sax/<file>   libxml2's SAX2 parser, start-element callback
//                            looking at every attribute, no tree
//   xml/libxml2_reader/<f>   libxml2's xmlTextReader (pull), every attribute
//   xml/libxml2_tree/<file>  xmlReadMemory + xmlFreeDoc (a whole tree, as
//                            hwloc's own libxml2 backend does)
// libxml2 runs with XML_PARSE_NONET, without XML_PARSE_NOENT / DTDLOAD
// (entities not substituted, no external DTD loaded), errors not printed.
//
// --check: the malformed and hostile texts, through every candidate: which
// refuse them, with what message and line (no timing).
#include <benchmark/benchmark.h>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
#include <libxml/xmlreader.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "parsers/hwloc_xml_check.hpp"
#include "parsers/xml_wellformed.hpp"

namespace {

constexpr int kLibxmlOptions = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;

struct Outcome {
    bool ok = false;
    std::size_t line = 0;
    std::string what;
    std::size_t attributes = 0;  // seen: every candidate must agree
};

// ---------------------------------------------------------------------------

Outcome ours(std::string_view text) {
    Outcome o;
    stacksage::XmlProblem p;
    o.ok = stacksage::is_well_formed_xml(text, &p,
                                         [&o](std::string_view, std::span<const stacksage::XmlAttribute> as) {
                                             for (const auto& a : as) o.attributes += a.name.size() + a.raw_value.size() > 0;
                                             return std::string();
                                         });
    if (!o.ok) o.line = p.line, o.what = p.what;
    return o;
}

Outcome ours_all_checks(std::string_view text) {
    Outcome o;
    auto s = stacksage::check_hwloc_xml_text(text, "topology.xml");
    o.ok = static_cast<bool>(s);
    if (!o.ok) o.what = s.error().message;
    return o;
}

// SAX2: only the start-element callback (attributes as pointers into
// libxml2's buffer) and the structured error handler.
void on_start(void* user, const xmlChar*, const xmlChar*, const xmlChar*, int, const xmlChar**, int nb_attributes,
              int, const xmlChar** attributes) {
    auto* o = static_cast<Outcome*>(user);
    // attributes: (localname, prefix, URI, value, end) per attribute.
    for (int i = 0; i < nb_attributes; ++i) {
        const xmlChar* const* a = attributes + 5 * i;
        o->attributes += (std::strlen(reinterpret_cast<const char*>(a[0])) + (a[4] - a[3])) > 0;
    }
}

void on_error(void* user, xmlErrorPtr e) {
    auto* o = static_cast<Outcome*>(user);
    if (e && e->level >= XML_ERR_ERROR && o->what.empty()) {
        o->line = static_cast<std::size_t>(e->line);
        o->what = e->message ? e->message : "?";
        o->what = o->what.substr(0, o->what.find('\n'));  // the first line
    }
}

Outcome libxml2_sax(std::string_view text) {
    Outcome o;
    xmlSAXHandler sax;
    std::memset(&sax, 0, sizeof sax);
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.serror = on_error;
    xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&sax, &o, nullptr, 0, "topology.xml");
    xmlCtxtUseOptions(ctxt, kLibxmlOptions);
    const int rc = xmlParseChunk(ctxt, text.data(), static_cast<int>(text.size()), 1);
    o.ok = rc == 0 && ctxt->wellFormed;
    if (!o.ok && o.what.empty()) o.what = "not well-formed (code " + std::to_string(rc) + ")";
    xmlFreeParserCtxt(ctxt);
    return o;
}

Outcome libxml2_reader(std::string_view text) {
    Outcome o;
    xmlTextReaderPtr r = xmlReaderForMemory(text.data(), static_cast<int>(text.size()), "topology.xml", nullptr,
                                            kLibxmlOptions);
    if (!r) {  // libxml2 2.9 makes no reader for an empty text
        o.what = "no reader (empty text?)";
        return o;
    }
    xmlTextReaderSetStructuredErrorHandler(r, on_error, &o);
    int rc;
    while ((rc = xmlTextReaderRead(r)) == 1) {
        if (xmlTextReaderNodeType(r) != XML_READER_TYPE_ELEMENT) continue;
        while (xmlTextReaderMoveToNextAttribute(r) == 1) {
            const xmlChar* name = xmlTextReaderConstName(r);
            const xmlChar* value = xmlTextReaderConstValue(r);
            o.attributes += (std::strlen(reinterpret_cast<const char*>(name)) +
                             std::strlen(reinterpret_cast<const char*>(value))) > 0;
        }
    }
    o.ok = rc == 0;
    if (!o.ok && o.what.empty()) o.what = "not well-formed";
    xmlFreeTextReader(r);
    return o;
}

// Elements only: an entity reference's children are its declaration's.
void count_attributes(xmlNodePtr element, std::size_t& count) {
    for (xmlAttrPtr a = element->properties; a; a = a->next) ++count;
    for (xmlNodePtr c = element->children; c; c = c->next)
        if (c->type == XML_ELEMENT_NODE) count_attributes(c, count);
}

Outcome libxml2_tree(std::string_view text) {
    Outcome o;
    // The first error, as the other candidates report it (xmlGetLastError
    // would give the last one).
    xmlSetStructuredErrorFunc(&o, on_error);
    xmlDocPtr doc = xmlReadMemory(text.data(), static_cast<int>(text.size()), "topology.xml", nullptr, kLibxmlOptions);
    xmlSetStructuredErrorFunc(nullptr, nullptr);
    o.ok = doc != nullptr;
    if (!o.ok) {
        if (o.what.empty()) o.what = "not well-formed";
    } else {
        count_attributes(xmlDocGetRootElement(doc), o.attributes);
        xmlFreeDoc(doc);
    }
    return o;
}

// ---------------------------------------------------------------------------

struct XmlFile {
    std::string name;
    std::string text;
};

std::vector<XmlFile> load_files() {
    std::vector<XmlFile> files;
    for (auto& e : std::filesystem::directory_iterator(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml")) {
        if (e.path().extension() != ".xml") continue;
        std::ifstream in(e.path(), std::ios::binary);
        files.push_back({e.path().stem().string(), std::string(std::istreambuf_iterator<char>(in), {})});
    }
    std::sort(files.begin(), files.end(), [](const XmlFile& a, const XmlFile& b) { return a.name < b.name; });
    return files;
}

using Candidate = Outcome (*)(std::string_view);

int check() {
    using namespace std::string_view_literals;
    const std::pair<const char*, std::string_view> cases[] = {
        // tests/parsers/test_xml_wellformed.cpp
        {"unclosed attribute value", "<topology\nversion=\"2.0 />"},
        {"attributes not separated", "<a b=\"1\" c=\"2,\"3\"/>"},
        {"unquoted value", "<a b=1/>"},
        {"'<' in a value", "<a b=\"x<y\"/>"},
        {"mismatched end tag", "<a><b></a>"},
        {"unclosed root", "<a>"},
        {"second root", "<a/><b/>"},
        {"reference without ';'", "<a>&bogus</a>"},
        {"bare '&'", "<a>& x</a>"},
        {"reference without ';', line 2", "<a>\n  &bogus\n</a>"},
        {"NUL byte, line 2", "<a>\n<b x=\"1\0\"/></a>"sv},
        {"bad char reference, line 2", "<a>\n  text &#xZ; <b/></a>"},
        {"unclosed comment", "<a><!-- never closed</a>"},
        {"empty", ""},
        {"text before the root", "junk<a/>"},
        {"'=' expected, line 3", "<a\n\n b"},
        {"end tag first", "</a>"},
        // hostile
        {"undeclared entity &foo;", "<topology>&foo;</topology>"},
        {"external entity (file)",
         "<?xml version=\"1.0\"?>\n<!DOCTYPE t [<!ENTITY x SYSTEM \"file:///etc/hostname\">]>\n<t a=\"1\">&x;</t>"},
        {"external DTD (network)",
         "<?xml version=\"1.0\"?>\n<!DOCTYPE t SYSTEM \"http://example.invalid/x.dtd\">\n<t/>"},
        {"billion laughs",
         "<?xml version=\"1.0\"?>\n<!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
         "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\"><!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">"
         "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\"><!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">"
         "<!ENTITY g \"&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;\"><!ENTITY h \"&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;\">]>\n"
         "<l>&h;</l>"},
        {"entity in an attribute", "<?xml version=\"1.0\"?>\n<!DOCTYPE t [<!ENTITY x \"1\">]>\n<t a=\"&x;\"/>"},
        {"invalid UTF-8 in a value", "<t a=\"\xff\xfe\"/>"},
    };
    std::string deep;
    for (int i = 0; i < 10000; ++i) deep += "<a>";
    for (int i = 0; i < 10000; ++i) deep += "</a>";
    const std::pair<const char*, Candidate> candidates[] = {
        {"ours", ours}, {"libxml2 SAX", libxml2_sax}, {"libxml2 reader", libxml2_reader}, {"libxml2 tree", libxml2_tree}};
    auto show = [&](const char* what, std::string_view text) {
        std::printf("%s\n", what);
        for (const auto& [name, c] : candidates) {
            const Outcome o = c(text);
            std::printf("    %-15s %s", name, o.ok ? "accepted" : "refused");
            if (!o.ok) std::printf(", line %zu: %s", o.line, o.what.c_str());
            std::printf("\n");
        }
    };
    for (const auto& [what, text] : cases) show(what, text);
    show("10,000 nested elements", deep);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    xmlInitParser();
    benchmark::Initialize(&argc, argv);
    for (int i = 1; i < argc; ++i)
        if (std::string_view(argv[i]) == "--check") return check();
    static const std::vector<XmlFile> files = load_files();
    // Every candidate must accept every file and see the same attributes.
    bool agree = true;
    for (const XmlFile& f : files) {
        const Outcome a = ours(f.text), b = libxml2_sax(f.text), c = libxml2_reader(f.text), d = libxml2_tree(f.text);
        const Outcome e = ours_all_checks(f.text);
        if (!a.ok || !b.ok || !c.ok || !d.ok || !e.ok || a.attributes != b.attributes ||
            a.attributes != c.attributes || a.attributes != d.attributes) {
            std::cerr << f.name << ": candidates differ: ours " << a.ok << "/" << a.attributes << " " << a.what
                      << ", sax " << b.ok << "/" << b.attributes << " " << b.what << ", reader " << c.ok << "/"
                      << c.attributes << " " << c.what << ", tree " << d.ok << "/" << d.attributes << " " << d.what
                      << ", all checks " << e.ok << " " << e.what << "\n";
            agree = false;
        }
    }
    if (!agree) return 1;
    std::size_t total = 0;
    for (const XmlFile& f : files) total += f.text.size();
    std::cerr << files.size() << " files, " << total << " bytes: candidates agree\n";
    const std::pair<const char*, Candidate> candidates[] = {{"ours", ours},
                                                            {"ours_all_checks", ours_all_checks},
                                                            {"libxml2_sax", libxml2_sax},
                                                            {"libxml2_reader", libxml2_reader},
                                                            {"libxml2_tree", libxml2_tree}};
    for (const auto& [name, c] : candidates) {
        // All files in one row (the sum of the bytes), then one row per file.
        benchmark::RegisterBenchmark((std::string("xml/") + name + "/all").c_str(), [c = c](benchmark::State& state) {
            std::size_t bytes = 0;
            for (auto _ : state)
                for (const XmlFile& f : files) {
                    benchmark::DoNotOptimize(c(f.text));
                    bytes += f.text.size();
                }
            state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
        });
        for (const XmlFile& f : files)
            benchmark::RegisterBenchmark((std::string("xml/") + name + "/" + f.name).c_str(),
                                         [c = c, &f](benchmark::State& state) {
                                             for (auto _ : state) benchmark::DoNotOptimize(c(f.text));
                                             state.SetBytesProcessed(
                                                 static_cast<std::int64_t>(state.iterations() * f.text.size()));
                                         });
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    xmlCleanupParser();
    return 0;
}
