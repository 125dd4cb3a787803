#!/usr/bin/env bash
# Installs what the farm needs on a fresh Debian machine; safe to run again (it only installs what is missing).
#   Debian: redis-server, adb (the real adb server), avro-bin + python3-avro + python3-snappy (Avro interop checks),
#           python3-yaml (the Parquet data set card check),
#           python3-grpcio (a Python gRPC client with local credentials checks the simulator's gRPC endpoint),
#           python3-protobuf + protobuf-compiler + protobuf-compiler-grpc (the Python clients' gRPC stubs:
#           clients/python/tools/generate_stubs.py runs protoc and grpc_python_plugin; tests check them),
#           python3-venv + python3-setuptools + python3-wheel (a test pip-installs clients/python offline into a
#           fresh venv with system site packages: setuptools is its build backend),
#           libprotobuf-dev (google/protobuf/*.proto, which protoc needs for dm_env_rpc's imports; only a
#           Recommends of protobuf-compiler, so --no-install-recommends leaves it out),
#           prometheus (/usr/bin/prometheus + promtool: the deploy/ checks run a real Prometheus on a free port),
#           prometheus-alertmanager (amtool check-config on deploy/prometheus/alertmanager.yml),
#           chromium (the fleet page's browser test drives headless Debian chromium)
#   npm:    the workspace's packages (npm ci against package-lock.json)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
command -v adb >/dev/null 2>&1 || need_apt+=(adb)
command -v avrocat >/dev/null 2>&1 || need_apt+=(avro-bin)
[ -d /usr/lib/python3/dist-packages/avro ] || need_apt+=(python3-avro)
[ -d /usr/lib/python3/dist-packages/snappy ] || need_apt+=(python3-snappy)
[ -d /usr/lib/python3/dist-packages/yaml ] || need_apt+=(python3-yaml)   # reads the Parquet data set card in libs/dataset tests
[ -d /usr/lib/python3/dist-packages/grpc ] || need_apt+=(python3-grpcio)
[ -d /usr/lib/python3/dist-packages/google/protobuf ] || need_apt+=(python3-protobuf)
command -v protoc >/dev/null 2>&1 || need_apt+=(protobuf-compiler)
command -v grpc_python_plugin >/dev/null 2>&1 || need_apt+=(protobuf-compiler-grpc)
[ -f /usr/include/google/protobuf/any.proto ] || need_apt+=(libprotobuf-dev)
dpkg-query -W -f='${Status}' python3-venv 2>/dev/null | grep -q 'install ok installed' || need_apt+=(python3-venv)   # python3 -m venv (ensurepip)
[ -d /usr/lib/python3/dist-packages/setuptools ] || need_apt+=(python3-setuptools)   # clients/python's build backend
[ -d /usr/lib/python3/dist-packages/wheel ] || need_apt+=(python3-wheel)   # protoc's well-known types (Any, Empty)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)   # services/scheduler/test/fleet-page.browser.test.ts

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_apt[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# prometheus, prometheus-alertmanager: the farm only needs the binaries (promtool, amtool). Installed on its own so the package's service is not
# started (it would listen on 9090 with /etc/prometheus's config): a temporary policy-rc.d denies
# service starts during this install when the machine has none of its own.
need_svc=()
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || need_svc+=(prometheus)
command -v amtool >/dev/null 2>&1 || need_svc+=(prometheus-alertmanager)
if [ ${#need_svc[@]} -gt 0 ]; then
  echo "bootstrap: installing Debian packages: ${need_svc[*]} (services not started)" >&2
  policy=/usr/sbin/policy-rc.d
  own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# temporary, from the farm'"'"'s deploy/bootstrap.sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
    own_policy=1
    trap '[ -n "$own_policy" ] && $SUDO rm -f "$policy"' EXIT
  fi
  [ ${#need_apt[@]} -gt 0 ] || $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_svc[@]}" >/dev/null
  if [ -n "$own_policy" ]; then
    $SUDO rm -f "$policy"
    own_policy=
  fi
fi

# npm ci when node_modules is missing or older than the lock file.
# shellcheck source=npm-packages.sh
source deploy/npm-packages.sh
farm_npm_packages "$PWD"
