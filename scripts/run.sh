#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs nnplug.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/bin/nnplug devices
