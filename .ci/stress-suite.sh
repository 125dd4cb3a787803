#!/usr/bin/env bash
# `npm run test:stress [-- RUNS]`: the whole suite RUNS times in a row (default 3) while `stress-ng --cpu 2` keeps
# both cores busy, as issue 15 asks of a suite that must not flake on a loaded machine. Per run: result, wall
# time and the slowest test files; the full output of run N goes to test-artifacts/stress-N.log.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
command -v stress-ng >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends stress-ng >/dev/null; }
bash deploy/bootstrap.sh && npm run -s typecheck && npm run -s check:imports || exit 1
mkdir -p test-artifacts
failed=0
for n in $(seq 1 "$runs"); do
  stress-ng --cpu 2 --quiet &
  load=$!
  start=$(date +%s)
  bash .ci/test-files.sh --test-reporter=spec --test-reporter-destination="test-artifacts/stress-$n.log" \
    --test-reporter=./.ci/file-times-reporter.mjs --test-reporter-destination="test-artifacts/stress-$n.times"
  rc=$?
  wall=$(( $(date +%s) - start ))
  kill "$load"; wait "$load" 2>/dev/null
  echo "stress run $n/$runs: exit $rc, wall ${wall} s, $(grep -E '^ℹ (pass|fail) ' "test-artifacts/stress-$n.log" | tr '\n' ' ')"
  head -11 "test-artifacts/stress-$n.times"
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
