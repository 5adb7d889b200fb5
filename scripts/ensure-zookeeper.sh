#!/usr/bin/env bash
# Makes sure a ZooKeeper server can be started for the tests and the demo: Java plus Debian's
# `zookeeper` package (the server jar). Installs it when missing and running as root (bounded:
# scripts/lib/registry.sh); otherwise prints the exact command to run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/registry.sh"

jar="${ZK_JAR:-/usr/share/java/zookeeper.jar}"

have_all() { command -v java >/dev/null 2>&1 && [ -f "$jar" ]; }

if have_all; then
  echo "zookeeper: using $jar ($(java -version 2>&1 | head -n 1))"
  exit 0
fi

echo "zookeeper: the ZooKeeper server is not installed (looked for $jar and java)." >&2
if [ -z "${ZK_JAR:-}" ] && apt_install zookeeper zookeeper && have_all; then
  echo "zookeeper: installed $jar"
  exit 0
fi
echo "zookeeper: or point ZK_JAR at a zookeeper server jar, or ZK_CONNECT at a running server (host:port)." >&2
exit 1
