#!/usr/bin/env bash
# Every SDK header compiles on its own, in the language it promises: C++17
# for the .hpp files (those in nnp/detail, nnp/functional, ... included), C99 for nnp.h and plugin.h, and
# the other .h files as C++17 (they are shared by host and device code).
# A header that leans on another being included first fails here by name.
set -euo pipefail
include=$1 cxx=$2 cc=$3
status=0
try() {
  local header=$1 lang=$2
  shift 2
  if out=$(echo "#include <nnp/$header>" | "$@" -x "$lang" -fsyntax-only -Wall -Wextra -Werror -I "$include" - 2>&1); then
    echo "ok   nnp/$header ($lang)"
  else
    echo "FAIL nnp/$header does not compile alone ($lang):"; echo "$out" | head -20 | sed 's/^/  /'; status=1
  fi
}
cd "$include/nnp"
for header in *.hpp */*.hpp; do try "$header" c++ "$cxx" -std=c++17; done
for header in nnp.h plugin.h; do try "$header" c "$cc" -std=c99 -pedantic-errors; done
for header in *.h; do try "$header" c++ "$cxx" -std=c++17; done
exit $status
