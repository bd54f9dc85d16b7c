#!/usr/bin/env bash
# examples/ as a user builds them: against the installed nnplug only. Runs
# the day-one program on the digits and, when libtorch is installed, its
# libtorch twin: both must print the same accuracies, and nnplug's program
# must be no longer than the twin. Runs the Modules note's examples.
set -euo pipefail
build=$1
source=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$source/examples" -B "$tmp/examples" "${generator[@]}" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/configure.txt"
cmake --build "$tmp/examples" >/dev/null
gzip -dc "$source/data/digits.csv.gz" >"$tmp/digits.csv"
cd "$tmp"

"$tmp/examples/day_one" "$tmp/digits.csv" | tee nnplug.txt
grep -q "^restored: test accuracy" nnplug.txt || { echo "FAIL: day_one printed no restored accuracy"; exit 1; }
[ -s day_one.safetensors ] || { echo "FAIL: day_one saved nothing"; exit 1; }

"$tmp/examples/modules_note" | tee note.txt
for expected in "module 'net.l1': MyLinear()" "parameter net.l0.weight [4, 3]" "loaded equal: 4 of 4" \
  "forward pre-hook sees an input of 3 values" "training mode after eval(): false" \
  "DynamicNet(sample_input, 'relu'): tensor([" "dynamic parameter linears.2.bias" "dynamic parameter final.weight"; do
  grep -qF "$expected" note.txt || { echo "FAIL: modules_note printed no '$expected'"; exit 1; }
done

if [ ! -x "$tmp/examples/day_one_libtorch" ]; then
  echo "SKIPPED: libtorch not found (libtorch-dev), so the twin was not built; nnplug's examples passed"
  exit 0
fi
"$tmp/examples/day_one_libtorch" "$tmp/digits.csv" | tee libtorch.txt
diff <(grep accuracy nnplug.txt) <(grep accuracy libtorch.txt) ||
  { echo "FAIL: the day-one program and its libtorch twin print different accuracies"; exit 1; }
ours=$(wc -l <"$source/examples/day_one.cpp")
theirs=$(wc -l <"$source/examples/day_one_libtorch.cpp")
[ "$ours" -le "$theirs" ] || { echo "FAIL: day_one.cpp has $ours lines, its libtorch twin $theirs"; exit 1; }
echo "ok: same accuracies as libtorch; $ours lines against libtorch's $theirs"
