#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the release build's
# suite, then the same suites again under AddressSanitizer + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --preset default
bash scripts/sanitize.sh
