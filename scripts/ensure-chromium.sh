#!/usr/bin/env bash
# Makes sure a Chromium is there for the live view's browser test (test/e2e/live-view.e2e.test.ts,
# driven by playwright-core): Debian's `chromium` package. Installs it when missing and running as
# root; otherwise prints the exact command to run. CHROMIUM_PATH points the test at another binary.
set -euo pipefail

bin="${CHROMIUM_PATH:-/usr/bin/chromium}"

if [ -x "$bin" ]; then
  echo "chromium: using $bin"
  exit 0
fi

install_cmd="apt-get update && apt-get install -y --no-install-recommends chromium"

if [ -z "${CHROMIUM_PATH:-}" ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium: not installed; installing Debian's chromium package (needs the Debian package registry)..."
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; then
    echo "chromium: the install failed. Run it by hand to see why: $install_cmd" >&2
    exit 1
  fi
  if [ -x "$bin" ]; then
    echo "chromium: installed $bin"
    exit 0
  fi
  echo "chromium: installed, but $bin is still missing. Set CHROMIUM_PATH to the chromium binary." >&2
  exit 1
fi

cat >&2 <<MSG
chromium: no Chromium at $bin (the live view's browser test needs one).
Install it with:
  sudo sh -c '$install_cmd'
or set CHROMIUM_PATH to a Chromium or Chrome binary.
MSG
exit 1
