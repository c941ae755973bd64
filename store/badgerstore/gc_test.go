package badgerstore

import (
	"context"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

func TestGarbageCollectionPurgesOnlyAfterGrace(t *testing.T) {
	f := newFixture(t)
	grace := int32(3600)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type", GCGraceSeconds: &grace})
	sc := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	ctx := context.Background()
	f.apply(store.RowMutation{Table: tb, Key: []byte("gone"), Ops: []store.Op{enginetest.Put("a", "1", 1), enginetest.Put("b", "2", 1)}},
		store.RowMutation{Table: tb, Key: []byte("ranged"), Ops: []store.Op{enginetest.Put("a", "1", 1), enginetest.Put("m", "2", 1), enginetest.Put("z", "3", 1)}},
		store.RowMutation{Table: sc, Key: []byte("k"), Ops: []store.Op{enginetest.PutSuper("s1", "a", "1", 1), enginetest.PutSuper("s2", "a", "2", 1)}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("gone"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 5}}},
		store.RowMutation{Table: tb, Key: []byte("ranged"), Ops: []store.Op{{Kind: store.OpDeleteRange, Start: []byte("l"), Finish: []byte("n"), Timestamp: 5}}},
		store.RowMutation{Table: sc, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteSuper, Super: []byte("s1"), Timestamp: 5}}})

	// Within gc grace nothing goes: the tombstones must keep shadowing.
	stats, err := f.e.CollectGarbage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cells != 0 || stats.Tombstones != 0 {
		t.Fatalf("collected within gc grace: %+v", stats)
	}
	f.clock.Advance(2 * time.Hour)
	stats, err = f.e.CollectGarbage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cells != 4 || stats.Tombstones != 3 {
		t.Fatalf("after gc grace: %+v (want 4 cells: gone/a, gone/b, ranged/m, s1/a; 3 tombstones)", stats)
	}
	// What was live stays live; what was deleted stays deleted.
	if got := enginetest.CellsString(f.slice(tb, "ranged", store.SliceQuery{Count: all}).Cells); got != "a=1@1 z=3@1" {
		t.Fatalf("ranged row: %s", got)
	}
	if got := enginetest.SupersString(f.slice(sc, "k", store.SliceQuery{Count: all}).Supers); got != "s2{a=2@1}" {
		t.Fatalf("super row: %s", got)
	}
	if got := enginetest.CellsString(f.slice(tb, "gone", store.SliceQuery{Count: all}).Cells); got != "" {
		t.Fatalf("deleted row came back: %s", got)
	}
	// A purged row is no longer a range ghost, and nothing is left to do.
	var rows []string
	var res store.SliceResult
	if err := f.e.Scan(ctx, tb, &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &res, func(key []byte) (bool, error) {
		rows = append(rows, string(key))
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0] != "ranged" {
		t.Fatalf("rows after collection: %v", rows)
	}
	stats, err = f.e.CollectGarbage(ctx)
	if err != nil || stats.Rows != 0 {
		t.Fatalf("second collection: %+v %v", stats, err)
	}
}
