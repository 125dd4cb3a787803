#!/usr/bin/env bash
# The test runner behind `npm test` (after its pretest): every test file of the libs, services, loadtest and
# .ci, two files at a time. Options pass through (`npm test -- --test-reporter=tap`); arguments that are not
# options pick the files to run instead of all of them (`bash .ci/test-files.sh libs/config/test/*.test.ts`).
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
exec node --import tsx --test --test-concurrency=2 --test-timeout=300000 ${options[@]+"${options[@]}"} "${files[@]}"
