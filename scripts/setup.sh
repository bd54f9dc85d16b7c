#!/usr/bin/env bash
# Installs the Debian 12 packages nnplug builds with, only those missing.
# Idempotent: a second run installs nothing and needs no network.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libboost-dev libboost-program-options-dev
  libopenblas-dev
  zlib1g-dev
  nlohmann-json3-dev libdlpack-dev
  hipcc libamdhip64-dev
  clang-15
  libgtest-dev libgmock-dev libbenchmark-dev
)
# Extra packages a caller asks for (scripts/bench.sh adds the libtorch peer).
packages+=("$@")

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
