# Shared by scripts/test-packaging.sh and scripts/test-prebuilt-node-versions.sh, which source it after
# setting `script_name` (for messages), `work` (their temp directory) and `started` ($SECONDS).

step() { printf '\n== %s  [%ss]\n' "$*" $((SECONDS - started)); }
fail() {
  printf '\n%s: FAIL: %s\n' "$script_name" "$*" >&2
  exit 1
}
# Prints the end of a log under a failure message, so CI output shows why.
show_log() { echo "--- last lines of $1:" >&2; tail -n "${2:-40}" "$1" >&2 || true; echo "---" >&2; }

# SIGTERM, up to 15 s to exit, then SIGKILL.
stop_pid() {
  local pid=$1 waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && [ $waited -lt 150 ]; do sleep 0.1; waited=$((waited + 1)); done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

# Starts a real ZooKeeper with the installed testing kit (test/packaging/support/zk-server.mjs, copied
# into the app directory $1) and waits until it serves. Sets zk_helper (the helper's pid, which stops
# its server on SIGTERM), zk (the connect string) and zk_pid (the server's pid).
start_zk_helper() {
  (cd "$1" && exec node zk-server.mjs "$work/zk.json" >"$work/zk-server.log" 2>&1) &
  zk_helper=$!
  for _ in $(seq 1 600); do
    [ -s "$work/zk.json" ] && break
    kill -0 "$zk_helper" 2>/dev/null || { show_log "$work/zk-server.log"; fail "the ZooKeeper helper exited before the server served"; }
    sleep 0.1
  done
  [ -s "$work/zk.json" ] || { show_log "$work/zk-server.log"; fail "ZooKeeper did not start within 60 s"; }
  zk=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).connectString' "$work/zk.json")
  zk_pid=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).pid' "$work/zk.json")
}

# The helper stops its server on SIGTERM; the SIGKILL to the server covers a helper that died without doing so.
stop_zk_helper() {
  if [ -n "${zk_helper:-}" ]; then stop_pid "$zk_helper"; fi
  if [ -n "${zk_pid:-}" ] && kill -0 "$zk_pid" 2>/dev/null; then kill -KILL "$zk_pid" 2>/dev/null || true; fi
}
