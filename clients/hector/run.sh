#!/usr/bin/env bash
# Run the Hector check program (src/main/java/hectorcheck) against one
# Thrift server: thriftd or a real Cassandra 3.11. Builds it with Maven
# first if needed. Ends with "N passed, N failed"; exit 0 only if all pass.
#
#   clients/hector/run.sh HOST:PORT
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../java-common/run-check.sh" "$here" hectorcheck.HectorCheck "$@"
