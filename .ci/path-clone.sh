#!/usr/bin/env bash
# The suite from an awkward place (issue 29): clones HEAD into "<temp folder>/farm clone/main" (under the system's
# temp folder, with a space in the path), beside a copy of the sibling `shared` folder when there is one (the
# task corpus some tests read), and runs the path-sensitive test files there, one of them from another working
# folder. Quick (well under a minute on an idle machine); removes the clone on exit, whatever happened.
#   bash .ci/path-clone.sh                 # after `npm test` in .ci/run
#   bash .ci/path-clone.sh FILE…           # other test files (paths relative to the checkout)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
# The clone borrows this checkout's node_modules: installed first when missing (FARM_INSTALL_NPM_PACKAGES=0: stop, naming npm ci).
# shellcheck source=../deploy/npm-packages.sh
source "$repo/deploy/npm-packages.sh"
farm_npm_packages "$repo"
files=("$@")
if ((${#files[@]} == 0)); then
  files=(
    libs/simulator/test/grpc-controller.test.ts # "outside the allowed folders" must be outside the temp folder
    services/scheduler/test/cli.test.ts         # spawns the farm command with task paths
    services/cli/test/task-convert.test.ts      # the CLI, relative task paths, the sibling corpus
    libs/trajectory/test/interop.test.ts        # Debian's avro tools and Python on files in the clone
  )
fi
tmp="$(mktemp -d)"
trap 'rm -rf -- "$tmp"' EXIT
clone="$tmp/farm clone/main"
mkdir -p "$tmp/farm clone"
git clone --quiet --no-hardlinks "$repo" "$clone"
# HEAD itself, even when it is on no branch (a detached CI checkout).
git -C "$clone" fetch --quiet "$repo" HEAD
git -C "$clone" checkout --quiet --detach FETCH_HEAD
if [[ -d "$repo/../shared" ]]; then cp -a "$repo/../shared" "$tmp/farm clone/shared"; fi
# node_modules without copying 270 MB: each installed package linked, but the workspace links (@farm/*,
# relative to node_modules) copied so they point into the clone's own libs and services.
mkdir "$clone/node_modules"
for entry in "$repo/node_modules/"* "$repo/node_modules/".[!.]*; do
  [[ -e $entry ]] || continue
  name="$(basename -- "$entry")"
  if [[ $name == "@farm" ]]; then cp -a -- "$entry" "$clone/node_modules/@farm"; else ln -s -- "$entry" "$clone/node_modules/$name"; fi
done
for f in "${files[@]}"; do
  [[ -f "$clone/$f" ]] || { echo "path-clone: no test file $f in the clone" >&2; exit 2; }
done
echo "path-clone: ${#files[@]} test files in '$clone'" >&2
(cd "$clone" && bash .ci/test-files.sh "${files[@]:1}")
# The first file from another working folder: tests find the checkout from their own location, not the cwd.
(cd / && node --import "$(node -e 'console.log(require("node:url").pathToFileURL(process.argv[1]).href)' "$clone/node_modules/tsx/dist/loader.mjs")" --test --test-timeout=300000 "$clone/${files[0]}")
echo "path-clone: passed" >&2
