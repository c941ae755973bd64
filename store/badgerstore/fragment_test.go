package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// writeFragmentOps writes puts and cell deletions of one super column
// as a fragment, the way the engine's writer does (fragment_write.go) but
// whatever the pack cache holds and however many fragments the super
// column has: under the row's lock, without reading the pack, with the
// row's mark, and with the row marked for collection when a cell is
// mortal. It refuses what no writer of fragments writes as one: a super
// column too long to pack, a name whose key would be cut, a dissolved
// pack, or more than a pack's bounds.
func writeFragmentOps(tb testing.TB, e *Engine, t *store.Table, key []byte, ops []store.Op) bool {
	tb.Helper()
	rp, _ := e.rowPrefix(nil, t, key)
	unlock := e.rowLocks.lockRow(rp)
	defer unlock()
	txn := e.db.NewTransaction(true)
	defer txn.Discard()
	w := e.newWriter(txn)
	defer e.releaseWriter(w)
	w.rp = append(w.rp[:0], rp...)
	w.stripe = e.rowLocks.stripe(rp)
	w.markSeen, w.markLikely = false, false

	pk := superPackKey(&w.slab, rp, t, ops[0].Super)
	if len(pk)+packNameRoom > truncatedLen {
		return false
	}
	// The oracle of this test: a writer of fragments knows without a read.
	item, err := txn.Get(pk)
	switch {
	case err == nil:
		dissolved := false
		if err := item.Value(func(v []byte) error { dissolved = len(v) > 1 && v[1]&packDissolved != 0; return nil }); err != nil {
			tb.Fatal(err)
		}
		if dissolved {
			return false
		}
	case !errors.Is(err, badger.ErrKeyNotFound):
		tb.Fatal(err)
	}
	var cells []packCell
	mortal := false
	for _, op := range ops {
		if op.Kind != store.OpPut && op.Kind != store.OpDeleteCell || !bytes.Equal(op.Super, ops[0].Super) {
			tb.Fatalf("a fragment of %q cannot hold %+v", ops[0].Super, op)
		}
		rec := record{timestamp: op.Timestamp, value: op.Value}
		if op.Kind == store.OpDeleteCell {
			rec = record{flags: flagTombstone, timestamp: op.Timestamp, deletedAt: w.now}
		}
		w.prepareCell(t, op.Super, op.Name, &rec, op.TTL, false)
		enc := t.SubComparator.AppendKey(nil, op.Name)
		if !packable(pk, enc) {
			return false
		}
		if err := e.noteTimestamp(w.stripe, rec.timestamp); err != nil {
			tb.Fatal(err)
		}
		mortal = mortal || localDeletionTime(&rec) != ^uint32(0)
		if cells, err = reconcileCells(nil, cells, []packCell{{enc: enc, rec: appendRecord(nil, &rec)}}, w.now); err != nil {
			tb.Fatal(err)
		}
	}
	if len(cells) > packMaxCells || packSize(cells) > packMaxBytes {
		return false
	}
	val := appendFragment(nil, cells)
	if compressedTable(t) {
		val = compressPack(nil, val)
	}
	seq, err := e.nextFragmentSeq()
	if err != nil {
		tb.Fatal(err)
	}
	if err := txn.Set(fragmentKey(nil, pk, seq), val); err != nil {
		tb.Fatal(err)
	}
	if err := w.markRow(rp, t); err != nil {
		tb.Fatal(err)
	}
	if mortal {
		if err := w.markForGC(rp); err != nil {
			tb.Fatal(err)
		}
	}
	if err := e.commit(txn); err != nil {
		tb.Fatal(err)
	}
	e.packs.invalidate(len(rp), pk)
	return true
}

// fragmentEntries counts a family's fragments.
func fragmentEntries(tb testing.TB, e *Engine, t *store.Table) int {
	tb.Helper()
	n := 0
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: appendTablePrefix(nil, dataIDOf(t))})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if err := it.Item().Value(func(v []byte) error {
				if isFragment(v) {
					n++
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// openFragmentLayout opens an engine on dir whose new Super families may
// have fragments or not.
func openFragmentLayout(t testing.TB, dir string, clock *testClock, fragments bool) *Engine {
	t.Helper()
	e := openLayout(t, dir, false, clock)
	e.unfragmentedSupers = !fragments
	return e
}

// TestFragmentsReadAsTheirPacks writes the same random mutations (puts,
// cell, super column, row and range deletions, TTLs, equal timestamps)
// to a store whose super columns may have fragments, writing many of
// them as fragments, and to a packed store without, and compares every
// kind of read: slices of super columns and of subcolumns both ways,
// with bounds, counts and ranges, named reads, counts, and then again
// after a restart and after collection. Writes of the usual kind into a
// super column with fragments fold them.
func TestFragmentsReadAsTheirPacks(t *testing.T) {
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			testFragmentsReadAsTheirPacks(t, seed)
		})
	}
}

func testFragmentsReadAsTheirPacks(t *testing.T, seed int64) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dirs := [2]string{t.TempDir(), t.TempDir()}
	var engines [2]*Engine
	var tables [2][]*store.Table
	grace := int32(3600)
	defs := []store.TableDef{
		{Name: "Bytes", Comparator: "UTF8Type", Super: true, SubComparator: "BytesType", GCGraceSeconds: &grace},
		{Name: "Long", Comparator: "LongType", Super: true, SubComparator: "LongType", GCGraceSeconds: &grace},
		// Names that compare equal in other bytes keep the first ones.
		{Name: "Int", Comparator: "UTF8Type", Super: true, SubComparator: "IntegerType", GCGraceSeconds: &grace},
	}
	open := func() {
		engines[0] = openFragmentLayout(t, dirs[0], clock, true)
		engines[1] = openFragmentLayout(t, dirs[1], clock, false)
		for i := range engines {
			tables[i] = tables[i][:0]
			for _, def := range defs {
				tb, ok := engines[i].Catalog().Table("ks", def.Name)
				if !ok {
					tb = enginetest.CreateTable(t, engines[i], def)
				}
				tables[i] = append(tables[i], tb)
			}
		}
		for i := range tables {
			for _, tb := range tables[i] {
				if fragmentedTable(tb) != (i == 0) {
					t.Fatalf("engine %d: family %s may have fragments: %v", i, tb.Def.Name, fragmentedTable(tb))
				}
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
			return long(rng.Intn(3) - 1)
		}
		return []byte(fmt.Sprint("sc", rng.Intn(5)))
	}
	subName := func(fam int) []byte {
		n := rng.Intn(40)
		switch fam {
		case 1:
			if rng.Intn(20) == 0 {
				n += 40 // packs that grow past their bounds
			}
			return long(n)
		case 2:
			// 7 and 0x0007 are one name.
			if rng.Intn(2) == 0 {
				return []byte{0, 0, byte(n)}
			}
			return []byte{byte(n)}
		}
		if rng.Intn(200) == 0 {
			// A name whose key must be cut: its pack dissolves.
			return append(bytes.Repeat([]byte{'x'}, 64000), byte(n))
		}
		return []byte(fmt.Sprintf("c%02d", n))
	}
	unique := int64(1000)
	ts := func() int64 {
		if rng.Intn(4) == 0 {
			return clock.Now().UnixMicro() // above every stored timestamp
		}
		return int64(1 + rng.Intn(60))
	}
	rows := []string{"r0", "r1", "r2"}
	written, folded, sawFragments := 0, 0, false

	for step := 0; step < 500; step++ {
		fam := rng.Intn(len(defs))
		key := []byte(rows[rng.Intn(len(rows))])
		if len(rows) < 10 && rng.Intn(12) == 0 {
			rows = append(rows, fmt.Sprint("r", len(rows)))
			key = []byte(rows[len(rows)-1])
		}
		var ops []store.Op
		cellsOnly := rng.Intn(3) > 0
		sc := superName(fam)
		for n := 1 + rng.Intn(10); n > 0; n-- {
			op := store.Op{Timestamp: ts(), HasTimestamp: true}
			r := rng.Intn(100)
			if cellsOnly {
				r %= 80
			}
			switch {
			case r < 60:
				op.Kind, op.Super, op.Name = store.OpPut, sc, subName(fam)
				op.Value = []byte(fmt.Sprint(rng.Intn(4)))
				if rng.Intn(6) == 0 {
					// Unique timestamps: which of two cells with equal
					// ones wins may turn on whether one has expired.
					unique++
					op.TTL, op.Timestamp = int32(1+rng.Intn(4)), unique
				}
			case r < 80:
				op.Kind, op.Super, op.Name = store.OpDeleteCell, sc, subName(fam)
			case r < 88:
				op.Kind, op.Super = store.OpDeleteSuper, superName(fam)
			case r < 90:
				op.Kind = store.OpDeleteRow
			default:
				op.Kind = store.OpDeleteRange
				a, b := superName(fam), superName(fam)
				if bytes.Compare(a, b) > 0 && (fam != 1 || int64(binary.BigEndian.Uint64(a)) > int64(binary.BigEndian.Uint64(b))) {
					a, b = b, a
				}
				op.Start, op.Finish = a, b
			}
			if !cellsOnly && rng.Intn(2) == 0 {
				sc = superName(fam)
			}
			ops = append(ops, op)
		}
		m := store.RowMutation{Table: tables[1][fam], Key: key, Ops: ops}
		enginetest.Apply(t, engines[1], m)
		before := fragmentEntries(t, engines[0], tables[0][fam])
		if cellsOnly && rng.Intn(4) > 0 && writeFragmentOps(t, engines[0], tables[0][fam], key, ops) {
			written++
		} else {
			m.Table = tables[0][fam]
			enginetest.Apply(t, engines[0], m)
			if after := fragmentEntries(t, engines[0], tables[0][fam]); after < before {
				folded += before - after
			}
		}
		if rng.Intn(10) == 0 {
			clock.Advance(time.Duration(1+rng.Intn(4)) * time.Second)
		}
		if step == 250 {
			for _, e := range engines {
				e.Close()
			}
			open()
		}
		if step%25 == 24 {
			for fam := range defs {
				sawFragments = sawFragments || fragmentEntries(t, engines[0], tables[0][fam]) > 0
				for _, row := range rows {
					compareLayoutReads(t, engines, tables, [2]string{"fragments", "packs"}, fam, row, rng, superName, subName, step)
				}
				compareScans(t, engines, tables, fam, step, superName(fam), subName(fam))
			}
		}
	}
	left := 0
	for fam := range defs {
		left += fragmentEntries(t, engines[0], tables[0][fam])
	}
	clock.Advance(time.Duration(grace+60) * time.Second)
	for _, e := range engines {
		if _, err := e.CollectGarbage(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	collected := left
	for fam := range defs {
		collected -= fragmentEntries(t, engines[0], tables[0][fam])
		for _, row := range rows {
			compareLayoutReads(t, engines, tables, [2]string{"fragments", "packs"}, fam, row, rng, superName, subName, -1)
		}
	}
	byWriter := engines[0].fragmentsWritten.Load()
	t.Logf("%d fragments written by the test and %d by the writer (since the restart), %d folded by writes, %d left of which collection folded %d",
		written, byWriter, folded, left, collected)
	if written == 0 || byWriter == 0 || folded == 0 || !sawFragments || collected == 0 {
		t.Fatal("the test misses a case: it needs fragments written by both, read, folded by a write and folded by collection")
	}
}

// TestWritesFoldAfterEnoughFragments: writes into a stored super column
// whose pack is not cached write fragments, reading nothing, until it has
// foldAfter of them; the next write reads them with the pack, merges
// them in the order they were written and deletes them.
func TestWritesFoldAfterEnoughFragments(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openFragmentLayout(t, t.TempDir(), clock, true)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	key := []byte("k")
	apply := func(ops ...store.Op) {
		t.Helper()
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: key, Ops: ops})
		// As if the pack had left the cache.
		rp, _ := e.rowPrefix(nil, tb, key)
		e.packs.invalidate(len(rp), superPackKey(&slab{}, rp, tb, []byte("s")))
	}
	apply(enginetest.PutSuper("s", "a", "pack", 5), enginetest.PutSuper("s", "b", "pack", 5))
	writes := [][]store.Op{
		{enginetest.PutSuper("s", "b", "first", 6), enginetest.PutSuper("s", "c", "first", 6)},
		{enginetest.PutSuper("s", "c", "older", 2), {Kind: store.OpDeleteCell, Super: []byte("s"), Name: []byte("a"), Timestamp: 7}},
	}
	for i := 2; i < foldAfter; i++ {
		writes = append(writes, []store.Op{enginetest.PutSuper("s", fmt.Sprint("n", i), "v", int64(i))})
	}
	for i, ops := range writes {
		apply(ops...)
		if n := fragmentEntries(t, e, tb); n != i+1 {
			t.Fatalf("after %d writes, %d fragments; want %d", i+1, n, i+1)
		}
	}
	want := "s{b=first@6 c=first@6 n2=v@2 n3=v@3 n4=v@4 n5=v@5 n6=v@6 n7=v@7}"
	check := func(when string) {
		t.Helper()
		res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Count: all})
		if got := enginetest.SupersString(res.Supers); got != want {
			t.Fatalf("%s: %s, want %s", when, got, want)
		}
	}
	check("with the fragments")
	apply(enginetest.PutSuper("s", "d", "write", 8))
	want = "s{b=first@6 c=first@6 d=write@8 n2=v@2 n3=v@3 n4=v@4 n5=v@5 n6=v@6 n7=v@7}"
	check("after the write that folds")
	if n := fragmentEntries(t, e, tb); n != 0 {
		t.Fatalf("%d fragments after the write that folds, want 0", n)
	}
	if packs, dissolved, cells := packEntries(t, e, tb); packs != 1 || dissolved != 0 || cells != 0 {
		t.Fatalf("%d packs (%d dissolved), %d other entries; want one pack", packs, dissolved, cells)
	}
	apply(enginetest.PutSuper("s", "e", "again", 9))
	if n := fragmentEntries(t, e, tb); n != 1 {
		t.Fatalf("%d fragments after the write after the fold, want 1", n)
	}
}

// TestFragmentBesideDissolvedPackIsRefused: a super column whose pack is
// dissolved never has fragments; a read that finds one says the data is
// corrupt rather than answer twice for a subcolumn.
func TestFragmentBesideDissolvedPackIsRefused(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openFragmentLayout(t, t.TempDir(), clock, true)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	var ops []store.Op
	for n := 0; n <= packMaxCells; n++ {
		ops = append(ops, enginetest.PutSuper("s", fmt.Sprintf("c%03d", n), "v", 1))
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops})
	rp, _ := e.rowPrefix(nil, tb, []byte("k"))
	pk := superPackKey(&slab{}, rp, tb, []byte("s"))
	rec := appendRecord(nil, &record{timestamp: 2, value: []byte("w")})
	err := e.update(func(txn *badger.Txn) error {
		enc := tb.SubComparator.AppendKey(nil, []byte("c000"))
		return txn.Set(fragmentKey(nil, pk, 1), appendFragment(nil, []packCell{{enc: enc, rec: rec}}))
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []store.SliceQuery{{Count: all}, {Count: all, Reversed: true}, {Super: []byte("s"), Count: all}, {Super: []byte("s"), Count: all, Reversed: true}} {
		var res store.SliceResult
		err := e.Slice(context.Background(), tb, []byte("k"), &q, &res)
		if !errors.Is(err, errBadPack) {
			t.Fatalf("query %+v: %v, want a corrupt pack", q, err)
		}
	}
}

func FuzzReconcileFragments(f *testing.F) {
	rec := func(ts int64, v string) []byte { return appendRecord(nil, &record{timestamp: ts, value: []byte(v)}) }
	f.Add(appendFragment(nil, []packCell{{enc: []byte("a"), rec: rec(3, "x")}, {enc: []byte("b"), rec: rec(1, "y")}}),
		appendFragment(nil, []packCell{{enc: []byte("a"), rec: rec(3, "z")}}))
	f.Add(compressPack(nil, appendFragment(nil, []packCell{{enc: []byte("a"), rec: rec(3, string(bytes.Repeat([]byte("v"), 300)))}})), []byte{packMarker, packFragment, 0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var m fragmentMerger
		cells, err := m.merge(nil, [][]byte{a, b}, 100)
		if err != nil {
			return
		}
		// One cell per name, in order, each a cell of a or b.
		for i := 1; i < len(cells); i++ {
			if bytes.Compare(cells[i-1].enc, cells[i].enc) >= 0 {
				t.Fatalf("cells %d and %d out of order", i-1, i)
			}
		}
		// Merging is idempotent: the merged cells merged again change
		// nothing.
		again, err := m.merge(nil, [][]byte{appendFragment(nil, cells), a}, 100)
		if err != nil || len(again) != len(cells) {
			t.Fatalf("merged again: %d cells, %v; want %d", len(again), err, len(cells))
		}
	})
}

// TestCollectionKeepsAPackBesideFragments: a tombstone of a pack that may
// shadow a cell of a fragment is not purged while the fragment is there:
// a walk of collection that meets a pack with fragments (written after
// the fold that starts collection) leaves it, and the next collection
// folds the fragment first.
func TestCollectionKeepsAPackBesideFragments(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openFragmentLayout(t, t.TempDir(), clock, true)
	defer e.Close()
	grace := int32(10)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	key := []byte("k")
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: key, Ops: []store.Op{
		enginetest.PutSuper("s", "a", "v", 5), enginetest.PutSuper("s", "b", "v", 5),
	}})
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: key, Ops: []store.Op{
		{Kind: store.OpDeleteCell, Super: []byte("s"), Name: []byte("a"), Timestamp: 10},
	}})
	if !writeFragmentOps(t, e, tb, key, []store.Op{enginetest.PutSuper("s", "a", "late", 3)}) {
		t.Fatal("the fragment was refused")
	}
	clock.Advance(time.Duration(grace+1) * time.Second)
	want := "s{b=v@5}"
	check := func(when string) {
		t.Helper()
		res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Count: all})
		if got := enginetest.SupersString(res.Supers); got != want {
			t.Fatalf("%s: %s, want %s", when, got, want)
		}
	}
	check("before collection")

	// A walk without the fold, as after a fragment written since it.
	rp, _ := e.rowPrefix(nil, tb, key)
	now := e.nowSeconds()
	w := &gcWalk{r: &reader{t: tb, now: now, rp: rp}, rowDel: noDeletion, superDel: noDeletion, packs: e.packs,
		old: func(deletedAt uint32) bool { return int64(deletedAt)+int64(grace) <= int64(now) }}
	start := append(append([]byte{}, rp...), kindCells)
	err := e.update(func(txn *badger.Txn) error {
		_, err := w.batch(txn, start, prefixEnd(start))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !w.pending || w.deleted != 0 {
		t.Fatalf("the walk deleted %d cells and left the row pending: %v; want none deleted, pending", w.deleted, w.pending)
	}
	check("after a walk that met the fragment")

	if _, err := e.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("after collection")
	if n := fragmentEntries(t, e, tb); n != 0 {
		t.Fatalf("%d fragments after collection, want 0", n)
	}
	cells := 0
	rec := record{}
	err = e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(superPackKey(&slab{}, rp, tb, []byte("s")))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			got, _, err := decodePack(v, nil, nil)
			cells = len(got)
			for _, c := range got {
				if err := decodeRecord(c.rec, &rec); err != nil {
					return err
				}
				if rec.tombstone() {
					return fmt.Errorf("the tombstone of %q is still there", c.enc)
				}
			}
			return err
		})
	})
	if err != nil || cells != 1 {
		t.Fatalf("the pack holds %d cells (%v), want b alone", cells, err)
	}
}

// compareScans compares range scans of family fam, by super columns and
// by the subcolumns of super column sc from sub on, from the two engines.
func compareScans(t *testing.T, engines [2]*Engine, tables [2][]*store.Table, fam, step int, sc, sub []byte) {
	t.Helper()
	for _, q := range []store.ScanQuery{
		{Slice: store.SliceQuery{Count: all}},
		{Slice: store.SliceQuery{Count: 2, Reversed: true}},
		{Slice: store.SliceQuery{Super: sc, Count: all}},
		{Slice: store.SliceQuery{Super: sc, Count: 3, Start: sub}},
		{Slice: store.SliceQuery{Super: sc, Count: 3, Start: sub, Reversed: true}},
	} {
		var got [2]string
		for i, e := range engines {
			var res store.SliceResult
			var b bytes.Buffer
			err := e.Scan(context.Background(), tables[i][fam], &q, &res, func(key []byte) (bool, error) {
				fmt.Fprintf(&b, "%s: %s|%s\n", key, enginetest.CellsString(res.Cells), enginetest.SupersString(res.Supers))
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got[i] = b.String()
		}
		if got[0] != got[1] {
			t.Fatalf("step %d, family %d, scan %+v:\nfragments %s\npacks     %s", step, fam, q, abbreviate(got[0]), abbreviate(got[1]))
		}
	}
}
