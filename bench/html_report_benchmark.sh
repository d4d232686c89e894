#!/usr/bin/env bash
# The HTML report's benchmark (docs/PERFORMANCE.md, section "HTML report"):
# a 64-node run with 384 PUs per node (8 ranks of 48 threads per node),
# its page written by `stacksage report --html`, the page's size, and its
# render time in headless chromium (navigation to the first painted frame
# after the page's script drew node 1; median of 5 loads, each in a new tab).
#
#   bench/html_report_benchmark.sh BUILD_DIR [NODES PUS RANKS]
set -euo pipefail
build=${1:?usage: html_report_benchmark.sh BUILD_DIR [NODES PUS RANKS]}
nodes=${2:-64} pus=${3:-384} ranks=${4:-8}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/stacksage-html-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT

"$build/tests/browser/stacksage_html_run" large "$work/run" "$nodes" "$pus" "$ranks"
echo "run: $nodes nodes x $pus PUs, $ranks ranks x $((pus / ranks)) threads per node"
start=$(date +%s.%N)
"$build/cli/stacksage" report "$work/run" --html "$work/report.html" --timings 2>&1 >/dev/null | grep -v 'wrote the HTML'
end=$(date +%s.%N)
bytes=$(stat -c %s "$work/report.html")
printf 'stacksage report --html: %.2f s wall; page %d bytes (%.2f MB)\n' "$(echo "$end - $start" | bc)" "$bytes" "$(echo "$bytes / 1000000" | bc -l)"
node "$here/../tests/browser/html_report_browser.mjs" --bench "$work/report.html" --runs 5 | grep '^render:'
