#!/usr/bin/env bash
# Makes sure the Apache Curator baseline of the benchmark can run: javac plus Debian's
# libcurator-recipes-java (Curator 5.4, its framework and client, Guava, SLF4J, the ZooKeeper
# client jar). Installs it when missing and running as root; otherwise prints the exact command.
# Exit 0: usable. Exit 1: not usable (the benchmark then reports Curator figures as missing).
set -euo pipefail

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

install_cmd="apt-get update && apt-get install -y --no-install-recommends libcurator-recipes-java"

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "curator: not installed; installing Debian's libcurator-recipes-java (needs the Debian package registry)..."
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends libcurator-recipes-java >/dev/null; }; then
    echo "curator: the install failed. Run it by hand to see why: $install_cmd" >&2
    exit 1
  fi
  if have_all; then
    echo "curator: installed $java_dir/curator-recipes.jar"
    exit 0
  fi
  missing=()
  for jar in "${needed[@]}"; do [ -f "$java_dir/$jar" ] || missing+=("$jar"); done
  command -v javac >/dev/null 2>&1 || missing+=("javac (a JDK)")
  echo "curator: installed, but still missing in $java_dir: ${missing[*]}" >&2
  exit 1
fi

cat >&2 <<MSG
curator: the Curator baseline cannot run: Debian's libcurator-recipes-java (or javac) is missing
(looked in $java_dir for ${needed[*]}).
Install it with:
  sudo sh -c '$install_cmd'
or run the benchmark without it: npm run bench -- --no-curator
MSG
exit 1
