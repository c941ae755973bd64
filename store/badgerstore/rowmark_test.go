package badgerstore

import (
	"context"
	"fmt"
	"math"
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

// markVersions counts the versions Badger holds of the mark of row key.
func markVersions(t *testing.T, e *Engine, tb *store.Table, key string) int {
	t.Helper()
	rp, _ := e.rowPrefix(nil, tb, []byte(key))
	var s slab
	mark := rowMarkKey(&s, rp)
	n := 0
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{AllVersions: true, Prefix: mark})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if string(it.Item().Key()) == string(mark) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitMarksListed waits, boundedly, for the scan at open to complete the
// row mark filter of tb's family.
func waitMarksListed(t *testing.T, e *Engine, tb *store.Table) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !e.markFilters.of(tb).known.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the row marks of a store with data were not listed in 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRowMarkFilter: writes into the super columns of a row never written
// read neither its mark nor its packs, batches and single subcolumns
// alike; writes into rows written before merge with their packs, before
// and after a reopen, whose listing of the marks vouches for nothing
// until it ends; a truncated family starts with a complete, empty filter.
func TestRowMarkFilter(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, false, clock)
	defer func() { e.Close() }()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	skipped := func() int64 { n, _ := e.markFilters.stats(); return n }
	sc := func(key, super string) string {
		return enginetest.CellsString(enginetest.Slice(t, e, tb, key, store.SliceQuery{Super: []byte(super), Count: all}).Cells)
	}

	enginetest.Apply(t, e, superBatch(tb, "k", "1", 10, "x", "y"))
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("j"), Ops: []store.Op{enginetest.PutSuper("b", "v", "2", 20)}})
	if n := skipped(); n != 2 {
		t.Fatalf("%d writes into new rows read nothing, want 2 (a batch, a subcolumn)", n)
	}
	if !hasRowMark(t, e, tb, "k") || !hasRowMark(t, e, tb, "j") {
		t.Fatal("a new row written without a read has no mark")
	}
	// Rows the filter holds are read and merged.
	enginetest.Apply(t, e, superBatch(tb, "k", "3", 30, "z"))
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("j"), Ops: []store.Op{enginetest.PutSuper("b", "w", "4", 40)}})
	if n := skipped(); n != 2 {
		t.Fatalf("%d writes read nothing, want 2: a row with packs was taken for new", n)
	}
	if got, want := sc("k", "c"), "x=1@10 y=1@10 z=3@30"; got != want {
		t.Fatalf("super column c of k: %q, want %q", got, want)
	}
	if got, want := sc("j", "b"), "v=2@20 w=4@40"; got != want {
		t.Fatalf("super column b of j: %q, want %q", got, want)
	}
	// A batch into new super columns of a row the filter holds finds no
	// pack, reads the mark and does not write it again.
	e5 := store.RowMutation{Table: tb, Key: []byte("k")}
	for _, n := range []string{"p", "q", "r", "s"} {
		e5.Ops = append(e5.Ops, enginetest.PutSuper("e", n, "5", 45))
	}
	enginetest.Apply(t, e, e5)
	if n := markVersions(t, e, tb, "k"); n != 1 {
		t.Fatalf("the mark of k has %d versions after a batch into a new super column, want 1", n)
	}
	if got, want := sc("k", "e"), "p=5@45 q=5@45 r=5@45 s=5@45"; got != want {
		t.Fatalf("super column e of k: %q, want %q", got, want)
	}
	if _, bytes := e.markFilters.stats(); bytes == 0 {
		t.Fatal("the filters account no memory")
	}

	// Reopened with data, the filter lists the marks before it vouches.
	e.Close()
	e = openLayout(t, dir, false, clock)
	tb, _ = e.Catalog().Table("ks", "S")
	waitMarksListed(t, e, tb)
	enginetest.Apply(t, e, superBatch(tb, "k", "5", 50, "w"))
	enginetest.Apply(t, e, superBatch(tb, "m", "6", 60, "x"))
	if n := skipped(); n != 1 {
		t.Fatalf("%d writes read nothing after the reopen, want 1 (the new row)", n)
	}
	if got, want := sc("k", "a"), "w=5@50 x=1@10 y=1@10 z=3@30"; got != want {
		t.Fatalf("super column a of k after the reopen: %q, want %q", got, want)
	}

	// A truncated family has a new data id, and an empty filter that
	// vouches from the start.
	if err := e.Truncate(context.Background(), "ks", "S"); err != nil {
		t.Fatal(err)
	}
	tb, _ = e.Catalog().Table("ks", "S")
	if !e.markFilters.of(tb).known.Load() {
		t.Fatal("the filter of a truncated family is not complete")
	}
	enginetest.Apply(t, e, superBatch(tb, "k", "7", 70, "x"))
	if n := skipped(); n != 2 {
		t.Fatalf("%d writes read nothing, want 2: the truncated row was read", n)
	}
	if got, want := sc("k", "a"), "x=7@70"; got != want {
		t.Fatalf("super column a of k after the truncation: %q, want %q", got, want)
	}
}

// TestRowMarkFilterListingKeepsWritesMadeBeforeIt: a filter registered
// incomplete reads the marks until its listing ends, takes the rows
// marked meanwhile from their writers, and once listed holds the stored
// rows too.
func TestRowMarkFilterListingKeepsWritesMadeBeforeIt(t *testing.T) {
	e, _, tb := openPackedFamily(t, 3600)
	enginetest.Apply(t, e, superBatch(tb, "k", "1", 10, "x")) // before the filter below exists
	fs := newKeyFilters(rowMarkKeys, e.memory.MarkFilter)
	e.markFilters = fs
	unscanned := fs.publish(e.Catalog(), math.MaxUint32)
	if len(unscanned) != 1 || fs.of(tb).known.Load() {
		t.Fatalf("a family with data got a complete filter (%d to list)", len(unscanned))
	}
	enginetest.Apply(t, e, superBatch(tb, "j", "2", 20, "x")) // a new row: its mark is read
	if n, _ := fs.stats(); n != 0 {
		t.Fatalf("%d writes read nothing before the listing", n)
	}
	if err := e.listKeys(context.Background(), fs, unscanned); err != nil {
		t.Fatal(err)
	}
	if !fs.of(tb).known.Load() {
		t.Fatal("the listing did not complete the filter")
	}
	for _, key := range []string{"k", "j", "n"} {
		enginetest.Apply(t, e, superBatch(tb, key, "3", 30, "y"))
	}
	if n, _ := fs.stats(); n != 1 {
		t.Fatalf("%d writes read nothing after the listing, want 1 (the new row)", n)
	}
	for key, want := range map[string]string{"k": "x=1@10 y=3@30", "j": "x=2@20 y=3@30", "n": "y=3@30"} {
		got := enginetest.CellsString(enginetest.Slice(t, e, tb, key, store.SliceQuery{Super: []byte("d"), Count: all}).Cells)
		if got != want {
			t.Fatalf("super column d of %s: %q, want %q", key, got, want)
		}
	}
}
