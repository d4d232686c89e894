// reports/terminal_text.hpp: the one rule for text bound to a terminal.
#include <gtest/gtest.h>

#include "reports/terminal_text.hpp"

using stacksage::terminal_safe;
using stacksage::terminal_safe_lines;

TEST(TerminalText, ShowsControlCharactersAsHexEscapes) {
    EXPECT_EQ(terminal_safe("a\x1b[2Jb"), "a\\x1b[2Jb");
    EXPECT_EQ(terminal_safe("bell\x07, cr\r, nl\n, del\x7f"), "bell\\x07, cr\\x0d, nl\\x0a, del\\x7f");
    EXPECT_EQ(terminal_safe(std::string_view("nul\0!", 5)), "nul\\x00!");
    EXPECT_EQ(terminal_safe("tab\tstays"), "tab\tstays");
}

TEST(TerminalText, KeepsUtf8ButNotC1ControlsOrBrokenBytes) {
    EXPECT_EQ(terminal_safe("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80");
    EXPECT_EQ(terminal_safe("csi\xc2\x9b" "2J"), "csi\\xc2\\x9b2J");  // U+009B, the 8-bit CSI
    EXPECT_EQ(terminal_safe("raw\x9b" "2J"), "raw\\x9b2J");           // not UTF-8: a Latin-1 terminal's CSI
    EXPECT_EQ(terminal_safe("cut\xe2\x80"), "cut\\xe2\\x80");
    EXPECT_EQ(terminal_safe("overlong\xc0\xaf"), "overlong\\xc0\\xaf");
}

TEST(TerminalText, LinesKeepTheirNewlines) {
    EXPECT_EQ(terminal_safe_lines("one\x1b\ntwo\r\n"), "one\\x1b\ntwo\\x0d\n");
}
