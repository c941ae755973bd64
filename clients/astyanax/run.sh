#!/usr/bin/env bash
# Run the Astyanax check program (src/main/java/astyanaxcheck) against one
# Thrift server: thriftd or a real Cassandra 3.11. Builds it with Maven
# first if needed. Ends with "N passed, N failed"; exit 0 only if all pass.
#
#   clients/astyanax/run.sh HOST:PORT
here="$(cd "$(dirname "$0")" && pwd)"
exec "$here/../java-common/run-check.sh" "$here" astyanaxcheck.AstyanaxCheck "$@"
