#!/usr/bin/env bash
# Makes sure the real peers of the polyglot tests (test/peers) can run: a JDK (java and javac), the
# Apache Curator jars of Debian's `libcurator-recipes-java`, and kazoo from Debian's `python3-kazoo`,
# importable by ${KAZOO_PYTHON:-/usr/bin/python3} (Debian's Python: a `python3` first on PATH, such
# as a pyenv build, does not see Debian's packages). Installs what is missing when running as root
# (bounded: scripts/lib/registry.sh); otherwise prints the exact command to run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/registry.sh"

java_dir="${CURATOR_JAR_DIR:-/usr/share/java}"
python="${KAZOO_PYTHON:-/usr/bin/python3}"
# What test/support/peers.ts puts on the class path (slf4j-nop.jar too, when present, to silence
# slf4j's "no binding" warning).
jars=(curator-recipes curator-framework curator-client zookeeper zookeeper-jute guava slf4j-api)

missing() {
  local what=()
  command -v java >/dev/null 2>&1 || what+=("java")
  command -v javac >/dev/null 2>&1 || what+=("javac")
  local jar
  for jar in "${jars[@]}"; do
    [ -f "$java_dir/$jar.jar" ] || what+=("$java_dir/$jar.jar")
  done
  "$python" -c 'import kazoo' >/dev/null 2>&1 || what+=("kazoo for $python")
  echo "${what[*]:-}"
}

# The version a Debian package reports, or "?" (the jars carry no version in their names here).
deb_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"; }

report() {
  local kazoo_version
  kazoo_version="$("$python" -c 'import kazoo.version; print(kazoo.version.__version__)' 2>/dev/null || echo "?")"
  echo "peers: using $(javac -version 2>&1 | head -n 1), Curator $(deb_version libcurator-recipes-java) ($java_dir/curator-recipes.jar), kazoo $kazoo_version ($python, $("$python" --version 2>&1))"
}

packages="libcurator-recipes-java python3-kazoo libslf4j-java"
command -v javac >/dev/null 2>&1 || packages="$packages default-jdk-headless"

what="$(missing)"
if [ -z "$what" ]; then
  report
  exit 0
fi

echo "peers: the real peers of test/peers need what is missing here: $what" >&2
# shellcheck disable=SC2086 # the package list is meant to split
if [ -z "${KAZOO_PYTHON:-}" ] && [ -z "${CURATOR_JAR_DIR:-}" ] && apt_install peers $packages; then
  what="$(missing)"
  if [ -z "$what" ]; then
    report
    exit 0
  fi
  echo "peers: installed, but still missing: $what" >&2
fi
echo "peers: or set KAZOO_PYTHON to a Python that can import kazoo, CURATOR_JAR_DIR to a directory holding the Curator 5 jars (${jars[*]})." >&2
exit 1
