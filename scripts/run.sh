#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains the default CNN
# on the digits (checkpoint and curves land in nnplug-run/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
./build/bin/nnplug devices
./build/bin/nnplug train
