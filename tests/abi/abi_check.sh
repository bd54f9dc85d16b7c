#!/usr/bin/env bash
# The ABI watched by libabigail: abidw records today's layouts (of
# libabi_types.so, which references every table and struct), abidiff
# compares them with the released baseline (tests/abi/baseline.abi), and
# append_only.py passes appended members and nothing else.
#   abi_check.sh LIBABI_TYPES.so SOURCE_DIR
# Skips (77) where abigail-tools is not installed. At a release the
# baseline is renewed from that release's headers:
#   abidw --no-show-locs --out-file tests/abi/baseline.abi build/tests/abi/libabi_types.so
set -uo pipefail
library=$1
source=$2
command -v abidw >/dev/null && command -v abidiff >/dev/null ||
  { echo "skip: abigail-tools is not installed (scripts/setup.sh installs it)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
abidw --no-show-locs --out-file "$work/today.abi" "$library" || { echo "abidw failed on $library"; exit 1; }
abidiff --leaf-changes-only --no-show-locs "$source/tests/abi/baseline.abi" "$work/today.abi" >"$work/report"
status=$?
if [ $((status & 3)) -ne 0 ]; then echo "abidiff failed (status $status):"; cat "$work/report"; exit 1; fi
python3 "$source/tests/abi/append_only.py" "$work/report" "$work/today.abi" \
  "$source"/sdk/include/nnp/{types,nnp,plugin}.h || { cat "$work/report"; exit 1; }
