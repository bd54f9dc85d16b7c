#!/usr/bin/env bash
# A GPU backend's runtime is opened on first device use, never at discovery:
# `nnplug plugins` (and so any CPU-only program) maps no device library and no
# GPU runtime; `nnplug devices` opens them and gives 0 devices with the
# runtime's reason (no GPU here) or lists them. A device library that is
# missing leaves the backend with 0 devices and a reason naming the file.
# Skips (77) where no GPU backend was built.
set -euo pipefail
build=$1
plugins="$build/lib/nnplug/plugins"
backends=()
for name in cuda rocm; do
  [ -f "$plugins/libnnp_backend_$name.so" ] && backends+=("$name")
done
[ ${#backends[@]} -gt 0 ] || { echo "SKIP: no GPU backend was built"; exit 77; }

# Every library a command opens, as the dynamic loader reports it.
opened() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -oE "file=[^ ]+" | sort -u; }

listing=$(opened "$build/bin/nnplug" plugins)
for unwanted in libnnp_backend_cuda_device libnnp_backend_rocm_device libcudart libcublas libamdhip64 libnccl; do
  if grep -q "$unwanted" <<<"$listing"; then
    echo "FAIL: nnplug plugins opened $unwanted:"; grep "$unwanted" <<<"$listing"; exit 1
  fi
done
echo "ok   nnplug plugins opens no device library or GPU runtime"

devices=$(opened "$build/bin/nnplug" devices)
text=$("$build/bin/nnplug" devices)
for name in "${backends[@]}"; do
  grep -q "libnnp_backend_${name}_device" <<<"$devices" || { echo "FAIL: nnplug devices did not open $name's device library"; exit 1; }
  # A count, or 0 devices with the runtime's own words.
  grep -qE "^$name(:0 | +[0-9]+ +\(no devices: (CUDA|HIP): .+\))" <<<"$text" || { echo "FAIL: $name's line:"; echo "$text"; exit 1; }
done
echo "ok   nnplug devices opens them: $(grep -E "^(cuda|rocm)" <<<"$text" | tr -s ' ' | paste -sd';')"

# The same plugins beside a copy of libnnp, their device libraries gone.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/lib/nnplug/plugins"
cp "$build/bin/nnplug" "$tmp/bin/"
cp -L "$build/lib/libnnp.so.1" "$tmp/lib/"
cp "$plugins/libnnp_backend_cpu.so" "$tmp/lib/nnplug/plugins/"
for name in "${backends[@]}"; do cp "$plugins/libnnp_backend_$name.so" "$tmp/lib/nnplug/plugins/"; done
text=$(NNP_PLUGIN_PATH= "$tmp/bin/nnplug" devices)
for name in "${backends[@]}"; do
  expected="(no devices: $name: the device library $tmp/lib/nnplug/devices/libnnp_backend_${name}_device.so could not be opened"
  grep -qF -- "$expected" <<<"$text" || { echo "FAIL: expected '$expected' in:"; echo "$text"; exit 1; }
done
echo "ok   without its device library each says which file it could not open"
# Asking for the device then fails with that reason, and the CPU still works.
if out=$(NNP_PLUGIN_PATH= "$tmp/bin/nnplug" train --device "${backends[0]}" --epochs 1 2>&1); then
  echo "FAIL: training on ${backends[0]} without its device library succeeded"; exit 1
fi
grep -qF "could not be opened" <<<"$out" || { echo "FAIL: the training error lacks the reason:"; echo "$out"; exit 1; }
echo "ok   nnplug train --device ${backends[0]} fails saying why"
