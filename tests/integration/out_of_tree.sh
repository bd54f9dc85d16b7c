#!/usr/bin/env bash
# What an outside vendor does, start to finish, against an installed nnplug
# only: install; build the first-party plugins (plugins/) with
# find_package(nnplug CONFIG) and install them beside the core, where they are
# found with no environment variable, and run their tests; check `nnplug
# plugins` lists their layer types and a misspelt type in a spec gets the
# closest names and the loaded plugins; build a tiny plugin and a tiny
# application (tests/out_of_tree/); load the plugin through NNP_PLUGIN_PATH;
# train a spec that uses both plugins' layers, save, reload, same outputs;
# and compile a C program with pkg-config.
set -euo pipefail
build=$1
source=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

cmake --install "$build" --prefix "$prefix" >/dev/null

cmake -S "$source/plugins" -B "$tmp/plugins" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/plugins" >/dev/null
cmake --install "$tmp/plugins" >/dev/null
env -u NNP_PLUGIN_PATH "$prefix/bin/nnplug" plugins | tee "$tmp/plugins.txt"
for expected in "loaded   nnplug.activations" "loaded   nnplug.norms" "loaded   nnplug.blocks" \
  "act.Swish  x \* sigmoid(beta \* x)" \
  "beta: float = 1.0" "normalized_shape: list of ints (required)" "eps: float (optional)"; do
  grep -q "$expected" "$tmp/plugins.txt" || { echo "FAIL: nnplug plugins lacks '$expected'"; exit 1; }
done
env -u NNP_PLUGIN_PATH "$tmp/plugins/plugins_test" --gtest_brief=1

echo '{"type": "nn.Sequential", "children": [{"type": "act.Swsh"}]}' >"$tmp/misspelt.json"
if "$prefix/bin/nnplug" summary --model "$tmp/misspelt.json" --input-shape 2,3 2>"$tmp/misspelt.txt"; then
  echo "FAIL: a spec naming act.Swsh was accepted"
  exit 1
fi
cat "$tmp/misspelt.txt"
for expected in "unknown layer type 'act.Swsh'" "closest: act.Swish" "nnplug.activations" "nnplug.norms"; do
  grep -q "$expected" "$tmp/misspelt.txt" || { echo "FAIL: the unknown-type error lacks '$expected'"; exit 1; }
done

# The layer plugin of sdk/README.md, exactly as printed there.
mkdir -p "$tmp/readme"
awk '/^```cpp$/ && !c {f=1; c=1; next} f && /^```$/ {exit} f' "$source/sdk/README.md" >"$tmp/readme/my_layers.cpp"
awk '/^```cmake$/ && !c {f=1; c=1; next} f && /^```$/ {exit} f' "$source/sdk/README.md" >"$tmp/readme/CMakeLists.txt"
cmake -S "$tmp/readme" -B "$tmp/readme/build" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/readme/build" >/dev/null
NNP_PLUGIN_PATH="$tmp/readme/build" "$prefix/bin/nnplug" plugins | grep "acme.Swish  x \* sigmoid(beta \* x)" ||
  { echo "FAIL: sdk/README.md's example plugin does not load"; exit 1; }

cmake -S "$source/tests/out_of_tree" -B "$tmp/app" "${generator[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$tmp/app" >/dev/null
nm -D --defined-only "$tmp/app/libtiny_scale.so" | grep -v " nnp_plugin_entry$" | grep " T " &&
  { echo "FAIL: the tiny plugin exports more than nnp_plugin_entry"; exit 1; }
NNP_PLUGIN_PATH="$tmp/app" "$tmp/app/tiny_app" "$tmp/tiny.safetensors"

cat >"$tmp/hello.c" <<'C'
#include <nnp/nnp.h>
#include <stdio.h>
int main(void) {
  const nnp_api* api = nnp_get_api(NNP_ABI_MAJOR, NNP_ABI_MINOR);
  if (api == NULL) return 1;
  printf("nnplug %s through pkg-config\n", api->version());
  return 0;
}
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 -o "$tmp/hello" "$tmp/hello.c" $(pkg-config --cflags --libs nnplug)
"$tmp/hello"
echo "ok: installed SDK builds plugins and applications out of tree"
