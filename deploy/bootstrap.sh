#!/usr/bin/env bash
# Installs what the farm needs on a fresh Debian machine; safe to run again (it only installs what is missing).
#   Debian: redis-server, adb (the real adb server), avro-bin + python3-avro + python3-snappy (Avro interop checks)
#   npm:    the workspace's packages (npm ci against package-lock.json)
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v adb >/dev/null 2>&1 || need_apt+=(adb)
command -v avrocat >/dev/null 2>&1 || need_apt+=(avro-bin)
[ -d /usr/lib/python3/dist-packages/avro ] || need_apt+=(python3-avro)
[ -d /usr/lib/python3/dist-packages/snappy ] || need_apt+=(python3-snappy)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_apt[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
  else
    SUDO=
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# npm ci when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: installing npm packages" >&2
  if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  else
    npm install --no-audit --no-fund --loglevel=error
  fi
fi
