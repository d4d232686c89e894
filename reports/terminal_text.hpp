// Text from a recorded run (program names, thread names, command lines,
// paths) shown on a terminal: the one rule that keeps it from driving the
// terminal (clearing the screen, setting the title, moving the cursor, a
// carriage return overwriting a line).
//
// Rule: every C0 control character but tab (bytes 0x00-0x1f), DEL (0x7f),
// the C1 controls encoded in UTF-8 (U+0080-U+009F) and every byte that is not
// part of a valid UTF-8 sequence are shown as \xNN, two lower-case hex
// digits per byte ("\x1b[2J" for ESC [ 2 J). Valid UTF-8 stays as it is.
// Backslashes are not doubled: the escapes are for a reader, not a parser
// (the JSON report has the exact bytes).
#pragma once

#include <string>
#include <string_view>

namespace stacksage {

// \return text with the rule applied; a newline is escaped too (\x0a), so
//         that a name cannot start a line of its own.
std::string terminal_safe(std::string_view text);

// \return the same, but newlines kept: for text made of lines (a rendered
//         report, a message) whose every part may come from a run.
std::string terminal_safe_lines(std::string_view text);

}  // namespace stacksage
