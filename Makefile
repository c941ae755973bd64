# thriftbridge: build, run and test targets.
GO        ?= go
BIN       := bin
PKGS      := ./...
# Generated code is checked by the thrift compiler, not by our linters.
LINT_PKGS  = $(shell $(GO) list ./... | grep -v /gen-go)
LISTEN    ?= 127.0.0.1:9160
DATA_DIR  ?= ./data
FUZZTIME  ?= 20s
STATICCHECK_VERSION ?= v0.6.1

.PHONY: build run fixtures test bench lint fuzz thrift vet fmt-check clean check-clients cassandra cassandra-stop test-reference bench-compare bench-compare-pinned bench-compare-durable bench-cql

build:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/...

# Start thriftd on an embedded Badger store under ./data.
run: build
	$(BIN)/thriftd --listen $(LISTEN) --data-dir $(DATA_DIR)

# Round-trip every fixture model through thriftd, its data directory and
# sstable2json dumps, and compare with the expected CQL scripts.
fixtures: build
	$(BIN)/convert fixtures

# Every Go test and the client matrix, against real Cassandra 3.11 and 5.0
# nodes that test/run-tests.sh starts when java and mvn are here
# (THRIFTBRIDGE_CASSANDRA=off: without them; the cluster tests skip loudly).
test: fmt-check vet
	GO=$(GO) test/run-tests.sh

# The conformance suite on Cassandra 3.11 alone (nodes from make cassandra).
test-reference:
	CASSANDRA_THRIFT=127.0.0.1:19160 CASSANDRA_THRIFT_BOP=127.0.0.1:19161 \
	  $(GO) test -count=1 -timeout 20m -run TestReference -v ./legacy/conformance/

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '/gen-go/')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

lint: fmt-check vet
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(LINT_PKGS)

# Benchmarks report their rates, and their ratios to a ceiling measured in
# the same run (x-of-ceiling), as metrics: benchstat compares two runs.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s -timeout 30m $(PKGS)

# thriftd side by side with Cassandra 3.11, the Thrift echo ceiling and
# the raw Badger ceiling, as users measure it: cmd/thriftbench over real
# sockets, 32 connections, every mode on each server after BENCH_WARMUP,
# the best of BENCH_ROUNDS rounds of BENCH_DURATION; ratios, what a call
# cost each server and thriftd's RSS (docs/PERFORMANCE.md). Not part of
# make test; about 9 minutes on 2 cores.
# The Cassandra column is skipped loudly when the ref node cannot start
# (or THRIFTBRIDGE_CASSANDRA=off); a node it starts keeps running until
# make cassandra-stop.
# cassandra_column NODE PORT: the shell that starts the Cassandra 3.11 node
# NODE of test/cassandra/cassandra.sh for a compare run, setting cass to
# its Thrift address 127.0.0.1:PORT and pid to its process, or skipping
# the Cassandra column loudly (cass empty) when it cannot start or
# THRIFTBRIDGE_CASSANDRA=off.
define cassandra_column
cass=127.0.0.1:$(2); \
	if [ "$$THRIFTBRIDGE_CASSANDRA" = off ]; then \
	  echo "!!! SKIPPED: the Cassandra 3.11 column: THRIFTBRIDGE_CASSANDRA=off" >&2; cass=; \
	elif ! test/cassandra/cassandra.sh start $(1) >&2; then \
	  echo "!!! SKIPPED: the Cassandra 3.11 column: test/cassandra/cassandra.sh start $(1) failed (java and mvn are needed)" >&2; cass=; \
	fi; \
	pid=; [ -z "$$cass" ] || pid=$$(test/cassandra/cassandra.sh pid $(1)) || exit 1
endef
BENCH_DURATION ?= 5s
BENCH_WARMUP   ?= 3s
BENCH_ROUNDS   ?= 2
BENCH_FLAGS    ?=
bench-compare:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/thriftd ./cmd/thriftbench
	@$(call cassandra_column,ref,19160); \
	$(BIN)/thriftbench compare --thriftd $(BIN)/thriftd --cassandra "$$cass" --cassandra-pid "$${pid:-0}" \
	  --duration $(BENCH_DURATION) --warmup $(BENCH_WARMUP) --rounds $(BENCH_ROUNDS) $(BENCH_FLAGS)

# bench-compare with every server (thriftd, the echo server, Cassandra
# 3.11) on CPU 0 and the load generator on the others: what each server
# does with one CPU to itself, where bench-compare's servers share every
# CPU with the load (docs/PERFORMANCE.md, "One CPU to each server").
# The goals (docs/PERFORMANCE.md, "Goals") are judged on bench-compare;
# about 9 minutes.
bench-compare-pinned:
	$(MAKE) bench-compare BENCH_FLAGS="--server-cpus 0 $(BENCH_FLAGS)"

# The cost of durability: bench-compare's writing modes with thriftd under
# --commitlog-sync batch (a write is answered once it is synced to the
# disk) against Cassandra 3.11 under commitlog_sync: batch (the durable
# node of test/cassandra/cassandra.sh), the echo ceiling, and raw Badger
# syncing every write (docs/PERFORMANCE.md, "The cost of durability").
# The ref node is stopped first: after a bench-compare it goes on
# compacting what that run wrote. Not part of make test; about 5 minutes.
BENCH_DURABLE_MODES ?= insert,batch,batch-super,counter,mixed
bench-compare-durable:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/thriftd ./cmd/thriftbench
	test/cassandra/cassandra.sh stop ref
	@$(call cassandra_column,durable,19164); \
	$(BIN)/thriftbench compare --thriftd $(BIN)/thriftd --thriftd-flags '--commitlog-sync batch' --raw-badger-sync \
	  --cassandra "$$cass" --cassandra-pid "$${pid:-0}" --mode $(BENCH_DURABLE_MODES) --memory-load 0 \
	  --duration $(BENCH_DURATION) --warmup $(BENCH_WARMUP) --rounds $(BENCH_ROUNDS) $(BENCH_FLAGS)

# thriftd serving from Cassandra 5.0 (--backend cql://, the target node)
# against the same calls made directly by a gocql program on the same
# tables and node, Cassandra 3.11's own Thrift port and the echo ceiling,
# in one run: insert, get and get_slice of 100 columns, then
# get_range_slices of 100 rows x 10 columns; ratios thriftd/direct gocql
# with their 0.8 goal (docs/PERFORMANCE.md, "Thrift on a cluster"). Not
# part of make test. A cluster runs on machines of its own, so on a machine
# of 2 CPUs or more the two nodes run on the last CPU and thriftbench (the
# direct program and the echo server in it, and thriftd) on the others for
# the run; BENCH_CQL_PIN=0 lets every process share every CPU.
BENCH_CQL_HOSTS ?= 127.0.0.1:29042
BENCH_CQL_PIN   ?= 1
BENCH_CQL_FLAGS = --thriftd $(BIN)/thriftd --cql $(BENCH_CQL_HOSTS) \
  --thriftd-flags "--write-request-timeout-ms 10000" \
  --duration $(BENCH_DURATION) --warmup $(BENCH_WARMUP) --rounds $(BENCH_ROUNDS) $(BENCH_FLAGS)
bench-cql:
	@mkdir -p $(BIN)
	$(GO) build -o $(BIN)/ ./cmd/thriftd ./cmd/thriftbench
	test/cassandra/cassandra.sh start target >&2
	@cass=127.0.0.1:19160; \
	if [ "$$THRIFTBRIDGE_CASSANDRA" = off ]; then \
	  echo "!!! SKIPPED: the Cassandra 3.11 column: THRIFTBRIDGE_CASSANDRA=off" >&2; cass=; \
	elif ! test/cassandra/cassandra.sh start ref >&2; then \
	  echo "!!! SKIPPED: the Cassandra 3.11 column: test/cassandra/cassandra.sh start ref failed" >&2; cass=; \
	fi; \
	load=; cpus=$$(nproc); \
	if [ "$(BENCH_CQL_PIN)" = 1 ] && [ "$$cpus" -ge 2 ] && command -v taskset >/dev/null; then \
	  nodes=target; [ -n "$$cass" ] && nodes="target ref"; \
	  test/cassandra/cassandra.sh pin $$((cpus-1)) $$nodes; \
	  trap "test/cassandra/cassandra.sh pin 0-$$((cpus-1)) $$nodes" EXIT; \
	  load="taskset -c 0-$$((cpus-2))"; \
	fi; \
	$$load $(BIN)/thriftbench compare $(BENCH_CQL_FLAGS) --cassandra "$$cass" \
	  --mode insert,get,slice --columns 100 --preload 2000 && \
	$$load $(BIN)/thriftbench compare $(BENCH_CQL_FLAGS) --cassandra "$$cass" \
	  --mode range --columns 10 --range-rows 100 --preload 3000

# Every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# Regenerate the Go code of the Thrift IDL (Debian package thrift-compiler).
thrift:
	rm -rf thrift/gen-go
	mkdir -p thrift/gen-go
	thrift -out thrift/gen-go --gen go:package_prefix=github.com/thriftbridge/thriftbridge/thrift/gen-go/,skip_remote thrift/cassandra.thrift

# The matrix of Thrift-era clients (Hector, Astyanax, helenus, Python) on
# thriftd, and on Cassandra 3.11 when CASSANDRA_THRIFT is set.
check-clients: build
	clients/matrix.sh

# Real Apache Cassandra nodes on loopback, from Maven Central: 3.11 (the
# reference, with Thrift) and 5.0 (the target of a migration). Prints the
# CASSANDRA_* variables the cluster-backed tests read.
CASSANDRA_NODES ?= ref bop rp auth target
cassandra:
	test/cassandra/cassandra.sh start $(CASSANDRA_NODES)

cassandra-stop:
	test/cassandra/cassandra.sh stop

clean:
	rm -rf $(BIN)
