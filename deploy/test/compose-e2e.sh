#!/usr/bin/env bash
# End-to-end check of the compose stack (deploy/compose/docker-compose.yml), as root:
#   builds the image (deploy/image/build.sh), brings the stack up under a project of its own, submits
#   a 20-episode campaign through the scheduler's published API, waits for it to complete, checks
#   through Prometheus's HTTP API that every target is up and that Prometheus saw the 20 episodes,
#   counts the Avro files in the workers' volumes, restarts Redis and reads the campaign back (AOF
#   persistence), and tears everything down (containers, network, volumes), on failure too.
#   sudo bash deploy/test/compose-e2e.sh                                  # podman + podman-compose (Debian)
#   FARM_ENGINE=docker FARM_COMPOSE="docker compose" sudo -E bash deploy/test/compose-e2e.sh
# Settings: FARM_E2E_EPISODES (20), FARM_E2E_TIMEOUT_S (900: campaign deadline), FARM_E2E_KEEP=1 (leave
# the stack up for a look; tear it down later with the printed command).
# Too heavy for CI (an image build and seven containers); `npm test` checks the file statically instead
# (loadtest/test/deploy-compose.test.ts).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
compose_file="$repo_root/deploy/compose/docker-compose.yml"
engine="${FARM_ENGINE:-podman}"
episodes="${FARM_E2E_EPISODES:-20}"
deadline_s="${FARM_E2E_TIMEOUT_S:-900}"
project="farme2e"
read -r -a compose_cmd <<<"${FARM_COMPOSE:-podman-compose}"

log() { printf '%s compose-e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

# Every host package up front (podman, podman-compose, iptables for netavark, curl, mmdebstrap, …:
# deploy/image/host-packages.sh): installed, or the script stops here naming them.
# shellcheck source=../image/host-packages.sh
source "$repo_root/deploy/image/host-packages.sh"
farm_ensure_host_packages e2e "$engine" "${compose_cmd[0]}" || die "host packages missing (above)"
command -v node >/dev/null || die "node (Node 20, as the root README installs it) is needed on the host"
# The host's `farm` submits the campaign: the workspace's npm packages (tsx and the rest), installed here from a
# fresh clone, or the script stops naming `npm ci` (FARM_INSTALL_NPM_PACKAGES=0).
# shellcheck source=../npm-packages.sh
source "$repo_root/deploy/npm-packages.sh"
farm_npm_packages "$repo_root" || die "npm packages missing (above)"
[ "$(id -u)" = 0 ] || die "run as root (a rootful container engine; see deploy/README.md)"
# The host settings podman needs here (runtime, ulimits), for podman-compose's podman calls too.
# shellcheck source=../image/podman-host.sh
[ "$engine" = podman ] && { source "$repo_root/deploy/image/podman-host.sh"; farm_podman_host_conf "${FARM_IMAGE_WORK:-/var/tmp/farm-image}"; }

compose() { "${compose_cmd[@]}" -p "$project" -f "$compose_file" "$@"; }

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

# The stack's settings come from this environment (both engines interpolate ${NAME} from it), so a
# deploy/compose/.env of the operator's is neither needed nor touched; published ports are free ones.
FARM_API_TOKEN="e2e-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
FARM_SCHEDULER_HOST_PORT="$(free_port)"
FARM_PROMETHEUS_HOST_PORT="$(free_port)"
FARM_ALERTMANAGER_HOST_PORT="$(free_port)"
export FARM_API_TOKEN FARM_SCHEDULER_HOST_PORT FARM_PROMETHEUS_HOST_PORT FARM_ALERTMANAGER_HOST_PORT
api="http://127.0.0.1:$FARM_SCHEDULER_HOST_PORT"
prom="http://127.0.0.1:$FARM_PROMETHEUS_HOST_PORT"

teardown() {
  local rc=$?
  trap - EXIT INT TERM
  if [ "$rc" != 0 ]; then
    log "failed (exit $rc); the services' last log lines:"
    for svc in redis sim scheduler worker-1 worker-2 prometheus alertmanager; do
      echo "----- $svc" >&2
      compose logs --tail 15 "$svc" 2>&1 | grep -v '^\(podman\|\[\|exit code:\|using podman version\)' | tail -15 >&2 || true
    done
  fi
  if [ "${FARM_E2E_KEEP:-}" = 1 ]; then
    log "FARM_E2E_KEEP=1: the stack stays up (API $api, Prometheus $prom); remove it with: ${compose_cmd[*]} -p $project -f $compose_file down -v"
  else
    log "tearing down (containers, network, volumes)"
    compose down -v >/dev/null 2>&1 || log "warning: '${compose_cmd[*]} down -v' failed; check '$engine ps -a'"
    # podman-compose 1.0.3's down leaves the project network behind.
    [ "$engine" = podman ] && podman network rm -f "${project}_default" >/dev/null 2>&1 || true
  fi
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT TERM

log "building the image (deploy/image/build.sh, engine $engine)"
FARM_ENGINE="$engine" bash "$repo_root/deploy/image/build.sh"

log "starting the stack: ${compose_cmd[*]} -p $project up -d"
compose down -v >/dev/null 2>&1 || true   # leftovers of an interrupted run
compose up -d >/dev/null

wait_for() { # <what> <seconds> <command…>: retry the command every 2 s until it succeeds
  local what="$1" secs="$2" t0=$SECONDS
  shift 2
  until "$@" >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt "$secs" ] || die "$what: not within ${secs}s"
    sleep 2
  done
  log "$what (after $((SECONDS - t0))s)"
}
wait_for "scheduler answers on $api/healthz" 180 curl -fsS "$api/healthz"
wait_for "Prometheus is ready" 180 curl -fsS "$prom/-/ready"

farm() { (cd "$repo_root" && node services/cli/bin/farm.js "$@"); }
campaign="$(farm submit tasks/classic_2048.textproto --episodes "$episodes" --seed "$RANDOM" --api "$api" --token "$FARM_API_TOKEN")"
log "submitted campaign $campaign ($episodes episodes of classic_2048, random policy)"

# Progress once a few seconds; done when the campaign leaves "running".
status_json() { farm status "$campaign" --json --api "$api" --token "$FARM_API_TOKEN"; }
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);console.log(Function("v","return "+process.argv[1])(v))})' "$1"; }
t0=$SECONDS
last=""
while :; do
  st="$(status_json)"
  line="$(json '`${v.state} ${v.completed}/${v.episodes} completed, ${v.failed} failed, ${v.running} running`' <<<"$st")"
  [ "$line" != "$last" ] && log "campaign: $line" && last="$line"
  [ "$(json 'v.state' <<<"$st")" = running ] || break
  [ $((SECONDS - t0)) -lt "$deadline_s" ] || die "campaign not finished within ${deadline_s}s"
  sleep 3
done
[ "$(json 'v.state' <<<"$st")" = completed ] || die "campaign ended $(json 'v.state' <<<"$st")"
[ "$(json 'v.completed' <<<"$st")" = "$episodes" ] || die "campaign completed $(json 'v.completed' <<<"$st") of $episodes episodes"
log "campaign completed: $(json '`${v.summary.completed} episodes, outcomes ${JSON.stringify(v.summary.byOutcome)}, ${v.summary.totalSteps} steps, ${v.summary.commits.committed} committed (one record each), ${v.summary.commits.duplicatesPrevented} duplicates prevented`' <<<"$st")"

# Every target Prometheus knows is up: the scheduler, both workers (found by DNS), Alertmanager, itself.
targets_ok() {
  curl -fsS "$prom/api/v1/targets?state=active" | json '(() => {
    const t = v.data.activeTargets;
    const want = { "farm-scheduler": 1, "farm-worker": 2, alertmanager: 1, prometheus: 1 };
    const up = t.filter((x) => x.health === "up");
    const per = Object.fromEntries(Object.keys(want).map((j) => [j, up.filter((x) => x.labels.job === j).length]));
    const ok = t.length === up.length && Object.entries(want).every(([j, n]) => per[j] === n);
    return ok ? "ok" : (process.exitCode = 1, t.map((x) => `${x.labels.job}/${x.labels.instance}=${x.health}${x.lastError ? " (" + x.lastError + ")" : ""}`).join(", "));
  })()'
}
wait_for "every Prometheus target is up" 120 targets_ok
curl -fsS "$prom/api/v1/targets?state=active" \
  | json 'v.data.activeTargets.map((x) => `  ${x.labels.job.padEnd(15)} ${x.labels.instance.padEnd(20)} ${x.health}`).join("\n")' >&2

# Prometheus saw the campaign: the workers' episode counters add up to it (after a scrape or two).
episodes_seen() {
  curl -fsS "$prom/api/v1/query" --data-urlencode 'query=sum(farm_episodes_total{task="classic_2048"})' \
    | json 'v.data.result[0] ? Number(v.data.result[0].value[1]) : 0'
}
episodes_counted() { [ "$(episodes_seen)" -ge "$episodes" ]; }
wait_for "Prometheus counts >= $episodes classic_2048 episodes (sum of farm_episodes_total over both workers)" 90 episodes_counted
log "Prometheus: sum(farm_episodes_total{task=\"classic_2048\"}) = $(episodes_seen)"
alertmanager_ok() { curl -fsS "$prom/api/v1/alertmanagers" | json 'v.data.activeAlertmanagers.length === 1 ? "ok" : (process.exitCode = 1, "none")'; }
wait_for "Prometheus sends alerts to the stack's Alertmanager" 60 alertmanager_ok

avro_files() { compose exec -T "$1" sh -c 'find /data/trajectories -name "*.avro" | wc -l' 2>/dev/null | grep -E '^[0-9]+$' | tail -1; }
f1="$(avro_files worker-1)"; f2="$(avro_files worker-2)"
log "trajectory files: worker-1 ${f1:-?}, worker-2 ${f2:-?}"
[ -n "$f1" ] && [ -n "$f2" ] && [ $((f1 + f2)) -ge "$episodes" ] || die "expected >= $episodes Avro files in the workers' volumes"
[ "$f1" -gt 0 ] && [ "$f2" -gt 0 ] || die "one worker ran no episode: its devices or its adb connection are not usable"
# Redis persists: after a restart of its container the campaign is still there, completed.
compose restart redis >/dev/null 2>&1
campaign_still_completed() { [ "$(status_json | json 'v.state + " " + v.completed')" = "completed $episodes" ]; }
wait_for "Redis restarted (AOF on its volume); the scheduler reads the campaign back, completed $episodes/$episodes" 120 campaign_still_completed
log "PASS: $episodes-episode campaign completed on 2 workers x 2 simulated devices; every Prometheus target up"
