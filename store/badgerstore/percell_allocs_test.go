package badgerstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// TestNoAllocationPerCell holds the engine's write and read paths to
// allocating nothing per cell of their own. Each cell more in a row
// mutation (40 cells against 20) may cost no more allocations than an
// entry more costs Badger alone in one transaction, measured the same way
// on the same store: Badger allocates about a dozen times an entry (the
// transaction's map, the key with its version, the write-ahead log's
// encoder, the skiplist arena's checks), which only Badger could spare. A
// slice of 100 cells may allocate no more than one of 20.
// testing.AllocsPerRun counts the allocations of every goroutine, so
// Badger's write goroutine is counted on both sides.
func TestNoAllocationPerCell(t *testing.T) {
	if testing.Short() {
		t.Skip("counts allocations over hundreds of writes")
	}
	f := openTestEngine(t, t.TempDir(), "Murmur3Partitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "LongType"})
	ctx := context.Background()
	value := make([]byte, 32)
	name := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }
	const runs = 200

	ops := func(cells int) []store.Op {
		o := make([]store.Op, cells)
		for i := range o {
			o[i] = store.Op{Kind: store.OpPut, Name: name(i), Value: value, Timestamp: 1}
		}
		return o
	}
	row := 0
	engineWrite := func(cells int) float64 {
		o := ops(cells)
		key := make([]byte, 0, 16)
		return testing.AllocsPerRun(runs, func() {
			row++
			key = fmt.Appendf(key[:0], "row%08d", row)
			if err := f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: key, Ops: o}}}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Badger alone: the same number of entries set in one transaction,
	// from entries and keys kept across transactions, as the engine's
	// writers keep theirs (entries.go).
	rawRow := 0
	rawWrite := func(cells int) float64 {
		keys := make([][]byte, cells)
		entries := make([]badger.Entry, cells)
		return testing.AllocsPerRun(runs, func() {
			rawRow++
			for i := range keys {
				keys[i] = binary.BigEndian.AppendUint64(fmt.Appendf(keys[i][:0], "\x7fraw%08d", rawRow), uint64(i))
				entries[i] = badger.Entry{Key: keys[i], Value: value}
			}
			if err := f.e.db.Update(func(txn *badger.Txn) error {
				for i := range entries {
					if err := txn.SetEntry(&entries[i]); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
	// Warm both paths up: the writers' slabs and arenas, Badger's pools.
	engineWrite(40)
	rawWrite(40)
	engine := (engineWrite(40) - engineWrite(20)) / 20
	raw := (rawWrite(40) - rawWrite(20)) / 20
	t.Logf("allocations per cell written: engine %.2f, Badger alone %.2f", engine, raw)
	if engine > raw {
		t.Errorf("a cell written allocates %.2f times, Badger alone %.2f: the engine allocates per cell", engine, raw)
	}

	if err := f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte("wide"), Ops: ops(100)}}}); err != nil {
		t.Fatal(err)
	}
	var res store.SliceResult
	slice := func(cells int) float64 {
		return testing.AllocsPerRun(runs, func() {
			res.Reset()
			if err := f.e.Slice(ctx, tb, []byte("wide"), &store.SliceQuery{Count: cells}, &res); err != nil {
				t.Fatal(err)
			}
			if len(res.Cells) != cells {
				t.Fatalf("slice of %d cells gave %d", cells, len(res.Cells))
			}
		})
	}
	slice(100)
	small, large := slice(20), slice(100)
	t.Logf("allocations per slice: %.0f of 20 cells, %.0f of 100", small, large)
	if large > small {
		t.Errorf("a slice of 100 cells allocates %.0f times, one of 20 %.0f: the read path allocates per cell", large, small)
	}
}
