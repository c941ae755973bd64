package badgerstore

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestPackCacheAnswersRepeatedBatches: batches into a row written before
// read its packs from the cache from the third on, and lose nothing; a
// batch into one super column, below the prefetch's bound, reads it from
// the cache too.
func TestPackCacheAnswersRepeatedBatches(t *testing.T) {
	e, _, tb := openPackedFamily(t, 3600)
	for i := 1; i <= 5; i++ {
		enginetest.Apply(t, e, superBatch(tb, "k", fmt.Sprint("v", i), int64(i), "c0", "c1", "c2", "c3"))
	}
	st := e.packs.stats()
	// Batch 1 creates the packs, batch 2 reads them from Badger and
	// caches them, batches 3 to 5 read them from the cache.
	if st.hits != 12 || st.entries != 4 {
		t.Fatalf("pack cache: %+v (want 12 hits, 4 entries)", st)
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		{Kind: store.OpPut, Super: []byte("b"), Name: []byte("new"), Value: []byte("n"), Timestamp: 6, HasTimestamp: true}}})
	if got := e.packs.stats().hits; got != 13 {
		t.Fatalf("a single put: %d hits, want 13", got)
	}
	res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("b"), Count: all})
	if got := enginetest.CellsString(res.Cells); got != "c0=v5@5 c1=v5@5 c2=v5@5 c3=v5@5 new=n@6" {
		t.Fatalf("b: %s", got)
	}
}

// TestPackCacheChangesNoResult runs the same random writes, deletions,
// expiring subcolumns, failed batches, rows written twice in a batch, new
// rows and collections on two packed stores on one clock, one without a
// pack cache nor row mark filters, and compares every row after each
// step.
func TestPackCacheChangesNoResult(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	grace := int32(5)
	engines, tables := openComparedStores(t, clock, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true,
		SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	engines[1].packs, engines[1].markFilters = nil, nil
	rng := rand.New(rand.NewSource(11))
	supers := []string{"s1", "s2", "s3"}
	rows := []string{"r0", "r1", "r2"}
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprint("c", i)
	}
	ts := func() int64 { return clock.Now().UnixMicro() - int64(rng.Intn(3000)) }
	rowOps := func() []store.Op { return randomSuperOps(rng, ts, 10, supers, names) }
	collected := 0
	for step := 0; step < 800; step++ {
		key := rows[rng.Intn(len(rows))]
		if rng.Intn(8) == 0 {
			key = fmt.Sprint("n", step) // a new row, which the filter vouches has no pack
		}
		batch := []store.RowMutation{{Key: []byte(key), Ops: rowOps()}}
		if rng.Intn(6) == 0 {
			// The same row again in the same transaction: its second
			// read must see the first write, not the cache.
			batch = append(batch, store.RowMutation{Key: []byte(key), Ops: rowOps()})
		}
		collected += stepBoth(t, engines, tables, batch, rng.Intn(12) == 0, rows, rng, clock, grace, step)
		for _, row := range append(rows[:len(rows):len(rows)], key) {
			var got [2]string
			for i, e := range engines {
				res := enginetest.Slice(t, e, tables[i], row, store.SliceQuery{Count: all})
				got[i] = enginetest.SupersString(res.Supers)
			}
			if got[0] != got[1] {
				t.Fatalf("step %d, row %s:\nwith the cache    %s\nwithout the cache %s", step, row, got[0], got[1])
			}
		}
	}
	st := engines[0].packs.stats()
	skipped, _ := engines[0].markFilters.stats()
	if st.hits == 0 || collected == 0 || skipped == 0 {
		t.Fatalf("the test missed a path: cache %+v, cells collected %d, reads the row mark filter spared %d", st, collected, skipped)
	}
	t.Logf("pack cache: %+v; cells collected: %d; reads the row mark filter spared: %d", st, collected, skipped)
}

// openComparedStores opens two stores on one clock, each with a family
// of def, for tests that compare them. The first defers its writes
// (deferred.go), the second applies each before acknowledging it: the
// tests that take a cache away from the second compare both ways.
func openComparedStores(t *testing.T, clock *testClock, def store.TableDef) ([2]*Engine, [2]*store.Table) {
	t.Helper()
	var engines [2]*Engine
	var tables [2]*store.Table
	for i := range engines {
		e := openLayoutDeferring(t, t.TempDir(), false, clock, i == 0)
		t.Cleanup(func() { e.Close() })
		engines[i] = e
		tables[i] = enginetest.CreateTable(t, e, def)
	}
	return engines, tables
}

// stepBoth is one step of the tests that compare two stores: it applies
// batch to both (when failed, with an operation no engine knows on a
// random row of rows after it, so that its cells are written and then
// the transaction fails), moves the clock on by up to 300 ms, and one
// step in sixty collects both stores after grace. It returns the cells
// the first store collected.
func stepBoth(t *testing.T, engines [2]*Engine, tables [2]*store.Table, batch []store.RowMutation, failed bool, rows []string,
	rng *rand.Rand, clock *testClock, grace int32, step int) int {
	t.Helper()
	if failed {
		batch = append(batch, store.RowMutation{Key: []byte(rows[rng.Intn(len(rows))]), Ops: []store.Op{{Kind: store.OpKind(250)}}})
	}
	applyToBoth(t, engines, tables, batch, failed, step)
	clock.Advance(time.Duration(rng.Intn(300)) * time.Millisecond)
	if rng.Intn(60) == 0 {
		return collectAfterGrace(t, engines, clock, grace)
	}
	return 0
}

// applyToBoth applies batch atomically on each engine, its rows in the
// engine's own table, and fails the test unless it failed exactly when
// failed says it should.
func applyToBoth(t *testing.T, engines [2]*Engine, tables [2]*store.Table, batch []store.RowMutation, failed bool, step int) {
	t.Helper()
	for i, e := range engines {
		rowsOf := make([]store.RowMutation, len(batch))
		for j, m := range batch {
			m.Table = tables[i]
			rowsOf[j] = m
		}
		err := e.Apply(context.Background(), &store.Batch{Atomic: true, Rows: rowsOf})
		if (err != nil) != failed {
			t.Fatalf("step %d, engine %d: %v", step, i, err)
		}
	}
}

// TestRowPacksFromTheCellCacheChangeNoResult runs the same random writes,
// deletions, expiring subcolumns, failed batches, rows dissolved past
// their bounds and collections on two stores of row packs on one clock,
// one without a cell cache, and compares a get of every subcolumn of
// every row after each step, twice, so that the second is answered from
// the row pack the first put in the cache, and the whole rows.
func TestRowPacksFromTheCellCacheChangeNoResult(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	grace := int32(5)
	var engines [2]*Engine
	var tables [2]*store.Table
	for i := range engines {
		e := openLayoutDeferring(t, t.TempDir(), false, clock, i == 0)
		t.Cleanup(func() { e.Close() })
		e.unpackedRows = false
		engines[i] = e
		tables[i] = enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true,
			SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	}
	engines[1].cells = nil
	rng := rand.New(rand.NewSource(13))
	supers := []string{"s1", "s2", "s3"}
	names := []string{"c0", "c1", "c2", "c3", "c4"}
	rows := []string{"r0", "r1", "r2", "wide"}
	ts := func() int64 { return clock.Now().UnixMicro() - int64(rng.Intn(3000)) }
	rowOps := func() []store.Op { return randomSuperOps(rng, ts, 6, supers, names) }
	collected, dissolvedAt := 0, -1
	for step := 0; step < 500; step++ {
		key := rows[rng.Intn(len(rows))]
		ops := rowOps()
		if step == 250 {
			// The row "wide" outgrows a row pack and dissolves for good.
			key = "wide"
			for i := range rowPackMaxCells + 1 {
				ops = append(ops, store.Op{Kind: store.OpPut, Super: []byte("s9"), Name: fmt.Appendf(nil, "w%03d", i),
					Value: []byte("w"), Timestamp: ts(), HasTimestamp: true})
			}
			dissolvedAt = step
		}
		batch := []store.RowMutation{{Key: []byte(key), Ops: ops}}
		collected += stepBoth(t, engines, tables, batch, rng.Intn(12) == 0 && step != dissolvedAt, rows, rng, clock, grace, step)
		for _, row := range rows {
			for _, super := range supers {
				for _, name := range names {
					q := store.SliceQuery{Super: []byte(super), Names: [][]byte{[]byte(name)}, Count: all}
					for pass := 0; pass < 2; pass++ {
						with := enginetest.CellsString(enginetest.Slice(t, engines[0], tables[0], row, q).Cells)
						without := enginetest.CellsString(enginetest.Slice(t, engines[1], tables[1], row, q).Cells)
						if with != without {
							t.Fatalf("step %d, row %s, %s:%s, read %d:\nwith the cache    %q\nwithout the cache %q", step, row, super, name, pass+1, with, without)
						}
					}
				}
			}
			var got [2]string
			for i, e := range engines {
				got[i] = enginetest.SupersString(enginetest.Slice(t, e, tables[i], row, store.SliceQuery{Count: all}).Supers)
			}
			if got[0] != got[1] {
				t.Fatalf("step %d, row %s:\nwith the cache    %s\nwithout the cache %s", step, row, got[0], got[1])
			}
		}
	}
	whole, dissolved := rowPackEntries(t, engines[0], tables[0])
	st := engines[0].cells.stats()
	if st.hits == 0 || collected == 0 || whole == 0 || dissolved != 1 {
		t.Fatalf("the test missed a path: cell cache %+v, cells collected %d, row packs %d whole and %d dissolved", st, collected, whole, dissolved)
	}
	t.Logf("cell cache: %+v; cells collected: %d", st, collected)
}

// randomSuperOps draws 1 to most operations of a row of a Super family:
// puts (a quarter of them expiring in 1 to 3 s), cell deletions,
// deletions of a super column, of the row, and of the range of super
// columns s2 to s2, each at a timestamp from ts.
func randomSuperOps(rng *rand.Rand, ts func() int64, most int, supers, names []string) []store.Op {
	var ops []store.Op
	for n := 1 + rng.Intn(most); n > 0; n-- {
		op := store.Op{Super: []byte(supers[rng.Intn(len(supers))]), Name: []byte(names[rng.Intn(len(names))]),
			Timestamp: ts(), HasTimestamp: true}
		switch r := rng.Intn(100); {
		case r < 70:
			op.Kind, op.Value = store.OpPut, []byte(fmt.Sprint(rng.Intn(100)))
			if rng.Intn(4) == 0 {
				op.TTL = int32(1 + rng.Intn(3))
			}
		case r < 85:
			op.Kind = store.OpDeleteCell
		case r < 92:
			op.Kind, op.Name = store.OpDeleteSuper, nil
		case r < 94:
			op.Kind, op.Super, op.Name = store.OpDeleteRow, nil, nil
		default:
			op.Kind, op.Super, op.Name = store.OpDeleteRange, nil, nil
			op.Start, op.Finish = []byte("s2"), []byte("s2")
		}
		ops = append(ops, op)
	}
	return ops
}
