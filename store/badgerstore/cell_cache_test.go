package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// getOne reads one named cell of a row, as a Thrift get does.
func getOne(t *testing.T, e *Engine, tb *store.Table, row, name string) string {
	t.Helper()
	res := enginetest.Slice(t, e, tb, row, store.SliceQuery{Names: [][]byte{[]byte(name)}, Count: all})
	return enginetest.CellsString(res.Cells)
}

// TestCellCacheChangesNoResult runs the same random writes, expiring
// cells, cell, row and range deletions, failed batches, collections and
// truncations on two stores on one clock, one without a cell cache, and
// compares a get of every name of every row after each step, twice, so
// that the second is answered from the cache where the first filled it.
func TestCellCacheChangesNoResult(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	// Badger expires records on the wall clock, grace seconds after the
	// engine's clock says they died; a grace longer than the test keeps
	// the two stores' reads, a moment apart, from straddling an expiry.
	grace := int32(3600)
	engines, tables := openComparedStores(t, clock, store.TableDef{Name: "S", Comparator: "UTF8Type", GCGraceSeconds: &grace})
	engines[1].cells = nil
	rng := rand.New(rand.NewSource(7))
	rows := []string{"r0", "r1", "r2", "r3"}
	names := []string{"c0", "c1", "c2", "c3", "c4"}
	ts := func() int64 { return clock.Now().UnixMicro() - int64(rng.Intn(3000)) }
	rowOps := func() []store.Op {
		var ops []store.Op
		for n := 1 + rng.Intn(4); n > 0; n-- {
			op := store.Op{Name: []byte(names[rng.Intn(len(names))]), Timestamp: ts(), HasTimestamp: true}
			switch r := rng.Intn(100); {
			case r < 70:
				op.Kind, op.Value = store.OpPut, []byte(fmt.Sprint(rng.Intn(100)))
				if rng.Intn(4) == 0 {
					op.TTL = int32(1 + rng.Intn(3))
				}
			case r < 88:
				op.Kind = store.OpDeleteCell
			case r < 95:
				op.Kind, op.Name = store.OpDeleteRow, nil
			default:
				op.Kind, op.Name = store.OpDeleteRange, nil
				op.Start, op.Finish = []byte("c1"), []byte("c3")
			}
			ops = append(ops, op)
		}
		return ops
	}
	collected, truncated := 0, 0
	for step := 0; step < 600; step++ {
		key := rows[rng.Intn(len(rows))]
		batch := []store.RowMutation{{Key: []byte(key), Ops: rowOps()}}
		failed := rng.Intn(12) == 0
		if failed {
			// The cells are written, then the transaction fails.
			batch = append(batch, store.RowMutation{Key: []byte(rows[rng.Intn(len(rows))]), Ops: []store.Op{{Kind: store.OpKind(250)}}})
		}
		applyToBoth(t, engines, tables, batch, failed, step)
		clock.Advance(time.Duration(rng.Intn(300)) * time.Millisecond)
		if rng.Intn(60) == 0 {
			collected += collectAfterGrace(t, engines, clock, grace)
		}
		if rng.Intn(150) == 0 {
			for i, e := range engines {
				if err := e.Truncate(context.Background(), "ks", "S"); err != nil {
					t.Fatal(err)
				}
				tb, ok := e.Catalog().Table("ks", "S")
				if !ok {
					t.Fatal("the family is gone after its truncation")
				}
				tables[i] = tb
			}
			truncated++
		}
		for _, row := range rows {
			for _, name := range names {
				for pass := 0; pass < 2; pass++ {
					with, without := getOne(t, engines[0], tables[0], row, name), getOne(t, engines[1], tables[1], row, name)
					if with != without {
						t.Fatalf("step %d, row %s, name %s, read %d:\nwith the cache    %q\nwithout the cache %q", step, row, name, pass+1, with, without)
					}
				}
			}
		}
	}
	st := engines[0].cells.stats()
	if st.hits == 0 || collected == 0 || truncated == 0 {
		t.Fatalf("the test missed a path: cache %+v, cells collected %d, truncations %d", st, collected, truncated)
	}
	t.Logf("cell cache: %+v; cells collected: %d; truncations: %d", st, collected, truncated)
}

// TestCellCacheAfterAcknowledgedWrites: writers and readers of the same
// cells at once. A read never returns a cell older than the last write
// acknowledged before it began, nor older than what the same reader read
// before, while the readers are answered from the cache between writes.
func TestCellCacheAfterAcknowledgedWrites(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	const rows, writes, readers = 8, 300, 4
	var acked [rows]atomic.Int64
	put := func(row int, ts int64) error {
		v := binary.BigEndian.AppendUint64(nil, uint64(ts))
		return f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: fmt.Appendf(nil, "row%d", row),
			Ops: []store.Op{{Kind: store.OpPut, Name: []byte("c"), Value: v, Timestamp: ts, HasTimestamp: true}}}}})
	}
	for row := range rows {
		if err := put(row, 1); err != nil {
			t.Fatal(err)
		}
		acked[row].Store(1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, rows+readers)
	stop := make(chan struct{})
	for row := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ts := int64(2); ts <= writes; ts++ {
				if err := put(row, ts); err != nil {
					errs <- err
					return
				}
				acked[row].Store(ts)
			}
		}()
	}
	var readerWG sync.WaitGroup
	for r := range readers {
		readerWG.Add(1)
		go func() {
			defer readerWG.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			var seen [rows]int64
			for {
				select {
				case <-stop:
					return
				default:
				}
				row := rng.Intn(rows)
				floor := max(acked[row].Load(), seen[row])
				var res store.SliceResult
				q := &store.SliceQuery{Names: [][]byte{[]byte("c")}, Count: 1}
				if err := f.e.Slice(context.Background(), tb, fmt.Appendf(nil, "row%d", row), q, &res); err != nil || len(res.Cells) != 1 {
					errs <- fmt.Errorf("read row%d: %d cells, %v", row, len(res.Cells), err)
					return
				}
				c := res.Cells[0]
				if int64(binary.BigEndian.Uint64(c.Value)) != c.Timestamp {
					errs <- fmt.Errorf("row%d: value %x at timestamp %d", row, c.Value, c.Timestamp)
					return
				}
				if c.Timestamp < floor {
					errs <- fmt.Errorf("row%d: read the write of %d after the write of %d was acknowledged or read", row, c.Timestamp, floor)
					return
				}
				seen[row] = c.Timestamp
			}
		}()
	}
	wg.Wait()
	close(stop)
	readerWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// With the writes done, a second read of a cell is the cache's, and
	// gives the last write.
	hits := f.e.cells.stats().hits
	for row := range rows {
		for range 2 {
			if got := getOne(t, f.e, tb, fmt.Sprintf("row%d", row), "c"); !strings.HasSuffix(got, fmt.Sprintf("@%d", writes)) {
				t.Fatalf("row%d after the writes: %s, want the write of %d", row, got, writes)
			}
		}
	}
	if st := f.e.cells.stats(); st.hits < hits+rows {
		t.Fatalf("cache after two reads of each row once the writes were done: %+v, %d hits before (want %d more at least)", st, hits, rows)
	}
}

// TestCellCacheOnlyForOneNamedCell: reads of several names, slices and
// reads of counter families leave the cache alone.
func TestCellCacheOnlyForOneNamedCell(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	counters := f.table(store.TableDef{Name: "counters", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		{Kind: store.OpPut, Name: []byte("a"), Value: []byte("1"), Timestamp: 1, HasTimestamp: true},
		{Kind: store.OpPut, Name: []byte("b"), Value: []byte("2"), Timestamp: 1, HasTimestamp: true}}})
	f.apply(store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("n"), Delta: 3}}})
	f.slice(tb, "k", store.SliceQuery{Names: [][]byte{[]byte("a"), []byte("b")}, Count: all})
	f.slice(tb, "k", store.SliceQuery{Count: all})
	for range 2 {
		if got := enginetest.CellsString(f.slice(counters, "k", store.SliceQuery{Names: [][]byte{[]byte("n")}, Count: all}).Cells); got == "" {
			t.Fatal("the counter is missing")
		}
	}
	if st := f.e.cells.stats(); st.entries != 0 || st.hits != 0 {
		t.Fatalf("cell cache after reads it does not serve: %+v", st)
	}
	for range 2 {
		if got := getOne(t, f.e, tb, "k", "a"); got != "a=1@1" {
			t.Fatalf("get a: %s", got)
		}
	}
	if st := f.e.cells.stats(); st.entries != 1 || st.hits != 1 {
		t.Fatalf("cell cache after two gets of one cell: %+v (want 1 entry, 1 hit)", st)
	}
}
