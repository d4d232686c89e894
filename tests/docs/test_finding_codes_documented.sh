#!/usr/bin/env bash
# Every finding code the analyzer can emit is documented in
# docs/report-json.md (scripts and CI match on codes; an undocumented one is
# a contract nobody can read).
# Usage: test_finding_codes_documented.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: $0 SOURCE_DIR}
codes=$(grep -rhoE '\.?code = "[a-z0-9-]+"' "$src/analysis" | sed -E 's/.*"([a-z0-9-]+)"/\1/' | sort -u)
if [ -z "$codes" ]; then
    echo "no finding codes found under $src/analysis: the pattern no longer matches how codes are set" >&2
    exit 1
fi
missing=0
for code in $codes; do
    if ! grep -q "| \`$code\` |" "$src/docs/report-json.md"; then
        echo "finding code '$code' (analysis/) has no row in docs/report-json.md's table of codes" >&2
        missing=1
    fi
done
echo "$(echo "$codes" | wc -l) finding codes, each documented: $([ $missing = 0 ] && echo yes || echo no)"
exit $missing
