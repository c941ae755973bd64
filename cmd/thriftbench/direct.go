package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	randv2 "math/rand/v2"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// directModes are the modes the direct CQL load has: the data calls of a
// Thrift application as the CQL statements a gocql application writes.
// Its statements are over thriftd's tables of Preloaded and Writes only,
// so the modes of the Super and counter families (batch-super, get-super,
// counter) and mixed are not among them: validateDirectModes refuses them.
var directModes = map[string]directOp{
	"insert": directInsert,
	"get":    directGet,
	"slice":  directSlice,
	"batch":  directBatch,
	"range":  directRange,
}

// directCQL is compare's load of the CQL cluster thriftd serves from, by
// a plain gocql application: the same modes, with the same parameters and
// concurrency, as prepared CQL statements on the very tables thriftd
// created and preloaded (one session, as an application has, token-aware
// as thriftd's is, at consistency ONE as thriftbench's Thrift calls ask).
// What thriftd costs over the cluster is the ratio of the two.
type directCQL struct {
	hosts   string
	prefix  string // thriftd's --cql-keyspace-prefix
	cfg     *loadConfig
	p       *params
	log     *slog.Logger
	session *gocql.Session
	// The statements, over thriftd's tables of Preloaded and Writes.
	insert, get, slice, rangeFirst, rangeNext string
}

// directOp makes one call on the session and returns the number of cells
// it wrote or read.
type directOp func(ctx context.Context, d *directCQL, w *directWorker) (cells int, err error)

// directWorker is one application thread.
type directWorker struct {
	rng *randv2.Rand
	// rangeToken is the token the next range call starts after; nil at
	// the start of the ring.
	rangeToken *int64
}

// newDirectCQL prepares the direct load of the cluster at hosts; prefix
// is the keyspace prefix thriftd runs with.
func newDirectCQL(hosts, prefix string, cfg *loadConfig, log *slog.Logger) *directCQL {
	return &directCQL{hosts: hosts, prefix: prefix, cfg: cfg, p: newParams(cfg), log: log.With("server", "direct gocql")}
}

// directPrefix is a keyspace prefix of its own for one compare run.
func directPrefix() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "tbench" + hex.EncodeToString(b[:]) + "_", nil
}

// thriftdFlags are the flags that make thriftd serve from the cluster, in
// this run's keyspaces, at consistency ONE when a call asks for none.
func (d *directCQL) thriftdFlags() []string {
	return []string{"--backend", "cql://" + d.hosts, "--cql-keyspace-prefix", d.prefix,
		"--cql-meta-keyspace", d.prefix + "meta", "--cql-consistency", "one"}
}

// validateDirectModes refuses modes the direct load does not have.
func validateDirectModes(modes []string) error {
	for _, m := range modes {
		if _, ok := directModes[m]; !ok {
			names := make([]string, 0, len(directModes))
			for _, n := range allModes {
				if _, ok := directModes[n]; ok {
					names = append(names, n)
				}
			}
			return usagef("--mode %s: the direct CQL load (--cql) has the modes %s", m, strings.Join(names, ", "))
		}
	}
	return nil
}

// setup connects to the cluster once thriftd has created and preloaded
// its tables, and checks their columns.
func (d *directCQL) setup(ctx context.Context, t *target) error {
	s, err := d.connect()
	if err != nil {
		return err
	}
	d.session = s
	var release string
	if err := s.Query("SELECT release_version FROM system.local").ScanContext(ctx, &release); err != nil {
		return fmt.Errorf("read the release of %s: %w", d.hosts, err)
	}
	t.version = "CQL, Cassandra " + release
	ks := `"` + d.prefix + d.cfg.Keyspace + `"`
	pre, wr := ks+`."`+cfPreloaded+`"`, ks+`."`+cfWrites+`"`
	const cols = "column1, value, writetime(value), ttl(value)"
	d.insert = "INSERT INTO " + wr + " (key, column1, value) VALUES (?, ?, ?) USING TIMESTAMP ?"
	d.get = "SELECT " + cols + " FROM " + pre + " WHERE key = ? AND column1 = ?"
	d.slice = "SELECT " + cols + " FROM " + pre + " WHERE key = ? LIMIT ?"
	d.rangeFirst = "SELECT token(key), key, " + cols + " FROM " + pre + " PER PARTITION LIMIT ? LIMIT ?"
	d.rangeNext = "SELECT token(key), key, " + cols + " FROM " + pre + " WHERE token(key) > ? PER PARTITION LIMIT ? LIMIT ?"
	// The driver prepares each statement at its first use and keeps it;
	// a read of the first preloaded cell checks the tables are thriftd's.
	var name, value []byte
	var ts int64
	var ttl int
	preloaded := d.cfg.Preload > 0 && anyMode(d.cfg.Modes, modeNeedsPreload)
	if err := s.Query(d.get, preloadedKey(0), d.p.names[0]).ScanContext(ctx, &name, &value, &ts, &ttl); err != nil && preloaded {
		return fmt.Errorf("read the first preloaded cell of thriftd's table %s on %s: %w", pre, d.hosts, err)
	}
	d.log.Info("direct CQL load ready", "preloaded", pre, "writes", wr)
	return nil
}

// connect opens the session: thriftd's settings (internal/cqlconn).
func (d *directCQL) connect() (*gocql.Session, error) {
	cluster := gocql.NewCluster(strings.Split(d.hosts, ",")...)
	cluster.Consistency = gocql.One
	cluster.Timeout = d.cfg.Timeout
	cluster.ConnectTimeout = d.cfg.Timeout
	cluster.NumConns = 2
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	s, err := cluster.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", d.hosts, err)
	}
	return s, nil
}

// runMode runs one mode: the warm-up if warm, then the measured phase.
func (d *directCQL) runMode(ctx context.Context, name string, warm bool) modeResult {
	op := directModes[name]
	res := modeResult{Mode: name}
	if warm && d.cfg.Warmup > 0 {
		w, _ := d.phase(ctx, op, d.cfg.Warmup)
		res.WarmupOps = w.ops
	}
	st, elapsed := d.phase(ctx, op, d.cfg.Duration)
	st.fill(&res, elapsed, d.log)
	return res
}

// phase runs op from --connections goroutines for dur, each call bounded
// by --timeout.
func (d *directCQL) phase(ctx context.Context, op directOp, dur time.Duration) (phaseStats, time.Duration) {
	newWorker := func(i int) *directWorker {
		return &directWorker{rng: randv2.New(randv2.NewPCG(d.cfg.Seed, uint64(i)+1))}
	}
	return localPhase(ctx, d.cfg, dur, newWorker, func(ctx context.Context, w *directWorker) (int, error) {
		cctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
		defer cancel()
		return op(cctx, d, w)
	})
}

// close drops this run's keyspaces on the cluster (thriftd's metadata
// keyspace, and the benchmark keyspace if thriftd could not drop it) and
// closes the session; it connects when setup did not, since thriftd has
// made its keyspaces anyway.
func (d *directCQL) close(ctx context.Context) error {
	if d.session == nil {
		s, err := d.connect()
		if err != nil {
			return fmt.Errorf("drop this run's keyspaces: %w", err)
		}
		d.session = s
	}
	defer d.session.Close()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, ks := range []string{d.prefix + d.cfg.Keyspace, d.prefix + "meta"} {
		if err := d.session.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).ExecContext(ctx); err != nil {
			errs = append(errs, fmt.Errorf("drop keyspace %s: %w", ks, err))
		}
	}
	return errors.Join(errs...)
}

func directInsert(ctx context.Context, d *directCQL, w *directWorker) (int, error) {
	return 1, d.session.Query(d.insert, writeKey(w.rng.IntN(d.cfg.Keys)), d.p.names[w.rng.IntN(len(d.p.names))], d.p.value(w.rng), now()).
		ExecContext(ctx)
}

func directGet(ctx context.Context, d *directCQL, w *directWorker) (int, error) {
	var name, value []byte
	var ts int64
	var ttl int
	err := d.session.Query(d.get, preloadedKey(w.rng.IntN(d.cfg.Preload)), d.p.names[w.rng.IntN(len(d.p.names))]).
		ScanContext(ctx, &name, &value, &ts, &ttl)
	if err != nil {
		return 0, err
	}
	return 1, nil
}

func directSlice(ctx context.Context, d *directCQL, w *directWorker) (int, error) {
	iter := d.session.Query(d.slice, preloadedKey(w.rng.IntN(d.cfg.Preload)), d.cfg.Columns).
		PageSize(d.cfg.Columns + 1).IterContext(ctx)
	var name, value []byte
	var ts int64
	var ttl int
	n := 0
	for iter.Scan(&name, &value, &ts, &ttl) {
		n++
	}
	return n, iter.Close()
}

// directBatch is batch_mutate of one row: an unlogged batch of inserts on
// one partition.
func directBatch(ctx context.Context, d *directCQL, w *directWorker) (int, error) {
	key, ts := writeKey(w.rng.IntN(d.cfg.Keys)), now()
	b := d.session.Batch(gocql.UnloggedBatch)
	for _, name := range d.p.names {
		b.Query(d.insert, key, name, d.p.value(w.rng), ts)
	}
	return len(d.p.names), b.ExecContext(ctx)
}

// directRange pages through the preloaded rows in token order, --range-rows
// rows of --columns columns a call, as get_range_slices does: after the
// last page the worker starts again from the beginning of the ring.
func directRange(ctx context.Context, d *directCQL, w *directWorker) (int, error) {
	rows, cols := d.cfg.RangeRows, d.cfg.Columns
	var q *gocql.Query
	if w.rangeToken == nil {
		q = d.session.Query(d.rangeFirst, cols, rows*cols)
	} else {
		q = d.session.Query(d.rangeNext, *w.rangeToken, cols, rows*cols)
	}
	iter := q.PageSize(rows*cols + 1).IterContext(ctx)
	var tok int64
	var key, name, value []byte
	var ts int64
	var ttl int
	cells, keys := 0, 0
	var last []byte
	for iter.Scan(&tok, &key, &name, &value, &ts, &ttl) {
		cells++
		if string(key) != string(last) {
			keys++
			last = append(last[:0], key...)
		}
	}
	if err := iter.Close(); err != nil {
		return 0, err
	}
	if keys < rows {
		w.rangeToken = nil
	} else {
		w.rangeToken = &tok
	}
	return cells, nil
}
