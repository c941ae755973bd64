package badgerstore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// storedPacks returns the stored value of every pack of family tb, by
// super column name.
func storedPacks(t *testing.T, e *Engine, tb *store.Table, key string) map[string][]byte {
	t.Helper()
	rp, _ := e.rowPrefix(nil, tb, []byte(key))
	packs := map[string][]byte{}
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: rp})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			val, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			if !isPack(val) {
				continue
			}
			var s slab
			// The pack key is the super column's header key and 0x01.
			for _, name := range []string{"a", "b", "c", "d"} {
				if bytes.Equal(superPackKey(&s, rp, tb, []byte(name)), it.Item().Key()) {
					packs[name] = val
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return packs
}

// rewriteLayout changes what the store records of its layout, as a store
// written by an older engine would have it.
func rewriteLayout(t *testing.T, e *Engine, keyspace string, edit func(d *keyspaceDoc, meta *metaDoc)) {
	t.Helper()
	err := e.db.Update(func(txn *badger.Txn) error {
		var d keyspaceDoc
		if err := readJSON(txn, keyspaceKey(keyspace), &d); err != nil {
			return err
		}
		var meta metaDoc
		if err := readJSON(txn, metaKey, &meta); err != nil {
			return err
		}
		edit(&d, &meta)
		for k, v := range map[string]any{string(keyspaceKey(keyspace)): &d, string(metaKey): &meta} {
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			if err := txn.Set([]byte(k), b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompressedPacks: a pack that compresses well is stored compressed,
// one that does not (random values, or too small) is stored as it is,
// and every path that reads or rewrites packs reads both: slices in
// either direction, a write into the super column, a deletion, garbage
// collection and a reopen.
func TestCompressedPacks(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, false, clock)
	defer func() { e.Close() }()
	grace := int32(60)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	if !compressedTable(tb) {
		t.Fatal("a new packed family does not compress its packs")
	}

	rng := rand.New(rand.NewPCG(3, 4))
	random := func() string {
		b := make([]byte, 100)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	want := map[string]map[string]string{"a": {}, "b": {}, "c": {}}
	m := store.RowMutation{Table: tb, Key: []byte("k")}
	for i := range 10 {
		name := fmt.Sprintf("n%d", i)
		want["a"][name] = strings.Repeat("abc", 40) // compresses
		want["b"][name] = random()                  // does not
		m.Ops = append(m.Ops, enginetest.PutSuper("a", name, want["a"][name], 10), enginetest.PutSuper("b", name, want["b"][name], 10))
	}
	want["c"]["x"] = "small" // too small to try
	m.Ops = append(m.Ops, enginetest.PutSuper("c", "x", "small", 10))
	enginetest.Apply(t, e, m)

	check := func(step string) {
		t.Helper()
		for sc, cells := range want {
			for _, reversed := range []bool{false, true} {
				res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte(sc), Count: all, Reversed: reversed})
				if len(res.Cells) != len(cells) {
					t.Fatalf("%s: super column %s (reversed %v): %d subcolumns, want %d", step, sc, reversed, len(res.Cells), len(cells))
				}
				for _, c := range res.Cells {
					if cells[string(c.Name)] != string(c.Value) {
						t.Fatalf("%s: super column %s (reversed %v): subcolumn %s reads %q", step, sc, reversed, c.Name, abbreviate(string(c.Value)))
					}
				}
			}
		}
		packs := storedPacks(t, e, tb, "k")
		for sc, compressed := range map[string]bool{"a": true, "b": false, "c": false} {
			val, ok := packs[sc]
			if !ok {
				t.Fatalf("%s: super column %s has no pack", step, sc)
			}
			if got := val[1]&packCompressed != 0; got != compressed {
				t.Fatalf("%s: super column %s: pack compressed %v, want %v", step, sc, got, compressed)
			}
		}
		if n := len(packs["a"]); n > 200 {
			t.Fatalf("%s: the compressed pack of 10 subcolumns of 120 bytes takes %d bytes", step, n)
		}
	}
	check("written")

	// A write into a compressed pack reads it, and a deletion too.
	want["a"]["n3"] = strings.Repeat("xyz", 40)
	delete(want["a"], "n5")
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		enginetest.PutSuper("a", "n3", want["a"]["n3"], 20),
		{Kind: store.OpDeleteCell, Super: []byte("a"), Name: []byte("n5"), Timestamp: 20},
	}})
	check("rewritten")

	// Collection rewrites the pack without the tombstone.
	clock.Advance(2 * time.Duration(grace) * time.Second)
	if _, err := e.CollectGarbage(context.Background()); err != nil {
		t.Fatal(err)
	}
	body := []byte{}
	cells, _, err := decodePack(storedPacks(t, e, tb, "k")["a"], nil, &body)
	if err != nil || len(cells) != 9 {
		t.Fatalf("after collection the pack holds %d cells (%v), want 9 without the tombstone", len(cells), err)
	}
	check("collected")

	e.Close()
	e = openLayout(t, dir, false, clock)
	tb, _ = e.Catalog().Table("ks", "S")
	check("reopened")
}

// TestFamilyWithoutCompressionReadsCompressedPacks: a packed family
// stored before compression writes its packs as they are, and still
// reads packs compressed in it before (a store opened again by an engine
// of the older layout refuses it anyway: TestNewerLayoutIsRefused).
func TestFamilyWithoutCompressionReadsCompressedPacks(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayout(t, dir, false, clock)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	long := strings.Repeat("abc", 40)
	enginetest.Apply(t, e, superBatch(tb, "k", long, 10, "x", "y"))
	rewriteLayout(t, e, "ks", func(d *keyspaceDoc, meta *metaDoc) {
		d.Tables[0].CompressedPacks = false
		meta.Format = formatRowMarks
	})
	e.Close()

	e = openLayout(t, dir, false, clock)
	defer func() { e.Close() }()
	tb, _ = e.Catalog().Table("ks", "S")
	if !packedTable(tb) || compressedTable(tb) {
		t.Fatalf("the family of layout 2: packed %v, compressed %v; want packed, not compressed", packedTable(tb), compressedTable(tb))
	}
	if v := storedPacks(t, e, tb, "k")["a"]; v[1]&packCompressed == 0 {
		t.Fatal("the pack written before is not compressed: the test tests nothing")
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{enginetest.PutSuper("a", "z", long, 20)}})
	if v := storedPacks(t, e, tb, "k")["a"]; v[1]&packCompressed != 0 {
		t.Fatal("a family without compression wrote a compressed pack")
	}
	got := enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("a"), Count: all}).Cells)
	if want := fmt.Sprintf("x=%s@10 y=%s@10 z=%s@20", long, long, long); got != want {
		t.Fatalf("super column a reads %q, want %q", abbreviate(got), abbreviate(want))
	}
	got = enginetest.CellsString(enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("b"), Count: all}).Cells)
	if want := fmt.Sprintf("x=%s@10 y=%s@10", long, long); got != want {
		t.Fatalf("super column b reads %q, want %q", abbreviate(got), abbreviate(want))
	}
}

// TestCorruptCompressedPackIsRefused: a compressed pack whose length or
// contents are damaged is an error, and a claimed length past any pack is
// refused before anything is allocated for it.
func TestCorruptCompressedPackIsRefused(t *testing.T) {
	rec := appendRecord(nil, &record{timestamp: 7, value: bytes.Repeat([]byte("v"), 200)})
	val := compressPack(nil, appendPack(nil, []packCell{{enc: []byte("a"), rec: rec}, {enc: []byte("b"), rec: rec}}, false))
	if val[1]&packCompressed == 0 {
		t.Fatal("the pack was not compressed: the test tests nothing")
	}
	if _, _, err := decodePack(val, nil, nil); err != nil {
		t.Fatalf("the intact pack: %v", err)
	}
	// S2 starts with the decoded length as a varint: claim 1 GiB.
	huge := append([]byte{packMarker, packCompressed, 0x80, 0x80, 0x80, 0x80, 0x04}, val[4:]...)
	if n := packBodyLen(huge); n != 0 {
		t.Fatalf("packBodyLen of a pack claiming 1 GiB: %d", n)
	}
	if _, _, err := decodePack(huge, nil, nil); err == nil {
		t.Fatal("a pack claiming 1 GiB decoded")
	}
	for _, cut := range []int{3, len(val) / 2, len(val) - 1} {
		if _, _, err := decodePack(val[:cut], nil, nil); err == nil {
			t.Fatalf("a compressed pack cut at %d of %d bytes decoded", cut, len(val))
		}
	}
}
