package badgerstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestSmallRowsAreOneEntry: a row of a Super family takes one entry while
// it is small, whatever its super columns and deletions; a write past
// the row pack's bounds leaves it in packs of its super columns, for
// good, and every read answers as before.
func TestSmallRowsAreOneEntry(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openRowPackLayout(t, t.TempDir(), clock)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type"})
	enginetest.Apply(t, e, superBatch(tb, "k", "1", 10, "x", "y"))
	enginetest.Apply(t, e, superBatch(tb, "k", "2", 20, "y", "z"))
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteSuper, Super: []byte("b"), Timestamp: 25}}})
	if whole, dissolved := rowPackEntries(t, e, tb); whole != 1 || dissolved != 0 {
		t.Fatalf("%d whole row packs, %d dissolved; want one whole", whole, dissolved)
	}
	if packs, cells := dataEntries(t, e, tb); packs != 1 || cells != 0 {
		t.Fatalf("%d packs and %d other entries, want the row pack alone", packs, cells)
	}
	want := "a{x=1@10 y=2@20 z=2@20} c{x=1@10 y=2@20 z=2@20} d{x=1@10 y=2@20 z=2@20}"
	check := func(when string) {
		t.Helper()
		res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Count: all})
		if got := enginetest.SupersString(res.Supers); got != want {
			t.Fatalf("%s: %s, want %s", when, got, want)
		}
		res = enginetest.Slice(t, e, tb, "k", store.SliceQuery{Super: []byte("c"), Names: [][]byte{[]byte("z"), []byte("x")}})
		if got := enginetest.CellsString(res.Cells); got != "x=1@10 z=2@20" {
			t.Fatalf("%s: named subcolumns of c: %s", when, got)
		}
	}
	check("packed whole")

	var ops []store.Op
	for n := 0; n < rowPackMaxCells; n++ {
		ops = append(ops, enginetest.PutSuper("e", fmt.Sprintf("n%03d", n), "3", 30))
	}
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops})
	if whole, dissolved := rowPackEntries(t, e, tb); whole != 0 || dissolved != 1 {
		t.Fatalf("past the bounds: %d whole row packs, %d dissolved; want one dissolved", whole, dissolved)
	}
	want += " e{"
	for n := 0; n < rowPackMaxCells; n++ {
		if n > 0 {
			want += " "
		}
		want += fmt.Sprintf("n%03d=3@30", n)
	}
	want += "}"
	check("dissolved")
	enginetest.Apply(t, e, superBatch(tb, "k", "4", 40, "w"))
	want = "a{w=4@40 x=1@10 y=2@20 z=2@20} b{w=4@40} c{w=4@40 x=1@10 y=2@20 z=2@20} d{w=4@40 x=1@10 y=2@20 z=2@20}" + want[len("a{x=1@10 y=2@20 z=2@20} c{x=1@10 y=2@20 z=2@20} d{x=1@10 y=2@20 z=2@20}"):]
	check("written after")
	if whole, dissolved := rowPackEntries(t, e, tb); whole != 0 || dissolved != 1 {
		t.Fatalf("written after: %d whole row packs, %d dissolved; want one dissolved", whole, dissolved)
	}
}

// TestRowPackKeepsOldSuperDeletions: a write into a row pack purges the
// subcolumns dead for longer than gc_grace_seconds, but not an old
// deletion of a super column, which still shadows what it deleted until
// collection purges both.
func TestRowPackKeepsOldSuperDeletions(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openRowPackLayout(t, t.TempDir(), clock)
	defer e.Close()
	grace := int32(10)
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "S", Comparator: "UTF8Type", Super: true, SubComparator: "UTF8Type", GCGraceSeconds: &grace})
	key := []byte("k")
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: key, Ops: []store.Op{
		enginetest.PutSuper("a", "x", "1", 1), enginetest.PutSuper("b", "x", "1", 1),
		{Kind: store.OpDeleteSuper, Super: []byte("a"), Timestamp: 5},
		{Kind: store.OpDeleteCell, Super: []byte("b"), Name: []byte("gone"), Timestamp: 5},
	}})
	clock.Advance(time.Duration(grace+1) * time.Second)
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: key, Ops: []store.Op{enginetest.PutSuper("c", "x", "1", 6)}})
	check := func(when string) {
		t.Helper()
		res := enginetest.Slice(t, e, tb, "k", store.SliceQuery{Count: all})
		if got, want := enginetest.SupersString(res.Supers), "b{x=1@1} c{x=1@6}"; got != want {
			t.Fatalf("%s: %s, want %s", when, got, want)
		}
	}
	check("after a write past gc_grace_seconds")
	stats, err := e.CollectGarbage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Cells != 1 || stats.Tombstones != 1 {
		t.Fatalf("collected %+v, want the subcolumn of a and its deletion", stats)
	}
	check("after collection")
	if whole, _ := rowPackEntries(t, e, tb); whole != 1 {
		t.Fatalf("%d whole row packs after collection, want 1", whole)
	}
}
