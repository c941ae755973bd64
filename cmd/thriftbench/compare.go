package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Bounds of starting and stopping the servers compare runs.
const (
	serverStartTimeout = 60 * time.Second
	serverStopTimeout  = 30 * time.Second
	cassandraProbe     = 10 * time.Second
)

// The performance goals (docs/PERFORMANCE.md, "Goals"): thriftd/Cassandra 3.11 throughput ratios,
// single-column calls at 60% of the echo ceiling, and thriftd's resident
// memory. A mode without a ratio goal (batch, mixed, get-super) is
// measured and shown with no goal.
var ratioGoals = map[string]float64{
	"insert": 2.5, "get": 2.5, "slice": 3, "batch-super": 2, "range": 2.5, "counter": 2,
}

var echoGoalModes = map[string]bool{"insert": true, "get": true, "counter": true}

const (
	// directGoal: thriftd on a CQL cluster against the same calls made
	// by a gocql application directly.
	directGoal = 0.80
	echoGoal   = 0.60
	rssGoalMiB = 256
)

// compareConfig holds compare's own flags.
type compareConfig struct {
	load      loadConfig
	thriftd   string
	cassandra string
	// cassandraPid, when not 0, is the process of the Cassandra at
	// cassandra: what it spends on each turn is read (usage.go).
	cassandraPid int
	// thriftdFlags are added to thriftd's command line (space-separated).
	thriftdFlags string
	// cql, when set, is a Cassandra 4/5 node (host:port of CQL) thriftd
	// serves from, also loaded directly by gocql (direct.go).
	cql string
	// settle bounds the wait for a quiet machine before each turn.
	settle time.Duration
	// memoryLoad is how long thriftd alone takes the mixed load of
	// wideConnections connections after the run (0: not at all).
	memoryLoad time.Duration
	// rawBadger: measure the raw Badger ceiling too (rawbadger.go).
	rawBadger bool
	// rawBadgerSync: the raw Badger ceiling syncs every write.
	rawBadgerSync bool
	// profiles, when set, is the directory of the profiles taken of
	// thriftd during its measured turns (profiles.go).
	profiles string
	// serverCPUs, when set, is the CPU list every server runs on, the
	// load generator running on the others (pin.go).
	serverCPUs string
}

// comparison is compare's result.
type comparison struct {
	Config      *loadConfig `json:"config"`
	DurationS   float64     `json:"duration_s"`
	WarmupS     float64     `json:"warmup_s"`
	CPUs        int         `json:"cpus"`
	MachineCPUs int         `json:"machine_cpus"`
	// ServerCPUs and LoadCPUs, when set, are the CPUs every server and
	// the load generator ran on (--server-cpus).
	ServerCPUs       string  `json:"server_cpus,omitempty"`
	LoadCPUs         string  `json:"load_cpus,omitempty"`
	Thriftd          *report `json:"thriftd"`
	Cassandra        *report `json:"cassandra,omitempty"`
	CassandraSkipped string  `json:"cassandra_skipped,omitempty"`
	Echo             *report `json:"echo"`
	// RawBadger is the storage ceiling: Badger alone, in this process.
	RawBadger *report `json:"raw_badger,omitempty"`
	// ThriftdRSS is thriftd's memory after the run, ThriftdLoaded the
	// reading of largest VmRSS at the end of its turns, ThriftdWide its
	// peak under the wide mixed load (memory.go).
	ThriftdRSS    *memoryStatus `json:"thriftd_memory,omitempty"`
	ThriftdLoaded *memoryStatus `json:"thriftd_memory_end_of_turn,omitempty"`
	ThriftdWide   *wideLoad     `json:"thriftd_wide_mixed_load,omitempty"`
	// ThriftdFlags are the flags thriftd ran with beyond its defaults.
	ThriftdFlags []string `json:"thriftd_flags,omitempty"`
	// ProfilesDir holds the profiles of thriftd's measured turns
	// (--profiles), which the profiling slowed down a little.
	ProfilesDir string `json:"profiles_dir,omitempty"`
	// LoadBefore and LoadAfter are /proc/loadavg before the servers start
	// and after the last mode: other work on the machine shows in them.
	LoadBefore string       `json:"loadavg_before,omitempty"`
	LoadAfter  string       `json:"loadavg_after,omitempty"`
	Rows       []compareRow `json:"rows"`
	Goals      []goalResult `json:"goals"`

	// Direct is the direct gocql load of the cluster under thriftd (--cql).
	Direct *report `json:"direct_cql,omitempty"`
	// Settle is how long the turns waited for a quiet machine.
	Settle *settleStats `json:"settle,omitempty"`
}

type compareRow struct {
	Mode      string   `json:"mode"`
	Thriftd   float64  `json:"thriftd_ops_per_sec"`
	Cassandra *float64 `json:"cassandra_ops_per_sec,omitempty"`
	Ratio     *float64 `json:"ratio,omitempty"`
	// CeilingRatio is echo/Cassandra: the highest thriftd/Cassandra ratio
	// this machine can show, that of a server doing no work at all.
	CeilingRatio    *float64 `json:"echo_over_cassandra,omitempty"`
	Echo            float64  `json:"echo_ops_per_sec"`
	ThriftdOverEcho float64  `json:"thriftd_over_echo"`
	// RawBadger and ThriftdOverRaw: the raw Badger ceiling and
	// thriftd/raw Badger.
	RawBadger      *float64 `json:"raw_badger_ops_per_sec,omitempty"`
	ThriftdOverRaw *float64 `json:"thriftd_over_raw_badger,omitempty"`
	// Direct and OverDirect: the direct gocql load and thriftd/direct.
	Direct     *float64 `json:"direct_cql_ops_per_sec,omitempty"`
	OverDirect *float64 `json:"thriftd_over_direct_cql,omitempty"`
	// RoundRatios and RoundOverDirect are thriftd/Cassandra and
	// thriftd/direct round by round, with several rounds: the servers take
	// turns at going first, so a drift of the machine or of a warming node
	// favours each in turn, where the best rounds favour the one measured
	// last.
	RoundRatios     []float64 `json:"round_ratios,omitempty"`
	RoundOverDirect []float64 `json:"round_thriftd_over_direct_cql,omitempty"`
}

// roundRatios divides a by b round by round (nil unless both have as many
// rounds, more than one, all measured).
func roundRatios(a, b []float64) []float64 {
	if len(a) < 2 || len(a) != len(b) {
		return nil
	}
	out := make([]float64, len(a))
	for i := range a {
		if b[i] <= 0 {
			return nil
		}
		out[i] = a[i] / b[i]
	}
	return out
}

// geoMean is the geometric mean of positive ratios.
func geoMean(r []float64) float64 {
	sum := 0.0
	for _, x := range r {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(r)))
}

// Kinds of goals.
const (
	goalDirect = "thriftd/direct_cql"
	goalRatio  = "thriftd/cassandra"
	goalEcho   = "thriftd/echo"
	goalRSS    = "rss_mib"
)

type goalResult struct {
	Goal   string  `json:"goal"`
	Kind   string  `json:"kind"`
	Want   float64 `json:"want"`
	Got    float64 `json:"got"`
	Met    bool    `json:"met"`
	Reason string  `json:"skipped,omitempty"`
	// Ceiling, for a ratio goal: the ratio of the echo ceiling itself.
	Ceiling *float64 `json:"ceiling,omitempty"`
}

func runCompareCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("thriftbench compare", flag.ContinueOnError)
	cc := &compareConfig{}
	registerLoadFlags(fs, &cc.load, false)
	fs.StringVar(&cc.thriftd, "thriftd", "bin/thriftd", "thriftd binary to start (fresh, on a temporary data directory, default settings)")
	fs.StringVar(&cc.cassandra, "cassandra", "127.0.0.1:19160", "Thrift address of the Cassandra 3.11 to compare with (empty: none)")
	fs.IntVar(&cc.cassandraPid, "cassandra-pid", 0, "process id of the Cassandra at --cassandra, when it runs on this machine: its CPU time and disk writes per call are reported beside thriftd's (test/cassandra/cassandra.sh pid ref prints it; 0: not reported)")
	fs.StringVar(&cc.thriftdFlags, "thriftd-flags", "", "flags added to thriftd's command line, space-separated (e.g. '--commitlog-sync batch')")
	fs.DurationVar(&cc.settle, "settle", 20*time.Second, "before each server's turn at a mode, wait up to this long for the machine's CPUs to be at most 25% busy, so that no server is measured in the wake of the one before (0: do not wait)")
	fs.DurationVar(&cc.memoryLoad, "memory-load", 10*time.Second, fmt.Sprintf("after the run, load thriftd alone this long with the mixed mode over %d connections and report its peak resident set (0: do not; needs the mixed mode)", wideConnections))
	fs.BoolVar(&cc.rawBadger, "raw-badger", true, "measure the storage ceiling too: every mode on a Badger database of this process with thriftd's memory sizing, one entry a cell, no network and no Thrift (not with --cql)")
	fs.BoolVar(&cc.rawBadgerSync, "raw-badger-sync", false, "the raw Badger ceiling syncs every write to the disk before it returns, as thriftd's --commitlog-sync batch does")
	fs.StringVar(&cc.profiles, "profiles", "", "directory to write profiles of thriftd into, taken over each of its measured turns from its profiles endpoint, for go tool pprof: thriftd-MODE-roundN.cpu.pprof and .mutex.pprof, and the heap before and after the turn, .allocs-before.pprof and .allocs-after.pprof (the turn's allocations: go tool pprof -sample_index=alloc_space -base BEFORE AFTER); the CPU profiler costs thriftd a little of its rate")
	fs.StringVar(&cc.serverCPUs, "server-cpus", "", "CPUs to run every server on (thriftd, the echo server, and the Cassandra at --cassandra-pid, moved there for the run), this load generator running on the others: each server has these CPUs to itself (a taskset CPU list such as 0 or 0-1; needs taskset; not with --cql)")
	fs.StringVar(&cc.cql, "cql", "", "CQL host:port of a Cassandra 4/5 node: thriftd serves from it (--backend cql://), and a direct gocql load of the same tables is measured too (modes insert, get, slice, batch, range)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: thriftbench compare [flags]

Starts a fresh thriftd and an echo server on free loopback ports, runs
every mode against them and against the Cassandra 3.11 at --cassandra with
the same parameters, and prints one table of the ratios, with thriftd's
resident memory after the run.

flags:
`)
		fs.PrintDefaults()
	}
	if code, ok := parseArgs(fs, args, stderr); !ok {
		return code
	}
	return exitFor(fs, compareMain(ctx, cc, stdout, stderr), stderr)
}

func compareMain(ctx context.Context, cc *compareConfig, stdout, stderr io.Writer) (err error) {
	cfg := &cc.load
	if err := cfg.validate(); err != nil {
		return err
	}
	if cc.settle < 0 {
		return usagef("--settle must not be negative")
	}
	if cc.memoryLoad < 0 {
		return usagef("--memory-load must not be negative")
	}
	if cc.cassandra != "" {
		if err := checkLoopback(ctx, "--cassandra", cc.cassandra, cfg.AllowRemote); err != nil {
			return err
		}
	}
	if cc.cassandraPid < 0 {
		return usagef("--cassandra-pid must not be negative")
	}
	if cc.cassandraPid > 0 {
		if cc.cassandra == "" {
			return usagef("--cassandra-pid needs --cassandra")
		}
		if _, err := sampleProcess(cc.cassandraPid); err != nil {
			return usagef("--cassandra-pid %d: %v", cc.cassandraPid, err)
		}
	}
	if cc.cql != "" {
		if err := checkLoopback(ctx, "--cql", cc.cql, cfg.AllowRemote); err != nil {
			return err
		}
		if err := validateDirectModes(cfg.Modes); err != nil {
			return err
		}
	}
	var pin *cpuPinning
	if cc.serverCPUs != "" {
		if cc.cql != "" {
			return usagef("--server-cpus is not for --cql runs (make bench-cql pins its nodes)")
		}
		if cc.cassandra != "" && cc.cassandraPid == 0 {
			return usagef("--server-cpus needs --cassandra-pid, to run Cassandra on the servers' CPUs too")
		}
		var err error
		if pin, err = newCPUPinning(cc.serverCPUs, machineCPUs()); err != nil {
			return usagef("--server-cpus: %v", err)
		}
	}
	log, err := newLogger(cfg.LogLevel, stderr)
	if err != nil {
		return err
	}
	var direct *directCQL
	thriftdFlags := strings.Fields(cc.thriftdFlags)
	if cc.cql != "" {
		prefix, err := directPrefix()
		if err != nil {
			return err
		}
		direct = newDirectCQL(cc.cql, prefix, cfg, log)
		thriftdFlags = append(direct.thriftdFlags(), thriftdFlags...)
	}
	var profiler *turnProfiler
	if cc.profiles != "" {
		if err := os.MkdirAll(cc.profiles, 0o755); err != nil {
			return fmt.Errorf("--profiles: %w", err)
		}
		port, err := freePort()
		if err != nil {
			return err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		thriftdFlags = append(thriftdFlags, "--pprof-listen", addr)
		profiler = newTurnProfiler(addr, cc.profiles, log)
	}
	per := cfg.Warmup + time.Duration(cfg.Rounds)*cfg.Duration
	log.Info("compare: thriftd, Cassandra 3.11 and the echo ceiling", "modes", len(cfg.Modes), "rounds", cfg.Rounds,
		"estimated", (time.Duration(3*len(cfg.Modes))*per).String()+" plus start-up and preload")

	loadBefore := readLoadavg()
	tmp, err := os.MkdirTemp("", "thriftbench-compare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	if pin != nil {
		if cc.cassandraPid > 0 {
			before, err := moveProcess(ctx, cc.cassandraPid, pin.servers)
			if err != nil {
				return fmt.Errorf("--server-cpus: Cassandra: %w", err)
			}
			defer func() {
				// Cassandra gets its CPUs back even when the run was
				// interrupted.
				restore, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverStopTimeout)
				defer cancel()
				if _, err := moveProcess(restore, cc.cassandraPid, before); err != nil {
					log.Warn("could not give Cassandra its CPUs back", "cpus", before, "err", err)
				}
			}()
		}
		if _, err := moveProcess(ctx, os.Getpid(), pin.load); err != nil {
			return fmt.Errorf("--server-cpus: the load generator: %w", err)
		}
		log.Info("servers pinned", "server_cpus", pin.servers, "load_cpus", pin.load)
	}
	echo, err := startEchoProcess(ctx, pin, cfg.ValueSize, log)
	if err != nil {
		return fmt.Errorf("echo server: %w", err)
	}
	defer echo.stop(log)
	td, err := startThriftd(ctx, pin, cc.thriftd, thriftdFlags, tmp, cfg.Timeout, log)
	if err != nil {
		return fmt.Errorf("thriftd: %w", err)
	}
	defer td.stop(log)

	res := &comparison{Config: cfg, DurationS: cfg.Duration.Seconds(), WarmupS: cfg.Warmup.Seconds(), CPUs: runtime.NumCPU(), MachineCPUs: machineCPUs(),
		LoadBefore: loadBefore}
	if pin != nil {
		res.ServerCPUs, res.LoadCPUs = pin.servers, pin.load
	}
	targets := []*target{newTarget("thriftd", td.addr, cfg, log)}
	targets[0].pid = td.cmd.Process.Pid
	if profiler != nil {
		targets[0].duringMeasure = profiler.start
	}
	var directT *target
	if direct != nil {
		// After thriftd's: thriftd creates and preloads the tables.
		directT = newTarget("direct gocql", cc.cql, cfg, log)
		directT.direct = direct
		targets = append(targets, directT)
	}
	var cass *target
	switch reason := probeCassandra(ctx, cc.cassandra, cfg.Timeout); reason {
	case "":
		cass = newTarget("Cassandra 3.11", cc.cassandra, cfg, log)
		cass.pid = cc.cassandraPid
		targets = append(targets, cass)
	default:
		res.CassandraSkipped = reason
		fmt.Fprintf(stderr, "!!! SKIPPED: the Cassandra 3.11 column: %s\n", reason)
	}
	echoT := newTarget("echo", echo.addr, cfg, log)
	echoT.pid = echo.cmd.Process.Pid
	targets = append(targets, echoT)
	var rawT *target
	if cc.rawBadger && cc.cql == "" {
		rawT = newTarget("raw Badger", "in-process", cfg, log)
		rawT.raw = newRawBadger(filepath.Join(tmp, "raw-badger"), cc.rawBadgerSync, cfg, log)
		targets = append(targets, rawT)
	}
	defer func() {
		for _, t := range targets {
			if cerr := t.close(ctx); cerr != nil {
				log.Error("cleanup", "server", t.name, "err", cerr)
				if err == nil {
					err = cerr
				}
			}
		}
	}()

	for _, t := range targets {
		if err := t.setup(ctx); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	settle := &settler{limit: cc.settle, sample: cpuTimes, log: log}
	pid := td.cmd.Process.Pid
	turns := &turnMemory{pid: pid, log: log}
	targets[0].afterTurn = turns.read
	reports, err := measure(ctx, targets, settle, log)
	if err != nil {
		return err
	}
	res.LoadAfter = readLoadavg()
	if stats := settle.stats; stats.Turns > 0 {
		res.Settle = &stats
	}
	res.ThriftdLoaded = turns.largest
	if mem, err := memoryAfterRun(ctx, pid, settle, turns.lastEnd); err != nil {
		log.Warn("thriftd memory after the run", "err", err)
	} else {
		res.ThriftdRSS = mem
	}
	if cc.memoryLoad > 0 && slices.Contains(cfg.Modes, "mixed") {
		if wide, err := measureWideLoad(ctx, targets[0], pid, cc.memoryLoad); err != nil {
			log.Warn("thriftd memory under the wide mixed load", "err", err)
		} else {
			res.ThriftdWide = wide
		}
	}
	res.ThriftdFlags = thriftdFlags
	res.ProfilesDir = cc.profiles
	if directT != nil {
		res.Direct = reports[directT]
	}
	res.Thriftd, res.Echo = reports[targets[0]], reports[echoT]
	if rawT != nil {
		res.RawBadger = reports[rawT]
	}
	if cass != nil {
		res.Cassandra = reports[cass]
	}
	res.fill()

	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		writeComparison(stdout, res)
	}
	if res.Thriftd.failedCalls() > 0 || res.Echo.failedCalls() > 0 || (res.RawBadger != nil && res.RawBadger.failedCalls() > 0) {
		return errCallsFailed
	}
	if profiler != nil {
		return profiler.err()
	}
	return nil
}

// probeCassandra returns why the Cassandra column is skipped, or "".
func probeCassandra(ctx context.Context, addr string, timeout time.Duration) string {
	if addr == "" {
		return "no --cassandra address given"
	}
	ctx, cancel := context.WithTimeout(ctx, cassandraProbe)
	defer cancel()
	c, err := dial(ctx, addr, "", min(timeout, cassandraProbe))
	if err != nil {
		return fmt.Sprintf("no Cassandra answering Thrift at %s (%v); start it with test/cassandra/cassandra.sh start ref", addr, err)
	}
	defer c.Close()
	if _, err := c.DescribeVersion(ctx); err != nil {
		return fmt.Sprintf("Cassandra at %s does not answer describe_version: %v", addr, describeErr(err))
	}
	return ""
}

// fill computes the rows and the goals.
func (c *comparison) fill() {
	cass := map[string]modeResult{}
	if c.Cassandra != nil {
		for _, m := range c.Cassandra.Modes {
			cass[m.Mode] = m
		}
	}
	echo := map[string]modeResult{}
	for _, m := range c.Echo.Modes {
		echo[m.Mode] = m
	}
	raw := map[string]modeResult{}
	if c.RawBadger != nil {
		for _, m := range c.RawBadger.Modes {
			raw[m.Mode] = m
		}
	}
	direct := map[string]modeResult{}
	if c.Direct != nil {
		for _, m := range c.Direct.Modes {
			direct[m.Mode] = m
		}
	}
	for _, m := range c.Thriftd.Modes {
		row := compareRow{Mode: m.Mode, Thriftd: m.OpsPerSec, Echo: echo[m.Mode].OpsPerSec}
		if dm, ok := direct[m.Mode]; ok {
			row.Direct = ptr(dm.OpsPerSec)
			row.RoundOverDirect = roundRatios(m.RoundsOpsPerSec, dm.RoundsOpsPerSec)
			g := goalResult{Goal: "thriftd/direct gocql " + m.Mode, Kind: goalDirect, Want: directGoal}
			if dm.OpsPerSec > 0 {
				row.OverDirect = ptr(m.OpsPerSec / dm.OpsPerSec)
				g.Got, g.Met = *row.OverDirect, *row.OverDirect >= directGoal
			} else {
				g.Reason = "no direct gocql measure"
			}
			c.Goals = append(c.Goals, g)
		}
		if row.Echo > 0 {
			row.ThriftdOverEcho = row.Thriftd / row.Echo
		}
		if rm, ok := raw[m.Mode]; ok {
			row.RawBadger = ptr(rm.OpsPerSec)
			if rm.OpsPerSec > 0 {
				row.ThriftdOverRaw = ptr(m.OpsPerSec / rm.OpsPerSec)
			}
		}
		if cm, ok := cass[m.Mode]; ok {
			row.Cassandra = ptr(cm.OpsPerSec)
			row.RoundRatios = roundRatios(m.RoundsOpsPerSec, cm.RoundsOpsPerSec)
			if cm.OpsPerSec > 0 {
				row.Ratio = ptr(m.OpsPerSec / cm.OpsPerSec)
				row.CeilingRatio = ptr(row.Echo / cm.OpsPerSec)
			}
		}
		c.Rows = append(c.Rows, row)
		if want, ok := ratioGoals[m.Mode]; ok {
			g := goalResult{Goal: "thriftd/Cassandra " + m.Mode, Kind: goalRatio, Want: want}
			if row.Ratio != nil {
				g.Got, g.Met, g.Ceiling = *row.Ratio, *row.Ratio >= want, row.CeilingRatio
			} else {
				g.Reason = "no Cassandra measure"
			}
			c.Goals = append(c.Goals, g)
		}
		if echoGoalModes[m.Mode] {
			c.Goals = append(c.Goals, goalResult{Goal: "thriftd/echo " + m.Mode, Kind: goalEcho, Want: echoGoal,
				Got: row.ThriftdOverEcho, Met: row.ThriftdOverEcho >= echoGoal})
		}
	}
	if c.ThriftdRSS != nil {
		// The memory goal is the resident set after the run; its peak is
		// held to the same bound, which is stricter (memory.go).
		rss := float64(c.ThriftdRSS.VmRSSKiB) / 1024
		c.Goals = append(c.Goals, goalResult{Goal: "thriftd RSS after (VmRSS)", Kind: goalRSS, Want: rssGoalMiB, Got: rss, Met: rss <= rssGoalMiB})
		hwm := float64(c.ThriftdRSS.VmHWMKiB) / 1024
		c.Goals = append(c.Goals, goalResult{Goal: "thriftd peak RSS (VmHWM)", Kind: goalRSS, Want: rssGoalMiB, Got: hwm, Met: hwm <= rssGoalMiB})
	}
	if w := c.ThriftdWide; w != nil {
		hwm := float64(w.Memory.VmHWMKiB) / 1024
		c.Goals = append(c.Goals, goalResult{Goal: fmt.Sprintf("thriftd peak, %d conns mixed", w.Connections), Kind: goalRSS, Want: wideGoalMiB, Got: hwm,
			Met: hwm <= wideGoalMiB && w.Errors == 0})
	}
}

// writeRoundRatios prints the ratios of every round, with their
// geometric mean, when there were several rounds.
func writeRoundRatios(w io.Writer, c *comparison) {
	rows := [][]string{{"mode", "thriftd/Cassandra by round", "geometric mean"}}
	if c.Direct != nil {
		rows[0] = append(rows[0], "thriftd/direct by round", "geometric mean")
	}
	shown := false
	cell := func(r []float64) (string, string) {
		if r == nil {
			return "-", "-"
		}
		shown = true
		parts := make([]string, len(r))
		for i, x := range r {
			parts[i] = fmt.Sprintf("%.2f", x)
		}
		return strings.Join(parts, ", "), fmt.Sprintf("%.2f", geoMean(r))
	}
	for _, r := range c.Rows {
		byRound, mean := cell(r.RoundRatios)
		row := []string{r.Mode, byRound, mean}
		if c.Direct != nil {
			byRound, mean := cell(r.RoundOverDirect)
			row = append(row, byRound, mean)
		}
		rows = append(rows, row)
	}
	if !shown {
		return
	}
	fmt.Fprintf(w, "\nratios round by round (the servers take turns at going first, thriftd in round 1):\n")
	writeMarkdownTable(w, rows)
}

// writeComparison prints each server's report, then the table.
func writeComparison(w io.Writer, c *comparison) {
	fmt.Fprintf(w, "thriftbench compare: %s\n", c.Config.describe())
	if c.ServerCPUs != "" {
		servers := "thriftd, the echo server, Cassandra"
		if c.Cassandra == nil {
			servers = "thriftd, the echo server"
		}
		fmt.Fprintf(w, "every server (%s) on CPUs %s, the load generator on CPUs %s\n", servers, c.ServerCPUs, c.LoadCPUs)
	} else if c.MachineCPUs > c.CPUs {
		fmt.Fprintf(w, "%d of the machine's %d CPUs run the load generator and the servers it starts; the servers at the given addresses may run on the others\n", c.CPUs, c.MachineCPUs)
	} else {
		fmt.Fprintf(w, "%d CPUs; the load generator and every server share this machine\n", c.CPUs)
	}
	if len(c.ThriftdFlags) > 0 {
		fmt.Fprintf(w, "thriftd flags: %s\n", strings.Join(c.ThriftdFlags, " "))
	}
	if c.ProfilesDir != "" {
		fmt.Fprintf(w, "thriftd was profiled during its measured turns (CPU, allocations, mutex contention), which cost it a little of its rate: %s\n", c.ProfilesDir)
	}
	if c.LoadBefore != "" {
		fmt.Fprintf(w, "load average before the run %s, after it %s\n", c.LoadBefore, c.LoadAfter)
	}
	if s := c.Settle; s != nil {
		fmt.Fprintf(w, "waited for the CPUs to be at most %.0f%% busy before each of %d turns: %.1f s in all, %d turns measured while still busy\n",
			100*settleBusy, s.Turns, s.WaitedS, s.TimedOut)
	}
	for _, r := range []*report{c.Thriftd, c.Direct, c.Cassandra, c.Echo, c.RawBadger} {
		if r == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s, API %s):\n", r.Target, r.Addr, r.APIVersion)
		writeModeTable(w, r.Modes)
	}
	fmt.Fprintln(w)
	if c.CassandraSkipped != "" {
		fmt.Fprintf(w, "!!! SKIPPED: the Cassandra 3.11 column: %s\n\n", c.CassandraSkipped)
	}
	rows := [][]string{{"mode", "thriftd ops/s", "Cassandra 3.11 ops/s", "ratio", "echo ceiling", "thriftd/echo", "echo/Cassandra"}}
	if c.Direct != nil {
		rows[0] = append(rows[0], "direct gocql ops/s", "thriftd/direct")
	}
	for _, r := range c.Rows {
		cassCell, ratioCell, ceilCell := "skipped", "-", "-"
		if r.Cassandra != nil {
			cassCell = fmt.Sprintf("%.0f", *r.Cassandra)
		}
		if r.Ratio != nil {
			ratioCell = fmt.Sprintf("%.2f", *r.Ratio)
		}
		if r.CeilingRatio != nil {
			ceilCell = fmt.Sprintf("%.2f", *r.CeilingRatio)
		}
		rows = append(rows, []string{r.Mode, fmt.Sprintf("%.0f", r.Thriftd), cassCell, ratioCell,
			fmt.Sprintf("%.0f", r.Echo), fmt.Sprintf("%.0f%%", 100*r.ThriftdOverEcho), ceilCell})
		if c.Direct != nil {
			directCell, overCell := "-", "-"
			if r.Direct != nil {
				directCell = fmt.Sprintf("%.0f", *r.Direct)
			}
			if r.OverDirect != nil {
				overCell = fmt.Sprintf("%.2f", *r.OverDirect)
			}
			rows[len(rows)-1] = append(rows[len(rows)-1], directCell, overCell)
		}
	}
	writeMarkdownTable(w, rows)
	writeRoundRatios(w, c)
	writeRawBadger(w, c)
	writeServerUse(w, c)
	writeMemory(w, c)
	if c.Thriftd.failedCalls() > 0 || c.Echo.failedCalls() > 0 || (c.Cassandra != nil && c.Cassandra.failedCalls() > 0) ||
		(c.RawBadger != nil && c.RawBadger.failedCalls() > 0) {
		fmt.Fprintln(w, "\nsome calls failed: see the errors column of each server above")
	}
	if c.ServerCPUs != "" {
		fmt.Fprintln(w, "\ngoals (docs/PERFORMANCE.md), which are set for servers that share every CPU with the load (this run gave them CPUs of their own):")
	} else {
		fmt.Fprintln(w, "\ngoals (docs/PERFORMANCE.md):")
	}
	for _, g := range c.Goals {
		var want, got string
		switch g.Kind {
		case goalRatio, goalDirect:
			want, got = fmt.Sprintf(">= %.2fx", g.Want), fmt.Sprintf("%.2fx", g.Got)
		case goalEcho:
			want, got = fmt.Sprintf(">= %.0f%%", 100*g.Want), fmt.Sprintf("%.1f%%", 100*g.Got)
		case goalRSS:
			want, got = fmt.Sprintf("<= %.0f MiB", g.Want), fmt.Sprintf("%.0f MiB", g.Got)
		}
		verdict := "met"
		if !g.Met {
			verdict = "MISSED"
		}
		switch {
		case g.Reason != "":
			got, verdict = "-", "not measured ("+g.Reason+")"
		case !g.Met && g.Ceiling != nil && *g.Ceiling < g.Want:
			verdict += fmt.Sprintf(" (out of reach here: the echo ceiling itself is %.2fx Cassandra)", *g.Ceiling)
		}
		fmt.Fprintf(w, "  %-29s %-11s %9s  %s\n", g.Goal, want, got, verdict)
	}
}

// writeMemory prints thriftd's resident memory (memory.go).
func writeMemory(w io.Writer, c *comparison) {
	if c.ThriftdRSS == nil && c.ThriftdLoaded == nil && c.ThriftdWide == nil {
		return
	}
	mib := func(kib int64) string { return fmt.Sprintf("%.1f MiB", float64(kib)/1024) }
	rss := func(m *memoryStatus) string {
		s := "VmRSS " + mib(m.VmRSSKiB)
		if m.RssAnonKiB >= 0 && m.RssFileKiB >= 0 {
			s += " = RssAnon " + mib(m.RssAnonKiB) + " + RssFile " + mib(m.RssFileKiB) + " (mapped files)"
		}
		return s
	}
	fmt.Fprintln(w, "\nthriftd resident memory:")
	if m := c.ThriftdRSS; m != nil {
		fmt.Fprintf(w, "  after the run (%s without a call): %s\n", afterRunQuiet, rss(m))
		fmt.Fprintf(w, "  peak of the run (VmHWM): %s\n", mib(m.VmHWMKiB))
	}
	if m := c.ThriftdLoaded; m != nil {
		fmt.Fprintf(w, "  at the end of its turns, largest: %s\n", rss(m))
	}
	if wl := c.ThriftdWide; wl != nil {
		fmt.Fprintf(w, "  mixed load alone, %d connections, %.0f s, %.0f calls/s, %d errors: peak (VmHWM) %s, at its end %s\n",
			wl.Connections, wl.Seconds, wl.OpsPerSec, wl.Errors, mib(wl.Memory.VmHWMKiB), rss(wl.Memory))
	}
}

// writeMarkdownTable prints rows as an aligned Markdown table; the first
// row is the header, and every column but the first is right-aligned.
func writeMarkdownTable(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			width[i] = max(width[i], utf8.RuneCountInString(cell)) // fmt pads in runes
		}
	}
	line := func(r []string) {
		var b strings.Builder
		b.WriteString("|")
		for i, cell := range r {
			if i == 0 {
				fmt.Fprintf(&b, " %-*s |", width[i], cell)
			} else {
				fmt.Fprintf(&b, " %*s |", width[i], cell)
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i, n := range width {
		if i == 0 {
			sep[i] = strings.Repeat("-", n)
		} else {
			sep[i] = strings.Repeat("-", n-1) + ":"
		}
	}
	line(sep)
	for _, r := range rows[1:] {
		line(r)
	}
}

// readLoadavg returns the 1, 5 and 15 minute load averages, or "".
func readLoadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// process is a server compare started.
type process struct {
	name   string
	addr   string
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // after exited is closed
}

func startProcess(name string, cmd *exec.Cmd) (*process, error) {
	setDeathSignal(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM and waits, then kills after serverStopTimeout.
func (p *process) stop(log *slog.Logger) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(serverStopTimeout):
		log.Warn("did not stop in time; killing it", "process", p.name, "pid", p.cmd.Process.Pid)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// startEchoProcess runs this binary's echo server on a free loopback port
// and reads the port from its first line of output.
func startEchoProcess(ctx context.Context, pin *cpuPinning, valueSize int, log *slog.Logger) (*process, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := pin.command(exe, "echo-server", "--listen", "127.0.0.1:0", "--value-size", strconv.Itoa(valueSize), "--log-level", "warn")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startProcess("echo-server", cmd)
	if err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case l, ok := <-line:
		addr, found := strings.CutPrefix(l, "listening on ")
		if !ok || !found {
			p.stop(log)
			return nil, fmt.Errorf("unexpected first line %q", l)
		}
		p.addr = addr
	case <-time.After(serverStartTimeout):
		p.stop(log)
		return nil, errors.New("did not say where it listens")
	case <-ctx.Done():
		p.stop(log)
		return nil, ctx.Err()
	}
	log.Info("echo server started", "addr", p.addr, "pid", p.cmd.Process.Pid)
	return p, nil
}

// startThriftd starts bin/thriftd with its default settings and flags on
// a free loopback port and a fresh data directory under tmp, on the
// servers' CPUs of pin (nil: on every CPU), and waits until it answers.
func startThriftd(ctx context.Context, pin *cpuPinning, bin string, flags []string, tmp string, timeout time.Duration, log *slog.Logger) (*process, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%w (make build builds it)", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	dataDir := filepath.Join(tmp, "thriftd-data")
	logPath := filepath.Join(tmp, "thriftd.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := pin.command(bin, append([]string{"--listen", addr, "--data-dir", dataDir}, flags...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	p, err := startProcess("thriftd", cmd)
	if err != nil {
		return nil, err
	}
	p.addr = addr
	deadline := time.Now().Add(serverStartTimeout)
	for {
		c, err := dial(ctx, addr, "", timeout)
		if err == nil {
			_, err = c.DescribeVersion(ctx)
			c.Close()
			if err == nil {
				break
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("exited during start-up (%v): %s", p.err, tail(logPath))
		case <-ctx.Done():
			p.stop(log)
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop(log)
			return nil, fmt.Errorf("did not answer on %s within %s: %s", addr, serverStartTimeout, tail(logPath))
		}
	}
	log.Info("thriftd started", "addr", addr, "pid", p.cmd.Process.Pid, "data_dir", dataDir)
	return p, nil
}

// freePort returns a loopback port nobody listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the end of a log file, for an error message.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
