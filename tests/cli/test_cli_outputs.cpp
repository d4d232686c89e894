// What the stacksage command does when its output cannot be written (a full
// disk, a closed descriptor) or lands where it should not (a symbolic link
// planted at the name of a file it writes): docs/RELIABILITY.md, "Outputs and
// exit status".
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/synthetic_run.hpp"

using namespace stacksage::testing;

namespace {

const std::string kStacksage = std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage";
const std::string kData = STACKSAGE_TEST_DATA_DIR;

// A command line run by /bin/sh, its own redirections as given: the exit
// code, or -1 when it did not exit (an abort reads as -1, not 134).
int exit_code_of(const std::string& command_line) {
    const int status = std::system(command_line.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// A one-node run with a process that created threads: something to report.
void write_small_run(const TempDir& dir) {
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 1000, 0, 3, "0-3"));
}

class CliOutputs : public ::testing::Test {
protected:
    void SetUp() override { write_small_run(run_); }
    std::string dir() const { return run_.str(); }
    std::string err_file() const { return (scratch_.path() / "err.txt").string(); }
    std::string err() const { return read_file(err_file()); }
    TempDir run_, scratch_;
};

TEST_F(CliOutputs, EveryReportFormatToAFullStdoutExitsTwoAndSaysSo) {
    for (const char* format : {"text", "json", "perfetto", "graphml"}) {
        const int code = exit_code_of(kStacksage + " report " + dir() + " --format " + format + " >/dev/full 2>" +
                                      err_file());
        EXPECT_EQ(code, 2) << format;
        EXPECT_NE(err().find("cannot write to standard output: No space left on device"), std::string::npos)
            << format << ": " << err();
    }
}

TEST_F(CliOutputs, TopoAndCheckToAFullStdoutExitTwo) {
    const std::string xml = kData + "/hwloc-xml/emmett.xml";
    EXPECT_EQ(exit_code_of(kStacksage + " topo -i " + xml + " >/dev/full 2>" + err_file()), 2);
    EXPECT_NE(err().find("stacksage topo: cannot write to standard output"), std::string::npos) << err();
    EXPECT_EQ(exit_code_of(kStacksage + " topo -i " + xml + " --format json >/dev/full 2>" + err_file()), 2);
    // check: 1 (findings) or 0 when written; 2 when what it says is lost.
    EXPECT_EQ(exit_code_of(kStacksage + " check " + dir() + " --fail-on error >/dev/full 2>" + err_file()), 2);
    EXPECT_NE(err().find("stacksage check: cannot write to standard output"), std::string::npos) << err();
}

TEST_F(CliOutputs, AClosedStdoutIsAFailedWrite) {
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " >&- 2>" + err_file()), 2);
    EXPECT_NE(err().find("cannot write to standard output"), std::string::npos) << err();
    EXPECT_EQ(exit_code_of(kStacksage + " topo -i " + kData + "/hwloc-xml/emmett.xml >&- 2>/dev/null"), 2);
}

// Messages on a full or closed stderr: exit 2, no abort; nothing to say, nothing lost.
TEST_F(CliOutputs, AFullOrClosedStderrExitsTwoOnlyWhenAMessageIsLost) {
    const std::string report = kStacksage + " report " + dir() + " --timings >/dev/null";
    EXPECT_EQ(exit_code_of(report + " 2>/dev/full"), 2);
    EXPECT_EQ(exit_code_of(report + " 2>&-"), 2);
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " >/dev/null 2>&-"), 0);
    EXPECT_EQ(exit_code_of(kStacksage + " report /nonexistent-run-dir >/dev/null 2>/dev/full"), 2);
    EXPECT_EQ(exit_code_of(kStacksage + " --help >/dev/full"), 2);
    EXPECT_EQ(exit_code_of(kStacksage + " --help >/dev/null"), 0);
}

// With stderr closed, the HTML page must not land on descriptor 2 and get
// the command's messages written into it.
TEST_F(CliOutputs, AFileWrittenWithStderrClosedGetsOnlyItsContent) {
    const auto page = scratch_.path() / "page.html";
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " --html " + page.string() + " >/dev/null 2>&-"), 2);
    const std::string html = read_file(page);
    EXPECT_EQ(html.find("stacksage report: wrote"), std::string::npos);
    EXPECT_NE(html.find("</html>"), std::string::npos);
}

// A symbolic link planted at the name of a file the command writes: refused,
// its target untouched; a regular file there is replaced as asked.
TEST_F(CliOutputs, OutputFilesAreNotWrittenThroughSymbolicLinks) {
    const auto victim = scratch_.path() / "victim";
    std::ofstream(victim) << "precious\n";
    for (const char* option : {"--html", "-o", "--output"}) {
        const auto link = run_.path() / "report.out";
        std::filesystem::remove(link);
        std::filesystem::create_symlink(victim, link);
        EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " " + option + " " + link.string() + " >/dev/null 2>" +
                               err_file()),
                  2)
            << option;
        EXPECT_EQ(read_file(victim), "precious\n") << option;
        EXPECT_TRUE(std::filesystem::is_symlink(link)) << option;
        EXPECT_NE(err().find(link.string() + "' is a symbolic link"), std::string::npos) << option << ": " << err();
    }
    const auto regular = scratch_.path() / "report.json";
    std::ofstream(regular) << "old\n";
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " -f json -o " + regular.string()), 0);
    EXPECT_NE(read_file(regular).find("\"schema\": \"stacksage-report\""), std::string::npos);
}

TEST_F(CliOutputs, AnOutputFileThatCannotBeWrittenNamesTheFile) {
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " -o /dev/full 2>" + err_file()), 2);
    EXPECT_NE(err().find("cannot write '/dev/full': No space left on device"), std::string::npos) << err();
    EXPECT_EQ(exit_code_of(kStacksage + " report " + dir() + " --html /nonexistent-dir/x.html >/dev/null 2>" +
                           err_file()),
              2);
    EXPECT_NE(err().find("'/nonexistent-dir/x.html'"), std::string::npos) << err();
}

}  // namespace
