#!/usr/bin/env bash
# clients/helenus/run.sh HOST:PORT — a Thrift-era Node.js application on
# helenus 0.6.10 (helenus_check.js) against the Thrift server at HOST:PORT.
# Installs helenus from npm into .cache/clients/node in the clone. Ends with
# one line `N passed, N failed`; exits 0 only if nothing failed.
set -uo pipefail
addr="${1:?usage: clients/helenus/run.sh HOST:PORT}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
prefix="$repo/.cache/clients/node"
HELENUS_VERSION=0.6.10

give_up() { echo "run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

command -v node >/dev/null || give_up "node is missing"
installed="$(node -p "require('$prefix/node_modules/helenus/package.json').version" 2>/dev/null || true)"
if [ "$installed" != "$HELENUS_VERSION" ]; then
  command -v npm >/dev/null || give_up "npm is missing"
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --silent --no-audit --no-fund "helenus@$HELENUS_VERSION" >/dev/null 2>&1 ||
    give_up "npm install helenus@$HELENUS_VERSION failed"
fi

exec "$here/../run-program.sh" helenus_check.js \
  env NODE_PATH="$prefix/node_modules" node "$here/helenus_check.js" "$addr"
