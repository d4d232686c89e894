#!/usr/bin/env bash
# Installs the build into a temporary prefix, moves it to a path that holds
# PATH_PART (a space, a colon), and records a traced job from there: the
# recorder is loaded (ld.so prints nothing), each process writes its log and
# its model (the model writer is found next to the recorder), the report
# reads the run, and the private directory of links is gone afterwards.
#   test_install.sh CMAKE BUILD_DIR PROGRAM PATH_PART
set -euo pipefail
cmake=$1 build=$2 program=$3 part=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/stacksage-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Installed elsewhere and moved: the tree must not depend on where it was installed.
"$cmake" --install "$build" --prefix "$work/staging" >/dev/null
prefix="$work/stacksage${part}install"
mv "$work/staging" "$prefix"

for f in bin/stacksage lib/stacksage/libstacksage-preload.so lib/stacksage/libstacksage-model.so \
         share/man/man1/stacksage.1 share/man/man1/stacksage-run.1 share/man/man1/stacksage-report.1 \
         share/man/man1/stacksage-check.1 share/man/man1/stacksage-topo.1 \
         share/bash-completion/completions/stacksage \
         share/doc/stacksage/README.md share/doc/stacksage/LICENSE share/doc/stacksage/CHANGELOG.md \
         share/doc/stacksage/docs/stacksage-run.md; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
# Every subcommand that `stacksage --help` lists has its page.
for sub in $("$prefix/bin/stacksage" --help | awk '/^Subcommands:/ { on = 1; next } on && /^$/ { on = 0 } on { print $1 }'); do
  grep -q '^\.SH EXIT STATUS' "$prefix/share/man/man1/stacksage-$sub.1" || fail "stacksage-$sub.1 has no EXIT STATUS section"
done
if command -v groff >/dev/null; then
  for page in "$prefix"/share/man/man1/*.1; do
    warnings=$(groff -man -ww -z "$page" 2>&1)
    [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
  done
fi

# A private TMPDIR, to see that the links stacksage run makes are removed.
mkdir "$work/tmp"
export TMPDIR="$work/tmp"
unset STACKSAGE_PRELOAD
status=0
"$prefix/bin/stacksage" run -o "$work/out" -- "$program" >"$work/run.out" 2>"$work/run.err" || status=$?
cat "$work/run.err" >&2
[ "$status" -eq 0 ] || fail "stacksage run exited with $status"
! grep -q 'ld\.so\|cannot be preloaded\|running the command untraced' "$work/run.err" || fail "the recorder was not loaded"
# node.events / node.models: a 4096-byte header, then the processes' streams.
logs=$(find "$work/out" -name 'node*.events' -size +4096c | wc -l)
models=$(find "$work/out" -name 'node*.models' -size +4096c | wc -l)
[ "$logs" -ge 1 ] || fail "no event log was written"
[ "$models" -ge 1 ] || fail "no model was written (the model writer was not found next to the recorder)"
[ -z "$(ls -A "$TMPDIR")" ] || fail "stacksage run left $(ls -A "$TMPDIR") in TMPDIR"
grep -q "\"preload\": *\"$prefix/lib/stacksage/libstacksage-preload.so\"" "$work/out/run.json" ||
  fail "run.json does not name the installed recorder"

# A command killed by a signal: stacksage dies of the same signal, which
# runs no destructors; the links must be gone all the same.
status=0
"$prefix/bin/stacksage" run -o "$work/killed" -- sh -c 'kill -TERM $$' 2>/dev/null || status=$?
[ "$status" -eq $((128 + 15)) ] || fail "stacksage run of a command killed by SIGTERM exited with $status, not 143"
[ -z "$(ls -A "$TMPDIR")" ] || fail "stacksage run of a killed command left $(ls -A "$TMPDIR") in TMPDIR"

"$prefix/bin/stacksage" report "$work/out" >"$work/report.txt" || fail "stacksage report exited with $?"
grep -q "$(basename "$program")" "$work/report.txt" || fail "the report does not name $(basename "$program")"
echo "installed under '$prefix': $logs log(s), $models model(s) recorded and reported"
