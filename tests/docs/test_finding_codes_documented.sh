#!/usr/bin/env bash
# Every finding code the analyzer can emit is documented in
# docs/report-json.md (scripts and CI match on codes; an undocumented one is
# a contract nobody can read). A code is emitted where a check under
# analysis/ sets `code = FindingCode::X`; its identifier is the string
# analysis/finding_code.cpp's to_string returns for X.
# Usage: test_finding_codes_documented.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR}
names=$(grep -rhoE '\.?code = FindingCode::[A-Za-z0-9]+' "$src/analysis" | sed -E 's/.*FindingCode::([A-Za-z0-9]+)/\1/' | sort -u)
if [ -z "$names" ]; then
    echo "no finding codes set under $src/analysis: the pattern no longer matches how codes are set" >&2
    exit 1
fi
missing=0
count=0
for name in $names; do
    code=$(grep -oE "case FindingCode::$name: return \"[a-z0-9-]+\"" "$src/analysis/finding_code.cpp" |
           sed -E 's/.*"([a-z0-9-]+)"/\1/' || true)
    if [ -z "$code" ]; then
        echo "FindingCode::$name (set in analysis/) has no identifier in analysis/finding_code.cpp's to_string" >&2
        missing=1
        continue
    fi
    count=$((count + 1))
    if ! grep -q "| \`$code\` |" "$src/docs/report-json.md"; then
        echo "finding code '$code' (FindingCode::$name, analysis/) has no row in docs/report-json.md's table of codes" >&2
        missing=1
    fi
done
echo "$count finding codes, each documented: $([ $missing = 0 ] && echo yes || echo no)"
exit $missing
