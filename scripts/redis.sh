#!/usr/bin/env bash
# Makes sure `redis-server` is installed, for the distributed export example, its test and its
# benchmark (examples/distributed-export/). Debian's package (Redis 7.0 on Debian 12), installed
# with apt-get when missing and this runs as root; otherwise it says how to install it and fails.
# Nothing is started here (scripts/redis.ts starts a throw-away server on a free loopback port).
#   bash scripts/redis.sh          # exit 0 once redis-server is on PATH
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  echo "redis-server: $(redis-server --version)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "redis-server is not installed and this is not root: install it (Debian/Ubuntu: sudo apt-get install -y redis-server; macOS: brew install redis), then run again" >&2
  exit 1
fi
echo "redis-server is missing: installing Debian's redis-server with apt-get"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends redis-server >/dev/null
echo "redis-server: $(redis-server --version)"
