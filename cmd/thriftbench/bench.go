package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// cleanupTimeout bounds dropping the keyspace at the end, which happens
// even after SIGINT.
const cleanupTimeout = 60 * time.Second

// reconnectPause is the wait after a failed attempt to reconnect.
const reconnectPause = 100 * time.Millisecond

// preloadCells is about how many cells one preload call writes.
const preloadCells = 256

// params is what every worker reads and none writes.
type params struct {
	cfg        *loadConfig
	names      [][]byte // the --columns column names
	supers     [][]byte // the super column names of batch-super and get-super
	subnames   [][]byte // the subcolumn names of batch-super and get-super
	values     []byte   // the random bytes values are cut from
	allColumns *cassandra.SlicePredicate
}

func newParams(cfg *loadConfig) *params {
	p := &params{cfg: cfg}
	for i := range cfg.Columns {
		p.names = append(p.names, columnName(i))
	}
	for i := range cfg.SuperColumns {
		p.supers = append(p.supers, superName(i))
	}
	for i := range cfg.Subcolumns {
		p.subnames = append(p.subnames, columnName(i))
	}
	// Random bytes, the same on every server: one value repeated, or a
	// pool from which every column takes a value of its own.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7468726966746265))
	n := cfg.ValueSize
	if cfg.Values == valuesDistinct {
		n += distinctPool
	}
	p.values = make([]byte, n)
	for i := range p.values {
		p.values[i] = byte(rng.Uint32())
	}
	p.allColumns = &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{
		Start: []byte{}, Finish: []byte{}, Count: int32(cfg.Columns)}}
	return p
}

// The kinds of --values.
const (
	valuesRepeat   = "repeat"
	valuesDistinct = "distinct"
)

// distinctPool is how many more random bytes than a value --values
// distinct draws values from: each value starts at a random offset, so no
// two columns of a call share their bytes, and nothing is allocated per
// value.
const distinctPool = 1 << 20

// value returns the value of the next column written: the one repeated
// value, or a random window of the pool. The caller must not modify it.
func (p *params) value(rng *rand.Rand) []byte {
	size := p.cfg.ValueSize
	if len(p.values) == size {
		return p.values
	}
	off := rng.IntN(len(p.values) - size + 1)
	return p.values[off : off+size : off+size]
}

// now is a client timestamp: microseconds since the epoch, as Thrift-era
// clients wrote them.
func now() int64 { return time.Now().UnixMicro() }

// worker drives one connection.
type worker struct {
	p    *params
	addr string
	c    *client // nil while the connection is broken
	rng  *rand.Rand
	// rangeCursor is where the next range call starts.
	rangeCursor []byte
	// The mutations of the batch modes, built on first use.
	batch, superBatch *batchMutations
}

// phaseStats is what one worker measured in one phase.
type phaseStats struct {
	ops, cells, errors uint64
	hist               *histogram
	firstErr           error
}

func (s *phaseStats) fail(err error) {
	s.errors++
	if s.firstErr == nil {
		s.firstErr = err
	}
}

// loop calls op until deadline. A failed call counts as an error; when it
// broke the connection, the connection is opened again.
func (w *worker) loop(ctx context.Context, op opFunc, deadline time.Time, st *phaseStats) {
	timeout := w.p.cfg.Timeout
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if w.c == nil {
			c, err := dial(ctx, w.addr, w.p.cfg.Keyspace, timeout)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				st.fail(err)
				sleepCtx(ctx, min(reconnectPause, time.Until(deadline)))
				continue
			}
			w.c = c
		}
		start := time.Now()
		cells, err := op(ctx, w)
		took := time.Since(start)
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted: not the server's failure
			}
			st.fail(describeErr(err))
			if connectionBroken(err) {
				w.c.Close()
				w.c = nil
			}
			continue
		}
		st.ops++
		st.cells += uint64(cells)
		st.hist.record(took)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// modeResult is what one mode measured on one server.
type modeResult struct {
	Mode        string  `json:"mode"`
	Ops         uint64  `json:"ops"`
	Cells       uint64  `json:"cells"`
	Errors      uint64  `json:"errors"`
	Seconds     float64 `json:"seconds"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	CellsPerSec float64 `json:"cells_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	P999Ms      float64 `json:"p999_ms"`
	MaxMs       float64 `json:"max_ms"`
	WarmupOps   uint64  `json:"warmup_ops"`
	FirstError  string  `json:"first_error,omitempty"`
	// RoundsOpsPerSec is the throughput of every round when there were
	// several; the rest of the result is the best round's, but Errors
	// counts the failed calls of all of them.
	RoundsOpsPerSec []float64 `json:"rounds_ops_per_sec,omitempty"`
	// Server is what the server's process spent on the measured calls,
	// when its process is known (usage.go); RoundsServer is it round by
	// round, with several rounds (nil for a round it could not be read).
	Server       *serverUse   `json:"server,omitempty"`
	RoundsServer []*serverUse `json:"rounds_server,omitempty"`
	// LoadGenerator is what this process, the load generator, spent on
	// the same calls.
	LoadGenerator *serverUse `json:"load_generator,omitempty"`
}

// measure runs every mode on every target, --rounds times: round by
// round, mode by mode, every server in turn, so that a drift of the
// machine (another job, a compaction) spreads over all of them. Each mode
// warms up in the first round only. The servers take turns at going
// first: round r starts with target r (modulo their number), so no server
// is always measured first, when a server the others share (a cluster
// node behind thriftd and behind the direct program) is least warmed up.
// Each report keeps, per mode, the round of the highest throughput: other
// work on the machine can only slow a round down. settle, when not nil,
// waits for the machine to be quiet before each turn (settle.go).
func measure(ctx context.Context, targets []*target, settle *settler, log *slog.Logger) (map[*target]*report, error) {
	reports := map[*target]*report{}
	for _, t := range targets {
		reports[t] = newReport(t)
	}
	rounds := max(targets[0].cfg.Rounds, 1)
	for round := range rounds {
		for i, m := range targets[0].cfg.Modes {
			for _, t := range roundOrder(targets, round) {
				settle.wait(ctx, m, t.name)
				r := t.runMode(ctx, m, round == 0)
				if t.afterTurn != nil {
					t.afterTurn()
				}
				if ctx.Err() != nil {
					return nil, fmt.Errorf("interrupted during mode %s on %s", m, t.name)
				}
				log.Info("measured", "round", round+1, "mode", m, "server", t.name, "ops/s", int64(r.OpsPerSec), "errors", r.Errors)
				rep := reports[t]
				if round == 0 {
					rep.Modes = append(rep.Modes, r)
				} else {
					rep.Modes[i] = bestOf(rep.Modes[i], r)
				}
				if rounds > 1 {
					rep.Modes[i].RoundsOpsPerSec = append(rep.Modes[i].RoundsOpsPerSec, r.OpsPerSec)
					if t.pid != 0 {
						rep.Modes[i].RoundsServer = append(rep.Modes[i].RoundsServer, r.Server)
					}
				}
			}
		}
	}
	return reports, nil
}

// roundOrder is the order of the targets in round r (from 0): the list
// turned left by r places.
func roundOrder(targets []*target, r int) []*target {
	k := r % len(targets)
	return append(append(make([]*target, 0, len(targets)), targets[k:]...), targets[:k]...)
}

// bestOf keeps the result of higher throughput, with the errors of both.
func bestOf(prev, next modeResult) modeResult {
	best := prev
	if next.OpsPerSec > prev.OpsPerSec {
		best = next
		best.WarmupOps = prev.WarmupOps
		best.RoundsOpsPerSec = prev.RoundsOpsPerSec
		best.RoundsServer = prev.RoundsServer
	}
	best.Errors = prev.Errors + next.Errors
	best.FirstError = cmp.Or(prev.FirstError, next.FirstError)
	return best
}

// target is one server under load.
type target struct {
	name    string
	addr    string
	cfg     *loadConfig
	p       *params
	log     *slog.Logger
	workers []*worker
	// created: this run created the keyspace, and drops it.
	created bool
	// version is the server's describe_version.
	version string
	// direct, when set, makes this target the direct CQL load of the
	// cluster thriftd serves from (direct.go) instead of a Thrift server.
	direct *directCQL
	// afterTurn, when set, runs at the end of each of the target's turns
	// in measure.
	afterTurn func()
	// duringMeasure, when set, is called as a measured phase of mode
	// that lasts d begins; the function it returns is called once the
	// phase has ended.
	duringMeasure func(ctx context.Context, mode string, d time.Duration) (ended func())
	// pid, when not 0, is the server's process: what it spends on each
	// measured phase is read (usage.go).
	pid int
	// raw, when set, makes this target the raw Badger ceiling
	// (rawbadger.go) instead of a Thrift server.
	raw *rawBadger
}

func newTarget(name, addr string, cfg *loadConfig, log *slog.Logger) *target {
	return &target{name: name, addr: addr, cfg: cfg, p: newParams(cfg), log: log.With("server", name)}
}

// setup creates the keyspace (or checks the one to reuse), opens the
// connections and writes the preloaded rows.
func (t *target) setup(ctx context.Context) error {
	if t.direct != nil {
		return t.direct.setup(ctx, t)
	}
	if t.raw != nil {
		return t.raw.setup(ctx, t)
	}
	admin, err := dial(ctx, t.addr, "", t.cfg.Timeout)
	if err != nil {
		return err
	}
	defer admin.Close()
	if t.version, err = admin.DescribeVersion(ctx); err != nil {
		return fmt.Errorf("describe_version on %s: %w", t.addr, describeErr(err))
	}
	if err := t.ensureKeyspace(ctx, admin); err != nil {
		return err
	}
	if err := t.connect(ctx, t.cfg.Connections); err != nil {
		return err
	}
	return t.preload(ctx)
}

// connect opens connections until the target has n, each with a random
// stream of its own.
func (t *target) connect(ctx context.Context, n int) error {
	var g errgroup.Group
	g.SetLimit(8)
	for i := len(t.workers); i < n; i++ {
		w := &worker{p: t.p, addr: t.addr, rng: rand.New(rand.NewPCG(t.cfg.Seed, uint64(i)+1))}
		t.workers = append(t.workers, w)
		g.Go(func() (err error) {
			// close closes what opened even if another failed.
			w.c, err = dial(ctx, t.addr, t.cfg.Keyspace, t.cfg.Timeout)
			return err
		})
	}
	return g.Wait()
}

// families are the families of the benchmark keyspace.
func (t *target) families() []*cassandra.CfDef {
	def := func(name, colType, validator string) *cassandra.CfDef {
		cf := cassandra.NewCfDef()
		cf.Keyspace, cf.Name, cf.ColumnType, cf.ComparatorType = t.cfg.Keyspace, name, colType, "BytesType"
		if colType == "Super" {
			cf.SubcomparatorType = ptr("BytesType")
		}
		cf.KeyValidationClass = ptr("BytesType")
		cf.DefaultValidationClass = ptr(validator)
		cf.Comment = ptr(familyComment)
		return cf
	}
	return []*cassandra.CfDef{
		def(cfPreloaded, "Standard", "BytesType"),
		def(cfWrites, "Standard", "BytesType"),
		def(cfSupers, "Super", "BytesType"),
		def(cfCounters, "Standard", "CounterColumnType"),
		def(cfPreloadedSupers, "Super", "BytesType"),
	}
}

func ptr[T any](v T) *T { return &v }

// ensureKeyspace creates the keyspace, or with --reuse checks the existing
// one and adds the families it lacks.
func (t *target) ensureKeyspace(ctx context.Context, admin *client) error {
	ks, err := admin.DescribeKeyspace(ctx, t.cfg.Keyspace)
	var nfe *cassandra.NotFoundException
	switch {
	case errors.As(err, &nfe):
		def := cassandra.NewKsDef()
		def.Name = t.cfg.Keyspace
		def.StrategyClass = "org.apache.cassandra.locator.SimpleStrategy"
		def.StrategyOptions = map[string]string{"replication_factor": "1"}
		def.CfDefs = t.families()
		if _, err := admin.SystemAddKeyspace(ctx, def); err != nil {
			return fmt.Errorf("create keyspace %s on %s: %w", t.cfg.Keyspace, t.addr, describeErr(err))
		}
		t.created = true
		t.log.Info("created keyspace", "keyspace", t.cfg.Keyspace)
		return nil
	case err != nil:
		return fmt.Errorf("describe_keyspace %s on %s: %w", t.cfg.Keyspace, t.addr, describeErr(err))
	case !t.cfg.Reuse:
		return fmt.Errorf("keyspace %s already exists on %s and this run did not create it: thriftbench does not touch it "+
			"(drop it, choose another --keyspace, or give --reuse to run in it; a reused keyspace is not dropped)", t.cfg.Keyspace, t.addr)
	}
	have := map[string]*cassandra.CfDef{}
	for _, cf := range ks.CfDefs {
		have[cf.Name] = cf
	}
	if err := admin.SetKeyspace(ctx, t.cfg.Keyspace); err != nil {
		return fmt.Errorf("set_keyspace %s on %s: %w", t.cfg.Keyspace, t.addr, describeErr(err))
	}
	for _, want := range t.families() {
		got, ok := have[want.Name]
		if !ok {
			if _, err := admin.SystemAddColumnFamily(ctx, want); err != nil {
				return fmt.Errorf("add family %s.%s on %s: %w", t.cfg.Keyspace, want.Name, t.addr, describeErr(err))
			}
			continue
		}
		if !sameFamily(got, want) {
			return fmt.Errorf("--reuse: family %s.%s on %s is not the one thriftbench uses (%s of %s)", t.cfg.Keyspace, want.Name, t.addr, want.ColumnType, *want.DefaultValidationClass)
		}
	}
	t.log.Info("reusing keyspace", "keyspace", t.cfg.Keyspace)
	return nil
}

// sameFamily compares the settings the load depends on; servers name
// types with or without their package.
func sameFamily(got, want *cassandra.CfDef) bool {
	short := func(s string) string {
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] == '.' {
				return s[i+1:]
			}
		}
		return s
	}
	colType := got.ColumnType
	if colType == "" {
		colType = "Standard"
	}
	return colType == want.ColumnType && short(got.GetDefaultValidationClass()) == short(*want.DefaultValidationClass)
}

// preload writes the rows the read modes read, over every connection:
// those of Preloaded and those of PreloadedSupers, each only when a
// selected mode reads them.
func (t *target) preload(ctx context.Context) error {
	if t.cfg.Preload == 0 {
		return nil
	}
	if anyMode(t.cfg.Modes, modeNeedsPreload) {
		if err := t.preloadFamily(ctx, cfPreloaded, standardBatch, "columns", t.cfg.Columns); err != nil {
			return err
		}
	}
	if anyMode(t.cfg.Modes, modeNeedsSuperPreload) {
		return t.preloadFamily(ctx, cfPreloadedSupers, superBatch, "super_columns", t.cfg.SuperColumns, "subcolumns", t.cfg.Subcolumns)
	}
	return nil
}

// preloadFamily writes the --preload rows of family by batch_mutate over
// every connection, about preloadCells cells a call, all at one
// timestamp. Each row holds the cells of row's mutations (those of a
// batch mode: a row is what a batch call of that mode writes), with
// values drawn as the writes draw theirs. shape, key-value pairs, says
// in the log what a row holds.
func (t *target) preloadFamily(ctx context.Context, family string, row func(*params) *batchMutations, shape ...any) error {
	start := time.Now()
	perCall := max(1, preloadCells/len(row(t.p).cols)) // rows a call
	var next atomic.Int64
	ts := now()
	g, gctx := errgroup.WithContext(ctx)
	for _, w := range t.workers {
		g.Go(func() error {
			for gctx.Err() == nil {
				first := int(next.Add(int64(perCall))) - perCall
				if first >= t.cfg.Preload {
					return nil
				}
				rows := map[string]map[string][]*cassandra.Mutation{}
				for i := first; i < min(first+perCall, t.cfg.Preload); i++ {
					b := row(t.p)
					b.set(t.p, w.rng, ts)
					rows[string(preloadedKey(i))] = map[string][]*cassandra.Mutation{family: b.muts}
				}
				if err := w.c.BatchMutate(ctx, rows, cl); err != nil {
					return fmt.Errorf("preload %s on %s: %w", family, t.addr, describeErr(err))
				}
			}
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	attrs := append(append([]any{"family", family, "rows", t.cfg.Preload}, shape...), "took", time.Since(start).Round(time.Millisecond))
	t.log.Info("preloaded", attrs...)
	return nil
}

// runMode runs one mode: the warm-up if warm, then the measured phase.
func (t *target) runMode(ctx context.Context, name string, warm bool) modeResult {
	if t.direct != nil {
		return t.direct.runMode(ctx, name, warm)
	}
	if t.raw != nil {
		return t.raw.runMode(ctx, name, warm)
	}
	op := modes[name].op
	res := modeResult{Mode: name}
	if warm && t.cfg.Warmup > 0 {
		t.log.Info("warm-up", "mode", name, "for", t.cfg.Warmup)
		warm, _ := t.phase(ctx, op, t.cfg.Warmup)
		res.WarmupOps = warm.ops
	}
	t.log.Info("measuring", "mode", name, "for", t.cfg.Duration)
	// What duringMeasure does before the phase (a collection for a heap
	// profile) is not the phase's: the processes are read after it.
	ended := func() {}
	if t.duringMeasure != nil {
		ended = t.duringMeasure(ctx, name, t.cfg.Duration)
	}
	before, sampled := t.sample()
	selfBefore, selfErr := sampleProcess(os.Getpid())
	st, elapsed := t.phase(ctx, op, t.cfg.Duration)
	if selfErr == nil {
		if selfAfter, err := sampleProcess(os.Getpid()); err == nil {
			res.LoadGenerator = useBetween(selfBefore, selfAfter, st.ops)
		}
	}
	if sampled {
		if after, ok := t.sample(); ok {
			res.Server = useBetween(before, after, st.ops)
		}
	}
	ended() // after the server's reading: its profiles end with the phase, then are written out
	st.fill(&res, elapsed, t.log)
	return res
}

// fill sets the counts, rates and latencies of res from the measured
// phase that took elapsed, and logs its failures.
func (s *phaseStats) fill(res *modeResult, elapsed time.Duration, log *slog.Logger) {
	res.Ops, res.Cells, res.Errors = s.ops, s.cells, s.errors
	res.Seconds = elapsed.Seconds()
	if res.Seconds > 0 {
		res.OpsPerSec = float64(s.ops) / res.Seconds
		res.CellsPerSec = float64(s.cells) / res.Seconds
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	res.P50Ms, res.P99Ms, res.P999Ms = ms(s.hist.quantile(0.50)), ms(s.hist.quantile(0.99)), ms(s.hist.quantile(0.999))
	res.MaxMs = ms(time.Duration(s.hist.max))
	if s.firstErr != nil {
		res.FirstError = s.firstErr.Error()
		log.Warn("calls failed", "mode", res.Mode, "errors", s.errors, "first", res.FirstError)
	}
}

// localPhase runs op for dur from cfg.Connections goroutines of this
// process, each with the state newWorker makes for it: the loads that
// are not Thrift connections (the direct CQL load, raw Badger).
func localPhase[W any](ctx context.Context, cfg *loadConfig, dur time.Duration, newWorker func(i int) W,
	op func(ctx context.Context, w W) (cells int, err error)) (phaseStats, time.Duration) {
	stats := make([]phaseStats, cfg.Connections)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for i := range stats {
		stats[i].hist = new(histogram)
		w := newWorker(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &stats[i]
			for ctx.Err() == nil && time.Now().Before(deadline) {
				begin := time.Now()
				cells, err := op(ctx, w)
				took := time.Since(begin)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					st.fail(err)
					continue
				}
				st.ops++
				st.cells += uint64(cells)
				st.hist.record(took)
			}
		}()
	}
	wg.Wait()
	return mergeStats(stats), time.Since(start)
}

// sample reads the counters of the server's process, if it is known.
func (t *target) sample() (processSample, bool) {
	if t.pid == 0 {
		return processSample{}, false
	}
	s, err := sampleProcess(t.pid)
	if err != nil {
		t.log.Warn("cannot read what the server's process spends", "pid", t.pid, "err", err)
		return processSample{}, false
	}
	return s, true
}

// phase runs op on every connection for d and returns the merged
// statistics and the time from the start until the last call returned.
func (t *target) phase(ctx context.Context, op opFunc, d time.Duration) (phaseStats, time.Duration) {
	stats := make([]phaseStats, len(t.workers))
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i, w := range t.workers {
		stats[i].hist = new(histogram)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, op, deadline, &stats[i])
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	return mergeStats(stats), elapsed
}

// close closes the connections and drops the keyspace if this run
// created it (and --keep does not keep it), even when ctx was cancelled.
func (t *target) close(ctx context.Context) error {
	if t.direct != nil {
		return t.direct.close(ctx)
	}
	if t.raw != nil {
		return t.raw.close()
	}
	for _, w := range t.workers {
		if w.c != nil {
			w.c.Close()
			w.c = nil
		}
	}
	if !t.created {
		return nil
	}
	if t.cfg.Keep {
		t.log.Info("kept keyspace", "keyspace", t.cfg.Keyspace)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	admin, err := dial(ctx, t.addr, "", t.cfg.Timeout)
	if err != nil {
		return fmt.Errorf("drop keyspace %s: %w", t.cfg.Keyspace, err)
	}
	defer admin.Close()
	if _, err := admin.SystemDropKeyspace(ctx, t.cfg.Keyspace); err != nil {
		return fmt.Errorf("drop keyspace %s on %s: %w", t.cfg.Keyspace, t.addr, describeErr(err))
	}
	t.created = false
	t.log.Info("dropped keyspace", "keyspace", t.cfg.Keyspace)
	return nil
}

// mergeStats sums the statistics of the connections of one phase; the
// first error kept is the first connection's that had one.
func mergeStats(stats []phaseStats) phaseStats {
	total := phaseStats{hist: new(histogram)}
	for _, s := range stats {
		total.ops += s.ops
		total.cells += s.cells
		total.errors += s.errors
		total.hist.merge(s.hist)
		if total.firstErr == nil {
			total.firstErr = s.firstErr
		}
	}
	return total
}
