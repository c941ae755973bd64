// Command thriftbench is a load generator for Cassandra's legacy Thrift API.
// It speaks only Thrift, through the generated client over the framed
// transport and the binary protocol, so the same run works unchanged
// against thriftd and against Cassandra 3.11: performance measured as users
// measure it, from a separate process, over real sockets.
//
//	thriftbench [flags]                         load one server
//	thriftbench echo-server --listen ADDR       the protocol/transport ceiling
//	thriftbench compare [flags]                 thriftd, Cassandra 3.11 and the
//	                                            ceiling side by side (make bench-compare)
//	thriftbench start-up --data-dir DIR         thriftd's start-up on a store
//
// # Load
//
// thriftbench opens --connections connections (32), each issuing one call at
// a time, as a pool of application threads does. Every selected --mode runs
// for --warmup (5s, not counted; 0 turns it off), then for --duration (10s),
// and reports ops/s, cells/s, the p50/p99/p99.9 latency of the calls and
// the number of failed calls (--json: one JSON document instead of the
// text table). With --rounds N every mode is measured N times, round after
// round, and the best round of each is reported: other work on a shared
// machine can only slow a round down. In a comparison the servers take
// turns at being measured first in a round. The modes:
//
//	insert       insert of one column into a random row of --keys
//	get          get of one column of a preloaded row
//	slice        get_slice of the --columns columns of a preloaded row
//	batch        batch_mutate of one row: --columns columns
//	batch-super  batch_mutate of one row of a super family:
//	             --super-columns super columns x --subcolumns subcolumns
//	range        get_range_slices of --range-rows rows x --columns columns,
//	             each connection paging through the preloaded rows
//	counter      add of 1 to one counter column of a random row of --keys
//	mixed        40% get, 40% insert, 10% slice, 10% batch
//	get-super    get of one subcolumn, by super column and name, of a
//	             preloaded row of a super family
//
// A call answered with an exception counts as an error; one that breaks the
// connection counts as an error and the connection is opened again. The
// exit status is 1 when any measured call failed, 2 on a usage error.
//
// # Its keyspace
//
// thriftbench works in a keyspace of its own (--keyspace, "thriftbench"):
// it creates it with five families (Preloaded, Writes, Supers, Counters,
// PreloadedSupers), writes --preload rows of --columns columns of
// --value-size bytes into Preloaded when a mode reads them (get, slice,
// range, mixed), and --preload rows of --super-columns super columns of
// --subcolumns subcolumns into PreloadedSupers when get-super runs, and
// drops it at the end. The values are random bytes, the same on every
// server for a --seed: with --values repeat (the default) every column
// holds one value, so a row's cells compress well, as rows of repeated
// names and numbers do; with --values distinct every column written holds
// a value of its own, which does not compress, the worst case for a
// server that compresses its data. It refuses to touch a keyspace that
// already exists, which it did not create, unless --reuse is given; a
// reused keyspace gets the families it lacks, and is not dropped. With
// --keep it does not drop the keyspace it created either: the way to fill
// a store for start-up.
//
// # Start-up
//
// start-up starts thriftd (--thriftd) on an existing data directory
// --starts times, one after the other, on a free loopback port, and prints
// the directory's size, how long each start took from the start of the
// process to its first answer to describe_version, and thriftd's VmRSS
// then. Each start is stopped with SIGTERM; a start after a thriftd that
// was killed replays what the store's logs hold, so killing a loaded
// thriftd before start-up times that too.
//
// # Safety
//
// The run is bounded: each mode stops by itself after its warm-up and
// duration, and every call is bounded by --timeout. --addr must be a
// loopback address unless --allow-remote is given, so that a benchmark is
// never pointed at a production cluster by accident. SIGINT stops the run
// and still drops the keyspace.
//
// # Ceiling
//
// echo-server is a bare Thrift server of the Cassandra service built on
// the Apache Thrift Go library with the same transport and protocol; every
// method answers at once with an empty or fixed result shaped like the
// request (get returns a column of --value-size bytes, for a subcolumn's
// path too; get_slice and get_range_slices as many columns and rows as
// asked). Loading it with the same parameters measures what the protocol,
// the transport, the loopback network and the load generator allow on
// this machine.
//
// # Comparison
//
// compare starts a fresh thriftd (--thriftd, on a temporary data directory
// with default settings) and an echo server on free loopback ports, uses
// the Cassandra 3.11 at --cassandra, runs every mode against each with the
// same parameters, mode by mode, and prints one table: the throughput of
// each, thriftd/Cassandra, thriftd/echo, and echo/Cassandra, the highest
// thriftd/Cassandra ratio the machine can show at all; then thriftd's
// resident memory (memory.go: at the end of its turns, after the run once
// it is quiet, and its peak under a mixed load over 64 connections, with
// --memory-load) and the performance goals (docs/PERFORMANCE.md), met or not. No Cassandra (an
// empty --cassandra or one that does not answer) leaves its column empty
// with a loud "!!! SKIPPED" line. The exit status is 1 when calls to
// thriftd or the echo server failed; Cassandra's failures are reported,
// since it is the reference. Before each server's turn at a mode, compare
// waits for the machine's CPUs to be quiet (at most 25% busy), for
// --settle at most, so that no server is measured while another's
// compactions or collections still run.
//
// Around each measured phase of a server whose process it knows (thriftd
// and the echo server it started, and Cassandra with --cassandra-pid),
// compare reads the process's CPU time (/proc/PID/stat) and the bytes it
// wrote towards the disk (/proc/PID/io) and prints what a call cost each
// server in its best round, with Cassandra's CPU per call over thriftd's
// and the CPU a call cost the load generator itself in each server's turn;
// with several rounds, thriftd's rate, CPU per call and writes round by
// round, which show a flush or a compaction that fell in a round.
//
// With --profiles DIR, thriftd runs with its profiles endpoint
// (--pprof-listen on a free loopback port), and over each of its measured
// turns compare takes its CPU and mutex profiles and its heap before and
// after, into DIR (profiles.go); the report says that thriftd was
// profiled, which costs it a little of its rate.
//
// With --server-cpus LIST (make bench-compare-pinned), every server of
// the run (thriftd, the echo server, and the Cassandra at --cassandra-pid,
// moved for the run and back after it) runs on the CPUs of LIST and the
// load generator on the others, all through taskset (pin.go): each server
// has the same CPUs to itself, and the ratios are those of what each does
// with them, without the load generator's share of a shared machine.
//
// The storage ceiling is measured in the same run (--raw-badger, on by
// default, not with --cql): every mode on a Badger database of compare's
// own process, opened with thriftd's default memory sizing, from
// --connections goroutines, with the same rows, names and values, in the
// plainest mapping (one entry a cell, writes set without a read, an add
// read and rewritten in one transaction); the table gives thriftd/raw
// Badger beside it.
//
// With --cql HOST:PORT (a Cassandra 4/5 node), thriftd serves from that
// node (--backend cql://, in keyspaces of a prefix of the run's own, at
// consistency ONE) and a "direct gocql" column is added: the same modes
// (insert, get, slice, batch, range) as the CQL statements a gocql program
// makes on the very tables thriftd created and preloaded, prepared, from
// --connections goroutines over one token-aware session; the table gives
// thriftd/direct gocql, whose goal is 0.8 (make bench-cql).
package main
