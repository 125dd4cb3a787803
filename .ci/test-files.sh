#!/usr/bin/env bash
# The test runner behind `npm test` (after its pretest): every test file of the libs, services, loadtest and
# .ci, two files at a time (three measured only 9 % faster on two cores: the files are CPU-bound, not waiting). Options pass through (`npm test -- --test-reporter=tap`); arguments that are not
# options pick the files to run instead of all of them (`bash .ci/test-files.sh libs/config/test/*.test.ts`).
# A test whose skip reason starts with [root-only] must not skip when the suite runs as root (.ci/root-skips-reporter.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
options=() files=()
for arg in "$@"; do
  if [[ $arg == -* ]]; then options+=("$arg"); else files+=("$arg"); fi
done
if ((${#files[@]} == 0)); then
  files=(libs/*/test/*.test.ts services/*/test/*.test.ts loadtest/test/*.test.ts .ci/*.test.ts)
fi
# Node's own reporter (spec on a terminal, tap otherwise) unless one is chosen, and always the root-skips check
# (.ci/root-skips-reporter.mjs: a root-only test that skips under root fails the run).
reporters=0 destinations=0
for o in ${options[@]+"${options[@]}"}; do
  case "$o" in --test-reporter=*) reporters=$((reporters + 1)) ;; --test-reporter-destination=*) destinations=$((destinations + 1)) ;; esac
done
if ((reporters == 0)); then
  if [[ -t 1 ]]; then options+=(--test-reporter=spec); else options+=(--test-reporter=tap); fi
  reporters=1
fi
# Node pairs reporters with destinations: a reporter given without one writes to stdout, as it would alone.
while ((destinations < reporters)); do options+=(--test-reporter-destination=stdout); destinations=$((destinations + 1)); done
options+=(--test-reporter=./.ci/root-skips-reporter.mjs --test-reporter-destination=stderr)
# The whole tsx (its CommonJS hook too): a policy module written in TypeScript outside any package (module-policy tests) loads as CommonJS.
exec node --import tsx --test --test-concurrency=2 --test-timeout=300000 "${options[@]}" "${files[@]}"
