# Sourced (bash) by the scripts that run the farm's TypeScript on the host: deploy/bootstrap.sh,
# deploy/test/compose-e2e.sh, .ci/path-clone.sh. The workspace's npm packages (tsx, the libraries' own
# dependencies) come from `npm ci` against package-lock.json; a fresh clone has none of them.

# farm_npm_packages REPO_ROOT: runs `npm ci` in REPO_ROOT when node_modules is missing or older than the lock
# file (nothing otherwise). With FARM_INSTALL_NPM_PACKAGES=0 it installs nothing: it fails at once instead,
# naming the command to run.
farm_npm_packages() {
  local root="$1"
  if [ -f "$root/node_modules/.package-lock.json" ] && ! [ "$root/package-lock.json" -nt "$root/node_modules/.package-lock.json" ]; then
    return 0
  fi
  if [ "${FARM_INSTALL_NPM_PACKAGES:-1}" != 1 ]; then
    echo "npm-packages: the npm packages of $root are missing or older than package-lock.json; run: (cd '$root' && npm ci)" >&2
    return 1
  fi
  command -v npm >/dev/null 2>&1 || { echo "npm-packages: npm (Node 20) is needed to install the npm packages of $root" >&2; return 1; }
  echo "npm-packages: installing the npm packages (npm ci in $root)" >&2
  if [ -f "$root/package-lock.json" ]; then
    (cd "$root" && npm ci --no-audit --no-fund --loglevel=error)
  else
    (cd "$root" && npm install --no-audit --no-fund --loglevel=error)
  fi
}
