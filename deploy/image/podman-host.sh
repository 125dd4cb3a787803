# Sourced by deploy/image/build.sh and deploy/test/compose-e2e.sh (bash): the settings rootful podman
# needs on hosts like our development VMs (deploy/README.md, "Container engine: host settings"),
# given to podman through CONTAINERS_CONF, so /etc/containers is left alone. Skipped when the
# caller already set CONTAINERS_CONF (their file wins) or FARM_PODMAN_HOST_CONF=0.
#   - OCI runtime runc where the host mounts cgroup v1 controllers next to a cgroup2 tree ("hybrid"):
#     Debian's crun 1.8 refuses that layout ("cgroups in hybrid mode not supported").
#   - default ulimits within the host's hard limits: podman asks for nofile=1048576 and a high nproc,
#     which a process without CAP_SYS_RESOURCE cannot grant ("setrlimit RLIMIT_NOFILE: Operation not permitted").
#   - cgroup manager cgroupfs (no systemd as PID 1), overlay storage (the kernel has overlayfs).
farm_podman_host_conf() {
  local work="$1" runtime=crun nofile conf
  [ -n "${CONTAINERS_CONF:-}" ] && return 0
  [ "${FARM_PODMAN_HOST_CONF:-1}" = 0 ] && return 0
  if [ -d /sys/fs/cgroup/unified ] || { [ ! -f /sys/fs/cgroup/cgroup.controllers ] && [ -d /sys/fs/cgroup/memory ] && grep -q cgroup2 /proc/mounts; }; then
    runtime=runc
    command -v runc >/dev/null || {
      echo "podman-host.sh: installing runc from Debian (cgroup v1/v2 hybrid host)" >&2
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends runc >/dev/null
    }
  fi
  nofile="$(ulimit -Hn)"
  { [ "$nofile" = unlimited ] || [ "$nofile" -gt 65536 ]; } && nofile=65536
  mkdir -p "$work"
  conf="$work/containers.conf"
  cat >"$conf" <<CONF
# Written by deploy/image/podman-host.sh for this host (see deploy/README.md).
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=4096:4096"]

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
runtime = "$runtime"
CONF
  export CONTAINERS_CONF="$conf"
  echo "podman-host.sh: CONTAINERS_CONF=$conf (runtime $runtime, nofile $nofile, nproc 4096)" >&2
}
