package badgerstore

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// counterRow renders a row of a counter family: names, values and
// timestamps, super columns included.
func counterRow(t *testing.T, e *Engine, tb *store.Table, key string) string {
	t.Helper()
	res := enginetest.Slice(t, e, tb, key, store.SliceQuery{Count: all})
	var b strings.Builder
	cells := func(cs []store.Cell) {
		for _, c := range cs {
			fmt.Fprintf(&b, " %s=%d@%d", c.Name, c.CounterValue, c.Timestamp)
		}
	}
	cells(res.Cells)
	for _, s := range res.Supers {
		fmt.Fprintf(&b, " %s{", s.Name)
		cells(s.Cells)
		b.WriteString(" }")
	}
	return b.String()
}

func add(name string, d int64) store.Op {
	return store.Op{Kind: store.OpCounterAdd, Name: []byte(name), Delta: d}
}

// TestCounterCacheAnswersRepeatedAdds: adds to a counter updated before
// read nothing from Badger, and lose nothing.
func TestCounterCacheAnswersRepeatedAdds(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	for i := 0; i < 100; i++ {
		f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 2)}})
	}
	if got := counterRow(t, f.e, tb, "k"); !strings.HasPrefix(got, " n=200@") {
		t.Fatalf("counter: %s", got)
	}
	st := f.e.counters.stats()
	// The first add creates the counter without a look at the cache (the
	// family's filter vouches that it is new), the second reads it from
	// Badger and caches it.
	if st.hits != 98 || st.misses != 1 || st.entries != 1 {
		t.Fatalf("counter cache: %+v (want 98 hits, 1 miss, 1 entry)", st)
	}
}

// TestCounterCacheSameCounterTwiceInATransaction: a second add to a
// counter in one transaction adds to the first, whether the row's cells
// were prefetched or not.
func TestCounterCacheSameCounterTwiceInATransaction(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 10)}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 1)}}) // n is cached now
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 2), add("n", 3)}})
	if got := counterRow(t, f.e, tb, "k"); !strings.HasPrefix(got, " n=16@") {
		t.Fatalf("two adds, no prefetch: %s", got)
	}
	// Enough cells for a prefetch of the row (prefetchMinCells).
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("a", 1), add("n", 2), add("b", 1), add("n", 3), add("c", 1)}})
	if got := counterRow(t, f.e, tb, "k"); !strings.Contains(got, " n=21@") {
		t.Fatalf("two adds in a prefetched row: %s", got)
	}
	if st := f.e.counters.stats(); st.hits == 0 {
		t.Fatalf("the cache answered nothing: %+v", st)
	}
}

// TestCounterCacheFailedTransactionPublishesNothing: an add whose
// transaction fails leaves no trace, in the cache either.
func TestCounterCacheFailedTransactionPublishesNothing(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 5)}})
	bad := store.Op{Kind: store.OpKind(250), Name: []byte("x")}
	err := f.e.Apply(context.Background(), &store.Batch{Atomic: true, Rows: []store.RowMutation{
		{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 7), bad}},
	}})
	if err == nil {
		t.Fatal("a batch with an unknown operation was applied")
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 1)}})
	if got := counterRow(t, f.e, tb, "k"); !strings.HasPrefix(got, " n=6@") {
		t.Fatalf("after a failed add: %s (want 6)", got)
	}
}

// TestCounterCacheForgetsCollectedCounters: a counter purged with its
// row's deletion does not come back from the cache once the deletion
// itself is collected.
func TestCounterCacheForgetsCollectedCounters(t *testing.T) {
	f := newFixture(t)
	grace := int32(60)
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType", GCGraceSeconds: &grace})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 5)}})
	f.clock.Advance(time.Millisecond)
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: f.clock.Now().UnixMicro()}}})
	f.clock.Advance(2 * time.Minute)
	stats, err := f.e.CollectGarbage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cells != 1 || stats.Tombstones != 1 {
		t.Fatalf("collected %+v, want the counter and the row deletion", stats)
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("n", 1)}})
	if got := counterRow(t, f.e, tb, "k"); !strings.HasPrefix(got, " n=1@") {
		t.Fatalf("after the collection: %s (want 1: the deleted 5 is gone)", got)
	}
}

// collectAfterGrace moves the clock past gc_grace_seconds and collects
// garbage in each engine; it returns the cells the first one collected.
func collectAfterGrace(t *testing.T, engines [2]*Engine, clock *testClock, grace int32) int {
	t.Helper()
	clock.Advance(time.Duration(grace+1) * time.Second)
	collected := 0
	for i, e := range engines {
		stats, err := e.CollectGarbage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			collected = stats.Cells
		}
	}
	return collected
}

// TestCounterCacheChangesNoResult runs the same random adds, deletions,
// failed batches and collections on two stores on one clock, one without
// a counter cache and counter filters, and compares every row after each
// step.
func TestCounterCacheChangesNoResult(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	var engines [2]*Engine
	var tables [2][2]*store.Table
	grace := int32(5)
	for i := range engines {
		e := openLayout(t, t.TempDir(), false, clock)
		t.Cleanup(func() { e.Close() })
		engines[i] = e
		tables[i][0] = enginetest.CreateTable(t, e, store.TableDef{Name: "c", Comparator: "UTF8Type",
			DefaultValidator: "CounterColumnType", GCGraceSeconds: &grace})
		tables[i][1] = enginetest.CreateTable(t, e, store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type",
			SubComparator: "UTF8Type", DefaultValidator: "CounterColumnType", GCGraceSeconds: &grace})
	}
	engines[1].counters, engines[1].counterFilters = nil, nil
	rng := rand.New(rand.NewSource(7))
	names := []string{"a", "b", "c", "d"}
	supers := []string{"s1", "s2"}
	rows := []string{"r0", "r1", "r2"}
	ts := func() int64 { return clock.Now().UnixMicro() - int64(rng.Intn(3)) }
	collected := 0
	for step := 0; step < 600; step++ {
		fam := rng.Intn(2)
		var ops []store.Op
		for n := 1 + rng.Intn(6); n > 0; n-- {
			op := store.Op{Name: []byte(names[rng.Intn(len(names))])}
			if fam == 1 {
				op.Super = []byte(supers[rng.Intn(len(supers))])
			}
			switch r := rng.Intn(100); {
			case r < 75:
				op.Kind, op.Delta = store.OpCounterAdd, int64(rng.Intn(9)-3)
			case r < 85:
				op.Kind, op.Timestamp = store.OpDeleteCell, ts()
			case r < 90 && fam == 1:
				op.Kind, op.Name, op.Timestamp = store.OpDeleteSuper, nil, ts()
			case r < 93:
				op.Kind, op.Super, op.Name, op.Timestamp = store.OpDeleteRow, nil, nil, ts()
			default:
				op.Kind, op.Timestamp = store.OpDeleteRange, ts()
				op.Start, op.Finish = []byte("b"), []byte("c")
				if fam == 1 {
					op.Start, op.Finish = []byte("s1"), []byte("s1")
				}
				op.Super, op.Name = nil, nil
			}
			ops = append(ops, op)
		}
		failed := rng.Intn(15) == 0
		if failed {
			ops = append(ops, store.Op{Kind: store.OpKind(250)})
		}
		key := rows[rng.Intn(len(rows))]
		for i, e := range engines {
			err := e.Apply(context.Background(), &store.Batch{Atomic: true, Rows: []store.RowMutation{{Table: tables[i][fam], Key: []byte(key), Ops: ops}}})
			if (err != nil) != failed {
				t.Fatalf("step %d, engine %d: %v", step, i, err)
			}
		}
		clock.Advance(time.Duration(rng.Intn(2000)) * time.Microsecond)
		if rng.Intn(40) == 0 {
			collected += collectAfterGrace(t, engines, clock, grace)
		}
		for f := range tables[0] {
			for _, row := range rows {
				got, want := counterRow(t, engines[0], tables[0][f], row), counterRow(t, engines[1], tables[1][f], row)
				if got != want {
					t.Fatalf("step %d, family %d, row %s:\nwith the cache and filters    %s\nwithout the cache and filters %s", step, f, row, got, want)
				}
			}
		}
	}
	st := engines[0].counters.stats()
	skipped := engines[0].counterFilters.skipped.Load()
	if st.hits == 0 || collected == 0 || skipped == 0 {
		t.Fatalf("the test missed a path: cache %+v, adds that read nothing %d, cells collected %d", st, skipped, collected)
	}
	t.Logf("counter cache: %+v; adds that read nothing: %d; cells collected: %d", st, skipped, collected)
}
