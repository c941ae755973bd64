package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// startTestEcho starts an echo server in the test's process.
func startTestEcho(t *testing.T) string {
	t.Helper()
	srv, err := startEchoServer("127.0.0.1:0", 64, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.stop)
	return srv.Addr()
}

// TestEchoAnswersASubcolumnGet: a get of one subcolumn, as get-super
// makes it, gets that subcolumn as a Column of --value-size bytes, as a
// real server answers it, over a real socket.
func TestEchoAnswersASubcolumnGet(t *testing.T) {
	addr := startTestEcho(t)
	ctx := context.Background()
	c, err := dial(ctx, addr, "", testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	path := &cassandra.ColumnPath{ColumnFamily: cfPreloadedSupers, SuperColumn: superName(3), Column: columnName(7)}
	cosc, err := c.Get(ctx, preloadedKey(5), path, cl)
	if err != nil {
		t.Fatal(err)
	}
	col := cosc.Column
	if col == nil || cosc.SuperColumn != nil || string(col.Name) != string(columnName(7)) || len(col.Value) != 64 || col.Timestamp == nil {
		t.Fatalf("get of a subcolumn answered %+v", cosc)
	}
}

// TestEveryModeAgainstEcho runs every mode for 300ms over real sockets
// against an echo server and checks the report, not the speed.
func TestEveryModeAgainstEcho(t *testing.T) {
	addr := startTestEcho(t)
	code, stdout, stderr := runCLI(t, "--addr", addr, "--mode", "all", "--duration", "300ms", "--warmup", "50ms",
		"--connections", "4", "--preload", "50", "--keys", "100", "--columns", "5", "--range-rows", "3",
		"--json", "--log-level", "warn")
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if rep.APIVersion != "19.39.0" || rep.Config.Connections != 4 || rep.DurationS != 0.3 {
		t.Errorf("report header %+v", rep)
	}
	if len(rep.Modes) != len(allModes) {
		t.Fatalf("%d modes reported, want %d", len(rep.Modes), len(allModes))
	}
	cellsPerOp := map[string]uint64{"insert": 1, "get": 1, "slice": 5, "batch": 5, "batch-super": 100, "range": 15, "counter": 1, "get-super": 1}
	for i, m := range rep.Modes {
		if m.Mode != allModes[i] {
			t.Errorf("mode %d is %s, want %s", i, m.Mode, allModes[i])
		}
		if m.Ops == 0 || m.Errors != 0 || m.FirstError != "" || m.WarmupOps == 0 {
			t.Errorf("%s: %d ops (%d in the warm-up), %d errors (%s)", m.Mode, m.Ops, m.WarmupOps, m.Errors, m.FirstError)
		}
		if want, ok := cellsPerOp[m.Mode]; ok && m.Cells != want*m.Ops {
			t.Errorf("%s: %d cells for %d ops, want %d per op", m.Mode, m.Cells, m.Ops, want)
		}
		if m.OpsPerSec <= 0 || m.P50Ms <= 0 || m.P50Ms > m.P99Ms || m.P99Ms > m.P999Ms || m.P999Ms > m.MaxMs {
			t.Errorf("%s: rates or percentiles out of order: %+v", m.Mode, m)
		}
	}

	// The text report names every mode; rounds are listed in the JSON.
	code, stdout, stderr = runCLI(t, "--addr", addr, "--mode", "get,batch-super", "--duration", "300ms", "--warmup", "0",
		"--connections", "2", "--preload", "10", "--log-level", "warn")
	if code != exitOK || !strings.Contains(stdout, "p99.9 ms") || !strings.Contains(stdout, "batch-super") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI(t, "--addr", addr, "--mode", "counter,range", "--duration", "150ms", "--warmup", "0",
		"--rounds", "2", "--connections", "2", "--preload", "10", "--json", "--log-level", "warn")
	if code != exitOK {
		t.Fatalf("--rounds 2: exit %d\nstderr: %s", code, stderr)
	}
	rep = report{}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Modes) != 2 {
		t.Fatalf("--rounds 2 --json: %v\n%s", err, stdout)
	}
	for _, m := range rep.Modes {
		if len(m.RoundsOpsPerSec) != 2 || m.OpsPerSec != max(m.RoundsOpsPerSec[0], m.RoundsOpsPerSec[1]) {
			t.Errorf("%s: %.0f ops/s, rounds %v: want the best of 2", m.Mode, m.OpsPerSec, m.RoundsOpsPerSec)
		}
	}
}

// TestKeyspaceSafety: an existing keyspace is refused without --reuse,
// used and kept with it; the run's own keyspace is dropped.
func TestKeyspaceSafety(t *testing.T) {
	addr := startTestEcho(t)
	ctx := context.Background()
	admin, err := dial(ctx, addr, "", testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	exists := func(name string) bool {
		_, err := admin.DescribeKeyspace(ctx, name)
		return err == nil
	}
	args := []string{"--addr", addr, "--mode", "insert", "--duration", "100ms", "--warmup", "0", "--connections", "2", "--log-level", "warn"}

	code, _, stderr := runCLI(t, append(args, "--keyspace", "own")...)
	if code != exitOK || exists("own") {
		t.Fatalf("own keyspace: exit %d, still there %v; stderr %s", code, exists("own"), stderr)
	}

	ks := cassandra.NewKsDef()
	ks.Name, ks.StrategyClass, ks.CfDefs = "theirs", "SimpleStrategy", []*cassandra.CfDef{}
	if _, err := admin.SystemAddKeyspace(ctx, ks); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, append(args, "--keyspace", "theirs")...)
	if code != exitFailed || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "--reuse") || !exists("theirs") {
		t.Fatalf("existing keyspace without --reuse: exit %d, stderr %s", code, stderr)
	}
	code, _, stderr = runCLI(t, append(args, "--keyspace", "theirs", "--reuse")...)
	if code != exitOK || !exists("theirs") {
		t.Fatalf("existing keyspace with --reuse: exit %d, kept %v, stderr %s", code, exists("theirs"), stderr)
	}
}

// TestUnreachable: a server that is not there fails the run quickly.
func TestUnreachable(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "--addr", "127.0.0.1:"+itoa(port), "--duration", "100ms", "--timeout", "2s")
	if code != exitFailed || !strings.Contains(stderr, "connect to") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

const testTimeout = 10 * time.Second

func itoa(n int) string { return strconv.Itoa(n) }

// TestMemoryReadings takes the readings compare makes of thriftd's
// memory from this process, under a real load of an echo server: the
// wide mixed load opens its connections and makes its calls, and the
// reading after the run waits for the quiet time after the last call.
func TestMemoryReadings(t *testing.T) {
	if _, err := readMemoryStatus(os.Getpid()); err != nil {
		t.Skipf("!!! SKIPPED: this system has no /proc/PID/status: %v !!!", err)
	}
	addr := startTestEcho(t)
	cfg := &loadConfig{Connections: 2, Keyspace: "memtest", Preload: 10, Keys: 100, Columns: 5, ValueSize: 64, RangeRows: 3,
		SuperColumns: 2, Subcolumns: 2, Values: "repeat", Seed: 1, Timeout: 10 * time.Second, Modes: []string{"mixed"}}
	target := newTarget("echo", addr, cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if err := target.setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer target.close(ctx)

	turns := &turnMemory{pid: os.Getpid(), log: slog.New(slog.DiscardHandler)}
	turns.read()
	if turns.largest == nil || turns.largest.VmRSSKiB <= 0 || turns.lastEnd.IsZero() {
		t.Fatalf("reading at the end of a turn: %+v", turns)
	}

	wide, err := measureWideLoad(ctx, target, os.Getpid(), 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if wide.Connections != wideConnections || len(target.workers) != wideConnections {
		t.Errorf("wide load over %d connections (%d open), want %d", wide.Connections, len(target.workers), wideConnections)
	}
	if wide.OpsPerSec <= 0 || wide.Errors != 0 || wide.Memory.VmHWMKiB < wide.Memory.VmRSSKiB {
		t.Errorf("wide load: %+v, memory %+v", wide, wide.Memory)
	}

	const left = 300 * time.Millisecond
	start := time.Now()
	after, err := memoryAfterRun(ctx, os.Getpid(), nil, start.Add(left-afterRunQuiet))
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < left-10*time.Millisecond || after.VmRSSKiB <= 0 {
		t.Errorf("read after %v, want after the %v of quiet left; memory %+v", waited, left, after)
	}
}

// TestTurnsReadWhatTheServerSpent measures a mode against an echo server
// in this process, whose process is then the server's: the measured phase
// has its CPU time per call; a target of unknown process has none.
func TestTurnsReadWhatTheServerSpent(t *testing.T) {
	if _, err := sampleProcess(os.Getpid()); err != nil {
		t.Skipf("!!! SKIPPED: cannot read this process's CPU time and writes: %v !!!", err)
	}
	addr := startTestEcho(t)
	cfg := &loadConfig{Connections: 4, Keyspace: "usetest", Preload: 10, Keys: 100, Columns: 5, ValueSize: 64, RangeRows: 3,
		SuperColumns: 2, Subcolumns: 2, Values: "repeat", Seed: 1, Timeout: 10 * time.Second, Modes: []string{"insert"},
		Duration: 300 * time.Millisecond}
	target := newTarget("echo", addr, cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if err := target.setup(ctx); err != nil {
		t.Fatal(err)
	}
	defer target.close(ctx)

	target.pid = os.Getpid()
	res := target.runMode(ctx, "insert", false)
	u := res.Server
	if res.Ops == 0 || u == nil {
		t.Fatalf("%d calls, use %+v", res.Ops, u)
	}
	// The load and the server both run here: at least a tick of CPU, and
	// the load generator's reading is this process's too.
	if u.CPUSeconds < 1.0/clockTicks || u.CPUPerCallUs != u.CPUSeconds*1e6/float64(res.Ops) || u.WrittenBytes < 0 {
		t.Errorf("use %+v over %d calls", u, res.Ops)
	}
	if l := res.LoadGenerator; l == nil || l.CPUSeconds < 1.0/clockTicks {
		t.Errorf("load generator's use %+v", l)
	}
	target.pid = 0
	if res := target.runMode(ctx, "insert", false); res.Ops == 0 || res.Server != nil || res.LoadGenerator == nil {
		t.Errorf("unknown process: %d calls, use %+v, load generator's %+v", res.Ops, res.Server, res.LoadGenerator)
	}
}

// TestEveryModeOnRawBadger runs every mode for 200ms on the raw Badger
// ceiling, in a directory of the test's, and checks what each call read
// or wrote against the database itself.
func TestEveryModeOnRawBadger(t *testing.T) {
	cfg := &loadConfig{Connections: 4, Keyspace: "rawtest", Preload: 50, Keys: 100, Columns: 5, ValueSize: 64, RangeRows: 3,
		SuperColumns: 2, Subcolumns: 3, Values: "repeat", Seed: 1, Timeout: 10 * time.Second, Modes: allModes,
		Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond}
	target := newTarget("raw Badger", "in-process", cfg, slog.New(slog.DiscardHandler))
	dir := t.TempDir() + "/raw"
	target.raw = newRawBadger(dir, false, cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if err := target.setup(ctx); err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			target.close(ctx)
		}
	}()
	cellsPerOp := map[string]uint64{"insert": 1, "get": 1, "slice": 5, "batch": 5, "batch-super": 6, "counter": 1, "get-super": 1}
	var adds uint64
	for _, m := range allModes {
		res := target.runMode(ctx, m, true)
		if m == "counter" {
			adds = res.Ops + res.WarmupOps
		}
		if res.Ops == 0 || res.Errors != 0 || res.WarmupOps == 0 {
			t.Errorf("%s: %d ops (%d in the warm-up), %d errors (%s)", m, res.Ops, res.WarmupOps, res.Errors, res.FirstError)
			continue
		}
		if want, ok := cellsPerOp[m]; ok && res.Cells != want*res.Ops {
			t.Errorf("%s: %d cells for %d ops, want %d per op", m, res.Cells, res.Ops, want)
		}
		// A page ends early at the last row only.
		if m == "range" && (res.Cells > 15*res.Ops || res.Cells < 10*res.Ops) {
			t.Errorf("range: %d cells for %d ops, want 15 a page but at the last row", res.Cells, res.Ops)
		}
	}
	// The writes are in the database: the counters hold every add that
	// succeeded, none lost to a conflict, and super rows hold every name.
	// The preloaded rows are whole: 50 rows of 5 columns, and 50 super
	// rows of 2 x 3 subcolumns.
	db := target.raw.db
	var counted uint64
	var superCells, writeCells int
	preloaded := map[byte]int{}
	if err := db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.DefaultIteratorOptions)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			switch k := it.Item().Key(); k[0] {
			case rawCounters:
				if err := it.Item().Value(func(v []byte) error { counted += binary.BigEndian.Uint64(v); return nil }); err != nil {
					return err
				}
			case rawSupers:
				superCells++
			case rawWrites:
				writeCells++
			case rawPreloaded, rawPreloadedSupers:
				preloaded[k[0]]++
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if counted != adds || superCells == 0 || superCells%6 != 0 || writeCells == 0 {
		t.Errorf("after the run: counters sum to %d after %d adds, %d super cells (rows of 6), %d cells written", counted, adds, superCells, writeCells)
	}
	if preloaded[rawPreloaded] != 50*5 || preloaded[rawPreloadedSupers] != 50*2*3 {
		t.Errorf("preloaded entries %d of Preloaded and %d of PreloadedSupers, want %d and %d",
			preloaded[rawPreloaded], preloaded[rawPreloadedSupers], 50*5, 50*2*3)
	}
	if err := target.close(ctx); err != nil {
		t.Fatal(err)
	}
	closed = true
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("raw Badger's directory outlived the run: %v", err)
	}
}

// TestRawBadgerPreloadsWhatItsModesRead: the raw ceiling writes the
// preloaded rows of a family only when a mode of the run reads them, as
// the Thrift targets do, and get-super reads its subcolumns by name.
func TestRawBadgerPreloadsWhatItsModesRead(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		modes         []string
		rows, supers  int // entries of Preloaded and PreloadedSupers
		readSubcolumn bool
	}{
		{modes: []string{"insert", "batch-super"}},
		{modes: []string{"get"}, rows: 10 * 4},
		{modes: []string{"get-super"}, supers: 10 * 2 * 3, readSubcolumn: true},
		{modes: []string{"slice", "get-super"}, rows: 10 * 4, supers: 10 * 2 * 3, readSubcolumn: true},
	} {
		cfg := &loadConfig{Connections: 1, Preload: 10, Keys: 10, Columns: 4, ValueSize: 16, RangeRows: 2,
			SuperColumns: 2, Subcolumns: 3, Values: valuesRepeat, Seed: 1, Modes: tc.modes}
		target := newTarget("raw Badger", "in-process", cfg, slog.New(slog.DiscardHandler))
		// The writing modes' ceiling syncs its writes, as compare's
		// --raw-badger-sync asks.
		sync := len(tc.modes) > 1
		target.raw = newRawBadger(t.TempDir()+"/raw", sync, cfg, slog.New(slog.DiscardHandler))
		if err := target.setup(ctx); err != nil {
			t.Fatalf("%v: %v", tc.modes, err)
		}
		if got := target.raw.db.Opts().SyncWrites; got != sync {
			t.Errorf("%v: raw Badger opened with SyncWrites %v, want %v", tc.modes, got, sync)
		}
		count := func(family byte) int {
			n := 0
			if err := target.raw.db.View(func(txn *badger.Txn) error {
				it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{family}})
				defer it.Close()
				for it.Rewind(); it.Valid(); it.Next() {
					n++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if rows, supers := count(rawPreloaded), count(rawPreloadedSupers); rows != tc.rows || supers != tc.supers {
			t.Errorf("%v: %d entries of Preloaded and %d of PreloadedSupers, want %d and %d", tc.modes, rows, supers, tc.rows, tc.supers)
		}
		if tc.readSubcolumn {
			w := &rawWorker{rng: rand.New(rand.NewPCG(1, 2))}
			for range 20 {
				if cells, err := rawGetSuper(target.raw, w); cells != 1 || err != nil {
					t.Fatalf("%v: get-super read %d cells: %v", tc.modes, cells, err)
				}
			}
		}
		if err := target.close(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
