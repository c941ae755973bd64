package main

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The families of the benchmark keyspace. Preloaded and PreloadedSupers
// are only read, so the read modes see the same rows on every server
// whatever ran before them.
const (
	cfPreloaded       = "Preloaded"
	cfWrites          = "Writes"
	cfSupers          = "Supers"
	cfCounters        = "Counters"
	cfPreloadedSupers = "PreloadedSupers"
)

// familyComment marks the families thriftbench creates.
const familyComment = "thriftbench load generator scratch family"

const cl = cassandra.ConsistencyLevel_ONE

// opFunc makes one call on the worker's connection and returns the number
// of cells it wrote or read.
type opFunc func(ctx context.Context, w *worker) (cells int, err error)

// mode is one kind of load.
type mode struct {
	// preload: the mode reads the preloaded rows of Preloaded;
	// preloadSupers: those of PreloadedSupers. Each family is preloaded
	// only when a selected mode reads it.
	preload, preloadSupers bool
	op                     opFunc
}

// allModes is every mode, in the order "all" runs them. A new mode goes
// at the end, so that the modes before it keep the conditions they were
// measured in (what ran before them on the same server).
var allModes = []string{"insert", "get", "slice", "batch", "batch-super", "range", "counter", "mixed", "get-super"}

var modes = map[string]mode{
	"insert":      {op: opInsert},
	"get":         {preload: true, op: opGet},
	"slice":       {preload: true, op: opSlice},
	"batch":       {op: opBatch},
	"batch-super": {op: opBatchSuper},
	"range":       {preload: true, op: opRange},
	"counter":     {op: opCounter},
	"mixed":       {preload: true, op: opMixed},
	"get-super":   {preloadSupers: true, op: opGetSuper},
}

func modeNeedsPreload(name string) bool      { return modes[name].preload }
func modeNeedsSuperPreload(name string) bool { return modes[name].preloadSupers }

// modeReadsPreloaded reports whether the mode reads preloaded rows of
// either family, which --preload 0 leaves empty.
func modeReadsPreloaded(name string) bool {
	return modeNeedsPreload(name) || modeNeedsSuperPreload(name)
}

// anyMode reports whether needs holds for one of the named modes.
func anyMode(names []string, needs func(name string) bool) bool {
	for _, m := range names {
		if needs(m) {
			return true
		}
	}
	return false
}

// Row keys and column names have a fixed width, so every server stores
// the same bytes whatever the random choice.
func preloadedKey(i int) []byte { return fmt.Appendf(nil, "p%09d", i) }
func writeKey(i int) []byte     { return fmt.Appendf(nil, "w%09d", i) }
func columnName(i int) []byte   { return fmt.Appendf(nil, "c%05d", i) }
func superName(i int) []byte    { return fmt.Appendf(nil, "s%05d", i) }

func opInsert(ctx context.Context, w *worker) (int, error) {
	ts := now()
	col := &cassandra.Column{Name: w.p.names[w.rng.IntN(len(w.p.names))], Value: w.p.value(w.rng), Timestamp: &ts}
	return 1, w.c.Insert(ctx, writeKey(w.rng.IntN(w.p.cfg.Keys)), &cassandra.ColumnParent{ColumnFamily: cfWrites}, col, cl)
}

func opGet(ctx context.Context, w *worker) (int, error) {
	path := &cassandra.ColumnPath{ColumnFamily: cfPreloaded, Column: w.p.names[w.rng.IntN(len(w.p.names))]}
	cosc, err := w.c.Get(ctx, preloadedKey(w.rng.IntN(w.p.cfg.Preload)), path, cl)
	if err != nil {
		return 0, err
	}
	if cosc.Column == nil {
		return 0, fmt.Errorf("get returned no column")
	}
	return 1, nil
}

// opGetSuper reads one subcolumn by name, as legacy applications read
// super columns: the path names the super column and the subcolumn, and
// the answer is that subcolumn alone.
func opGetSuper(ctx context.Context, w *worker) (int, error) {
	path := &cassandra.ColumnPath{ColumnFamily: cfPreloadedSupers,
		SuperColumn: w.p.supers[w.rng.IntN(len(w.p.supers))],
		Column:      w.p.subnames[w.rng.IntN(len(w.p.subnames))]}
	cosc, err := w.c.Get(ctx, preloadedKey(w.rng.IntN(w.p.cfg.Preload)), path, cl)
	if err != nil {
		return 0, err
	}
	if cosc.Column == nil {
		return 0, fmt.Errorf("get of a subcolumn returned no column")
	}
	return 1, nil
}

func opSlice(ctx context.Context, w *worker) (int, error) {
	res, err := w.c.GetSlice(ctx, preloadedKey(w.rng.IntN(w.p.cfg.Preload)),
		&cassandra.ColumnParent{ColumnFamily: cfPreloaded}, w.p.allColumns, cl)
	return len(res), err
}

func opBatch(ctx context.Context, w *worker) (int, error) {
	if w.batch == nil {
		w.batch = standardBatch(w.p)
	}
	b := w.batch
	b.fill(w)
	key := string(writeKey(w.rng.IntN(w.p.cfg.Keys)))
	return len(b.cols), w.c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{key: {cfWrites: b.muts}}, cl)
}

func opBatchSuper(ctx context.Context, w *worker) (int, error) {
	if w.superBatch == nil {
		w.superBatch = superBatch(w.p)
	}
	b := w.superBatch
	b.fill(w)
	key := string(writeKey(w.rng.IntN(w.p.cfg.Keys)))
	return len(b.cols), w.c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{key: {cfSupers: b.muts}}, cl)
}

// batchMutations are a worker's mutations of one batch mode, built once:
// each call gives their columns new values and a new timestamp, as an
// application that keeps its objects would.
type batchMutations struct {
	muts []*cassandra.Mutation
	cols []*cassandra.Column // every column of muts
	ts   int64               // every column's timestamp
}

// standardBatch is a mutation of each of the --columns columns.
func standardBatch(p *params) *batchMutations {
	b := &batchMutations{}
	for _, name := range p.names {
		c := &cassandra.Column{Name: name, Timestamp: &b.ts}
		b.cols = append(b.cols, c)
		b.muts = append(b.muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: c}})
	}
	return b
}

// superBatch is a mutation of each super column, with every subcolumn.
func superBatch(p *params) *batchMutations {
	b := &batchMutations{}
	for _, sname := range p.supers {
		subs := make([]*cassandra.Column, len(p.subnames))
		for j, name := range p.subnames {
			subs[j] = &cassandra.Column{Name: name, Timestamp: &b.ts}
		}
		b.cols = append(b.cols, subs...)
		b.muts = append(b.muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
			SuperColumn: &cassandra.SuperColumn{Name: sname, Columns: subs}}})
	}
	return b
}

// fill gives every column a value and the call's timestamp.
func (b *batchMutations) fill(w *worker) { b.set(w.p, w.rng, now()) }

// set gives every column a value drawn from rng and the timestamp ts.
func (b *batchMutations) set(p *params, rng *rand.Rand, ts int64) {
	b.ts = ts
	for _, c := range b.cols {
		c.Value = p.value(rng)
	}
}

// opRange pages through the preloaded rows in ring order: each call
// starts at the last row of the previous page (start_key is inclusive),
// and after the last page the worker starts again from the beginning of
// the ring. Each worker starts at a random preloaded row.
func opRange(ctx context.Context, w *worker) (int, error) {
	if w.rangeCursor == nil {
		w.rangeCursor = preloadedKey(w.rng.IntN(w.p.cfg.Preload))
	}
	kr := &cassandra.KeyRange{StartKey: w.rangeCursor, EndKey: []byte{}, Count: int32(w.p.cfg.RangeRows)}
	rows, err := w.c.GetRangeSlices(ctx, &cassandra.ColumnParent{ColumnFamily: cfPreloaded}, w.p.allColumns, kr, cl)
	if err != nil {
		return 0, err
	}
	cells := 0
	for _, r := range rows {
		cells += len(r.Columns)
	}
	switch {
	case w.p.cfg.RangeRows == 1:
		// A page of one row would start on itself again.
		w.rangeCursor = nil
	case len(rows) < w.p.cfg.RangeRows:
		w.rangeCursor = []byte{}
	default:
		w.rangeCursor = rows[len(rows)-1].Key
	}
	return cells, nil
}

func opCounter(ctx context.Context, w *worker) (int, error) {
	col := &cassandra.CounterColumn{Name: w.p.names[w.rng.IntN(len(w.p.names))], Value: 1}
	return 1, w.c.Add(ctx, writeKey(w.rng.IntN(w.p.cfg.Keys)), &cassandra.ColumnParent{ColumnFamily: cfCounters}, col, cl)
}

// The parts of the mixed mode, an application's mix: 40% get, 40%
// insert, 10% slice, 10% batch, drawn by mixedPart for every server.
const (
	mixGet = iota
	mixInsert
	mixSlice
	mixBatch
)

// mixedPart draws the kind of the next call of the mixed mode.
func mixedPart(rng *rand.Rand) int {
	switch r := rng.IntN(100); {
	case r < 40:
		return mixGet
	case r < 80:
		return mixInsert
	case r < 90:
		return mixSlice
	default:
		return mixBatch
	}
}

// opMixed makes one call of the mixed mode (mixedPart).
func opMixed(ctx context.Context, w *worker) (int, error) {
	switch mixedPart(w.rng) {
	case mixGet:
		return opGet(ctx, w)
	case mixInsert:
		return opInsert(ctx, w)
	case mixSlice:
		return opSlice(ctx, w)
	default:
		return opBatch(ctx, w)
	}
}
