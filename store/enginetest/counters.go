package enginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

func testCountersAddAndDelete(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	f.need(f.caps().CounterRestart, "CounterRestart", "a counter added to after its deletion starts again from zero")
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	add := func(name string, d int64) store.Op {
		return store.Op{Kind: store.OpCounterAdd, Name: []byte(name), Delta: d}
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("hits", 5), add("hits", -2), add("other", 1)}})
	if got := counterValues(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "hits=3 other=1" {
		t.Fatalf("after adds: %s", got)
	}
	// A deleted counter starts again from zero.
	del := store.Op{Kind: store.OpDeleteCell, Name: []byte("hits"), Timestamp: f.clock.Now().UnixMicro()}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{del}})
	f.advance(1000)
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("hits", 7)}})
	if got := counterValues(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "hits=7 other=1" {
		t.Fatalf("after delete and add: %s", got)
	}
	// So does one under a row deletion.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: f.clock.Now().UnixMicro()}}})
	f.advance(1000)
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add("other", 2)}})
	if got := counterValues(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "other=2" {
		t.Fatalf("after row delete and add: %s", got)
	}
}

func testConcurrentCounterAddsLoseNothing(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	const workers, adds = 16, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < adds; i++ {
				err := f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte("k"),
					Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("n"), Delta: 1}}}}})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := counterValues(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != fmt.Sprintf("n=%d", workers*adds) {
		t.Fatalf("concurrent adds: %s", got)
	}
}

func testRangeTombstones(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	var ops []store.Op
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		ops = append(ops, Put(n, n, 10))
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		{Kind: store.OpDeleteRange, Start: []byte("b"), Finish: []byte("d"), Timestamp: 10},
	}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "a=a@10 e=e@10" {
		t.Fatalf("after range delete: %s", got)
	}
	if n := f.count(tb, "k", store.SliceQuery{Count: all}); n != 2 {
		t.Fatalf("count = %d", n)
	}
	// Newer writes inside the range survive; older ones stay deleted.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("c", "new", 11), Put("bb", "old", 9)}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all, Reversed: true}).Cells); got != "e=e@10 c=new@11 a=a@10" {
		t.Fatalf("after writes into the range: %s", got)
	}
	// An open-ended range deletes to the end.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRange, Start: []byte("d"), Timestamp: 20}}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Names: [][]byte{[]byte("a"), []byte("e")}}).Cells); got != "a=a@10" {
		t.Fatalf("after open range delete: %s", got)
	}
}

func testSuperLevelRangeTombstone(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		PutSuper("s1", "a", "1", 1), PutSuper("s2", "a", "2", 1), PutSuper("s3", "a", "3", 1),
	}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRange, Finish: []byte("s2"), Timestamp: 1}}})
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Count: all}).Supers); got != "s3{a=3@1}" {
		t.Fatalf("after super-level range delete: %s", got)
	}
	if n := f.count(tb, "k", store.SliceQuery{Count: all}); n != 1 {
		t.Fatalf("count = %d", n)
	}
}
