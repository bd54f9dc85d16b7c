#!/usr/bin/env bash
# `nnplug train --device BACKEND` on a GPU backend; exits 77 (ctest: skipped,
# with the reason printed) where the backend has no device here.
set -euo pipefail
nnplug=$1
backend=$2
devices=$("$nnplug" devices)
if ! grep -q "^$backend:0 " <<<"$devices"; then
  echo "SKIPPED: no $backend device here:"
  grep "^$backend " <<<"$devices" || echo "  the $backend backend is not built"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$nnplug" train --device "$backend" --out "$out" | tee "$out/log.txt"
accuracy=$(grep -o "test accuracy [0-9.]*" "$out/log.txt" | grep -o "[0-9.]*$")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 97) }' || { echo "FAIL: test accuracy $accuracy% < 97%"; exit 1; }
