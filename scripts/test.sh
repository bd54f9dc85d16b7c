#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the release build's
# suite, then the sanitizer stages (scripts/sanitize.sh). Ends with one line
# per stage: build CPU-seconds and wall time, test wall time and count.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/stages.sh
stage_build release bash scripts/build.sh
stage_test release ctest --preset default
bash scripts/sanitize.sh
