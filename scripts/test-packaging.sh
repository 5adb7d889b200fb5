#!/usr/bin/env bash
# Packs nestjs-zk-lock as `npm publish` would ship it (with the prebuilt addons for linux-x64 and
# linux-arm64 that `prepack` adds: scripts/prebuild.cjs), installs the tarball into three apps made
# from test/packaging/ (Nest 12 with ES modules; Nest 11 with CommonJS and TypeScript's node10
# resolution; nest11-cli, exactly as `@nestjs/cli@11 new` generates it plus a module import and two
# specs), and checks that they type-check, start on one real ZooKeeper, serialise concurrent HTTP
# increments of one shared counter, and pass their own tests: node --test in the first two, Vitest in
# nest12-esm, and in nest11-cli Jest with the CLI's defaults (`npm test` with ZkLockTestingModule,
# `npm run test:e2e` with supertest on the real ZooKeeper). nest11-cli is also built with
# `nest build -b swc` and started; and import and require of the package in one process must give one
# module instance (support/dual-load.mjs).
# How each app gets the addon: nest12-esm installs as the README says (`npm install`, npm's defaults,
# no allowScripts) with no compiler, make or python3 on its PATH, so nothing may compile: it must run
# on the prebuilt binary. nest11-cjs forces a build from source (NESTJS_ZK_LOCK_BUILD_ADDON=1: the
# fallback for platforms without a prebuilt binary), with --strict-allow-scripts. nest11-cli installs
# with npm's defaults and the machine's compilers (ours uses the prebuilt binary).
#
# Needs: Node >= 20.19, Java and the ZooKeeper jar (scripts/ensure-zookeeper.sh), the npm registry
# (or a warm npm cache; the three installs share npm's cache, and each try of one is bounded to
# PACKAGING_INSTALL_BOUND seconds, default 300, then tried once more: scripts/lib/registry.sh), and a C++ toolchain (the repository's build of the addon is the prebuilt
# binary; nest11-cjs builds one from source) and Debian's aarch64 cross compiler (the linux-arm64 one:
# scripts/ensure-arm64-tools.sh).
# KEEP_PACKAGING_DIR=1 keeps the temp directory (apps, logs) after a passing run; a failing run keeps it.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fixtures=$repo/test/packaging
work=$(mktemp -d "${TMPDIR:-/tmp}/nestjs-zk-lock-packaging.XXXXXX")
started=$SECONDS
pids=()
zk_helper=
zk_pid=
script_name=test-packaging
# step, fail, show_log, stop_pid, start_zk_helper, stop_zk_helper
source "$repo/scripts/lib/packed-app-support.sh"
# registry_run: each npm install bounded in wall-clock time and tried again after a stall
source "$repo/scripts/lib/registry.sh"
# One try of an app's install, in seconds (a normal one takes well under a minute with a warm cache).
install_bound=${PACKAGING_INSTALL_BOUND:-300}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  local pid
  for pid in "${pids[@]}"; do stop_pid "$pid"; done
  stop_zk_helper
  if [ $status -eq 0 ] && [ -z "${KEEP_PACKAGING_DIR:-}" ]; then
    rm -rf "$work"
  else
    echo "test-packaging: kept $work (apps and logs)" >&2
  fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Runs a command in an app directory with its output in a log; on failure shows the log and stops.
run_logged() {
  local what=$1 log=$2
  shift 2
  if ! "$@" >"$log" 2>&1; then
    show_log "$log"
    fail "$what failed (full log: $log)"
  fi
}

step "preflight"
node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit((a === 20 && b >= 19) || (a === 22 && b >= 12) || a >= 23 ? 0 : 1)' ||
  fail "Node $(node -v) cannot require() an ES module unflagged; the CommonJS app needs Node ^20.19.0 or >= 22.12.0"
bash "$repo/scripts/ensure-zookeeper.sh" || fail "ZooKeeper is not installed (see the message above)"
echo "work directory: $work"

step "build into a clean staging copy (a stale file in dist/ cannot slip into the tarball)"
stage=$work/package
mkdir -p "$stage"
cp "$repo/package.json" "$stage/"
for extra in README.md CHANGELOG.md LICENSE LICENSE.md; do
  [ -f "$repo/$extra" ] && cp "$repo/$extra" "$stage/"
done
# The native addon's sources and install script, the C client's sources (never a build: that is made at install).
mkdir -p "$stage/native"
cp -R "$repo/native/binding.gyp" "$repo/native/install.cjs" "$repo/native/prebuilt.cjs" "$repo/native/c-client.cjs" \
  "$repo/native/zookeeper-client-c.tar.gz" "$repo/native/src" "$repo/native/LICENSE-node-zookeeper" "$stage/native/"
# What `prepack` adds: the repository's build as the prebuilt binary for linux-x64 (glibc), checked to
# load, and the cross-built one for linux-arm64.
run_logged "scripts/prebuild.cjs" "$work/prebuild.log" node "$repo/scripts/prebuild.cjs" "$stage"
cat "$work/prebuild.log"
prebuilt=
[ -f "$stage/native/prebuilds/linux-x64/zk_native.node" ] && prebuilt=1
run_logged "tsc -p tsconfig.build.json" "$work/build.log" \
  "$repo/node_modules/.bin/tsc" -p "$repo/tsconfig.build.json" --outDir "$stage/dist"
# What `npm run build` does after tsc: the ES module entries that re-export the CommonJS build. It
# loads the build to list its exports, so the build's dependencies come from the repository.
run_logged "scripts/write-esm-entries.mjs" "$work/build-esm.log" \
  env NODE_PATH="$repo/node_modules" node "$repo/scripts/write-esm-entries.mjs" "$stage/dist"

step "npm pack"
# The build already ran; prepack/prepare scripts would run in a copy without its tsconfig.
(cd "$stage" && npm pack --ignore-scripts --pack-destination "$work" --json >"$work/pack.json" 2>"$work/pack.log") ||
  { show_log "$work/pack.log"; fail "npm pack failed"; }
tarball=$(node -e 'const [p] = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); console.log(p.filename)' "$work/pack.json")
tarball=$work/$tarball
[ -f "$tarball" ] || fail "npm pack reported $tarball, which does not exist"
node "$fixtures/support/check-tarball.mjs" "$work/pack.json" "$stage" || fail "the tarball's contents are wrong (see above)"

step "create the apps and install the tarball (in parallel: nest12-esm as the README says with no compiler on its PATH, nest11-cjs building the addon from source, nest11-cli with npm's defaults)"
# A PATH for an install on a machine with no build tools: node, npm and sh, and nothing else.
nocc=$work/no-compiler-bin
mkdir -p "$nocc"
for tool in node npm npx sh; do ln -s "$(command -v "$tool")" "$nocc/$tool"; done
for tool in python3 python make cc gcc g++ c++ clang; do
  ! PATH=$nocc command -v "$tool" >/dev/null 2>&1 || fail "$tool is on the no-compiler PATH ($nocc)"
done
install_pids=()
apps=(nest12-esm nest11-cjs nest11-cli)
for app in nest12-esm nest11-cjs; do
  cp -R "$fixtures/$app" "$work/$app"
  rm -rf "$work/$app/node_modules" "$work/$app/dist"
  cp "$fixtures/support/zk-server.mjs" "$work/$app/"
  # --foreground-scripts: npm shows the install script's output, so the log says what it did.
  install=(npm install --no-audit --no-fund --prefer-offline --foreground-scripts "$tarball")
  if [ "$app" = nest12-esm ] && [ -n "$prebuilt" ]; then
    # As the README says, with npm's defaults (no allowScripts in the app), and no compiler: only
    # $nocc on the PATH, and no compiler variables either.
    (cd "$work/$app" && registry_run "npm install in $app" "$install_bound" "$work/$app-install.log" \
      "cd $work/$app && PATH=$nocc ${install[*]}" \
      env -u CC -u CXX -u PYTHON -u npm_config_python PATH="$nocc" "${install[@]}") &
  else
    # nest11-cjs builds from source, as on a platform without a prebuilt binary. npm matches a package
    # installed from a tarball by its resolved path, not by name (the fixture's "nestjs-zk-lock": true
    # is what an install from the registry needs), so the path is added; --strict-allow-scripts: the
    # app's allowScripts entry must be what lets the script run.
    node -e 'const fs = require("fs"); const [file, tarball] = process.argv.slice(1); const app = JSON.parse(fs.readFileSync(file, "utf8"));
      app.allowScripts["file:" + tarball] = true; fs.writeFileSync(file, JSON.stringify(app, null, 2) + "\n");' "$work/$app/package.json" "$tarball"
    install+=(--strict-allow-scripts)
    (cd "$work/$app" && registry_run "npm install in $app" "$install_bound" "$work/$app-install.log" \
      "cd $work/$app && ${install[*]}" \
      env NESTJS_ZK_LOCK_BUILD_ADDON=$([ "$app" = nest11-cjs ] && echo 1) "${install[@]}") &
  fi
  install_pids+=($!)
done
# The generated app is installed as a user would: `npm install <the package>` with npm's default
# settings (which run the addons' install scripts with a warning), and the two packages
# `nest build -b swc` asks for. Its lock file is the CLI's; npm adds these to it.
cp -R "$fixtures/nest11-cli" "$work/nest11-cli"
rm -rf "$work/nest11-cli/node_modules" "$work/nest11-cli/dist"
cp "$fixtures/support/dual-load.mjs" "$work/nest11-cli/"
cp "$fixtures/support/dual-load.mjs" "$work/nest12-esm/"
install=(npm install --no-audit --no-fund --prefer-offline "$tarball" @swc/cli @swc/core)
(cd "$work/nest11-cli" && registry_run "npm install in nest11-cli" "$install_bound" "$work/nest11-cli-install.log" \
  "cd $work/nest11-cli && ${install[*]}" "${install[@]}") &
install_pids+=($!)
failed_installs=()
for i in 0 1 2; do
  wait "${install_pids[$i]}" || failed_installs+=("${apps[$i]}")
done
if [ ${#failed_installs[@]} -gt 0 ]; then
  ! grep -q ESTRICTALLOWSCRIPTS "$work"/*-install.log ||
    echo "(ESTRICTALLOWSCRIPTS means the app's package.json lacks an \"allowScripts\" entry for nestjs-zk-lock)" >&2
  fail "npm install failed in ${failed_installs[*]}: see the line for each above, which says what to run"
fi
for app in "${apps[@]}"; do
  dir=$work/$app
  own=$dir/node_modules/nestjs-zk-lock/native
  [ ! -e "$own/build-failed.txt" ] || { show_log "$own/build-failed.txt"; fail "$app: nestjs-zk-lock's native addon failed to build at install"; }
  if [ "$app" = nest11-cjs ] || [ -z "$prebuilt" ]; then
    [ -f "$own/build/Release/zk_native.node" ] ||
      fail "$app: nestjs-zk-lock's native addon was not built: its install script did not run (see $work/$app-install.log)"
    how="addon built from source"
  else
    # The prebuilt binary, and nothing compiled: no build of the addon, and no C client build.
    [ ! -e "$own/build" ] && [ ! -e "$own/c-client" ] ||
      fail "$app: nestjs-zk-lock compiled at install although its prebuilt binary fits (see $work/$app-install.log)"
    if [ "$app" != nest11-cli ]; then
      grep -q '^nestjs-zk-lock: using the prebuilt native addon (linux-x64 ' "$work/$app-install.log" ||
        { show_log "$work/$app-install.log"; fail "$app: the install log does not say that the prebuilt addon was used"; }
    fi
    how="prebuilt addon, nothing compiled"
  fi
  # No other package's install script compiles anything: the C client's sources come with ours.
  [ ! -e "$dir/node_modules/zookeeper" ] || fail "$app: the zookeeper package got installed, but nestjs-zk-lock ships the C client's sources itself"
  if [ "$app" = nest12-esm ] && [ -n "$prebuilt" ]; then
    ! grep -qiE 'gyp|g\+\+|configure' "$work/$app-install.log" || { show_log "$work/$app-install.log"; fail "nest12-esm: the install log shows a build step"; }
    how="$how, installed with no python3, make or compiler on the PATH; $(grep -m1 '^nestjs-zk-lock: ' "$work/$app-install.log")"
  fi
  [ ! -e "$dir/node_modules/@nestjs/terminus" ] ||
    fail "$app: @nestjs/terminus got installed, but it is an optional peer that the app never asked for"
  echo "$app: nestjs-zk-lock $(cd "$dir" && node -p 'require("./node_modules/nestjs-zk-lock/package.json").version')," \
    "@nestjs/core $(cd "$dir" && node -p 'require("./node_modules/@nestjs/core/package.json").version'), $how"
done

step "type-check and build the apps"
run_logged "nest12-esm: tsc (module nodenext)" "$work/nest12-esm-tsc.log" npm --prefix "$work/nest12-esm" run build
run_logged "nest11-cjs: tsc (module commonjs, moduleResolution node10)" "$work/nest11-cjs-tsc.log" npm --prefix "$work/nest11-cjs" run build
run_logged "nest11-cjs: tsc (module nodenext, CommonJS package)" "$work/nest11-cjs-tsc-nodenext.log" npm --prefix "$work/nest11-cjs" run typecheck:nodenext
# The generated tsconfig.json covers src/ and test/ (the specs too); ts-jest does not type-check
# under its isolatedModules setting, so tsc does it here.
run_logged "nest11-cli: tsc --noEmit (the generated tsconfig.json)" "$work/nest11-cli-tsc.log" \
  bash -c 'cd "$1" && node_modules/.bin/tsc --noEmit -p tsconfig.json' _ "$work/nest11-cli"
run_logged "nest11-cli: npm run build (nest build)" "$work/nest11-cli-build.log" npm --prefix "$work/nest11-cli" run build
run_logged "nest11-cli: nest build -b swc" "$work/nest11-cli-swc.log" bash -c 'cd "$1" && node_modules/.bin/nest build -b swc' _ "$work/nest11-cli"
grep -q 'Successfully compiled.* with swc' "$work/nest11-cli-swc.log" || { show_log "$work/nest11-cli-swc.log"; fail "nest11-cli: nest build -b swc did not compile with swc"; }
echo "all three apps type-check (the nest11-cjs one under node10 and nodenext resolution); nest11-cli builds with tsc and with swc"

step "the nestjs-zk-lock bin"
for app in "${apps[@]}"; do
  cli=$work/$app/node_modules/nestjs-zk-lock/dist/cli/main.js
  [ -x "$cli" ] || fail "$app: $cli is not executable after install"
  "$work/$app/node_modules/.bin/nestjs-zk-lock" --help >"$work/$app-cli-help.log" 2>&1 ||
    { show_log "$work/$app-cli-help.log"; fail "$app: node_modules/.bin/nestjs-zk-lock --help failed"; }
  grep -q '^Usage: nestjs-zk-lock inspect' "$work/$app-cli-help.log" || fail "$app: nestjs-zk-lock --help printed no usage"
done
echo "node_modules/.bin/nestjs-zk-lock runs in every app"

step "start a real ZooKeeper with the installed testing kit"
start_zk_helper "$work/nest12-esm"
echo "ZooKeeper serves on $zk (pid $zk_pid)"

step "start both apps on it, sharing one counter file"
declare -A url app_pid
servers=(nest12-esm nest11-cjs)
for app in "${servers[@]}"; do
  log=$work/$app-app.log
  (cd "$work/$app" && ZK_CONNECT=$zk COUNTER_FILE=$work/counter exec node dist/src/main.js >"$log" 2>&1) &
  pids+=($!)
  app_pid[$app]=$!
done
for app in "${servers[@]}"; do
  log=$work/$app-app.log
  for _ in $(seq 1 600); do
    grep -q '^listening on ' "$log" 2>/dev/null && break
    kill -0 "${app_pid[$app]}" 2>/dev/null || { show_log "$log"; fail "$app exited during start-up"; }
    sleep 0.1
  done
  grep -q '^listening on ' "$log" || { show_log "$log"; fail "$app did not listen within 60 s"; }
  url[$app]=$(sed -n 's/^listening on //p' "$log" | head -n 1)
  echo "$app listens on ${url[$app]}"
done

step "concurrent locked increments over HTTP, spread over both apps"
node "$fixtures/support/hammer.mjs" 25 \
  "${url[nest12-esm]}/decorated" "${url[nest12-esm]}/with-lock" \
  "${url[nest11-cjs]}/decorated" "${url[nest11-cjs]}/with-lock" ||
  { show_log "$work/nest12-esm-app.log" 20; show_log "$work/nest11-cjs-app.log" 20; fail "concurrent locked increments lost updates or failed"; }
"$work/nest11-cjs/node_modules/.bin/nestjs-zk-lock" inspect --connect "$zk" --root /packaging --json >"$work/inspect.json" 2>&1 ||
  { show_log "$work/inspect.json"; fail "nestjs-zk-lock inspect against the running ZooKeeper failed"; }
echo "nestjs-zk-lock inspect: $(head -c 300 "$work/inspect.json")"
if grep -q 'ExperimentalWarning' "$work/nest11-cjs-app.log"; then
  echo "note: Node printed an ExperimentalWarning in the CommonJS app: $(grep -m1 ExperimentalWarning "$work/nest11-cjs-app.log")"
fi

step "one module instance under import and require, in one process"
for app in nest12-esm nest11-cli; do
  run_logged "$app: node dual-load.mjs" "$work/$app-dual-load.log" bash -c 'cd "$1" && node dual-load.mjs' _ "$work/$app"
  echo "$app: $(tail -n 1 "$work/$app-dual-load.log")"
done

step "the nest11-cli app built by swc starts on the real ZooKeeper"
cli_port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
(cd "$work/nest11-cli" && NO_COLOR=1 ZK_CONNECT=$zk PORT=$cli_port exec node dist/main.js >"$work/nest11-cli-app.log" 2>&1) &
pids+=($!)
cli_pid=$!
for _ in $(seq 1 600); do
  grep -q 'Nest application successfully started' "$work/nest11-cli-app.log" 2>/dev/null && break
  kill -0 "$cli_pid" 2>/dev/null || { show_log "$work/nest11-cli-app.log"; fail "nest11-cli (swc build) exited during start-up"; }
  sleep 0.1
done
hello=$(node -e 'fetch(process.argv[1]).then(async (r) => { console.log(r.status, await r.text()); })' "http://127.0.0.1:$cli_port/") ||
  { show_log "$work/nest11-cli-app.log"; fail "nest11-cli (swc build): GET / failed"; }
[ "$hello" = "200 Hello World!" ] || { show_log "$work/nest11-cli-app.log"; fail "nest11-cli (swc build): GET / answered $hello"; }
grep -q 'ZkLockModule dependencies initialized' "$work/nest11-cli-app.log" || { show_log "$work/nest11-cli-app.log"; fail "nest11-cli (swc build) started without ZkLockModule"; }
stop_pid "$cli_pid"
echo "nest11-cli (nest build -b swc) started with ZkLockModule on $zk and answered GET / with $hello"

step "stop the apps (SIGTERM, graceful shutdown)"
for app in "${servers[@]}"; do
  pid=${app_pid[$app]}
  kill -TERM "$pid"
  code=0
  wait "$pid" || code=$?
  # Nest's shutdown hooks re-raise the signal once they are done, hence 143.
  [ $code -eq 0 ] || [ $code -eq 143 ] || { show_log "$work/$app-app.log"; fail "$app exited with code $code after SIGTERM"; }
  echo "$app stopped cleanly"
done

step "the apps' own tests (node --test: in-memory ZooKeeper over HTTP, and a real one from the testing kit)"
for app in nest12-esm nest11-cjs; do
  run_logged "$app: npm test" "$work/$app-test.log" npm --prefix "$work/$app" test
  grep -E '^# (tests|pass|fail)' "$work/$app-test.log" | tr '\n' ' ' | sed "s/^/$app: /"
  echo
done

step "nest12-esm under Vitest (npm run test:vitest: ZkLockTestingModule, Oxc emitting decorator metadata)"
run_logged "nest12-esm: npm run test:vitest" "$work/nest12-esm-vitest.log" env NO_COLOR=1 npm --prefix "$work/nest12-esm" run test:vitest
echo "nest12-esm npm run test:vitest: $(grep -E '^ +Tests ' "$work/nest12-esm-vitest.log" | sed 's/^ *//')"

step "nest11-cli's own Jest tests, as generated (npm test: unit specs; npm run test:e2e: supertest on the real ZooKeeper)"
run_logged "nest11-cli: npm test" "$work/nest11-cli-test.log" npm --prefix "$work/nest11-cli" test
echo "nest11-cli npm test: $(grep -E '^Tests:' "$work/nest11-cli-test.log")"
grep -q 'PASS src/zk-lock.spec.ts' "$work/nest11-cli-test.log" || { show_log "$work/nest11-cli-test.log"; fail "nest11-cli: npm test did not run src/zk-lock.spec.ts"; }
run_logged "nest11-cli: npm run test:e2e" "$work/nest11-cli-test-e2e.log" env ZK_CONNECT="$zk" npm --prefix "$work/nest11-cli" run test:e2e
echo "nest11-cli npm run test:e2e: $(grep -E '^Tests:' "$work/nest11-cli-test-e2e.log")"
grep -q 'PASS test/zk-lock.e2e-spec.ts' "$work/nest11-cli-test-e2e.log" || { show_log "$work/nest11-cli-test-e2e.log"; fail "nest11-cli: npm run test:e2e did not run test/zk-lock.e2e-spec.ts"; }

printf '\ntest-packaging: PASS in %ss (%s)\n' $((SECONDS - started)) "$(basename "$tarball")"
