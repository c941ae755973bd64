#!/usr/bin/env bash
# clients/pycassa/run.sh HOST:PORT — pycassa itself (pycassa_check.py)
# against the Thrift server at HOST:PORT.
#
# pycassa 1.11.2, its last release, is Python 2 only (clients/README.md), so
# it runs on Jython 2.7, a Python 2.7 on the JVM, with the Thrift library it
# pins (thrift 0.9.3, whose pure-Python protocol it uses). Unchanged: the
# sources of both come from PyPI, checked against their SHA-256, and
# Jython's standalone jar from Maven Central through Maven (which checks
# Central's checksums), all under .cache/ in the clone: .cache/m2 (Maven's
# local repository, shared with the Java clients; MAVEN_REPO_LOCAL
# overrides it) and .cache/clients/pycassa.
#
#   clients/pycassa/run.sh HOST:PORT
#   clients/pycassa/run.sh --build-only   # fetch and unpack, run nothing
#
# Ends with one line `N passed, N failed`; exits 0 only if nothing failed.
set -uo pipefail
target="${1:?usage: clients/pycassa/run.sh HOST:PORT|--build-only}"
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="$repo/.cache/clients/pycassa"
m2="${MAVEN_REPO_LOCAL:-$repo/.cache/m2}"

JYTHON_VERSION=2.7.4
PYCASSA_URL=https://files.pythonhosted.org/packages/3d/a9/fdf29bb0da3349f144497fad59a3344f6228855636798a88e236b343c17a/pycassa-1.11.2.tar.gz
PYCASSA_SHA256=264332469e14278c40d6c0712c6857fc076cb35d1bc6068cf2196c63df9758db
THRIFT_URL=https://files.pythonhosted.org/packages/ae/58/35e3f0cd290039ff862c2c9d8ae8a76896665d70343d833bdc2f748b8e55/thrift-0.9.3.tar.gz
THRIFT_SHA256=dfbc3d3bd19d396718dab05abaf46d93ae8005e2df798ef02e32793cd963877e

give_up() { echo "pycassa/run.sh: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

case "$target" in
  *:* | --build-only) ;;
  *) echo "pycassa/run.sh: want HOST:PORT, got '$target'" >&2; exit 2 ;;
esac
command -v java >/dev/null || give_up "java is missing (Jython runs on it)"
command -v python3 >/dev/null || give_up "python3 is missing (it fetches the sources from PyPI)"

jar="$cache/jython-standalone-$JYTHON_VERSION.jar"
lib="$cache/lib"
mkdir -p "$cache"
# One fetch at a time, so runs side by side share it.
exec 9>"$cache/.lock"
flock 9
if [ ! -f "$jar" ]; then
  command -v mvn >/dev/null || give_up "mvn is missing (it fetches Jython from Maven Central)"
  mvn -q -B -Dmaven.repo.local="$m2" org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
    -Dartifact="org.python:jython-standalone:$JYTHON_VERSION" -DoutputDirectory="$cache" \
    >"$cache/fetch.log" 2>&1 || { cat "$cache/fetch.log" >&2; give_up "could not fetch Jython $JYTHON_VERSION"; }
fi
if [ ! -f "$lib/.complete" ]; then
  rm -rf "$lib" "$cache/src"
  mkdir -p "$cache/src"
  python3 - "$cache/src" "$PYCASSA_URL" "$PYCASSA_SHA256" "$THRIFT_URL" "$THRIFT_SHA256" <<'EOF' ||
import hashlib, os, sys, tarfile, urllib.request
dest, pairs = sys.argv[1], sys.argv[2:]
for url, want in zip(pairs[0::2], pairs[1::2]):
    data = urllib.request.urlopen(url, timeout=120).read()
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        sys.exit("%s: sha256 %s, want %s" % (url, got, want))
    path = os.path.join(dest, url.rsplit("/", 1)[1])
    with open(path, "wb") as f:
        f.write(data)
    with tarfile.open(path) as t:
        # The "data" filter where this Python has it (3.11.4 and later).
        t.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
EOF
    give_up "could not fetch pycassa and thrift from PyPI"
  mkdir -p "$lib"
  cp -r "$cache/src/pycassa-1.11.2/pycassa" "$lib/pycassa" &&
    cp -r "$cache/src/thrift-0.9.3/src" "$lib/thrift" &&
    touch "$lib/.complete" || give_up "could not unpack pycassa and thrift"
fi
flock -u 9
[ "$target" != --build-only ] || exit 0

# python.cachedir.skip: Jython would otherwise scan the jar's packages into
# a cache directory beside it on every start. clients/python holds
# checklib.py, the checks both Python programs share.
exec "$here/../run-program.sh" pycassa_check.py \
  java -Xmx256m -Dpython.cachedir.skip=true -Dpython.path="$lib:$repo/clients/python" \
  -jar "$jar" "$here/pycassa_check.py" "$target"
