// The EXIT STATUS and ENVIRONMENT sections of `stacksage --help` and of each
// subcommand's --help (the man pages are generated from that help, so they
// carry the same sections).
#pragma once

#include <string>

namespace CLI { class App; }

namespace stacksage::cli {

// The sections for `command` ("" for `stacksage` itself, else a subcommand's
// name). Every subcommand registered in main.cpp has them; an unknown name
// gets only the exit codes every command shares.
std::string exit_status_and_environment(const std::string& command);

// Appends those sections to the footer of `app` and of every subcommand,
// and gives every subcommand --version.
void add_help_sections_and_version(CLI::App& app, const std::string& version);

}  // namespace stacksage::cli
