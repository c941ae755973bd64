package enginetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// testManyCounterWritersNeverConflict hammers a few counters with many
// concurrent writers, as many Thrift clients adding to the same hot row do.
// Cassandra never fails an add because other clients add to the same
// counter: every add must succeed (no error at all, least of all a storage
// conflict) and the sums must be exact.
func testManyCounterWritersNeverConflict(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	std := f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	sup := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	const workers = 32
	adds := 150
	if testing.Short() {
		adds = 30
	}
	add := func(super, name string, d int64) store.Op {
		op := store.Op{Kind: store.OpCounterAdd, Name: []byte(name), Delta: d}
		if super != "" {
			op.Super = []byte(super)
		}
		return op
	}
	conflicts := f.lostConflicts()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < adds; i++ {
				var b store.Batch
				switch i % 3 {
				case 0: // one counter of one hot row
					b.Rows = []store.RowMutation{{Table: std, Key: []byte("hot"), Ops: []store.Op{add("", "a", 1)}}}
				case 1: // two rows in one batch, listed in either order
					r1 := store.RowMutation{Table: std, Key: []byte("hot"), Ops: []store.Op{add("", "b", 1), add("", "a", 1)}}
					r2 := store.RowMutation{Table: std, Key: []byte("warm"), Ops: []store.Op{add("", "a", 1)}}
					b.Rows = []store.RowMutation{r1, r2}
					if w%2 == 1 {
						b.Rows = []store.RowMutation{r2, r1}
					}
				case 2: // a super counter
					b.Rows = []store.RowMutation{{Table: sup, Key: []byte("hot"), Ops: []store.Op{add("s", "a", 1), add("s", "b", 2)}}}
				}
				if err := f.e.Apply(context.Background(), &b); err != nil {
					errs <- fmt.Errorf("worker %d add %d: %w", w, i, err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.lostConflicts() - conflicts; n != 0 {
		t.Errorf("%d transactions lost a write conflict: writers of one row must take turns", n)
	}
	if t.Failed() {
		return
	}
	per := func(phase int) int { // adds of one phase per worker
		n := 0
		for i := 0; i < adds; i++ {
			if i%3 == phase {
				n++
			}
		}
		return n
	}
	n0, n1, n2 := per(0)*workers, per(1)*workers, per(2)*workers
	if got, want := counterValues(f.slice(std, "hot", store.SliceQuery{Count: all}).Cells), fmt.Sprintf("a=%d b=%d", n0+n1, n1); got != want {
		t.Errorf("hot row = %s, want %s", got, want)
	}
	if got, want := counterValues(f.slice(std, "warm", store.SliceQuery{Count: all}).Cells), fmt.Sprintf("a=%d", n1); got != want {
		t.Errorf("warm row = %s, want %s", got, want)
	}
	if got, want := counterValues(f.slice(sup, "hot", store.SliceQuery{Super: []byte("s"), Count: all}).Cells), fmt.Sprintf("a=%d b=%d", n2, 2*n2); got != want {
		t.Errorf("super counter row = %s, want %s", got, want)
	}
}

// testManyConditionalWritersNeverConflict runs many compare-and-set
// increments of one cell at once: each either applies or reports the value
// it lost to, never a storage error, and every applied one counts.
func testManyConditionalWritersNeverConflict(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "t", Comparator: "UTF8Type"})
	const workers = 32
	attempts := 60
	if testing.Short() {
		attempts = 15
	}
	enc := func(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied int
	)
	conflicts := f.lostConflicts()
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var cur store.SliceResult
			seen := enc(0)
			for i := 0; i < attempts; i++ {
				expect := seen
				next := enc(binary.BigEndian.Uint64(expect) + 1)
				// The value doubles as the timestamp: applied writes are
				// serial, so each one wins over the one it replaces.
				m := &store.RowMutation{Table: tb, Key: []byte("cas"), Ops: []store.Op{Put("v", string(next), int64(binary.BigEndian.Uint64(next)))}}
				want := store.ExpectedColumn{Name: []byte("v"), Value: expect}
				if bytes.Equal(expect, enc(0)) {
					want = store.ExpectedColumn{Name: []byte("v"), Absent: true}
				}
				ok, err := f.e.ApplyIf(context.Background(), m, &store.Condition{Columns: []store.ExpectedColumn{want}}, &cur)
				if err != nil {
					errs <- fmt.Errorf("worker %d attempt %d: %w", w, i, err)
					return
				}
				if ok {
					mu.Lock()
					applied++
					mu.Unlock()
					seen = next
				} else if len(cur.Cells) > 0 {
					seen = append([]byte(nil), cur.Cells[0].Value...)
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := f.lostConflicts() - conflicts; n != 0 {
		t.Errorf("%d transactions lost a write conflict: conditional writers of one row must take turns", n)
	}
	res := f.slice(tb, "cas", store.SliceQuery{Count: all})
	if len(res.Cells) != 1 {
		t.Fatalf("cells after CAS increments: %s", CellsString(res.Cells))
	}
	if got := binary.BigEndian.Uint64(res.Cells[0].Value); got != uint64(applied) {
		t.Errorf("value after %d applied increments = %d", applied, got)
	}
}

// lostConflicts is the harness's count of writes retried after losing a
// conflict, or 0 if it keeps none.
func (f *env) lostConflicts() int64 {
	if f.h.LostConflicts == nil {
		return 0
	}
	return f.h.LostConflicts()
}
