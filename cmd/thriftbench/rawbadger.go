package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store/badgerstore"
)

// The storage ceiling. The echo server bounds what the protocol, the
// transport and the load generator allow; raw Badger bounds what the
// store allows. compare opens a Badger database of its own in this
// process, with thriftd's default memory sizing, and runs every mode on it
// from --connections goroutines, with the same rows, names and values as
// the Thrift calls, in the plainest mapping: a cell is one entry, keyed by
// its family, row and name (and super column); a write sets its entries
// in one transaction without reading anything; a read gets one entry or
// walks a row's; an add reads and rewrites its counter in one
// transaction, retried when it conflicts. No network, no Thrift, no
// timestamps, tombstones or validation: what thriftd does beyond that is
// the distance from the ceiling.

// rawFamily is the first byte of a raw entry's key: one for each family
// of the keyspace.
const (
	rawPreloaded       = 'P'
	rawWrites          = 'W'
	rawSupers          = 'S'
	rawCounters        = 'C'
	rawPreloadedSupers = 'U'
)

// rawConflictRetries bounds the retries of an add that lost a conflict.
const rawConflictRetries = 16

// rawOp makes one call on the database and returns the cells it wrote or
// read.
type rawOp func(r *rawBadger, w *rawWorker) (cells int, err error)

// rawModes are the modes of the raw Badger load: every mode.
var rawModes = map[string]rawOp{
	"insert":      rawInsert,
	"get":         rawGet,
	"slice":       rawSlice,
	"batch":       rawBatch,
	"batch-super": rawBatchSuper,
	"range":       rawRange,
	"counter":     rawCounter,
	"mixed":       rawMixed,
	"get-super":   rawGetSuper,
}

// rawBadger is compare's raw Badger load.
type rawBadger struct {
	dir string
	// sync: every write is synced to the disk before it returns (Badger's
	// SyncWrites), the ceiling of thriftd's --commitlog-sync batch.
	sync bool
	cfg  *loadConfig
	p    *params
	log  *slog.Logger
	db   *badger.DB
}

// rawWorker is one goroutine of the load.
type rawWorker struct {
	rng *rand.Rand
	key []byte // scratch of the keys it builds
	// rangeFrom is the key the next range call seeks: nil before the
	// first call (a random row), empty for the first preloaded row.
	rangeFrom []byte
}

// newRawBadger prepares the raw Badger load in dir.
func newRawBadger(dir string, sync bool, cfg *loadConfig, log *slog.Logger) *rawBadger {
	return &rawBadger{dir: dir, sync: sync, cfg: cfg, p: newParams(cfg), log: log.With("server", "raw Badger")}
}

// setup opens the database and writes the preloaded rows.
func (r *rawBadger) setup(ctx context.Context, t *target) error {
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return err
	}
	opts := badgerstore.SizeMemory(0).Apply(badger.DefaultOptions(r.dir)).
		WithNumVersionsToKeep(1).
		WithSyncWrites(r.sync).
		WithLogger(nil)
	db, err := badger.Open(opts)
	if err != nil {
		return fmt.Errorf("open raw Badger in %s: %w", r.dir, err)
	}
	r.db = db
	t.version = "none: Badger alone"
	if r.sync {
		t.version += ", every write synced"
	}
	// One stream of values for both families, the same on every run of a
	// seed.
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 0))
	if anyMode(r.cfg.Modes, modeNeedsPreload) {
		// A nil super column: the names are the row's own.
		if err := r.preload(ctx, rawPreloaded, [][]byte{nil}, r.p.names, rng, "family", cfPreloaded, "columns", r.cfg.Columns); err != nil {
			return err
		}
	}
	if anyMode(r.cfg.Modes, modeNeedsSuperPreload) {
		return r.preload(ctx, rawPreloadedSupers, r.p.supers, r.p.subnames, rng,
			"family", cfPreloadedSupers, "super_columns", r.cfg.SuperColumns, "subcolumns", r.cfg.Subcolumns)
	}
	return nil
}

// preload writes the --preload rows of family in one write batch, one
// entry a cell: each of names under each of supers, with values drawn
// from rng. shape, key-value pairs, says in the log which family of the
// Thrift calls it stands for and what a row holds.
func (r *rawBadger) preload(ctx context.Context, family byte, supers, names [][]byte, rng *rand.Rand, shape ...any) error {
	start := time.Now()
	wb := r.db.NewWriteBatch()
	defer wb.Cancel()
	for i := range r.cfg.Preload {
		if err := ctx.Err(); err != nil {
			return err
		}
		row := preloadedKey(i)
		for _, super := range supers {
			for _, name := range names {
				if err := wb.Set(rawCellKey(nil, family, row, super, name), r.p.value(rng)); err != nil {
					return fmt.Errorf("preload raw Badger: %w", err)
				}
			}
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("preload raw Badger: %w", err)
	}
	attrs := append(append([]any{"rows", r.cfg.Preload}, shape...), "took", time.Since(start).Round(time.Millisecond))
	r.log.Info("preloaded", attrs...)
	return nil
}

// runMode runs one mode: the warm-up if warm, then the measured phase.
func (r *rawBadger) runMode(ctx context.Context, name string, warm bool) modeResult {
	op := rawModes[name]
	res := modeResult{Mode: name}
	phase := func(d time.Duration) (phaseStats, time.Duration) {
		newWorker := func(i int) *rawWorker {
			return &rawWorker{rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(i)+1))}
		}
		return localPhase(ctx, r.cfg, d, newWorker, func(_ context.Context, w *rawWorker) (int, error) { return op(r, w) })
	}
	if warm && r.cfg.Warmup > 0 {
		w, _ := phase(r.cfg.Warmup)
		res.WarmupOps = w.ops
	}
	st, elapsed := phase(r.cfg.Duration)
	st.fill(&res, elapsed, r.log)
	return res
}

// close closes the database and removes its directory.
func (r *rawBadger) close() error {
	var err error
	if r.db != nil {
		err = r.db.Close()
	}
	return errors.Join(err, os.RemoveAll(r.dir))
}

// rawCellKey appends the key of a cell to dst: the family, the row, then
// the super column and the name, each after a zero byte (the benchmark's
// keys and names have a fixed width and no zero byte).
func rawCellKey(dst []byte, family byte, row, super, name []byte) []byte {
	dst = append(append(append(dst, family), row...), 0)
	if super != nil {
		dst = append(append(dst, super...), 0)
	}
	return append(dst, name...)
}

func rawInsert(r *rawBadger, w *rawWorker) (int, error) {
	w.key = rawCellKey(w.key[:0], rawWrites, writeKey(w.rng.IntN(r.cfg.Keys)), nil, r.p.names[w.rng.IntN(len(r.p.names))])
	return 1, r.db.Update(func(txn *badger.Txn) error { return txn.Set(w.key, r.p.value(w.rng)) })
}

func rawGet(r *rawBadger, w *rawWorker) (int, error) {
	w.key = rawCellKey(w.key[:0], rawPreloaded, preloadedKey(w.rng.IntN(r.cfg.Preload)), nil, r.p.names[w.rng.IntN(len(r.p.names))])
	return 1, r.getEntry(w.key)
}

// rawGetSuper reads one subcolumn of a preloaded super row by name: a
// point get of its entry, as rawGet reads a column.
func rawGetSuper(r *rawBadger, w *rawWorker) (int, error) {
	w.key = rawCellKey(w.key[:0], rawPreloadedSupers, preloadedKey(w.rng.IntN(r.cfg.Preload)),
		r.p.supers[w.rng.IntN(len(r.p.supers))], r.p.subnames[w.rng.IntN(len(r.p.subnames))])
	return 1, r.getEntry(w.key)
}

// getEntry reads the value of one entry, which must be there.
func (r *rawBadger) getEntry(key []byte) error {
	return r.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		return item.Value(func([]byte) error { return nil })
	})
}

// rawSlice reads every column of a preloaded row.
func rawSlice(r *rawBadger, w *rawWorker) (int, error) {
	w.key = rawCellKey(w.key[:0], rawPreloaded, preloadedKey(w.rng.IntN(r.cfg.Preload)), nil, nil)
	n := 0
	err := r.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: w.key})
		defer it.Close()
		for it.Rewind(); it.Valid() && n < r.cfg.Columns; it.Next() {
			if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}

func rawBatch(r *rawBadger, w *rawWorker) (int, error) {
	row := writeKey(w.rng.IntN(r.cfg.Keys))
	return len(r.p.names), r.db.Update(func(txn *badger.Txn) error {
		for _, name := range r.p.names {
			// Each entry keeps its key until the commit: a key of its own.
			if err := txn.Set(rawCellKey(nil, rawWrites, row, nil, name), r.p.value(w.rng)); err != nil {
				return err
			}
		}
		return nil
	})
}

func rawBatchSuper(r *rawBadger, w *rawWorker) (int, error) {
	row := writeKey(w.rng.IntN(r.cfg.Keys))
	return len(r.p.supers) * len(r.p.subnames), r.db.Update(func(txn *badger.Txn) error {
		for _, super := range r.p.supers {
			for _, name := range r.p.subnames {
				if err := txn.Set(rawCellKey(nil, rawSupers, row, super, name), r.p.value(w.rng)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// rawRange reads --range-rows rows of --columns columns in key order,
// each worker paging through the preloaded rows from a random one, and
// starting again from the first after the last, as opRange does.
func rawRange(r *rawBadger, w *rawWorker) (int, error) {
	prefix := []byte{rawPreloaded}
	if w.rangeFrom == nil {
		w.rangeFrom = rawCellKey(nil, rawPreloaded, preloadedKey(w.rng.IntN(r.cfg.Preload)), nil, nil)
	}
	cells, rows := 0, 0
	var row []byte
	err := r.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		from := w.rangeFrom
		if len(from) == 0 {
			from = prefix
		}
		it.Seek(from)
		perRow := 0
		for ; it.Valid(); it.Next() {
			key := it.Item().Key()
			end := bytes.IndexByte(key, 0)
			if end < 0 {
				return fmt.Errorf("raw Badger: preloaded key %q has no row", key)
			}
			if !bytes.Equal(key[:end], row) {
				if rows == r.cfg.RangeRows {
					break
				}
				row = append(row[:0], key[:end]...)
				rows++
				perRow = 0
			}
			if perRow == r.cfg.Columns {
				continue
			}
			if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
				return err
			}
			perRow++
			cells++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	// The next page starts on the last row read, as a key range of the
	// Thrift calls does (opRange).
	switch {
	case r.cfg.RangeRows == 1:
		w.rangeFrom = nil // a page of one row would start on itself again
	case rows < r.cfg.RangeRows:
		w.rangeFrom = w.rangeFrom[:0] // past the last row: from the first again
	default:
		w.rangeFrom = append(append(w.rangeFrom[:0], row...), 0)
	}
	return cells, nil
}

// rawCounter adds 1 to a counter: its 8 bytes read and written back in
// one transaction, retried when another add to it committed first.
func rawCounter(r *rawBadger, w *rawWorker) (int, error) {
	key := rawCellKey(nil, rawCounters, writeKey(w.rng.IntN(r.cfg.Keys)), nil, r.p.names[w.rng.IntN(len(r.p.names))])
	for range rawConflictRetries {
		err := r.db.Update(func(txn *badger.Txn) error {
			var n uint64
			item, err := txn.Get(key)
			switch {
			case errors.Is(err, badger.ErrKeyNotFound):
			case err != nil:
				return err
			default:
				if err := item.Value(func(v []byte) error {
					if len(v) != 8 {
						return fmt.Errorf("raw Badger: counter of %d bytes", len(v))
					}
					n = binary.BigEndian.Uint64(v)
					return nil
				}); err != nil {
					return err
				}
			}
			return txn.Set(key, binary.BigEndian.AppendUint64(nil, n+1))
		})
		if !errors.Is(err, badger.ErrConflict) {
			return 1, err
		}
	}
	return 0, fmt.Errorf("raw Badger: an add lost %d conflicts in a row", rawConflictRetries)
}

// rawMixed makes one call of the mixed mode, in the Thrift calls'
// proportions (mixedPart).
func rawMixed(r *rawBadger, w *rawWorker) (int, error) {
	switch mixedPart(w.rng) {
	case mixGet:
		return rawGet(r, w)
	case mixInsert:
		return rawInsert(r, w)
	case mixSlice:
		return rawSlice(r, w)
	default:
		return rawBatch(r, w)
	}
}

// writeRawBadger prints the storage ceiling beside thriftd.
func writeRawBadger(w io.Writer, c *comparison) {
	if c.RawBadger == nil {
		return
	}
	rows := [][]string{{"mode", "thriftd ops/s", "raw Badger ops/s", "thriftd/raw Badger"}}
	for _, r := range c.Rows {
		rawCell, over := "-", "-"
		if r.RawBadger != nil {
			rawCell = fmt.Sprintf("%.0f", *r.RawBadger)
		}
		if r.ThriftdOverRaw != nil {
			over = fmt.Sprintf("%.0f%%", 100**r.ThriftdOverRaw)
		}
		rows = append(rows, []string{r.Mode, fmt.Sprintf("%.0f", r.Thriftd), rawCell, over})
	}
	fmt.Fprintf(w, "\nthe storage ceiling: raw Badger in the load generator's process, %d goroutines, thriftd's memory sizing, one entry a cell, no network:\n", c.Config.Connections)
	writeMarkdownTable(w, rows)
}
