#!/usr/bin/env bash
# A plugin's optimizer algorithm, found on NNP_PLUGIN_PATH (nothing loads it
# by hand), trains the digits MLP through `nnplug train --optimizer`, and a
# resumed run takes its state (the plugin's step count) back from the
# checkpoint.
set -euo pipefail
nnplug=$1
plugin=$2
spec=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/plugins"
ln -s "$plugin" "$tmp/plugins/"
export NNP_PLUGIN_PATH=$tmp/plugins

output=$("$nnplug" train --model "$spec" --optimizer test.SignSGD --epochs 2 --out "$tmp/run")
echo "$output"
accuracy=$(sed -n 's/^test accuracy \([0-9.]*\)%.*/\1/p' <<<"$output")
awk -v a="$accuracy" 'BEGIN { exit !(a >= 80.0) }' || { echo "FAIL: test.SignSGD reached $accuracy% < 80%"; exit 1; }
resumed=$("$nnplug" train --resume "$tmp/run/checkpoint.safetensors" --epochs 3 --out "$tmp/run2")
echo "$resumed"
grep -q "^epoch 3/3" <<<"$resumed" || { echo "FAIL: the resumed run did not train epoch 3"; exit 1; }
echo "ok: test.SignSGD from NNP_PLUGIN_PATH trains to $accuracy% and resumes"
