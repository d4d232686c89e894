#!/usr/bin/env bash
# The bash completion completes subcommands and each subcommand's options,
# read from the built command's --help.
#   test_bash_completion.sh COMPLETION_FILE STACKSAGE_DIR
set -uo pipefail
source "$1"
PATH="$2:$PATH"
failures=0
complete_words() {  # the words typed so far, the last one being completed
  COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  _stacksage
  echo "${COMPREPLY[*]}"
}
expect() {
  local want=$1; shift
  local got; got=$(complete_words "$@")
  [ "$got" = "$want" ] || { echo "FAIL: '$*' completes to '$got', not '$want'" >&2; failures=$((failures + 1)); }
}
expect "run report" stacksage r
expect "topo run report check" stacksage ""
expect "--help --version" stacksage --
expect "--no-topology --no-model" stacksage run --no
expect "--fail-on" stacksage check --fa
expect "--output" stacksage run -o out --outp
expect "" stacksage run -- ./app --no
[ "$failures" -eq 0 ] || exit 1
echo "bash completion: subcommands and options complete"
