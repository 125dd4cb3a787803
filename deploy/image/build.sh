#!/usr/bin/env bash
# Builds the farm's container images without pulling anything from a container registry:
#   1. a Debian bookworm root filesystem made by mmdebstrap from the host's Debian mirror, with
#      redis-server, adb, prometheus and prometheus-alertmanager from Debian, plus this machine's
#      Node 20 (the `node` binary and the npm it runs, copied in: Debian's own nodejs is v18);
#   2. imported as the base image  android-episode-farm-base:<hash of its inputs>;
#   3. deploy/docker/Dockerfile on top of it (the repository + `npm ci`) -> android-episode-farm:latest.
# Idempotent: the base is rebuilt only when its inputs change (package list, Node version, this
# script's base recipe); the farm image is rebuilt by the engine's layer cache.
#   sudo bash deploy/image/build.sh                 # podman (default)
#   FARM_ENGINE=docker sudo bash deploy/image/build.sh
# Settings (environment): FARM_ENGINE (podman|docker), FARM_IMAGE (android-episode-farm:latest),
# FARM_IMAGE_WORK (/var/tmp/farm-image: rootfs tarballs), DEBIAN_MIRROR (http://deb.debian.org/debian),
# DEBIAN_SECURITY_MIRROR (http://deb.debian.org/debian-security), FARM_NODE (node binary to copy, `command -v node`),
# FARM_BUILD_CA_BUNDLE (/etc/ssl/certs/ca-certificates.crt: CAs `npm ci` trusts during the build, podman only).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
engine="${FARM_ENGINE:-podman}"
image="${FARM_IMAGE:-android-episode-farm:latest}"
work="${FARM_IMAGE_WORK:-/var/tmp/farm-image}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
host_ca_bundle="${FARM_BUILD_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
suite=bookworm
# What the image needs from Debian: the services the farm starts itself (redis-server, the adb server),
# Prometheus and Alertmanager for the compose stack, and what Node 20 links against.
base_packages=ca-certificates,libstdc++6,libgcc-s1,redis-server,redis-tools,adb,prometheus,prometheus-alertmanager,procps,tini
base_recipe_version=1

log() { printf 'build.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$engine" = podman ] || [ "$engine" = docker ] || die "FARM_ENGINE must be podman or docker, not '$engine'"
# Every host package first (mmdebstrap, podman and its network helpers, iptables: host-packages.sh), so a
# fresh machine gets them or stops here naming them.
# shellcheck source=host-packages.sh
source "$repo_root/deploy/image/host-packages.sh"
farm_ensure_host_packages build "$engine" || die "host packages missing (above)"
[ "$(id -u)" = 0 ] || die "run as root (sudo): mmdebstrap and a rootful container engine need it"
command -v "$engine" >/dev/null || die "$engine not found (FARM_ENGINE=docker: install Docker Engine yourself; this script installs podman only)"
# shellcheck source=podman-host.sh
[ "$engine" = podman ] && { source "$repo_root/deploy/image/podman-host.sh"; farm_podman_host_conf "$work"; }

# Node 20 from this machine: Debian bookworm only has Node 18, and no other Node source is reachable here.
node_bin="$(readlink -f "${FARM_NODE:-$(command -v node)}")"
node_version="$("$node_bin" --version)"
case "$node_version" in v2[0-9].*) ;; *) die "$node_bin is $node_version; the farm needs Node 20 or newer" ;; esac
npm_dir="$(cd "$(dirname "$node_bin")/../lib/node_modules/npm" 2>/dev/null && pwd)" \
  || die "npm not found next to $node_bin (expected ../lib/node_modules/npm)"
npm_version="$("$node_bin" "$npm_dir/bin/npm-cli.js" --version)"

base_key="$(printf '%s\n' "$base_recipe_version" "$suite" "$mirror" "$base_packages" "$node_version" "$npm_version" \
  | sha256sum | cut -c1-12)"
base_image="android-episode-farm-base:$base_key"

image_exists() { "$engine" image inspect "$1" >/dev/null 2>&1; }

build_base() {
  mkdir -p "$work"
  local tarball="$work/rootfs-$base_key.tar"
  if [ ! -s "$tarball" ]; then
    log "mmdebstrap $suite ($base_packages) + Node $node_version, npm $npm_version -> $tarball"
    # Hooks run on the host with the rootfs as "$1": copy Node in, add the unprivileged user the
    # services run as (uid 1000, as in the Kubernetes manifests), drop apt lists and docs.
    mmdebstrap --variant=apt --mode=root --format=tar \
      --include="$base_packages" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-include=/usr/share/doc/*/copyright' \
      --customize-hook='install -D -m 0755 '"'$node_bin'"' "$1/usr/bin/node"' \
      --customize-hook='mkdir -p "$1/usr/lib/node_modules" && cp -a '"'$npm_dir'"' "$1/usr/lib/node_modules/npm"' \
      --customize-hook='ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/bin/npm" && ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/bin/npx"' \
      --customize-hook='chroot "$1" useradd --uid 1000 --create-home --shell /bin/bash node' \
      --customize-hook='chroot "$1" node --version' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
      "$suite" "$tarball.partial" \
      "deb $mirror $suite main" "deb $mirror $suite-updates main" "deb $security_mirror $suite-security main"
    mv "$tarball.partial" "$tarball"
  fi
  log "importing $tarball as $base_image"
  "$engine" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    "$tarball" "$base_image" >/dev/null
  "$engine" tag "$base_image" android-episode-farm-base:latest
}

if image_exists "$base_image"; then
  log "base image $base_image is up to date"
else
  build_base
fi

build_args=(build --file "$repo_root/deploy/docker/Dockerfile" --build-arg "FARM_BASE_IMAGE=$base_image" --tag "$image")
# No public registry is reachable here: never try to pull the base, and let `npm ci` reach the npm
# registry through the host's network (rootful podman's bridge needs no setup for that, but host
# networking also works where the bridge cannot be created).
if [ "$engine" = podman ]; then
  build_args+=(--pull=never --network=host --isolation=chroot --ignorefile "$repo_root/deploy/docker/Dockerfile.dockerignore")
  # The host's CA bundle, for `npm ci` only (the Dockerfile reads it if present): needed where a
  # TLS-inspecting proxy stands between this machine and the npm registry; not stored in the image.
  [ -s "$host_ca_bundle" ] && build_args+=(--volume "$host_ca_bundle:/run/host-ca/ca-certificates.crt:ro")
else
  build_args+=(--pull=false --network=host)
fi
old_id="$("$engine" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
log "$engine ${build_args[*]} $repo_root"
"$engine" "${build_args[@]}" "$repo_root"
new_id="$("$engine" image inspect --format '{{.Id}}' "$image")"
# The image this build replaced is now untagged: drop it (kept if a container still uses it).
if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then "$engine" rmi "$old_id" >/dev/null 2>&1 || true; fi
log "built $image ($new_id) on $base_image"
