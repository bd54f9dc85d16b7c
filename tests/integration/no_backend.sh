#!/usr/bin/env bash
# With no backend anywhere, nnplug fails loudly and lists the folders it
# searched (DESIGN.md §2 rule 8). Runs a copy of nnplug and libnnp placed
# where no plugin folder exists.
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib"
cp "$build/bin/nnplug" "$tmp/bin/"
cp -L "$build/lib/libnnp.so.1" "$tmp/lib/"  # the SONAME the program asks for
if output=$(NNP_PLUGIN_PATH="$tmp/empty" "$tmp/bin/nnplug" devices 2>&1); then
  echo "FAIL: nnplug devices succeeded with no backends:"; echo "$output"; exit 1
fi
echo "$output"
for expected in "no CPU backend is loaded" "$tmp/empty" "$tmp/lib/nnplug/plugins" "NNP_PLUGIN_PATH"; do
  grep -qF -- "$expected" <<<"$output" || { echo "FAIL: the message lacks '$expected'"; exit 1; }
done
echo "ok"
