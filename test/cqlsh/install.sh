#!/usr/bin/env bash
# Install cqlsh from PyPI into a virtualenv inside the clone
# (.cache/cqlsh, gitignored) and print the path of its executable, for the
# tests that run converted scripts through a real cqlsh:
#
#   export CQLSH="$(test/cqlsh/install.sh)"
#
# cqlsh 6.2.2 (with the cassandra-driver it pins) talks to both test nodes
# of test/cassandra/cassandra.sh: Cassandra 3.11 (native protocol v4, CQL
# 3.4.4) and 5.0 (v5, CQL 3.4.7). It negotiates the protocol version
# itself; its default CQL version is the server's. It prints a WARNING
# line that it "was built against 5.0.0" to every server of another
# version; the tests let exactly that line through.
#
# cqlsh makes ~/.cassandra for its history: run it with HOME (or
# CQL_HISTORY) pointing inside a temporary directory, as the tests do.
#
# Environment: CQLSH_VERSION (6.2.2), CQLSH_CACHE (.cache/cqlsh), PYTHON
# (python3, 3.9 to 3.11: cassandra-driver's default event loop needs
# asyncore, which Python 3.12 removed).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
version="${CQLSH_VERSION:-6.2.2}"
venv="${CQLSH_CACHE:-$repo/.cache/cqlsh}/$version"
python="${PYTHON:-python3}"

die() { echo "install.sh: $*" >&2; exit 1; }

if [ ! -f "$venv/.complete" ]; then
  command -v "$python" >/dev/null || die "$python not found"
  echo "install.sh: installing cqlsh $version into $venv" >&2
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2 || die "$python -m venv failed (Debian: apt-get install python3-venv)"
  # No cache outside the clone: pip's own cache stays off.
  "$venv/bin/pip" install --quiet --no-cache-dir --disable-pip-version-check "cqlsh==$version" >&2 \
    || die "pip could not install cqlsh $version"
  # cqlsh creates ~/.cassandra for its history: keep it inside the venv.
  HOME="$venv" "$venv/bin/cqlsh" --version >&2 || die "the installed cqlsh does not run"
  touch "$venv/.complete"
fi
echo "$venv/bin/cqlsh"
