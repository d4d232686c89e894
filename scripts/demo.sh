#!/usr/bin/env bash
# `make demo`: show what stacksage sees. Called by the Makefile after the build.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
stacksage="$build/cli/stacksage"

echo "== This machine, as stacksage models it (stacksage topo) =="
"$stacksage" topo --fold
echo
echo "== A real 2-socket Sapphire Rapids node from an hwloc XML (alike siblings folded) =="
"$stacksage" topo --fold --input "$root/tests/data/hwloc-xml/Intel-SapphireRapids-2xXeonMax9460.xml"
