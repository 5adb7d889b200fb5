#!/usr/bin/env bash
# Makes sure a ZooKeeper server can be started for the tests and the demo: Java plus Debian's
# `zookeeper` package (the server jar). Installs it when missing and running as root; otherwise
# prints the exact command to run.
set -euo pipefail

jar="${ZK_JAR:-/usr/share/java/zookeeper.jar}"

have_all() { command -v java >/dev/null 2>&1 && [ -f "$jar" ]; }

if have_all; then
  echo "zookeeper: using $jar ($(java -version 2>&1 | head -n 1))"
  exit 0
fi

install_cmd="apt-get update && apt-get install -y --no-install-recommends zookeeper"

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "zookeeper: not installed; installing Debian's zookeeper package (needs the Debian package registry)..."
  export DEBIAN_FRONTEND=noninteractive
  if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends zookeeper >/dev/null; }; then
    echo "zookeeper: the install failed. Run it by hand to see why: $install_cmd" >&2
    exit 1
  fi
  if have_all; then
    echo "zookeeper: installed $jar"
    exit 0
  fi
  echo "zookeeper: installed, but $jar or java is still missing. Set ZK_JAR to the server jar." >&2
  exit 1
fi

cat >&2 <<MSG
zookeeper: the ZooKeeper server is not installed (looked for $jar and java).
Install it with:
  sudo sh -c '$install_cmd'
or point ZK_JAR at a zookeeper server jar, or ZK_CONNECT at a running server (host:port).
MSG
exit 1
