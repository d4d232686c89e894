#!/usr/bin/env bash
# What an installed command owes its users: `--version` on the command and
# on every subcommand (the version of CMakeLists.txt's project()), help that
# states the exit codes and the environment variables, and an unknown
# subcommand called one, with exit status 2.
#   test_cli_conventions.sh STACKSAGE VERSION
set -uo pipefail
stacksage=$1 version=$2
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

subs=$("$stacksage" --help | awk '/^Subcommands:/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }')
[ "$(echo $subs)" = "topo run report check" ] || fail "subcommands listed by --help: '$(echo $subs)'"
[ "$("$stacksage" --version)" = "stacksage $version" ] || fail "stacksage --version: '$("$stacksage" --version)'"
"$stacksage" --help | grep -q '^EXIT STATUS:' || fail "stacksage --help has no EXIT STATUS"
for sub in $subs; do
  out=$("$stacksage" "$sub" --version); rc=$?
  [ "$rc" -eq 0 ] && [ "$out" = "stacksage $sub $version" ] || fail "stacksage $sub --version: '$out' (exit $rc)"
  help=$("$stacksage" "$sub" --help)
  grep -q '^EXIT STATUS:' <<<"$help" || fail "stacksage $sub --help has no EXIT STATUS"
  grep -q '^ENVIRONMENT:' <<<"$help" || fail "stacksage $sub --help has no ENVIRONMENT"
done
"$stacksage" run --help | grep -q 'STACKSAGE_PRELOAD' || fail "stacksage run --help does not name STACKSAGE_PRELOAD"
"$stacksage" check --help | grep -q '^  1  findings' || fail "stacksage check --help does not explain exit status 1"

err=$("$stacksage" frobnicate 2>&1 >/dev/null); rc=$?
[ "$rc" -eq 2 ] || fail "an unknown subcommand exited with $rc, not 2"
grep -q "unknown subcommand 'frobnicate'" <<<"$err" || fail "an unknown subcommand says: '$err'"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "an unknown subcommand printed more than one line: '$err'"
"$stacksage" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "no subcommand exited with $rc, not 2"

[ "$failures" -eq 0 ] || exit 1
echo "--version, EXIT STATUS and ENVIRONMENT on stacksage and on $(echo $subs); unknown subcommands exit 2"
