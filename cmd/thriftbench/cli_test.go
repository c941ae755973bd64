package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// buildBinaries builds thriftd and thriftbench into a directory of the
// test's, which it returns: compare starts its echo server from its own
// executable, so a compare test runs the real binaries.
func buildBinaries(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir+"/", "../thriftd", ".").CombinedOutput(); err != nil {
		t.Fatalf("build thriftd and thriftbench: %v\n%s", err, out)
	}
	return dir
}

// runCompareJSON runs the thriftbench of dir as compare --json against
// the thriftd of dir, with args after those, within timeout, and returns
// its report. Such a run measures nothing, so it does not wait for quiet
// CPUs (--settle 0): beside the other packages' tests it would wait out
// its limit at every turn.
func runCompareJSON(t *testing.T, dir string, timeout time.Duration, args ...string) comparison {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var out, errb strings.Builder
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "thriftbench"), append([]string{"compare", "--thriftd", filepath.Join(dir, "thriftd"),
		"--settle", "0", "--json", "--log-level", "warn"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("compare %q: %v\n%s", args, err, errb.String())
	}
	var res comparison
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
		t.Fatalf("compare --json: %v\n%s", err, out.String())
	}
	return res
}

func TestCommandLineRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"--no-such-flag"}, "flag provided but not defined"},
		{[]string{"--duration", "1s", "extra"}, `unexpected argument "extra"`},
		{[]string{"--mode", "insert,bogus"}, `unknown mode "bogus"`},
		{[]string{"--mode", ","}, "no mode given"},
		{[]string{"--connections", "0"}, "--connections"},
		{[]string{"--duration", "0s"}, "--duration must be positive"},
		{[]string{"--warmup", "-1s"}, "--warmup"},
		{[]string{"--rounds", "0"}, "--rounds"},
		{[]string{"--columns", "0"}, "--columns"},
		{[]string{"--value-size", "-1"}, "--value-size"},
		{[]string{"--values", "zeros"}, `--values must be repeat or distinct, not "zeros"`},
		{[]string{"--range-rows", "100000"}, "--range-rows"},
		{[]string{"--preload", "0", "--mode", "get"}, "--preload must be at least 1"},
		{[]string{"--preload", "0", "--mode", "insert,get-super"}, "--mode get-super reads preloaded rows: --preload must be at least 1"},
		{[]string{"--keyspace", "bad-name"}, "not a keyspace name"},
		{[]string{"--keyspace", "system_auth"}, "system keyspaces"},
		{[]string{"--addr", "no-port"}, "want host:port"},
		{[]string{"--addr", "192.0.2.1:9160"}, "not a loopback address"},
		{[]string{"--addr", "[2001:db8::1]:9160"}, "not a loopback address"},
		{[]string{"--log-level", "loud"}, "--log-level"},
		{[]string{"echo-server", "--bogus"}, "flag provided but not defined"},
		{[]string{"echo-server", "now"}, `unexpected argument "now"`},
		{[]string{"echo-server", "--listen", "192.0.2.1:9170"}, "not a loopback address"},
		{[]string{"compare", "--addr", "127.0.0.1:9160"}, "flag provided but not defined: -addr"},
		{[]string{"compare", "x"}, `unexpected argument "x"`},
		{[]string{"compare", "--cassandra", "192.0.2.1:9160"}, "not a loopback address"},
		{[]string{"compare", "--cassandra-pid", "-1"}, "--cassandra-pid must not be negative"},
		{[]string{"compare", "--cassandra", "", "--cassandra-pid", "1"}, "--cassandra-pid needs --cassandra"},
		{[]string{"compare", "--cassandra-pid", "2147483647"}, "--cassandra-pid 2147483647: "},
		{[]string{"compare", "--server-cpus", "0"}, "--server-cpus needs --cassandra-pid"},
		{[]string{"compare", "--cassandra", "", "--server-cpus", "x"}, "--server-cpus: CPU list"},
		{[]string{"compare", "--cassandra", "", "--server-cpus", "0-4095"}, "--server-cpus: "},
		{[]string{"compare", "--cassandra", "", "--server-cpus", "0", "--cql", "127.0.0.1:9042", "--mode", "insert"}, "--server-cpus is not for --cql"},
		{[]string{"start-up"}, "--data-dir is required"},
		{[]string{"start-up", "--data-dir", ".", "--starts", "0"}, "--starts must be at least 1"},
		{[]string{"start-up", "--data-dir", ".", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"start-up", "--data-dir", ".", "now"}, `unexpected argument "now"`},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, exitUsage, stderr)
		}
		if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage:") && !strings.Contains(stderr, "Usage") {
			t.Errorf("%q: stderr %q lacks %q and the usage", tc.args, stderr, tc.want)
		}
		if stdout != "" {
			t.Errorf("%q: wrote %q on stdout", tc.args, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	code, _, stderr := runCLI(t, "-h")
	if code != exitOK || !strings.Contains(stderr, "--connections") && !strings.Contains(stderr, "-connections") {
		t.Fatalf("-h: exit %d, stderr %q", code, stderr)
	}
}

func TestParseModes(t *testing.T) {
	got, err := parseModes("all")
	if err != nil || strings.Join(got, ",") != strings.Join(allModes, ",") {
		t.Fatalf("all = %v, %v", got, err)
	}
	got, err = parseModes(" get, insert ,get")
	if err != nil || strings.Join(got, ",") != "get,insert" {
		t.Fatalf("list = %v, %v", got, err)
	}
	for _, m := range allModes {
		if _, ok := modes[m]; !ok {
			t.Errorf("mode %s has no implementation", m)
		}
	}
	if len(modes) != len(allModes) {
		t.Errorf("%d modes implemented, %d listed", len(modes), len(allModes))
	}
	// A new mode runs last, so that the modes before it are measured
	// after what they always ran after.
	if want := "insert,get,slice,batch,batch-super,range,counter,mixed,get-super"; strings.Join(allModes, ",") != want {
		t.Errorf("all runs %s, want %s", strings.Join(allModes, ","), want)
	}
}

// TestModesPreloadWhatTheyRead: get-super alone reads the preloaded super
// rows, and the read modes of Standard families alone the standard ones.
func TestModesPreloadWhatTheyRead(t *testing.T) {
	for _, m := range allModes {
		wantRows := m == "get" || m == "slice" || m == "range" || m == "mixed"
		wantSupers := m == "get-super"
		if modeNeedsPreload(m) != wantRows || modeNeedsSuperPreload(m) != wantSupers || modeReadsPreloaded(m) != (wantRows || wantSupers) {
			t.Errorf("%s: preloads rows %v, super rows %v; want %v and %v", m, modeNeedsPreload(m), modeNeedsSuperPreload(m), wantRows, wantSupers)
		}
	}
	if anyMode([]string{"insert", "get"}, modeNeedsSuperPreload) || !anyMode([]string{"insert", "get-super"}, modeNeedsSuperPreload) {
		t.Error("anyMode does not find the mode that reads the super rows")
	}
}

// TestFamiliesOfTheKeyspace: PreloadedSupers is a Super family of bytes,
// marked as thriftbench's like every other.
func TestFamiliesOfTheKeyspace(t *testing.T) {
	tg := newTarget("x", "127.0.0.1:1", &loadConfig{Keyspace: "ks"}, slog.New(slog.DiscardHandler))
	byName := map[string]*cassandra.CfDef{}
	for _, cf := range tg.families() {
		byName[cf.Name] = cf
		if cf.Keyspace != "ks" || cf.GetComment() != familyComment || cf.GetKeyValidationClass() != "BytesType" || cf.ComparatorType != "BytesType" {
			t.Errorf("family %s: %+v", cf.Name, cf)
		}
	}
	if len(byName) != 5 {
		t.Errorf("%d families, want 5", len(byName))
	}
	cf := byName[cfPreloadedSupers]
	if cf == nil || cf.ColumnType != "Super" || cf.GetSubcomparatorType() != "BytesType" || cf.GetDefaultValidationClass() != "BytesType" {
		t.Fatalf("%s: %+v", cfPreloadedSupers, cf)
	}
}

func TestLoopback(t *testing.T) {
	ctx := context.Background()
	for addr, want := range map[string]bool{
		"127.0.0.1:9160": true, "127.1.2.3:1": true, "[::1]:9160": true, "localhost:9160": true, ":9160": true,
		"10.0.0.1:9160": false, "0.0.0.0:9160": false, "[::]:9160": false,
	} {
		err := checkLoopback(ctx, "--addr", addr, false)
		if (err == nil) != want {
			t.Errorf("%s: err %v, want allowed=%v", addr, err, want)
		}
		if err := checkLoopback(ctx, "--addr", addr, true); err != nil {
			t.Errorf("%s with --allow-remote: %v", addr, err)
		}
	}
}

func TestParseMemoryStatus(t *testing.T) {
	status := "Name:\tthriftd\nVmPeak:\t 2000000 kB\nVmHWM:\t  300000 kB\nVmRSS:\t  250000 kB\nThreads:\t12\n"
	m, err := parseMemoryStatus(strings.NewReader(status))
	if err != nil || m.VmHWMKiB != 300000 || m.VmRSSKiB != 250000 || m.RssAnonKiB != -1 || m.RssFileKiB != -1 {
		t.Fatalf("got %+v, %v", m, err)
	}
	status += "RssAnon:\t  100000 kB\nRssFile:\t  150000 kB\n"
	if m, err = parseMemoryStatus(strings.NewReader(status)); err != nil || m.RssAnonKiB != 100000 || m.RssFileKiB != 150000 {
		t.Fatalf("with RssAnon and RssFile: got %+v, %v", m, err)
	}
	if _, err := parseMemoryStatus(strings.NewReader("Name:\tx\n")); err == nil {
		t.Fatal("no error without VmHWM and VmRSS")
	}
}

func TestComparisonTable(t *testing.T) {
	res := func(mode string, ops float64) modeResult { return modeResult{Mode: mode, OpsPerSec: ops} }
	cfg := &loadConfig{Connections: 32, Modes: []string{"insert", "get", "slice", "mixed"}}
	c := &comparison{
		Config:        cfg,
		Thriftd:       &report{Target: "thriftd", Modes: []modeResult{res("insert", 30000), res("get", 15000), res("slice", 9000), res("mixed", 20000)}},
		Cassandra:     &report{Target: "Cassandra 3.11", Modes: []modeResult{res("insert", 10000), res("get", 10000), res("slice", 4000), res("mixed", 0)}},
		Echo:          &report{Target: "echo", Modes: []modeResult{res("insert", 60000), res("get", 20000), res("slice", 12000), res("mixed", 40000)}},
		ThriftdRSS:    &memoryStatus{VmHWMKiB: 300 * 1024, VmRSSKiB: 150 * 1024, RssAnonKiB: 100 * 1024, RssFileKiB: 50 * 1024},
		ThriftdLoaded: &memoryStatus{VmHWMKiB: 290 * 1024, VmRSSKiB: 270 * 1024, RssAnonKiB: -1, RssFileKiB: -1},
		ThriftdWide: &wideLoad{Connections: 64, Seconds: 10, OpsPerSec: 30000,
			Memory: &memoryStatus{VmHWMKiB: 600 * 1024, VmRSSKiB: 200 * 1024, RssAnonKiB: 150 * 1024, RssFileKiB: 50 * 1024}},
		ThriftdFlags: []string{"--commitlog-sync", "batch"},
	}
	c.fill()
	var out bytes.Buffer
	writeComparison(&out, c)
	text := out.String()
	for _, want := range []string{
		"| mode   | thriftd ops/s | Cassandra 3.11 ops/s | ratio | echo ceiling | thriftd/echo | echo/Cassandra |",
		"| insert |         30000 |                10000 |  3.00 |        60000 |          50% |           6.00 |",
		"| slice  |          9000 |                 4000 |  2.25 |        12000 |          75% |           3.00 |",
		"| mixed  |         20000 |                    0 |     - |        40000 |          50% |              - |",
		"  thriftd/Cassandra slice       >= 3.00x        2.25x  MISSED\n",
		"  thriftd/Cassandra get         >= 2.50x        1.50x  MISSED (out of reach here: the echo ceiling itself is 2.00x Cassandra)\n",
		"  thriftd/echo insert           >= 60%          50.0%  MISSED\n",
		"  thriftd RSS after (VmRSS)     <= 256 MiB    150 MiB  met\n",
		"  thriftd peak RSS (VmHWM)      <= 256 MiB    300 MiB  MISSED\n",
		"  thriftd peak, 64 conns mixed  <= 512 MiB    600 MiB  MISSED\n",
		"  after the run (5s without a call): VmRSS 150.0 MiB = RssAnon 100.0 MiB + RssFile 50.0 MiB (mapped files)\n",
		"  peak of the run (VmHWM): 300.0 MiB\n",
		"  at the end of its turns, largest: VmRSS 270.0 MiB\n",
		"  mixed load alone, 64 connections, 10 s, 30000 calls/s, 0 errors: peak (VmHWM) 600.0 MiB, at its end VmRSS 200.0 MiB",
		"thriftd flags: --commitlog-sync batch\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	met := map[string]bool{}
	for _, g := range c.Goals {
		met[g.Goal] = g.Met
	}
	wantMet := map[string]bool{
		"thriftd/Cassandra insert": true, "thriftd/echo insert": false,
		"thriftd/Cassandra get": false, "thriftd/echo get": true,
		"thriftd/Cassandra slice": false, "thriftd RSS after (VmRSS)": true,
		"thriftd peak RSS (VmHWM)": false, "thriftd peak, 64 conns mixed": false,
	}
	if len(met) != len(wantMet) {
		t.Errorf("goals %v, want %v", met, wantMet)
	}
	for g, want := range wantMet {
		if got, ok := met[g]; !ok || got != want {
			t.Errorf("goal %q met=%v (present %v), want %v", g, got, ok, want)
		}
	}
}

// TestGetSuperHasNoGoal: get-super is measured and shown on every server,
// with no goal, as batch and mixed are.
func TestGetSuperHasNoGoal(t *testing.T) {
	res := func(mode string, ops float64) modeResult { return modeResult{Mode: mode, OpsPerSec: ops} }
	c := &comparison{
		Config:    &loadConfig{Connections: 32, Modes: []string{"get", "batch", "get-super"}},
		Thriftd:   &report{Target: "thriftd", Modes: []modeResult{res("get", 30000), res("batch", 9000), res("get-super", 24000)}},
		Cassandra: &report{Target: "Cassandra 3.11", Modes: []modeResult{res("get", 10000), res("batch", 4000), res("get-super", 8000)}},
		Echo:      &report{Target: "echo", Modes: []modeResult{res("get", 60000), res("batch", 12000), res("get-super", 48000)}},
	}
	c.fill()
	var goals []string
	for _, g := range c.Goals {
		goals = append(goals, g.Goal)
	}
	if want := "thriftd/Cassandra get,thriftd/echo get"; strings.Join(goals, ",") != want {
		t.Errorf("goals %q, want %s", goals, want)
	}
	var out bytes.Buffer
	writeComparison(&out, c)
	if row := "| get-super |         24000 |                 8000 |  3.00 |        48000 |          50% |           6.00 |"; !strings.Contains(out.String(), row) {
		t.Errorf("comparison lacks %q:\n%s", row, out.String())
	}
}

func TestBestOf(t *testing.T) {
	a := modeResult{Mode: "get", OpsPerSec: 100, P99Ms: 9, Errors: 1, FirstError: "first", WarmupOps: 50, RoundsOpsPerSec: []float64{100},
		Server: &serverUse{CPUPerCallUs: 20}, RoundsServer: []*serverUse{{CPUPerCallUs: 20}}}
	b := modeResult{Mode: "get", OpsPerSec: 200, P99Ms: 3, Errors: 2, FirstError: "second", Server: &serverUse{CPUPerCallUs: 10}}
	got := bestOf(a, b)
	if got.OpsPerSec != 200 || got.P99Ms != 3 || got.Errors != 3 || got.FirstError != "first" || got.WarmupOps != 50 || len(got.RoundsOpsPerSec) != 1 ||
		got.Server.CPUPerCallUs != 10 || len(got.RoundsServer) != 1 {
		t.Errorf("bestOf(a, b) = %+v", got)
	}
	if got := bestOf(b, a); got.OpsPerSec != 200 || got.Errors != 3 || got.FirstError != "second" {
		t.Errorf("bestOf(b, a) = %+v", got)
	}
}

func TestRoundOrderGivesEveryServerATurnFirst(t *testing.T) {
	a, b, c := &target{name: "thriftd"}, &target{name: "direct gocql"}, &target{name: "echo"}
	targets := []*target{a, b, c}
	names := func(ts []*target) string {
		var s []string
		for _, t := range ts {
			s = append(s, t.name)
		}
		return strings.Join(s, ",")
	}
	for r, want := range []string{"thriftd,direct gocql,echo", "direct gocql,echo,thriftd", "echo,thriftd,direct gocql", "thriftd,direct gocql,echo"} {
		if got := names(roundOrder(targets, r)); got != want {
			t.Errorf("round %d: %s, want %s", r, got, want)
		}
	}
	if names(targets) != "thriftd,direct gocql,echo" {
		t.Errorf("roundOrder changed its argument: %s", names(targets))
	}
}

func TestComparisonGivesTheRatiosOfEveryRound(t *testing.T) {
	res := func(mode string, rounds ...float64) modeResult {
		return modeResult{Mode: mode, OpsPerSec: slices.Max(rounds), RoundsOpsPerSec: rounds}
	}
	c := &comparison{
		Config:    &loadConfig{Connections: 32, Modes: []string{"insert", "get"}, Rounds: 2},
		Thriftd:   &report{Target: "thriftd", Modes: []modeResult{res("insert", 8000, 16000), res("get", 9000, 9000)}},
		Direct:    &report{Target: "direct gocql", Modes: []modeResult{res("insert", 10000, 12800), res("get", 10000)}},
		Cassandra: &report{Target: "Cassandra 3.11", Modes: []modeResult{res("insert", 4000, 8000), res("get", 4500, 3000)}},
		Echo:      &report{Target: "echo", Modes: []modeResult{res("insert", 60000, 60000), res("get", 60000, 60000)}},
	}
	c.fill()
	var out bytes.Buffer
	writeComparison(&out, c)
	text := out.String()
	for _, want := range []string{
		// The best rounds: 16000/12800.
		"|              12800 |           1.25 |",
		"ratios round by round",
		"| insert |                 2.00, 2.00 |           2.00 |              0.80, 1.25 |           1.00 |",
		// get's direct load has one round: no ratio by round.
		"| get    |                 2.00, 3.00 |           2.45 |                       - |              - |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison lacks %q:\n%s", want, text)
		}
	}
	c.Thriftd.Modes[0].RoundsOpsPerSec = nil
	c.Rows, c.Goals = nil, nil
	c.fill()
	out.Reset()
	writeComparison(&out, c)
	if !strings.Contains(out.String(), "| insert |                          - |              - |") {
		t.Errorf("ratios by round of a mode measured once:\n%s", out.String())
	}
}

func TestComparisonShowsTheStorageCeiling(t *testing.T) {
	res := func(mode string, ops float64) modeResult { return modeResult{Mode: mode, OpsPerSec: ops} }
	c := &comparison{
		Config:    &loadConfig{Connections: 32, Modes: []string{"insert", "batch-super"}},
		Thriftd:   &report{Target: "thriftd", Modes: []modeResult{res("insert", 50000), res("batch-super", 10000)}},
		Echo:      &report{Target: "echo", Modes: []modeResult{res("insert", 100000), res("batch-super", 30000)}},
		RawBadger: &report{Target: "raw Badger", Modes: []modeResult{res("insert", 125000), res("batch-super", 6250)}},
	}
	c.fill()
	if r := c.Rows[0]; r.RawBadger == nil || *r.RawBadger != 125000 || r.ThriftdOverRaw == nil || *r.ThriftdOverRaw != 0.4 {
		t.Fatalf("row %+v", r)
	}
	var out bytes.Buffer
	writeComparison(&out, c)
	for _, want := range []string{
		"the storage ceiling: raw Badger in the load generator's process, 32 goroutines",
		"| insert      |         50000 |           125000 |                40% |",
		"| batch-super |         10000 |             6250 |               160% |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, out.String())
		}
	}
	c.RawBadger, c.Rows, c.Goals = nil, nil, nil
	c.fill()
	out.Reset()
	writeComparison(&out, c)
	if strings.Contains(out.String(), "storage ceiling") || c.Rows[0].RawBadger != nil {
		t.Errorf("a storage ceiling without raw Badger measured:\n%s", out.String())
	}
}

// TestMixedPartsKeepTheirShares: every server's mixed mode draws its calls
// from mixedPart, 40% get, 40% insert, 10% slice, 10% batch.
func TestMixedPartsKeepTheirShares(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const draws = 100000
	var n [mixBatch + 1]int
	for range draws {
		n[mixedPart(rng)]++
	}
	for part, want := range map[int]float64{mixGet: 0.40, mixInsert: 0.40, mixSlice: 0.10, mixBatch: 0.10} {
		if got := float64(n[part]) / draws; got < want-0.01 || got > want+0.01 {
			t.Errorf("part %d drawn %.3f of the time, want %.2f", part, got, want)
		}
	}
}
