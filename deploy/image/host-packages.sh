# Sourced by deploy/image/build.sh and deploy/test/compose-e2e.sh (bash): the Debian packages the host
# needs for the image build and the compose stack, found by the command (or helper file) each provides.
# Missing ones are installed with apt-get when running as root (FARM_INSTALL_HOST_PACKAGES=0: never);
# otherwise the caller stops at once, naming them. A fresh Debian machine where only the root README's
# steps ran has none of them (deploy/README.md, "Host packages").

# farm_host_requirements ROLE ENGINE COMPOSE: "package probe" lines; ROLE is build or e2e, probe a command
# name (found on PATH) or an absolute path (a helper podman runs from its own folder).
farm_host_requirements() {
  local role="$1" engine="$2" compose="${3:-}"
  echo "mmdebstrap mmdebstrap"   # the image's Debian root filesystem
  echo "mount mount"             # mmdebstrap --mode=root mounts /proc, /sys and /dev into it
  if [ "$engine" = podman ]; then
    echo "podman podman"
    echo "buildah buildah"
    echo "crun crun"
    echo "netavark /usr/lib/podman/netavark"         # podman's network backend (the compose network)
    echo "aardvark-dns /usr/lib/podman/aardvark-dns" # service names inside that network
    # netavark writes the bridge's NAT and forwarding rules with the iptables command; without it every
    # container of the stack fails to start ("netavark: No such file or directory (os error 2)").
    echo "iptables iptables"
  fi
  if [ "$role" = e2e ]; then
    echo "curl curl"   # the script talks to the scheduler's API and Prometheus with it
    [ "$compose" = podman-compose ] && echo "podman-compose podman-compose"
  fi
  return 0
}

# farm_missing_host_packages ROLE ENGINE COMPOSE: the missing packages, one line each.
farm_missing_host_packages() {
  local pkg probe
  while read -r pkg probe; do
    case "$probe" in
      /*) [ -x "$probe" ] && continue ;;
      *) command -v "$probe" >/dev/null 2>&1 && continue ;;
    esac
    echo "$pkg"
  done < <(farm_host_requirements "$@")
}

# farm_ensure_host_packages ROLE ENGINE COMPOSE: returns 0 once everything is there (installing what is
# missing when root and allowed); else prints what is missing and how to get it, and returns 1.
farm_ensure_host_packages() {
  local missing=() pkg
  while read -r pkg; do missing+=("$pkg"); done < <(farm_missing_host_packages "$@")
  [ ${#missing[@]} -eq 0 ] && return 0
  local how="apt-get install --no-install-recommends ${missing[*]}"
  if [ "${FARM_INSTALL_HOST_PACKAGES:-1}" != 1 ] || [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "host-packages: missing on this host: ${missing[*]}; install them as root ($how), or run this script as root on Debian (it installs them unless FARM_INSTALL_HOST_PACKAGES=0)" >&2
    return 1
  fi
  echo "host-packages: installing from Debian: ${missing[*]}" >&2
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    echo "host-packages: '$how' failed (see apt's message above)" >&2
    return 1
  fi
  missing=()
  while read -r pkg; do missing+=("$pkg"); done < <(farm_missing_host_packages "$@")
  if [ ${#missing[@]} -gt 0 ]; then
    echo "host-packages: still missing after installing: ${missing[*]} (a probe not found where expected; see deploy/image/host-packages.sh)" >&2
    return 1
  fi
  return 0
}
