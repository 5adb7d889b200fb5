# Every step of the scripts that reaches a package registry (npm's or Debian's) runs through here, so
# that none can hang the suite: each attempt has a wall-clock bound (coreutils `timeout`, which kills
# the whole process group: npm and the node-gyp or dpkg it started), a stall or a network error is
# tried again, and a step that still fails ends with one line that says which step and what to run.
# npm's own fetch timeouts are set too, but they are not enough alone: a connection that never answers
# has been seen to outlast them.
#
# Sourced by scripts/test-packaging.sh, scripts/test-prebuilt-node-versions.sh and the ensure-*.sh
# scripts. Each try has the bound its caller gives, and all the registry steps of one script share a
# budget of REGISTRY_BUDGET seconds (default 420) from the moment it sources this file, so a script
# never spends longer on registries than that, however many steps stall. REGISTRY_ATTEMPTS (default 2)
# sets the tries per step. CONTRIBUTING.md adds it up ("The suite's worst case").

REGISTRY_ATTEMPTS=${REGISTRY_ATTEMPTS:-2}
registry_deadline=$((SECONDS + ${REGISTRY_BUDGET:-420}))

# npm: give up on one request after 30 s and retry it twice, backing off up to 10 s, before the
# wall-clock bound of the whole step applies.
export npm_config_fetch_timeout=${npm_config_fetch_timeout:-30000}
export npm_config_fetch_retries=${npm_config_fetch_retries:-2}
export npm_config_fetch_retry_mintimeout=${npm_config_fetch_retry_mintimeout:-2000}
export npm_config_fetch_retry_maxtimeout=${npm_config_fetch_retry_maxtimeout:-10000}

# What a registry's network failure looks like in npm's and apt's output. A failure without it
# (a script denied, a compile error) is not tried again: it would fail the same way.
REGISTRY_NETWORK_ERRORS='ETIMEDOUT|ECONNRESET|ECONNREFUSED|EAI_AGAIN|ENOTFOUND|ESOCKETTIMEDOUT|EPIPE|socket hang up|network timeout|code E5[0-9][0-9]|Temporary failure resolving|Could not connect|Connection timed out|Unable to fetch some archives|Failed to fetch'

# registry_run <step> <bound in s> <log> <what to run by hand> <command...>
# Runs the command with its output appended to <log>, each attempt bounded by <bound> seconds. Returns
# 0 when an attempt succeeds; otherwise prints one line to stderr and returns 1.
registry_run() {
  local step=$1 bound=$2 log=$3 hint=$4
  shift 4
  local attempt=1 status why retry left
  while :; do
    left=$((registry_deadline - SECONDS))
    if [ "$left" -lt 5 ]; then
      printf '%s: FAIL: %s not tried: the %ss registry budget of this script is spent (REGISTRY_BUDGET); log: %s. Run by hand: %s\n' \
        "${script_name:-registry}" "$step" "${REGISTRY_BUDGET:-420}" "$log" "$hint" >&2
      return 1
    fi
    [ "$bound" -le "$left" ] || bound=$left
    status=0
    printf -- '--- %s: attempt %s of %s, bounded to %ss: %s\n' "$step" "$attempt" "$REGISTRY_ATTEMPTS" "$bound" "$*" >>"$log"
    timeout --kill-after=10 "$bound" "$@" >>"$log" 2>&1 </dev/null || status=$?
    [ $status -eq 0 ] && return 0
    retry=1
    if [ $status -eq 124 ] || [ $status -eq 137 ]; then
      why="stalled (no end within ${bound}s)"
    elif tail -n 60 "$log" | grep -E "$REGISTRY_NETWORK_ERRORS" >/dev/null; then # not -q: see ensure-kerberos.sh
      why="failed on the network (exit $status)"
    else
      why="failed (exit $status)"
      retry=
    fi
    if [ -z "$retry" ] || [ "$attempt" -ge "$REGISTRY_ATTEMPTS" ]; then
      tail -n 25 "$log" | sed 's/^/  | /' >&2
      printf '%s: FAIL: %s %s after %s attempt(s); log: %s. Run by hand: %s\n' \
        "${script_name:-registry}" "$step" "$why" "$attempt" "$log" "$hint" >&2
      return 1
    fi
    printf -- '--- %s %s; trying again\n' "$step" "$why" >>"$log"
    echo "${script_name:-registry}: $step $why; trying again (attempt $((attempt + 1)) of $REGISTRY_ATTEMPTS)" >&2
    attempt=$((attempt + 1))
    sleep 2
  done
}

# apt_install <label> <packages...>
# For the ensure-*.sh scripts: installs Debian packages when running as root with apt-get, each try
# of `apt-get update` bounded to 90 s and of `apt-get install` to 300 s; otherwise (or when the install
# fails) prints the exact command to run and returns 1.
apt_install() {
  local label=$1
  shift
  local cmd="apt-get update && apt-get install -y --no-install-recommends $*"
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "$label: install it with: sudo sh -c '$cmd'" >&2
    return 1
  fi
  echo "$label: installing Debian's $* (needs the Debian package registry)..."
  local log
  log=$(mktemp "${TMPDIR:-/tmp}/nestjs-zk-lock-apt.XXXXXX")
  local apt_opts=(-o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 -o Acquire::Retries=2 -o DPkg::Lock::Timeout=120)
  # A try killed mid-install leaves dpkg half done; `dpkg --configure -a` first makes the next one sound.
  if ! script_name=$label registry_run "apt-get update" 90 "$log" "$cmd" \
    env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update -qq; then
    return 1
  fi
  if ! script_name=$label registry_run "apt-get install $*" 300 "$log" "$cmd" \
    sh -c 'dpkg --configure -a >/dev/null 2>&1; exec "$@"' _ \
    env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y -qq --no-install-recommends "$@"; then
    return 1
  fi
  rm -f "$log"
}
