#!/usr/bin/env bash
# The line between the core and the code written on the SDK (DESIGN §1,
# §10): no core file includes the SDK's C++ API (<nnp/NAME.hpp>; the shared
# helpers under nnp/detail are allowed: they are header-only and neither
# side's), and the built-in library (library/) reaches no core header.
set -uo pipefail
source=$1
cd "$source"
status=0
if grep -rnE '^#include <nnp/[a-z_]+\.hpp>' core; then
  echo "FAIL: core files include the SDK's C++ API; the core is written on its own types (code written on the SDK belongs in library/)"
  status=1
fi
if grep -rnE '#include "[^"]*(core|\.\./\.\.)/' library; then
  echo "FAIL: the built-in library includes a core header; it sees only sdk/include"
  status=1
fi
[ $status -eq 0 ] && echo "ok: no core file includes the SDK's C++ API; library/ includes no core header"
exit $status
