package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// openLayout opens an engine on dir whose new Super families are packed
// or not, on clock. It applies each write before acknowledging it, so
// that the tests of the write path see what a write did once it returns.
func openLayout(t testing.TB, dir string, unpacked bool, clock *testClock) *Engine {
	t.Helper()
	return openLayoutDeferring(t, dir, unpacked, clock, false)
}

// openLayoutDeferring is openLayout, with deferred writes (deferred.go)
// or without. Its new packed families keep every row by super column,
// without row packs (rowpack.go): the tests of packs look at them.
func openLayoutDeferring(t testing.TB, dir string, unpacked bool, clock *testClock, deferring bool) *Engine {
	t.Helper()
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), Options{
		Dir:                  dir,
		Partitioner:          p,
		Logger:               slog.New(slog.DiscardHandler),
		Now:                  clock.Now,
		GCInterval:           -1,
		UnpackedSuperColumns: unpacked,

		ApplyBeforeAcknowledging: !deferring,
	})
	if err != nil {
		t.Fatal(err)
	}
	e.unpackedRows = true
	return e
}

// openRowPackLayout opens an engine on dir whose new Super families keep
// small rows in row packs, as an engine does by default.
func openRowPackLayout(t testing.TB, dir string, clock *testClock) *Engine {
	t.Helper()
	e := openLayout(t, dir, false, clock)
	e.unpackedRows = false
	return e
}

// openPackedFamily opens a packed store on a test clock with one Super
// family of UTF8Type names and the given gc_grace_seconds.
func openPackedFamily(t *testing.T, grace int32) (*Engine, *testClock, *store.Table) {
	t.Helper()
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openLayout(t, t.TempDir(), false, clock)
	t.Cleanup(func() { e.Close() })
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	return e, clock, tb
}

// dataEntries counts a family's Badger entries of cells: packs and
// entries of their own.
func dataEntries(t testing.TB, e *Engine, tb *store.Table) (packs, cells int) {
	packs, _, cells = packEntries(t, e, tb)
	return packs, cells
}

// packEntries counts a family's packs, the dissolved ones among them, and
// its other entries.
func packEntries(t testing.TB, e *Engine, tb *store.Table) (packs, dissolved, cells int) {
	t.Helper()
	prefix := appendTablePrefix(nil, dataIDOf(tb))
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			err := it.Item().Value(func(v []byte) error {
				if isPack(v) {
					packs++
					if v[1]&packDissolved != 0 {
						dissolved++
					}
				} else {
					cells++
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return packs, dissolved, cells
}

func TestSuperColumnsArePacked(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openLayout(t, t.TempDir(), false, clock)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "LongType"})
	var ops []store.Op
	for s := 0; s < 10; s++ {
		for c := 9; c >= 0; c-- {
			op := enginetest.PutSuper(fmt.Sprintf("sc%d", s), "", fmt.Sprint(s*10+c), int64(1+c))
			op.Name = binary.BigEndian.AppendUint64(nil, uint64(c))
			ops = append(ops, op)
		}
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops})
	if packs, cells := dataEntries(t, e, tb); packs != 10 || cells != 0 {
		t.Fatalf("10 super columns of 10 subcolumns stored as %d packs and %d entries of their own, want 10 and 0", packs, cells)
	}
	res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Count: all})
	if len(res.Supers) != 10 {
		t.Fatalf("read %d super columns, want 10", len(res.Supers))
	}
	for s, sc := range res.Supers {
		if len(sc.Cells) != 10 {
			t.Fatalf("super column %s has %d subcolumns, want 10", sc.Name, len(sc.Cells))
		}
		for c, cell := range sc.Cells {
			if got := binary.BigEndian.Uint64(cell.Name); got != uint64(c) || string(cell.Value) != fmt.Sprint(s*10+c) || cell.Timestamp != int64(1+c) {
				t.Fatalf("super column %s cell %d: name %d value %s ts %d", sc.Name, c, got, cell.Value, cell.Timestamp)
			}
		}
	}
	rev := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("sc3"), Reversed: true, Count: 3,
		Start: binary.BigEndian.AppendUint64(nil, 7)})
	if got := enginetest.CellsString(rev.Cells); got != "\x00\x00\x00\x00\x00\x00\x00\a=37@8 \x00\x00\x00\x00\x00\x00\x00\x06=36@7 \x00\x00\x00\x00\x00\x00\x00\x05=35@6" {
		t.Fatalf("reversed slice from 7: %q", got)
	}
}

// TestPackedLayoutReadsAsUnpacked plays the same random writes on a packed
// and an unpacked store (the layout of every store written before packs,
// itself held to a model by the engine contract) and requires every read
// to give the same answer on both: slices in both directions with bounds,
// counts and names, at super column and subcolumn level, packs dissolved by
// size and by long names, TTLs, every kind of deletion, a reopen, and
// garbage collection once gc_grace_seconds have passed. (Writes stop
// before that: a write below a purged tombstone comes back in Cassandra,
// and when a purge happens is no part of the contract.)
func TestPackedLayoutReadsAsUnpacked(t *testing.T) {
	for _, rowPacks := range []bool{false, true} {
		for _, seed := range []int64{1, 2} {
			t.Run(fmt.Sprint("row_packs=", rowPacks, "/seed=", seed), func(t *testing.T) {
				testPackedLayoutReadsAsUnpacked(t, seed, rowPacks)
			})
		}
	}
}

// testPackedLayoutReadsAsUnpacked compares a packed store, with row packs
// (rowpack.go) or without, with an unpacked one.
func testPackedLayoutReadsAsUnpacked(t *testing.T, seed int64, rowPacks bool) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	var engines [2]*Engine
	var tables [2][]*store.Table
	grace := int32(3600)
	defs := []store.TableDef{
		{Name: "Bytes", Comparator: "UTF8Type", Super: true, SubComparator: "BytesType", GCGraceSeconds: &grace},
		{Name: "Long", Comparator: "LongType", Super: true, SubComparator: "LongType", GCGraceSeconds: &grace},
	}
	open := func() {
		for i := range engines {
			engines[i] = openLayout(t, dirs[i], i == 1, clock)
			engines[i].unpackedRows = !rowPacks
			tables[i] = tables[i][:0]
			for _, def := range defs {
				tb, ok := engines[i].Catalog().Table("ks", def.Name)
				if !ok {
					tb = enginetest.CreateTable(t, engines[i], def)
				}
				tables[i] = append(tables[i], tb)
			}
		}
	}
	open()
	defer func() {
		for _, e := range engines {
			e.Close()
		}
	}()

	rng := rand.New(rand.NewSource(seed))
	long := func(n int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	superName := func(fam int) []byte {
		if fam == 1 {
			// Few super columns: their packs grow past their bounds.
			return long(rng.Intn(3) - 1)
		}
		n := rng.Intn(6)
		return []byte(fmt.Sprint("sc", n))
	}
	subName := func(fam int) []byte {
		n := rng.Intn(90)
		if fam == 1 {
			return long(n)
		}
		if rng.Intn(150) == 0 {
			// A name whose key must be cut: its pack dissolves.
			return append(bytes.Repeat([]byte{'x'}, 64000), byte(n))
		}
		return []byte(fmt.Sprintf("c%02d", n))
	}
	ts := func() int64 {
		if rng.Intn(4) == 0 {
			return clock.Now().UnixMicro() // above every stored timestamp
		}
		return int64(1 + rng.Intn(60))
	}
	rows := []string{"r0", "r1", "r2"}
	sawPacks, sawDissolved := false, false
	wholeRows, dissolvedRows := 0, 0 // row packs seen, whole and dissolved
	unmarked := int64(0)             // row mutations of the packed store that read no pack

	for step := 0; step < 400; step++ {
		fam := rng.Intn(len(defs))
		var ops []store.Op
		for n := 1 + rng.Intn(12); n > 0; n-- {
			op := store.Op{Timestamp: ts(), HasTimestamp: true}
			switch r := rng.Intn(100); {
			case r < 60:
				op.Kind, op.Super, op.Name = store.OpPut, superName(fam), subName(fam)
				op.Value = []byte(fmt.Sprint(rng.Intn(4)))
				if rng.Intn(6) == 0 {
					op.TTL = int32(1 + rng.Intn(4))
				}
			case r < 80:
				op.Kind, op.Super, op.Name = store.OpDeleteCell, superName(fam), subName(fam)
			case r < 88:
				op.Kind, op.Super = store.OpDeleteSuper, superName(fam)
			case r < 90:
				op.Kind = store.OpDeleteRow
			default:
				op.Kind = store.OpDeleteRange
				a, b := superName(fam), superName(fam)
				if bytes.Compare(a, b) > 0 && (fam == 0 || int64(binary.BigEndian.Uint64(a)) > int64(binary.BigEndian.Uint64(b))) {
					a, b = b, a
				}
				op.Start, op.Finish = a, b
			}
			ops = append(ops, op)
		}
		key := []byte(rows[rng.Intn(len(rows))])
		if len(rows) < 12 && rng.Intn(10) == 0 {
			// A new row: the packed store reads none of its packs.
			rows = append(rows, fmt.Sprint("r", len(rows)))
			key = []byte(rows[len(rows)-1])
		}
		for i, e := range engines {
			enginetest.Apply(t, e, store.RowMutation{Table: tables[i][fam], Key: key, Ops: ops})
		}
		if rng.Intn(10) == 0 {
			clock.Advance(time.Duration(1+rng.Intn(4)) * time.Second)
		}
		if step == 200 {
			unmarked += engines[0].unmarkedRows.Load()
			for _, e := range engines {
				e.Close()
			}
			open()
		}
		if step%20 == 19 {
			for fam := range defs {
				p, d, _ := packEntries(t, engines[0], tables[0][fam])
				sawPacks, sawDissolved = sawPacks || p > d, sawDissolved || d > 0
				w, dr := rowPackEntries(t, engines[0], tables[0][fam])
				wholeRows, dissolvedRows = wholeRows+w, dissolvedRows+dr
				for _, row := range rows {
					comparePackedReads(t, engines, tables, fam, row, rng, superName, subName, step)
				}
				compareScans(t, engines, tables, fam, step, superName(fam), subName(fam), subName(fam))
			}
		}
	}
	clock.Advance(time.Duration(grace+60) * time.Second)
	for _, e := range engines {
		if _, err := e.CollectGarbage(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for fam := range defs {
		for _, row := range rows {
			comparePackedReads(t, engines, tables, fam, row, rng, superName, subName, -1)
		}
	}
	if !rowPacks && unmarked+engines[0].unmarkedRows.Load() == 0 {
		t.Fatal("no row mutation of the packed store found its row unmarked; the test misses a case")
	}
	if rowPacks != (wholeRows > 0 && dissolvedRows > 0) {
		t.Fatalf("the packed store held %d whole row packs and %d dissolved ones; the test misses a layout", wholeRows, dissolvedRows)
	}
	if !sawPacks || !sawDissolved {
		t.Fatalf("the packed store held packs: %v, dissolved ones: %v; the test misses a layout", sawPacks, sawDissolved)
	}
	if packs, _ := dataEntries(t, engines[1], tables[1][1]); packs != 0 {
		t.Fatalf("the unpacked store holds %d packs", packs)
	}
}

func comparePackedReads(t *testing.T, engines [2]*Engine, tables [2][]*store.Table, fam int, row string, rng *rand.Rand,
	superName, subName func(int) []byte, step int) {
	t.Helper()
	queries := []store.SliceQuery{
		{Count: all},
		{Count: all, Reversed: true},
		{Count: 1 + rng.Intn(3), Start: superName(fam)},
		{Count: 1 + rng.Intn(3), Start: superName(fam), Reversed: true},
		{Names: [][]byte{superName(fam), superName(fam)}},
	}
	for i := 0; i < 3; i++ {
		sc := superName(fam)
		a, b := subName(fam), subName(fam)
		if bytes.Compare(a, b) > 0 && fam == 0 {
			a, b = b, a
		}
		queries = append(queries,
			store.SliceQuery{Super: sc, Count: all},
			store.SliceQuery{Super: sc, Count: all, Reversed: true},
			store.SliceQuery{Super: sc, Count: 1 + rng.Intn(20), Start: a},
			store.SliceQuery{Super: sc, Count: 1 + rng.Intn(20), Start: a, Reversed: true},
			store.SliceQuery{Super: sc, Count: all, Start: a, Finish: b},
			store.SliceQuery{Super: sc, Count: all, Ranges: []store.NameRange{{Finish: a}, {Start: b}}},
			store.SliceQuery{Super: sc, Names: [][]byte{a, b, subName(fam)}},
		)
	}
	for _, q := range queries {
		var got [2]string
		var counts [2]int
		for i, e := range engines {
			res := enginetest.Slice(t, e, tables[i][fam], row, q)
			got[i] = enginetest.CellsString(res.Cells) + "|" + enginetest.SupersString(res.Supers)
			n, err := e.Count(context.Background(), tables[i][fam], []byte(row), &q)
			if err != nil {
				t.Fatal(err)
			}
			counts[i] = n
		}
		if got[0] != got[1] || counts[0] != counts[1] {
			t.Fatalf("step %d, family %d, row %s, query %+v:\npacked   %d %s\nunpacked %d %s", step, fam, row, q,
				counts[0], abbreviate(got[0]), counts[1], abbreviate(got[1]))
		}
	}
}

// abbreviate shortens the long names of a rendered read.
func abbreviate(s string) string {
	return strings.ReplaceAll(s, strings.Repeat("x", 64000), "x*64000")
}

// TestStoreWithoutPacksKeepsItsLayout: a family stored before packs keeps
// entries of their own after an upgrade, and takes packs when truncated.
func TestStoreWithoutPacksKeepsItsLayout(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, true, clock)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	write := func(e *Engine, tb *store.Table, value string) {
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
			enginetest.PutSuper("a", "x", value, 1), enginetest.PutSuper("a", "y", value, 1),
		}})
	}
	write(e, tb, "1")
	e.Close()

	e = openLayout(t, dir, false, clock)
	defer func() { e.Close() }()
	tb, _ = e.Catalog().Table("ks", "S")
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{enginetest.PutSuper("a", "z", "2", 1)}})
	if packs, cells := dataEntries(t, e, tb); packs != 0 || cells != 3 {
		t.Fatalf("an unpacked family after the upgrade: %d packs, %d entries of their own; want 0 and 3", packs, cells)
	}
	if got := enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("a"), Count: all}).Cells); got != "x=1@1 y=1@1 z=2@1" {
		t.Fatalf("read %q", got)
	}
	if err := e.Truncate(context.Background(), "ks", "S"); err != nil {
		t.Fatal(err)
	}
	tb, _ = e.Catalog().Table("ks", "S")
	write(e, tb, "3")
	if packs, cells := dataEntries(t, e, tb); packs != 1 || cells != 0 {
		t.Fatalf("a truncated family: %d packs, %d entries of their own; want 1 and 0", packs, cells)
	}
	e.Close()
	e = openLayout(t, dir, false, clock)
	tb, _ = e.Catalog().Table("ks", "S")
	if !packedTable(tb) {
		t.Fatal("the truncated family is not packed after a reopen")
	}
}

// TestPackDissolvesPastItsBounds: the subcolumn past a pack's bounds
// moves them all to entries of their own, and the pack stays as the
// marker that says so.
func TestPackDissolvesPastItsBounds(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openLayout(t, t.TempDir(), false, clock)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	put := func(n int) {
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
			enginetest.PutSuper("a", fmt.Sprintf("c%03d", n), "v", int64(n+1)),
		}})
	}
	for n := 0; n < packMaxCells; n++ {
		put(n)
	}
	if packs, cells := dataEntries(t, e, tb); packs != 1 || cells != 0 {
		t.Fatalf("%d subcolumns: %d packs, %d entries of their own; want 1 and 0", packMaxCells, packs, cells)
	}
	put(packMaxCells)
	put(packMaxCells + 1)
	if packs, cells := dataEntries(t, e, tb); packs != 1 || cells != packMaxCells+2 {
		t.Fatalf("%d subcolumns: %d packs, %d entries of their own; want the marker and %d", packMaxCells+2, packs, cells, packMaxCells+2)
	}
	from := packMaxCells - 2
	res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("a"), Count: all, Start: fmt.Appendf(nil, "c%03d", from)})
	var want []string
	for n := from; n < packMaxCells+2; n++ {
		want = append(want, fmt.Sprintf("c%03d=v@%d", n, n+1))
	}
	if got := enginetest.CellsString(res.Cells); got != strings.Join(want, " ") {
		t.Fatalf("read %q, want %q", got, strings.Join(want, " "))
	}
}

// TestPackedTombstonesAreCollected: a subcolumn tombstone in a pack, and
// what it shadows, go once gc_grace_seconds have passed; a pack whose
// subcolumns all expire goes with Badger's expiry.
func TestPackedTombstonesAreCollected(t *testing.T) {
	e, clock, tb := openPackedFamily(t, 10)
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		enginetest.PutSuper("a", "x", "1", 1), enginetest.PutSuper("a", "y", "1", 1),
		{Kind: store.OpDeleteCell, Super: []byte("a"), Name: []byte("x"), Timestamp: 2},
	}})
	clock.Advance(11 * time.Second)
	stats, err := e.CollectGarbage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cells != 1 {
		t.Fatalf("collected %d cells, want the tombstone", stats.Cells)
	}
	if got := enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("a"), Count: all}).Cells); got != "y=1@1" {
		t.Fatalf("read %q", got)
	}
	// A pack whose subcolumns all expire carries the Badger expiry of the
	// last one's death and gc_grace_seconds (Badger's clock is the wall's).
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		{Kind: store.OpPut, Super: []byte("b"), Name: []byte("x"), Value: []byte("1"), Timestamp: 3, TTL: 100},
		{Kind: store.OpPut, Super: []byte("b"), Name: []byte("y"), Value: []byte("1"), Timestamp: 3, TTL: 200},
	}})
	rp, _ := e.rowPrefix(nil, tb, []byte("k"))
	var s slab
	pk := superPackKey(&s, rp, tb, []byte("b"))
	err = e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(pk)
		if err != nil {
			return err
		}
		want := uint64(time.Now().Unix()) + 200 + 10
		if got := item.ExpiresAt(); got+2 < want || got > want {
			return fmt.Errorf("the pack of expiring subcolumns expires at %d, want %d", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsGC}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			return fmt.Errorf("the row is still marked for collection")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func FuzzDecodePack(f *testing.F) {
	rec := appendRecord(nil, &record{timestamp: 7, value: []byte("v")})
	f.Add(appendPack(nil, []packCell{{enc: []byte("a"), rec: rec}, {enc: []byte("b"), rec: rec}}, false))
	f.Add(appendPack(nil, nil, true))
	f.Add([]byte{packMarker, 0, 1, 1, 'a', 2, 0, 0})
	long := appendRecord(nil, &record{timestamp: 7, value: bytes.Repeat([]byte("v"), 200)})
	f.Add(compressPack(nil, appendPack(nil, []packCell{{enc: []byte("a"), rec: long}, {enc: []byte("b"), rec: long}}, false)))
	f.Fuzz(func(t *testing.T, val []byte) {
		cells, dissolved, err := decodePack(val, nil, nil)
		if err != nil {
			return
		}
		// What a pack decodes to survives its encoding (the lengths may
		// have been written in longer varints than appendPack writes),
		// compressed or not.
		plain := appendPack(nil, cells, dissolved)
		for _, enc := range [][]byte{plain, compressPack(nil, plain)} {
			body := make([]byte, 0, packBodyLen(enc))
			again, dissolvedAgain, err := decodePack(enc, nil, &body)
			if err != nil || dissolvedAgain != dissolved || len(again) != len(cells) {
				t.Fatalf("%x: decoded %d cells (dissolved %v), re-encoded: %d (%v), %v", val, len(cells), dissolved, len(again), dissolvedAgain, err)
			}
			for i := range cells {
				if !bytes.Equal(again[i].enc, cells[i].enc) || !bytes.Equal(again[i].rec, cells[i].rec) {
					t.Fatalf("%x: cell %d changed in its encoding", val, i)
				}
			}
		}
		var r record
		for _, c := range cells {
			_ = decodeRecord(c.rec, &r)
		}
	})
}

// TestDissolvedPackLeavesNoGhost: once a deleted row's subcolumns are
// collected, the marker of its dissolved pack goes too, so a range scan
// no longer lists the row.
func TestDissolvedPackLeavesNoGhost(t *testing.T) {
	e, clock, tb := openPackedFamily(t, 10)
	var ops []store.Op
	for n := 0; n <= packMaxCells; n++ {
		ops = append(ops, enginetest.PutSuper("a", fmt.Sprintf("c%03d", n), "v", 1))
	}
	ops = append(ops, enginetest.PutSuper("b", "x", "v", 1))
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops})
	if packs, dissolved, cells := packEntries(t, e, tb); packs != 2 || dissolved != 1 || cells != packMaxCells+1 {
		t.Fatalf("%d packs (%d dissolved), %d entries of their own; want 2 (1), %d", packs, dissolved, cells, packMaxCells+1)
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}})
	clock.Advance(11 * time.Second)
	if _, err := e.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	if packs, cells := dataEntries(t, e, tb); packs != 0 || cells != 0 {
		t.Fatalf("after collection: %d packs and %d other entries, want none", packs, cells)
	}
	var res store.SliceResult
	rows := 0
	err := e.Scan(context.Background(), tb, &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &res, func([]byte) (bool, error) {
		rows++
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rows != 0 {
		t.Fatalf("the scan lists %d rows after collection, want none", rows)
	}
}

// TestNewerLayoutIsRefused: a store records the newest layout it holds,
// and an engine refuses a layout newer than it reads, whose data it would
// misread.
func TestNewerLayoutIsRefused(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, false, clock)
	enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	var meta metaDoc
	if err := e.db.View(func(txn *badger.Txn) error { return readJSON(txn, metaKey, &meta) }); err != nil {
		t.Fatal(err)
	}
	if meta.Format != formatCompressedPacks {
		t.Fatalf("a store with a packed family records layout %d, want %d", meta.Format, formatCompressedPacks)
	}
	meta.Format = storeFormat + 1
	err := e.db.Update(func(txn *badger.Txn) error {
		b, err := json.Marshal(&meta)
		if err != nil {
			return err
		}
		return txn.Set(metaKey, b)
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	p, _ := partition.ByName("Murmur3Partitioner")
	e, err = Open(context.Background(), Options{Dir: dir, Partitioner: p, Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		e.Close()
		t.Fatal("a store of a newer layout opened")
	}
	if !strings.Contains(err.Error(), "written by a newer thriftd") {
		t.Fatalf("refused with %q", err)
	}
}

// TestPackCellListsDoNotOverlap fills the lists of many packs past their
// room, as a pack written under other bounds would be, and checks that no
// list wrote into another.
func TestPackCellListsDoNotOverlap(t *testing.T) {
	var a packCellArena
	for round := range 2 {
		lists := make([][]packCell, 9)
		for i := range lists {
			lists[i] = a.take()
			if cap(lists[i]) != packListRoom {
				t.Fatalf("round %d: list %d has room for %d cells, want %d", round, i, cap(lists[i]), packListRoom)
			}
		}
		for n := range 2 * packListRoom {
			for i := range lists {
				lists[i] = append(lists[i], packCell{enc: []byte{byte(i), byte(n)}})
			}
		}
		for i, l := range lists {
			for n, c := range l {
				if !bytes.Equal(c.enc, []byte{byte(i), byte(n)}) {
					t.Fatalf("round %d: list %d cell %d is %x", round, i, n, c.enc)
				}
			}
		}
		a.reset()
	}
}

// rowPackEntries counts a family's row packs (rowpack.go): whole, and
// dissolved.
func rowPackEntries(t testing.TB, e *Engine, tb *store.Table) (whole, dissolved int) {
	t.Helper()
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: appendTablePrefix(nil, dataIDOf(tb))})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			_, rest, err := e.part.DecodeRowKey(nil, k[tablePrefixLen:])
			if err != nil || len(rest) != 1 || rest[0] != kindCells {
				continue
			}
			if err := it.Item().Value(func(v []byte) error {
				if !isPack(v) {
					return fmt.Errorf("row pack %x is no pack", k)
				}
				if v[1]&packDissolved != 0 {
					dissolved++
				} else {
					whole++
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return whole, dissolved
}

// compareScans compares range scans of family fam from two engines that
// hold the same data: by super columns, and by the subcolumns of super
// column sc (all, from a on, both ways, and named a and b).
func compareScans(t *testing.T, engines [2]*Engine, tables [2][]*store.Table, fam, step int, sc, a, b []byte) {
	t.Helper()
	for _, q := range []store.ScanQuery{
		{Slice: store.SliceQuery{Count: all}},
		{Slice: store.SliceQuery{Count: 2, Reversed: true}},
		{Slice: store.SliceQuery{Super: sc, Count: all}},
		{Slice: store.SliceQuery{Super: sc, Count: 3, Start: a}},
		{Slice: store.SliceQuery{Super: sc, Count: 3, Start: a, Reversed: true}},
		{Slice: store.SliceQuery{Super: sc, Names: [][]byte{a, b}}},
		{Slice: store.SliceQuery{Names: [][]byte{sc}}},
	} {
		var got [2]string
		for i, e := range engines {
			var res store.SliceResult
			var text bytes.Buffer
			err := e.Scan(context.Background(), tables[i][fam], &q, &res, func(key []byte) (bool, error) {
				fmt.Fprintf(&text, "%s: %s|%s\n", key, enginetest.CellsString(res.Cells), enginetest.SupersString(res.Supers))
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = text.String()
		}
		if got[0] != got[1] {
			t.Fatalf("step %d, family %d, scan %+v:\npacked   %s\nunpacked %s", step, fam, q, abbreviate(got[0]), abbreviate(got[1]))
		}
	}
}

// TestFindPackCellNear: whatever the index it is told to try first, the
// search near it finds what the plain search finds, in packs of up to 130
// cells with names present and absent, before, between and after them.
func TestFindPackCellNear(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for n := range 131 {
		cells := make([]packCell, n)
		for i := range cells {
			cells[i].enc = binary.BigEndian.AppendUint16(nil, uint16(2*i+1)) // odd names
		}
		for probe := range 2*n + 3 {
			enc := binary.BigEndian.AppendUint16(nil, uint16(probe))
			wantI, wantFound := findPackCell(cells, enc)
			for _, near := range []int{-1, 0, 1, n / 2, n - 1, n, n + 1, rng.Intn(n + 2), wantI, wantI + 1} {
				if i, found := findPackCellNear(cells, enc, near); i != wantI || found != wantFound {
					t.Fatalf("%d cells, name %d, near %d: (%d, %v), want (%d, %v)", n, probe, near, i, found, wantI, wantFound)
				}
			}
		}
	}
}
