#!/usr/bin/env bash
# The cpu backend's oneDNN convolutions live in a library of their own
# (lib/nnplug/devices/libnnp_cpu_onednn.so), opened at the first convolution:
# `nnplug plugins` maps neither it nor libdnnl; training the default CNN does,
# and `nnplug devices` names oneDNN. Without the library, or with
# NNP_CPU_ONEDNN=0, convolutions take the im2col path and `nnplug devices`
# says why. Skips (77) where nnplug was built without oneDNN.
set -euo pipefail
build=$(cd "$1" && pwd)
library="$build/lib/nnplug/devices/libnnp_cpu_onednn.so"
[ -f "$library" ] || { echo "SKIP: built without oneDNN"; exit 77; }
nnplug="$build/bin/nnplug"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every library a command opens, as the dynamic loader reports it.
opened() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE "file=[^ ]+" | sort -u; }

if opened "$nnplug" plugins | grep -E "libnnp_cpu_onednn|libdnnl"; then
  echo "FAIL: nnplug plugins opened oneDNN"; exit 1
fi
echo "ok   nnplug plugins opens no oneDNN"

listing=$(opened "$nnplug" train --device cpu --epochs 1 --out "$tmp/run")
for wanted in libnnp_cpu_onednn libdnnl; do
  grep -q "$wanted" <<<"$listing" || { echo "FAIL: training the CNN did not open $wanted"; exit 1; }
done
echo "ok   training the default CNN opens it"

text=$("$nnplug" devices)
grep -qE "^cpu:0 .*convolutions by oneDNN [0-9]+\.[0-9]+" <<<"$text" || { echo "FAIL: cpu's line:"; echo "$text"; exit 1; }
text=$(NNP_CPU_ONEDNN=0 "$nnplug" devices)
grep -qF "convolutions by im2col + OpenBLAS (NNP_CPU_ONEDNN=0)" <<<"$text" || { echo "FAIL: cpu's line:"; echo "$text"; exit 1; }
echo "ok   nnplug devices names what convolves"

# The cpu plugin beside a copy of libnnp, its oneDNN library gone: the CNN
# still trains (im2col), and the device's line names the missing file.
mkdir -p "$tmp/bin" "$tmp/lib/nnplug/plugins"
cp "$nnplug" "$tmp/bin/"
cp -L "$build/lib/libnnp.so.1" "$tmp/lib/"
cp "$build/lib/nnplug/plugins/libnnp_backend_cpu.so" "$tmp/lib/nnplug/plugins/"
expected="convolutions by im2col + OpenBLAS (the oneDNN library $tmp/lib/nnplug/devices/libnnp_cpu_onednn.so could not be opened"
text=$(NNP_PLUGIN_PATH= "$tmp/bin/nnplug" devices)
grep -qF -- "$expected" <<<"$text" || { echo "FAIL: expected '$expected' in:"; echo "$text"; exit 1; }
out=$(NNP_PLUGIN_PATH= "$tmp/bin/nnplug" train --device cpu --epochs 1 --out "$tmp/run2" 2>&1) ||
  { echo "FAIL: training without the oneDNN library:"; echo "$out"; exit 1; }
echo "ok   without the library the CNN trains by im2col, and nnplug devices says why"
