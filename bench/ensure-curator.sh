#!/usr/bin/env bash
# Makes sure the Apache Curator baseline of the benchmark can run: javac plus Debian's
# libcurator-recipes-java (Curator 5.4, its framework and client, Guava, SLF4J, the ZooKeeper
# client jar). Installs it when missing and running as root; otherwise prints the exact command.
# Exit 0: usable. Exit 1: not usable (the benchmark then reports Curator figures as missing).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/lib/registry.sh"

java_dir="${CURATOR_JAR_DIR:-/usr/share/java}"
needed=(curator-recipes.jar curator-framework.jar curator-client.jar guava.jar slf4j-api.jar zookeeper.jar)

have_all() {
  command -v javac >/dev/null 2>&1 || return 1
  command -v java >/dev/null 2>&1 || return 1
  for jar in "${needed[@]}"; do [ -f "$java_dir/$jar" ] || return 1; done
}

if have_all; then
  echo "curator: using $java_dir/curator-recipes.jar ($(javac -version 2>&1))"
  exit 0
fi

echo "curator: Debian's libcurator-recipes-java is not installed (looked in $java_dir)." >&2
if apt_install curator libcurator-recipes-java && have_all; then
  echo "curator: installed $java_dir/curator-recipes.jar"
  exit 0
fi
missing=()
for jar in "${needed[@]}"; do [ -f "$java_dir/$jar" ] || missing+=("$jar"); done
command -v javac >/dev/null 2>&1 || missing+=("javac (a JDK)")
echo "curator: still missing in $java_dir: ${missing[*]}" >&2
exit 1
