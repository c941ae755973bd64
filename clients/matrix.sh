#!/usr/bin/env bash
# clients/matrix.sh — the compatibility matrix of Thrift-era clients.
#
# Starts its own thriftd (bin/thriftd: `make build` first, which
# `make check-clients` does) on a free loopback port with a temporary data
# directory, runs every clients/*/run.sh against it, and against Cassandra
# 3.11 too when CASSANDRA_THRIFT is set (host:port of a 3.11 node's Thrift
# port, e.g. 127.0.0.1:19160 from `test/cassandra/cassandra.sh start ref`).
# Prints a table client x server -> `N passed, N failed` and closes with the
# sum over every run, `N passed, N failed`; a run that crashes, times out or
# ends without its closing line counts as one more failure. Exits non-zero
# if anything failed. thriftd is stopped on the way out.
#
# With MATRIX_BACKEND=cql://host:port[,...] (test/run-tests.sh sets it from
# CASSANDRA_TARGET_HOSTS for a second run), thriftd serves from that CQL
# cluster instead, its keyspaces under a prefix of the run's own; the
# clients drop the keyspaces they create, and the run drops what is left
# under its prefix (the legacy definitions) through cqlsh when CQLSH is set
# (test/cqlsh/install.sh), or says loudly what it leaves. The 3.11 column
# does not depend on the backend and is left to the first run.
#
# Environment: CASSANDRA_THRIFT (unset: the 3.11 column is skipped, loudly),
# MATRIX_BACKEND (unset: the embedded store), CQLSH, MATRIX_THRIFTD (the
# thriftd binary, default bin/thriftd), MATRIX_PORTS (loopback ports to try
# for thriftd, default 19180-19189), MATRIX_TIMEOUT (seconds per client run,
# default 150), MATRIX_VERBOSE=1 (print every run's full output, not only
# the failing runs').
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
thriftd="${MATRIX_THRIFTD:-$repo/bin/thriftd}"
backend="${MATRIX_BACKEND:-}"
backend_args=()
sname_thriftd="thriftd"
if [ -n "$backend" ]; then
  prefix="matrix$(date +%s)$$_"
  backend_args=(--backend "$backend" --cql-keyspace-prefix "$prefix" --cql-meta-keyspace "${prefix}meta")
  sname_thriftd="thriftd-cql"
  # A cluster reports the seconds left of a TTL, not the TTL written
  # (docs/CQL-BACKEND.md): the clients' checks accept a few seconds less.
  export THRIFTBRIDGE_REMAINING_TTL=1
fi
ports="${MATRIX_PORTS:-$(seq 19180 19189)}"
run_timeout="${MATRIX_TIMEOUT:-150}"

[ -x "$thriftd" ] || { echo "matrix.sh: $thriftd not found: run make build (or make check-clients)" >&2; echo "0 passed, 1 failed"; exit 1; }

work="$(mktemp -d)"
pid=""
# drop_prefixed drops the keyspaces of the cql backend's run, through cqlsh.
drop_prefixed() {
  local first="${backend#cql://}"; first="${first%%,*}"
  local host="${first%:*}" port="${first##*:}"
  [ "$host" = "$first" ] && port=9042
  if [ -z "${CQLSH:-}" ]; then
    echo "!!! matrix: CQLSH not set: the keyspaces ${prefix}* stay on $backend; drop them by hand !!!" >&2
    return
  fi
  local ks
  for ks in $("$CQLSH" "$host" "$port" -e "SELECT keyspace_name FROM system_schema.keyspaces" 2>/dev/null | grep -o "${prefix}[A-Za-z0-9_]*"); do
    "$CQLSH" "$host" "$port" -e "DROP KEYSPACE IF EXISTS \"$ks\"" >/dev/null 2>&1 ||
      echo "matrix: could not drop keyspace $ks on $backend" >&2
  done
}
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  if [ -n "$backend" ]; then drop_prefixed; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Start thriftd on the first port that is free and stays ours.
addr=""
for port in $ports; do
  port_open "$port" && continue
  rm -rf "$work/data"
  "$thriftd" --listen "127.0.0.1:$port" --data-dir "$work/data" "${backend_args[@]}" --log-level warn >"$work/thriftd.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    port_open "$port" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null && port_open "$port"; then addr="127.0.0.1:$port"; break; fi
  wait "$pid" 2>/dev/null; pid=""
done
if [ -z "$addr" ]; then
  echo "matrix.sh: thriftd did not start on any of the ports $(echo $ports)" >&2
  cat "$work/thriftd.log" >&2 2>/dev/null
  echo "0 passed, 1 failed"; exit 1
fi
if [ -n "$backend" ]; then
  echo "matrix: thriftd on $addr (data on $backend, keyspaces ${prefix}*)"
else
  echo "matrix: thriftd on $addr (data in $work/data)"
fi

servers=("$sname_thriftd=$addr")
if [ -n "$backend" ]; then
  echo "matrix: Cassandra 3.11 is the first run's column, not this one's"
elif [ -n "${CASSANDRA_THRIFT:-}" ]; then
  servers+=("cassandra-3.11=$CASSANDRA_THRIFT")
  port_open "${CASSANDRA_THRIFT##*:}" ||
    echo "matrix: warning: nothing answers on CASSANDRA_THRIFT=$CASSANDRA_THRIFT" >&2
else
  echo "!!! SKIPPED: clients against Cassandra 3.11: CASSANDRA_THRIFT not set !!!"
fi

clients=()
for f in "$here"/*/run.sh; do [ -f "$f" ] && clients+=("$(basename "$(dirname "$f")")"); done
if [ ${#clients[@]} -eq 0 ]; then echo "matrix.sh: no clients/*/run.sh" >&2; echo "0 passed, 1 failed"; exit 1; fi

declare -A cell
total_passed=0 total_failed=0
for server in "${servers[@]}"; do
  sname="${server%%=*}" saddr="${server#*=}"
  for client in "${clients[@]}"; do
    log="$work/$client.$sname.log"
    echo "== $client against $sname ($saddr)"
    start=$SECONDS
    timeout "$run_timeout" bash "$here/$client/run.sh" "$saddr" >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(( SECONDS - start ))
    last="$(tail -n 1 "$log")"
    if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
      p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
      note=""
      if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; note=" (exit $rc)"; fi
    else
      p=$(grep -c '^ok ' "$log") f=$(( $(grep -c '^FAIL ' "$log") + 1 ))
      note=" (crashed: exit $rc$([ "$rc" -eq 124 ] && echo ", timed out after ${run_timeout}s"))"
    fi
    total_passed=$(( total_passed + p )) total_failed=$(( total_failed + f ))
    cell["$client,$sname"]="$p passed, $f failed$note"
    if [ "$f" -ne 0 ] || [ "${MATRIX_VERBOSE:-0}" = 1 ]; then
      sed 's/^/   | /' "$log"
      if grep -Eq '^FAIL.*(Keyspace [^ ]+ does not exist|non existing keyspace|unconfigured table)' "$log"; then
        echo "   note: a keyspace or table of this run vanished mid-run: did something else drop it?"
        echo "         (the conformance suite's TestReference empties the node it runs against)"
      fi
    fi
    echo "   $client against $sname: $p passed, $f failed$note in ${secs}s"
  done
done

# The table: one row per client, one column per server.
w=6; for c in "${clients[@]}"; do [ ${#c} -gt $w ] && w=${#c}; done
cw=24; for k in "${!cell[@]}"; do [ ${#cell[$k]} -gt $cw ] && cw=${#cell[$k]}; done
echo
{
printf "%-${w}s" "client"; for s in "${servers[@]}"; do printf " | %-${cw}s" "${s%%=*}"; done; echo
printf "%-${w}s" "" | tr ' ' '-'; for s in "${servers[@]}"; do printf -- "-+-%-${cw}s" "" | tr ' ' '-'; done; echo
for c in "${clients[@]}"; do
  printf "%-${w}s" "$c"; for s in "${servers[@]}"; do printf " | %-${cw}s" "${cell[$c,${s%%=*}]}"; done; echo
done
[ -n "${CASSANDRA_THRIFT:-}" ] || [ -n "$backend" ] || printf "%-${w}s | %s\n" "" "cassandra-3.11: !!! SKIPPED (CASSANDRA_THRIFT not set) !!!"
} | sed 's/[[:space:]]*$//'
echo
echo "$total_passed passed, $total_failed failed"
if [ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]; then exit 0; fi
exit 1
