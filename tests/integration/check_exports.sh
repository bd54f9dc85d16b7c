#!/usr/bin/env bash
# DESIGN.md §2 rule 1: libnnp exports only nnp_get_api and every plugin only
# nnp_plugin_entry. Fails naming each extra symbol.
set -euo pipefail
build=$1
status=0
check() {
  local file=$1 allowed=$2
  local extra
  extra=$(nm -D --defined-only "$file" | awk '$2 ~ /^[TDBRVWui]$/ {print $3}' | grep -vxE "$allowed" || true)
  if [ -n "$extra" ]; then
    echo "FAIL $file exports more than $allowed:"; echo "$extra" | sed 's/^/  /'; status=1
  else
    echo "ok   $file"
  fi
}
check "$build/lib/libnnp.so" "nnp_get_api"
count=0
# Device libraries (lib/nnplug/devices) are plugins too, opened by their deferred plugin.
for plugin in "$build"/lib/nnplug/plugins/*.so "$build"/lib/nnplug/devices/*.so "$build"/tests/plugin_corpus/*.so; do
  case "$plugin" in *not_a_library*|*no_entry*) continue ;; esac
  check "$plugin" "nnp_plugin_entry"
  count=$((count + 1))
done
[ "$count" -ge 2 ] || { echo "FAIL: found only $count plugins under $build"; status=1; }
# The no-entry plugin exports nothing at all.
if nm -D --defined-only "$build/tests/plugin_corpus/libno_entry.so" | awk '$2 ~ /^[TDBRVW]$/' | grep . >/dev/null; then
  echo "FAIL libno_entry.so exports symbols"; status=1
fi
exit $status
