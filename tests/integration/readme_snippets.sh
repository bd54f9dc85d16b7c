#!/usr/bin/env bash
# Every C++ and C block of README.md, docs/*.md and sdk/README.md compiles as printed
# (an excerpt says so on its first line and is skipped): a block with main()
# is built against the build tree's libnnp and run; a block with NNP_PLUGIN is
# built as a plugin.
set -euo pipefail
build=$1
source=$2
cxx=${3:-c++}
cc=${4:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for readme in "$source/README.md" "$source"/docs/*.md "$source/sdk/README.md"; do
  awk -v out="$tmp/block" '
    /^```(cpp|c)$/ { n++; lang = ($0 == "```c") ? "c" : "cpp"; file = out n "." lang; inside = 1; next }
    /^```/ { inside = 0; next }
    inside { print > file }' "$readme"
  for block in "$tmp"/block*; do
    [ -e "$block" ] || continue
    name="$(basename "$(dirname "$readme")")_$(basename "$readme" .md)_$(basename "$block")"
    mv "$block" "$tmp/$name"
    block="$tmp/$name"
    if head -3 "$block" | grep -q "excerpt"; then
      echo "skipped (an excerpt): $name"
      continue
    fi
    n=$((n + 1))
    compiler=$cxx
    flags=(-std=c++17)
    if [[ $block == *.c ]]; then compiler=$cc; flags=(-std=c99); fi
    if grep -q "NNP_PLUGIN" "$block"; then
      "$compiler" "${flags[@]}" -fPIC -shared -I"$source/sdk/include" -o "$block.so" "$block"
      echo "ok (a plugin): $name"
    elif grep -q "main(" "$block"; then
      "$compiler" "${flags[@]}" -I"$source/sdk/include" -o "$block.bin" "$block" -L"$build/lib" -lnnp \
        -Wl,-rpath,"$build/lib"
      (cd "$tmp" && "$block.bin" >/dev/null)
      echo "ok (built and run): $name"
    else
      echo "FAIL: $name is neither a program (main) nor a plugin (NNP_PLUGIN) nor marked as an excerpt"
      exit 1
    fi
  done
done
[ "$n" -gt 0 ] || { echo "FAIL: no blocks found"; exit 1; }
echo "$n blocks compile as printed"
