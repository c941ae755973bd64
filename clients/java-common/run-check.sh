#!/usr/bin/env bash
# Shared by clients/*/run.sh of the Java clients: build the check program
# with Maven when its sources changed (quietly, Maven's local repository in
# the clone's .cache/m2), then run it against one server.
#
#   run-check.sh MODULE_DIR MAIN_CLASS HOST:PORT [JVM_OPTION...]
#   run-check.sh MODULE_DIR MAIN_CLASS --build-only
#
# --build-only builds the program and runs nothing (test/run-tests.sh builds
# the clients while the Go tests run).
#
# The program prints one line per check and ends with "N passed, N failed";
# its exit status is this script's. The run is bounded by `timeout`
# (CHECK_TIMEOUT seconds, default 90; the programs stop themselves at 75).
# MAVEN_REPO_LOCAL overrides Maven's local repository.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: run-check.sh MODULE_DIR MAIN_CLASS HOST:PORT|--build-only [JVM_OPTION...]" >&2; exit 2; }
module="$(cd "$1" && pwd)"; main="$2"; target="$3"; shift 3
case "$target" in
  *:* | --build-only) ;;
  *) echo "$(basename "$module")/run.sh: want HOST:PORT, got '$target'" >&2; exit 2 ;;
esac
repo="$(cd "$module/../.." && pwd)"
m2="${MAVEN_REPO_LOCAL:-$repo/.cache/m2}"
out="$module/target"
mkdir -p "$out"

# One build at a time per module, so runs side by side against several
# servers share it.
exec 9>"$out/.build.lock"
flock 9
# Rebuild when a source (its own or java-common's) or the pom is newer than
# the last build, or the
# last build's classpath named another local repository.
if [ ! -f "$out/.built" ] || [ "$(cat "$out/.built")" != "$m2" ] ||
   [ -n "$(find "$module/pom.xml" "$module/src" "$module/../java-common/src" -newer "$out/.built" -print -quit)" ]; then
  rm -f "$out/.built"
  if ! (cd "$module" && mvn -q -B -Dmaven.repo.local="$m2" compile \
      dependency:build-classpath -Dmdep.outputFile="$out/classpath.txt") >"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2
    echo "FAIL $(basename "$module")/run.sh: maven build failed (see above)"
    echo "0 passed, 1 failed"
    exit 1
  fi
  printf '%s' "$m2" >"$out/.built"
fi
flock -u 9
[ "$target" != --build-only ] || exit 0

cp="$out/classes:$(cat "$out/classpath.txt")"
set +e
timeout -k 5 "${CHECK_TIMEOUT:-90}" java -Xmx512m "$@" -cp "$cp" "$main" "$target"
rc=$?
set -e
if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
  echo "FAIL run timed out after ${CHECK_TIMEOUT:-90} s"
  echo "0 passed, 1 failed"
fi
exit $rc
