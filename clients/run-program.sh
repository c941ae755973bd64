#!/usr/bin/env bash
# clients/run-program.sh NAME COMMAND... — runs the check program of a
# client's run.sh (NAME names it in messages) for at most 110 s, showing
# its output, and makes sure the run ends with the line the matrix counts,
# `N passed, N failed`: a program killed or crashed before printing it
# counts what it printed, plus one failure for the crash. Exits with the
# program's status (1 when it ended without its closing line).
set -uo pipefail
name="${1:?usage: clients/run-program.sh NAME COMMAND...}"
shift
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
timeout -k 5 110 "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
last="$(tail -n 1 "$out")"
if ! [[ "$last" =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
  echo "run.sh: $name ended without its closing line (exit $rc)" >&2
  echo "$(grep -c '^ok ' "$out") passed, $(( $(grep -c '^FAIL ' "$out") + 1 )) failed"
  exit 1
fi
exit "$rc"
