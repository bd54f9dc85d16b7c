#!/usr/bin/env bash
# The line between the core and the code written on the SDK (DESIGN §1,
# §10): no core file includes the SDK's C++ API (<nnp/NAME.hpp>; the shared
# helpers under nnp/detail are allowed), and the built-in library (library/)
# reaches no core header. The core files that still do are listed in
# core_sdk_includes.txt until they move to the library; the list may only
# shrink: a file not on it fails, and so does one on it that no longer
# includes the SDK (take it off the list).
set -euo pipefail
source=$1
cd "$source"
status=0
allowed=tests/integration/core_sdk_includes.txt
found=$(grep -rlE '^#include <nnp/[a-z_]+\.hpp>' core | sort)
for f in $found; do
  grep -qxF "$f" "$allowed" || { echo "FAIL: $f includes the SDK's C++ API; the core is written on its own types"; status=1; }
done
while read -r f; do
  [ -z "$f" ] && continue
  echo "$found" | grep -qxF "$f" || { echo "FAIL: $f no longer includes the SDK's C++ API: take it off $allowed"; status=1; }
done <"$allowed"
if grep -rnE '#include "[^"]*(core|\.\./\.\.)/' library; then
  echo "FAIL: the built-in library includes a core header; it sees only sdk/include"
  status=1
fi
[ $status -eq 0 ] && echo "ok: $(echo "$found" | wc -w) core files still on the SDK's C++ API (listed in $allowed), none new"
exit $status
