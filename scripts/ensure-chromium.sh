#!/usr/bin/env bash
# Makes sure a Chromium is there for the live view's browser test (test/e2e/live-view.e2e.test.ts,
# driven by playwright-core): Debian's `chromium` package. Installs it when missing and running as
# root (bounded: scripts/lib/registry.sh); otherwise prints the exact command to run. CHROMIUM_PATH
# points the test at another binary.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/registry.sh"

bin="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$bin" ]; then
  echo "chromium: using $bin"
  exit 0
fi

echo "chromium: no Chromium at $bin (the live view's browser test needs one)." >&2
if [ -z "${CHROMIUM_PATH:-}" ] && apt_install chromium chromium && [ -x "$bin" ]; then
  echo "chromium: installed $bin"
  exit 0
fi
echo "chromium: or set CHROMIUM_PATH to a Chromium or Chrome binary." >&2
exit 1
