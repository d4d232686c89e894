#include "parsers/command_line.hpp"

namespace stacksage {

std::string join_command(const std::vector<std::string>& args) {
    std::string out;
    for (const std::string& a : args) {
        if (!out.empty()) out += ' ';
        const bool quote = a.empty() || a.find_first_of(" \t\"'$") != std::string::npos;
        if (quote) {
            out += '\'';
            for (char c : a) {
                if (c == '\'') out += "'\\''";
                else out += c;
            }
            out += '\'';
        } else {
            out += a;
        }
    }
    return out;
}

}  // namespace stacksage
