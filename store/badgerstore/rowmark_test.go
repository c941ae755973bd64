package badgerstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// superBatch is a row mutation of the super columns a..d of row key, each
// with the subcolumns names, valued value at ts.
func superBatch(tb *store.Table, key, value string, ts int64, names ...string) store.RowMutation {
	m := store.RowMutation{Table: tb, Key: []byte(key)}
	for _, sc := range []string{"a", "b", "c", "d"} {
		for _, n := range names {
			m.Ops = append(m.Ops, enginetest.PutSuper(sc, n, value, ts))
		}
	}
	return m
}

// hasRowMark reports whether the row key of family tb has its mark.
func hasRowMark(t *testing.T, e *Engine, tb *store.Table, key string) bool {
	t.Helper()
	rp, _ := e.rowPrefix(nil, tb, []byte(key))
	var s slab
	found := true
	err := e.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(rowMarkKey(&s, rp))
		if err == badger.ErrKeyNotFound {
			found = false
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestRowMarks(t *testing.T) {
	e, _, tb := openPackedFamily(t, 3600)
	if !markedTable(tb) {
		t.Fatal("a new packed family has no row marks")
	}
	sc := func(key, super string) string {
		return enginetest.CellsString(enginetest.Slice(t, e, tb, key, store.SliceQuery{Super: []byte(super), Count: all}).Cells)
	}

	// A batch into a new row reads no pack and marks the row.
	enginetest.Apply(t, e, superBatch(tb, "k", "1", 10, "x", "y"))
	if n := e.unmarkedRows.Load(); n != 1 {
		t.Fatalf("%d row mutations read no pack, want 1", n)
	}
	if !hasRowMark(t, e, tb, "k") {
		t.Fatal("the row written has no mark")
	}
	// The next batch into it reads its packs and reconciles with them:
	// older cells lose, newer ones win, the others stay.
	enginetest.Apply(t, e, superBatch(tb, "k", "2", 5, "x", "z"))
	enginetest.Apply(t, e, superBatch(tb, "k", "3", 20, "y", "w"))
	if n := e.unmarkedRows.Load(); n != 1 {
		t.Fatalf("%d row mutations read no pack, want 1: a marked row was taken for new", n)
	}
	for _, s := range []string{"a", "d"} {
		if got, want := sc("k", s), "w=3@20 x=1@10 y=3@20 z=2@5"; got != want {
			t.Fatalf("super column %s after three batches: %q, want %q", s, got, want)
		}
	}

	// A small write, which reads its pack, marks the row it creates a
	// pack in; a batch then finds the mark and merges.
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("j"), Ops: []store.Op{enginetest.PutSuper("b", "v", "4", 30)}})
	if !hasRowMark(t, e, tb, "j") {
		t.Fatal("a row written by a small write has no mark")
	}
	enginetest.Apply(t, e, superBatch(tb, "j", "5", 40, "x"))
	if n := e.unmarkedRows.Load(); n != 1 {
		t.Fatalf("%d row mutations read no pack, want 1", n)
	}
	if got, want := sc("j", "b"), "v=4@30 x=5@40"; got != want {
		t.Fatalf("super column b of j: %q, want %q", got, want)
	}

	// Two batches into one new row in one transaction: the second sees
	// the first's packs.
	m1, m2 := superBatch(tb, "n", "6", 50, "x"), superBatch(tb, "n", "7", 60, "y")
	enginetest.Apply(t, e, m1, m2)
	if got, want := sc("n", "c"), "x=6@50 y=7@60"; got != want {
		t.Fatalf("two batches into a new row at once: %q, want %q", got, want)
	}
}

// TestPackedFamilyWithoutMarksReadsItsPacks: a packed family stored before
// row marks existed has none, and a batch into one of its rows must still
// read the row's packs.
func TestPackedFamilyWithoutMarksReadsItsPacks(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, false, clock)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	enginetest.Apply(t, e, superBatch(tb, "k", "1", 10, "x", "y"))

	// Make the store one written before marks: layout 1, no marks (nor
	// compression).
	rewriteLayout(t, e, "ks", func(d *keyspaceDoc, meta *metaDoc) {
		d.Tables[0].RowMarks, d.Tables[0].CompressedPacks = false, false
		meta.Format = formatPacks
	})
	err := e.db.Update(func(txn *badger.Txn) error {
		var s slab
		rp, _ := e.rowPrefix(nil, tb, []byte("k"))
		return txn.Delete(rowMarkKey(&s, rp))
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()

	e = openLayout(t, dir, false, clock)
	defer func() { e.Close() }()
	tb, _ = e.Catalog().Table("ks", "S")
	if !packedTable(tb) || markedTable(tb) {
		t.Fatalf("the family of layout 1: packed %v, marked %v; want packed, not marked", packedTable(tb), markedTable(tb))
	}
	enginetest.Apply(t, e, superBatch(tb, "k", "2", 20, "z"))
	got := enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("b"), Count: all}).Cells)
	if want := "x=1@10 y=1@10 z=2@20"; got != want {
		t.Fatalf("a batch into a row of an unmarked family: %q, want %q", got, want)
	}
	if n := e.unmarkedRows.Load(); n != 0 {
		t.Fatalf("%d row mutations of an unmarked family read no pack", n)
	}
	if hasRowMark(t, e, tb, "k") {
		t.Fatal("a family without marks got one")
	}

	// Truncated, the family takes the engine's layout: marks, and
	// compressed packs.
	if err := e.Truncate(context.Background(), "ks", "S"); err != nil {
		t.Fatal(err)
	}
	tb, _ = e.Catalog().Table("ks", "S")
	if !markedTable(tb) || !compressedTable(tb) {
		t.Fatalf("the truncated family: marks %v, compressed packs %v", markedTable(tb), compressedTable(tb))
	}
	var meta metaDoc
	if err := e.db.View(func(txn *badger.Txn) error { return readJSON(txn, metaKey, &meta) }); err != nil {
		t.Fatal(err)
	}
	if meta.Format != formatCompressedPacks {
		t.Fatalf("the store with a truncated family records layout %d, want %d", meta.Format, formatCompressedPacks)
	}
}

// TestRowMarksVouchOnlyForPacks: in a row without a mark, a super column
// too long to be packed keeps entries of its own, which are read before
// they are written whatever the mark says.
func TestRowMarksVouchOnlyForPacks(t *testing.T) {
	e, _, tb := openPackedFamily(t, 3600)
	// Its pack key leaves less than packNameRoom, its cells' keys are
	// whole.
	long := strings.Repeat("x", truncatedLen-packNameRoom-8)
	for i, ts := range []int64{20, 10} {
		m := store.RowMutation{Table: tb, Key: []byte("k")}
		for _, n := range []string{"p", "q", "r", "s"} {
			m.Ops = append(m.Ops, enginetest.PutSuper(long, n, fmt.Sprint(i), ts))
		}
		enginetest.Apply(t, e, m)
	}
	if n := e.unmarkedRows.Load(); n != 2 {
		t.Fatalf("%d row mutations read no pack, want 2: the row has none", n)
	}
	if packs, cells := dataEntries(t, e, tb); packs != 0 || cells != 4 {
		t.Fatalf("a super column too long to pack: %d packs, %d entries; want 0 and 4", packs, cells)
	}
	got := enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte(long), Count: all}).Cells)
	if want := "p=0@20 q=0@20 r=0@20 s=0@20"; got != want {
		t.Fatalf("the older batch won: %q, want %q", got, want)
	}
}
