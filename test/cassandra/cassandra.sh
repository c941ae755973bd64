#!/usr/bin/env bash
# Install, start and stop real Apache Cassandra nodes on loopback for the
# tests: the jars of org.apache.cassandra:cassandra-all and its dependencies
# come from Maven Central, everything lives under .cache/cassandra in the
# clone.
#
#   test/cassandra/cassandra.sh start [NODE...]   install and start (default: ref target)
#   test/cassandra/cassandra.sh stop  [NODE...]   stop by PID (default: every node)
#   test/cassandra/cassandra.sh resume NODE...    start stopped nodes again on their data
#   test/cassandra/cassandra.sh env   [NODE...]   print the variables the tests read
#   test/cassandra/cassandra.sh status
#   test/cassandra/cassandra.sh pid NODE           print the PID of a running node
#   test/cassandra/cassandra.sh pin CPUS NODE...  run the running nodes on CPUS
#                                                 (taskset list, e.g. 1 or 0-1)
#
# Nodes (one JVM each, side by side on their own ports):
#   ref     Cassandra 3.11: the reference, the last version with Thrift.
#           Thrift 127.0.0.1:19160, CQL 127.0.0.1:19042, Murmur3Partitioner.
#   bop     Cassandra 3.11 under ByteOrderedPartitioner, cluster name "test":
#           Thrift 19161, CQL 19043 (the tests that need an ordered ring).
#   rp      Cassandra 3.11 under RandomPartitioner (the default before 1.2,
#           kept by every cluster upgraded since): Thrift 19163, CQL 19045.
#   auth    Cassandra 3.11 with PasswordAuthenticator (cassandra/cassandra):
#           Thrift 19162, CQL 19044.
#   target  Cassandra 5.0: the target of a migration, CQL only, 127.0.0.1:29042.
#   chaos   Cassandra 5.0, CQL only, 127.0.0.1:29043: a node tests may stop and
#           restart under load (cmd/thriftd's outage test). Only started when
#           named, never by a bare `start`, and not listed by `status` unless
#           it runs.
#   durable Cassandra 3.11 with commitlog_sync: batch (a write is answered
#           once its commit log is synced to the disk, as thriftd's
#           --commitlog-sync batch): Thrift 19164, CQL 19046. For
#           make bench-compare-durable; only started when named, as chaos.
#
# Environment: CASSANDRA_REF_VERSION (3.11.19), CASSANDRA_TARGET_VERSION
# (5.0.9), CASSANDRA_HEAP (768M), CASSANDRA_CACHE (.cache/cassandra),
# CASSANDRA_START_TIMEOUT seconds (240).
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${CASSANDRA_CACHE:-$repo/.cache/cassandra}"
ref_version="${CASSANDRA_REF_VERSION:-3.11.19}"
target_version="${CASSANDRA_TARGET_VERSION:-5.0.9}"
heap="${CASSANDRA_HEAP:-768M}"
start_timeout="${CASSANDRA_START_TIMEOUT:-240}"
all_nodes=(ref bop rp auth target)
# Nodes started and stopped only when named.
named_nodes=(chaos durable)

die() { echo "cassandra.sh: $*" >&2; exit 1; }
usage() { sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# node_conf NODE sets the node's settings.
node_conf() {
  version="$ref_version" partitioner=Murmur3Partitioner cluster="Test Cluster"
  thrift_port="" authenticator=AllowAllAuthenticator authorizer=AllowAllAuthorizer
  commitlog_sync=periodic
  case "$1" in
    ref)    thrift_port=19160 native_port=19042 storage_port=17000 jmx_port=17199 ;;
    bop)    thrift_port=19161 native_port=19043 storage_port=17001 jmx_port=17299
            partitioner=ByteOrderedPartitioner cluster=test ;;
    rp)     thrift_port=19163 native_port=19045 storage_port=17004 jmx_port=17599
            partitioner=RandomPartitioner ;;
    auth)   thrift_port=19162 native_port=19044 storage_port=17002 jmx_port=17399
            authenticator=PasswordAuthenticator authorizer=CassandraAuthorizer ;;
    target) version="$target_version" native_port=29042 storage_port=27000 jmx_port=27199 ;;
    chaos)  version="$target_version" native_port=29043 storage_port=27002 jmx_port=27299 ;;
    durable) thrift_port=19164 native_port=19046 storage_port=17006 jmx_port=17699
            commitlog_sync=batch ;;
    *) die "unknown node '$1' (nodes: ${all_nodes[*]} ${named_nodes[*]})" ;;
  esac
  node_dir="$cache/nodes/$1"
  lib_dir="$cache/lib/$version"
}

# install VERSION copies cassandra-all VERSION and its dependencies into the
# cache, with Maven's local repository inside the cache too.
install() {
  local version="$1" lib="$cache/lib/$1"
  [ -f "$lib/.complete" ] && return 0
  command -v mvn >/dev/null || die "mvn not found (Debian package maven)"
  echo "cassandra.sh: resolving cassandra-all $version from Maven Central" >&2
  rm -rf "$lib"; mkdir -p "$lib"
  local profile=()
  case "$version" in 2.*|3.*) profile=(-Pthrift) ;; esac
  mvn -q -B "${profile[@]}" -f "$here/pom.xml" -Dmaven.repo.local="$cache/m2" \
    -Dcassandra.version="$version" \
    dependency:copy-dependencies -DoutputDirectory="$lib" -DincludeScope=runtime >&2 \
    || die "maven could not resolve cassandra-all $version"
  touch "$lib/.complete"
}

write_yaml() {
  local d="$node_dir"
  mkdir -p "$d/data" "$d/commitlog" "$d/saved_caches" "$d/hints" "$d/cdc_raw" "$d/logs"
  cat >"$d/cassandra.yaml" <<EOF
cluster_name: '$cluster'
num_tokens: 1
initial_token: $( [ "$partitioner" = ByteOrderedPartitioner ] && echo 80 || echo 0 )
partitioner: org.apache.cassandra.dht.$partitioner
authenticator: $authenticator
authorizer: $authorizer
role_manager: CassandraRoleManager
data_file_directories: [$d/data]
commitlog_directory: $d/commitlog
saved_caches_directory: $d/saved_caches
hints_directory: $d/hints
cdc_raw_directory: $d/cdc_raw
$(if [ "$commitlog_sync" = batch ]; then
  echo "commitlog_sync: batch"; echo "commitlog_sync_batch_window_in_ms: 2"
else
  echo "commitlog_sync: periodic"; echo "commitlog_sync_period_in_ms: 10000"
fi)
commitlog_segment_size_in_mb: 8
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1"
listen_address: 127.0.0.1
rpc_address: 127.0.0.1
storage_port: $storage_port
ssl_storage_port: $((storage_port + 1))
native_transport_port: $native_port
start_native_transport: true
endpoint_snitch: SimpleSnitch
concurrent_reads: 8
concurrent_writes: 8
concurrent_counter_writes: 8
memtable_allocation_type: heap_buffers
key_cache_size_in_mb: 8
counter_cache_size_in_mb: 4
batch_size_fail_threshold_in_kb: 1024
auto_snapshot: false
EOF
  if [ -n "$thrift_port" ]; then
    cat >>"$d/cassandra.yaml" <<EOF
start_rpc: true
rpc_port: $thrift_port
rpc_server_type: sync
thrift_framed_transport_size_in_mb: 15
# 3.11 unmaps files through sun.misc.Cleaner, which Java 9+ no longer has.
disk_access_mode: standard
EOF
  fi
  cat >"$d/logback.xml" <<EOF
<configuration>
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>$d/logs/system.log</file>
    <encoder><pattern>%-5level [%thread] %date{ISO8601} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
EOF
}

# jvm_opts prints the options the node's version needs on this JDK.
jvm_opts() {
  local opts=(
    -Xms"$heap" -Xmx"$heap" -XX:+UseG1GC -Xss512k
    -XX:+HeapDumpOnOutOfMemoryError -XX:HeapDumpPath="$node_dir/logs"
    -Djava.net.preferIPv4Stack=true
    -Dcassandra-foreground=yes
    -Dcassandra.config="file://$node_dir/cassandra.yaml"
    -Dcassandra.storagedir="$node_dir"
    -Dcassandra.logdir="$node_dir/logs"
    -Dlogback.configurationFile="file://$node_dir/logback.xml"
    -Dcassandra.jmx.local.port="$jmx_port"
    -Dcassandra.skip_wait_for_gossip_to_settle=0
    -Dcassandra.ring_delay_ms=1000
    -Dcassandra.superuser_setup_delay_ms=0
    -Dcassandra.migration_task_wait_in_seconds=1
    -Dcassandra.load_ring_state=false
    # Schema changes do not flush the schema tables to disk (they stay in
    # the commit log): the tests create and drop hundreds of keyspaces, and
    # those flushes were most of what a schema change cost a node.
    -Dcassandra.unsafesystem=true
    -Djdk.attach.allowAttachSelf=true
  )
  # The JDK internals Cassandra reaches into: 3.11 was written for Java 8 and
  # 5.0 lists these in its jvm17-server.options.
  local mod
  for mod in jdk.internal.misc jdk.internal.ref jdk.internal.math jdk.internal.module \
             jdk.internal.util.jar jdk.internal.loader jdk.internal.reflect sun.nio.ch; do
    opts+=(--add-exports "java.base/$mod=ALL-UNNAMED" --add-opens "java.base/$mod=ALL-UNNAMED")
  done
  # (java.math: 3.11 measures a RandomPartitioner token, a BigInteger, with jamm.)
  for mod in java.lang java.lang.module java.lang.reflect java.io java.math java.nio java.net \
             java.util java.util.concurrent java.util.concurrent.atomic; do
    opts+=(--add-opens "java.base/$mod=ALL-UNNAMED")
  done
  opts+=(
    --add-exports java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.registry=ALL-UNNAMED
    --add-exports java.rmi/sun.rmi.server=ALL-UNNAMED
    --add-exports java.sql/java.sql=ALL-UNNAMED
    --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED
  )
  # 3.11 measures each prepared statement with jamm, which without its Java
  # agent falls back to Unsafe and fails on this JDK's lambdas ("can't get
  # field offset on a hidden class"): nearly every statement a CQL driver
  # prepares is refused. Load it as 3.11's own cassandra-env.sh does.
  case "$version" in
    3.*) local jamm
         for jamm in "$lib_dir"/jamm-*.jar; do [ -f "$jamm" ] && opts=(-javaagent:"$jamm" "${opts[@]}"); break; done ;;
  esac
  printf '%s\n' "${opts[@]}"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

running() { [ -f "$node_dir/pid" ] && kill -0 "$(cat "$node_dir/pid")" 2>/dev/null; }

# start_node NODE [resume]: resume keeps the node's data (a restart after
# stop); otherwise the node starts fresh.
start_node() {
  node_conf "$1"
  if running; then echo "cassandra.sh: $1 already running (pid $(cat "$node_dir/pid"))" >&2; return 0; fi
  # A port taken by another process (say, a node of another clone) would
  # pass for this node's once it is up, while this node dies on it.
  local port
  for port in $native_port $thrift_port; do
    if port_open "$port"; then
      die "$1: port $port is already taken by another process (a node of another clone? ss -ltnp shows it)"
    fi
  done
  install "$version"
  if [ "${2:-}" = resume ] && [ -f "$node_dir/cassandra.yaml" ]; then
    echo "cassandra.sh: resuming $1 on its data" >&2
  else
    # A fresh node every start: tests rely on an empty cluster.
    rm -rf "$node_dir"
    write_yaml
  fi
  local -a opts; mapfile -t opts < <(jvm_opts)
  echo "cassandra.sh: starting $1 (Cassandra $version)" >&2
  nohup java "${opts[@]}" -cp "$lib_dir/*" org.apache.cassandra.service.CassandraDaemon \
    >"$node_dir/logs/stdout.log" 2>&1 </dev/null &
  echo $! >"$node_dir/pid"
}

wait_node() {
  node_conf "$1"
  local deadline=$((SECONDS + start_timeout)) port
  for port in $native_port $thrift_port; do
    until port_open "$port"; do
      if ! running; then
        tail -n 40 "$node_dir/logs/stdout.log" "$node_dir/logs/system.log" >&2 || true
        die "$1 exited during start-up (logs in $node_dir/logs)"
      fi
      if [ $SECONDS -ge $deadline ]; then
        tail -n 40 "$node_dir/logs/system.log" >&2 || true
        stop_node "$1"
        die "$1 did not open port $port within ${start_timeout}s"
      fi
      sleep 1
    done
  done
  running || die "$1 exited during start-up (logs in $node_dir/logs)"
  echo "cassandra.sh: $1 up (Cassandra $version, pid $(cat "$node_dir/pid"))" >&2
}

stop_node() {
  node_conf "$1"
  [ -f "$node_dir/pid" ] || return 0
  local pid; pid="$(cat "$node_dir/pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local i
    for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -9 "$pid" 2>/dev/null || true
    echo "cassandra.sh: stopped $1 (pid $pid)" >&2
  fi
  rm -f "$node_dir/pid"
}

print_env() {
  local n
  for n in "$@"; do
    node_conf "$n"
    case "$n" in
      ref)    echo "CASSANDRA_THRIFT=127.0.0.1:$thrift_port"; echo "CASSANDRA_HOSTS=127.0.0.1:$native_port" ;;
      bop)    echo "CASSANDRA_THRIFT_BOP=127.0.0.1:$thrift_port"; echo "CASSANDRA_HOSTS_BOP=127.0.0.1:$native_port" ;;
      rp)     echo "CASSANDRA_THRIFT_RP=127.0.0.1:$thrift_port"; echo "CASSANDRA_HOSTS_RP=127.0.0.1:$native_port" ;;
      auth)   echo "CASSANDRA_THRIFT_AUTH=127.0.0.1:$thrift_port"; echo "CASSANDRA_HOSTS_AUTH=127.0.0.1:$native_port" ;;
      target) echo "CASSANDRA_TARGET_HOSTS=127.0.0.1:$native_port" ;;
      chaos)  echo "CASSANDRA_CHAOS_HOSTS=127.0.0.1:$native_port" ;;
      durable) echo "CASSANDRA_THRIFT_DURABLE=127.0.0.1:$thrift_port"; echo "CASSANDRA_HOSTS_DURABLE=127.0.0.1:$native_port" ;;
    esac
  done
}

cmd="${1:-}"; [ $# -gt 0 ] && shift
case "$cmd" in
  start)
    nodes=("$@"); [ ${#nodes[@]} -gt 0 ] || nodes=(ref target)
    for n in "${nodes[@]}"; do node_conf "$n"; done
    # Start them all, then wait: the JVMs boot in parallel.
    for n in "${nodes[@]}"; do start_node "$n"; done
    for n in "${nodes[@]}"; do wait_node "$n"; done
    print_env "${nodes[@]}"
    ;;
  stop)
    nodes=("$@"); [ ${#nodes[@]} -gt 0 ] || nodes=("${all_nodes[@]}" "${named_nodes[@]}")
    for n in "${nodes[@]}"; do stop_node "$n"; done
    ;;
  resume)
    [ $# -gt 0 ] || usage
    for n in "$@"; do node_conf "$n"; done
    for n in "$@"; do start_node "$n" resume; done
    for n in "$@"; do wait_node "$n"; done
    print_env "$@"
    ;;
  pin)
    [ $# -ge 2 ] || usage
    cpus="$1"; shift
    command -v taskset >/dev/null || die "pin needs taskset (util-linux)"
    for n in "$@"; do
      node_conf "$n"
      running || die "$n is not running"
      # -a: every thread of the JVM, those it starts later too.
      taskset -a -cp "$cpus" "$(cat "$node_dir/pid")" >/dev/null
      echo "cassandra.sh: $n on CPUs $cpus" >&2
    done
    ;;
  env)
    nodes=("$@"); [ ${#nodes[@]} -gt 0 ] || nodes=(ref target)
    print_env "${nodes[@]}"
    ;;
  pid)
    [ $# -eq 1 ] || usage
    node_conf "$1"
    running || die "$1 is not running"
    cat "$node_dir/pid"
    ;;
  status)
    for n in "${all_nodes[@]}"; do
      node_conf "$n"
      if running; then echo "$n: running (Cassandra $version, pid $(cat "$node_dir/pid"))"; else echo "$n: stopped"; fi
    done
    for n in "${named_nodes[@]}"; do
      node_conf "$n"
      if running; then echo "$n: running (Cassandra $version, pid $(cat "$node_dir/pid"))"; fi
    done
    ;;
  *) usage ;;
esac
