#!/usr/bin/env bash
# clients/python/run.sh HOST:PORT — a pycassa-era Python application on the
# raw Thrift client (cassandra_check.py) against the Thrift server at
# HOST:PORT. pycassa itself cannot be installed on Python 3 (its setup.py and
# modules are Python 2 only: see clients/README.md; clients/pycassa runs it on
# Jython), so this uses what pycassa stood on, on Python 3: Apache `thrift`
# from PyPI, and Python bindings generated at run time from
# thrift/cassandra.thrift by Debian's thrift compiler.
#
# Installs into .cache/clients/py (a venv) in the clone; the generated code
# lives in a temporary directory under .cache/clients for the run. Ends with
# one line `N passed, N failed`; exits 0 only if nothing failed.
set -uo pipefail
addr="${1:?usage: clients/python/run.sh HOST:PORT}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.cache/clients"
venv="$cache/py"
# The newest PyPI release of thrift at or above Debian bookworm's compiler
# (0.17.0, which PyPI never published); the generated code needs no newer.
THRIFT_PY="${THRIFT_PY:-thrift==0.20.0}"

give_up() { echo "run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

if ! command -v thrift >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "run.sh: installing Debian's thrift-compiler" >&2
    apt-get install -y -qq thrift-compiler >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq thrift-compiler >/dev/null 2>&1; }
  fi
  command -v thrift >/dev/null || give_up "the thrift compiler is missing (Debian package thrift-compiler)"
fi

mkdir -p "$cache"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2 || give_up "python3 -m venv failed"
fi
if ! "$venv/bin/python" -c 'import thrift.transport.TSocket' 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check "$THRIFT_PY" >&2 || give_up "pip install $THRIFT_PY failed"
fi

gen="$(mktemp -d "$cache/py-gen.XXXXXX")"
trap 'rm -rf "$gen"' EXIT
thrift -out "$gen" --gen py "$repo/thrift/cassandra.thrift" || give_up "thrift --gen py failed"

# The program's own directory (checklib.py) is on its path as the script's.
"$here/../run-program.sh" cassandra_check.py \
  env PYTHONPATH="$gen" "$venv/bin/python" -u "$here/cassandra_check.py" "$addr"
