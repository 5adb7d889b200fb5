#!/usr/bin/env bash
# Makes sure the tools for the linux-arm64 prebuilt addon are there: Debian's cross compiler
# (`g++-aarch64-linux-gnu`, which brings the arm64 glibc and libstdc++ too) to build it at pack time
# (scripts/cross-build.cjs), and, with `qemu`, qemu-user (`qemu-aarch64`) to run the registry's arm64
# Node.js with it in the version check (scripts/test-prebuilt-node-versions.sh). Installs what is
# missing when running as root (bounded: scripts/lib/registry.sh); otherwise prints the exact command.
# usage: bash scripts/ensure-arm64-tools.sh [qemu]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/registry.sh"

packages=()
command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || packages+=(g++-aarch64-linux-gnu)
if [ "${1:-}" = qemu ]; then
  command -v qemu-aarch64 >/dev/null 2>&1 || packages+=(qemu-user)
fi
if [ ${#packages[@]} -eq 0 ]; then
  echo "arm64 tools: using $(command -v aarch64-linux-gnu-g++)${1:+ and $(command -v qemu-aarch64)}"
  exit 0
fi
echo "arm64 tools: ${packages[*]} missing (the linux-arm64 prebuilt addon is cross-built, and run under qemu-user in the tests)." >&2
apt_install "arm64 tools" "${packages[@]}"
