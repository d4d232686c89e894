#!/bin/sh
# Writes a man page from a command's own --help and --version, so the page
# never says something the command does not (the help carries the EXIT
# STATUS and ENVIRONMENT sections, cli/help_sections.cpp).
#   help-to-man.sh STACKSAGE [SUBCOMMAND] > stacksage[-SUBCOMMAND].1
set -eu
stacksage=$1
sub=${2:-}
name=stacksage${sub:+-$sub}
help=$("$stacksage" ${sub:+"$sub"} --help)
version=$("$stacksage" ${sub:+"$sub"} --version | awk '{ print $NF }')

# The help's first line is the description, unless it starts with "Usage:"
# (a subcommand's help begins with its description, then "Usage:").
printf '%s\n' "$help" | awk -v name="$name" -v version="$version" '
  function roff(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    if (s ~ /^[.'"'"']/) s = "\\&" s
    return s
  }
  BEGIN {
    printf ".TH %s 1 \"\" \"stacksage %s\" \"User Commands\"\n", toupper(name), version
    section = ""
  }
  NR == 1 && $0 !~ /^Usage:/ {
    print ".SH NAME"
    d = $0; sub(/^stacksage: /, "", d)
    printf "%s \\- %s\n", roff(name), roff(d)
    next
  }
  /^Usage:/ {
    print ".SH SYNOPSIS"
    u = $0; sub(/^Usage: */, "", u); sub(/^[^ ]*\//, "", u)
    print ".nf"; print roff(u); print ".fi"
    next
  }
  # A heading: "Options:", "Subcommands:", "EXIT STATUS:", "Positionals:".
  /^[A-Za-z][A-Za-z ]*:$/ {
    if (open) { print ".fi"; open = 0 }
    h = $0; sub(/:$/, "", h)
    section = toupper(h)
    printf ".SH %s\n", section
    print ".nf"; open = 1
    next
  }
  # Blank lines outside a section (after the synopsis) carry nothing.
  /^$/ && !open { next }
  # Unindented text after a section (a footer such as the notes of `run` on
  # mpirun) is its own section, not part of the option list.
  /^[^ ]/ && section != "NOTES" {
    if (open) print ".fi"
    section = open ? "NOTES" : "DESCRIPTION"
    printf ".SH %s\n", section
    print ".nf"; open = 1
  }
  { print roff($0) }
  END {
    if (open) print ".fi"
    print ".SH SEE ALSO"
    if (name == "stacksage")
      print "stacksage\\-run(1), stacksage\\-report(1), stacksage\\-check(1), stacksage\\-topo(1); <prefix>/share/doc/stacksage/"
    else
      print "stacksage(1); <prefix>/share/doc/stacksage/"
  }
'
