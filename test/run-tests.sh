#!/usr/bin/env bash
# The whole test run behind `make test`: every Go test, against real
# Cassandra nodes when this machine can start them, then the matrix of
# Thrift-era clients.
#
# With Java and Maven present, it starts the nodes of
# test/cassandra/cassandra.sh (Cassandra 3.11 as the reference and as a
# source, 3.11 under ByteOrderedPartitioner and under RandomPartitioner,
# 3.11 with PasswordAuthenticator,
# Cassandra 5.0 as the target), installs cqlsh, exports the CASSANDRA_* and
# CQLSH variables the cluster-backed tests read, and stops the nodes on the
# way out. Without them, or with THRIFTBRIDGE_CASSANDRA=off, the
# cluster-backed tests skip with a loud "!!! SKIPPED" line and everything
# else still runs.
#
# Every test runs under the race detector.
#
# Environment: THRIFTBRIDGE_CASSANDRA (on|off, default on), GO (go),
# GO_TEST_FLAGS (flags for go test, default -race), CASSANDRA_NODES (the
# nodes to start, default "ref bop rp auth target"), GORACE (default
# atexit_sleep_ms=0).
set -uo pipefail
cd "$(dirname "$0")/.."

go_cmd="${GO:-go}"
nodes="${CASSANDRA_NODES:-ref bop rp auth target}"
status=0
started=""  # the nodes this run started

loud() { echo "!!! $* !!!" >&2; }

# Stops the nodes this run started; nodes that were already running (a
# developer's `make cassandra`) are left running.
stop_nodes() {
  if [ -n "$started" ]; then test/cassandra/cassandra.sh stop $started || true; fi
}
trap stop_nodes EXIT
trap 'exit 130' INT TERM

if [ "${THRIFTBRIDGE_CASSANDRA:-on}" = off ]; then
  loud "SKIPPED: real Cassandra nodes (THRIFTBRIDGE_CASSANDRA=off): the cluster-backed tests skip"
elif ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
  loud "SKIPPED: real Cassandra nodes need java and mvn (Debian: default-jdk-headless maven): the cluster-backed tests skip"
else
  # (Read the status whole: grep -q would stop reading early, and the
  # broken pipe would count as "not running" under pipefail.)
  running_nodes="$(test/cassandra/cassandra.sh status)"
  for n in $nodes; do
    grep -q "^$n: running" <<<"$running_nodes" || started="$started $n"
  done
  # The variables the tests read, one NAME=VALUE a line.
  if env_lines="$(test/cassandra/cassandra.sh start $nodes)"; then
    while IFS= read -r line; do
      [ -n "$line" ] && export "${line?}" && echo "test: $line"
    done <<<"$env_lines"
  else
    echo "test: the Cassandra nodes did not start" >&2
    status=1
  fi
  if cqlsh="$(test/cqlsh/install.sh)"; then
    export CQLSH="$cqlsh"
    echo "test: CQLSH=$CQLSH"
  else
    loud "SKIPPED: cqlsh could not be installed: the cqlsh tests skip"
  fi
fi

# A program built with -race sleeps a second before it exits (GORACE's
# atexit_sleep_ms, 1000 by default), and the tests run thriftd and
# convert as child processes hundreds of times (each `thriftd user`
# command, each server of a test): that sleep was half of the slowest
# test's time. A race is still reported when it happens, and fails the
# test it happens in.
export GORACE="${GORACE-atexit_sleep_ms=0}"

# The packages whose tests need no Cassandra node run beside the others,
# one package at a time each: the cluster-backed packages share the nodes
# and spend much of their time waiting for them (a schema change takes a
# node most of a second), time the CPU-bound packages fill. A package not
# listed here runs with the cluster-backed ones, which is always safe.
node_free="./auth ./clients ./fixtures ./internal/golden ./internal/slabprotocol
  ./migrate ./migrate/enginesource ./migrate/jsonsource ./store ./store/badgerstore
  ./store/marshal ./store/partition ./supercol ./thrift"
# shellcheck disable=SC2086
mapfile -t node_free_pkgs < <("$go_cmd" list $node_free)
# The cluster-backed packages run in two chains side by side: cmd/thriftd,
# the longest, alone, and the others in one. Their tests share the nodes
# as they would share them with other people's: every keyspace and role a
# test makes has a name of its own (testcluster.Keyspace, a random run
# prefix), and the few fixed names (the reference suite's keyspaces,
# daemon's thriftd_auth_test) belong to packages of one chain, which run
# one at a time.
mapfile -t long_pkgs < <("$go_cmd" list ./cmd/thriftd)
mapfile -t cluster_pkgs < <("$go_cmd" list ./... | grep -vxF -f <(printf '%s\n' "${node_free_pkgs[@]}" "${long_pkgs[@]}"))
# The Java clients of the matrix build (Maven), and pycassa's Jython and
# sources download, while the Go tests run; a build that fails here fails
# again, loudly, in the matrix.
for c in clients/astyanax clients/hector clients/pycassa; do "$c/run.sh" --build-only >/dev/null 2>&1; done &
start=$SECONDS
free_log="$(mktemp)"
long_log="$(mktemp)"
side_pids=()
trap 'for p in "${side_pids[@]}"; do kill "$p" 2>/dev/null; done; rm -f "$free_log" "$long_log"; stop_nodes' EXIT
# shellcheck disable=SC2086
"$go_cmd" test -count=1 -timeout 30m -p 1 ${GO_TEST_FLAGS--race} "${node_free_pkgs[@]}" >"$free_log" 2>&1 &
side_pids+=($!)
# shellcheck disable=SC2086
"$go_cmd" test -count=1 -timeout 30m -p 1 ${GO_TEST_FLAGS--race} "${long_pkgs[@]}" >"$long_log" 2>&1 &
side_pids+=($!)
# shellcheck disable=SC2086
"$go_cmd" test -count=1 -timeout 30m -p 1 ${GO_TEST_FLAGS--race} "${cluster_pkgs[@]}" || status=1
for p in "${side_pids[@]}"; do wait "$p" || status=1; done
side_pids=()
cat "$long_log" "$free_log"
echo "test: go test took $((SECONDS - start))s"

start=$SECONDS
"$go_cmd" build -o bin/ ./cmd/... && clients/matrix.sh || status=1
echo "test: the client matrix took $((SECONDS - start))s"

# The same clients against thriftd serving from Cassandra 5.0.
if [ -n "${CASSANDRA_TARGET_HOSTS:-}" ]; then
  start=$SECONDS
  MATRIX_BACKEND="cql://$CASSANDRA_TARGET_HOSTS" clients/matrix.sh || status=1
  echo "test: the client matrix on the cql backend took $((SECONDS - start))s"
else
  loud "SKIPPED: the client matrix on the cql backend: CASSANDRA_TARGET_HOSTS not set"
fi

exit $status
