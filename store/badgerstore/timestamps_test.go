package badgerstore

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestWritesAboveEveryTimestamp: writes above every timestamp a cell ever
// had skip their read, and reconciliation stays what it is when they do
// not: an older write loses, a tie goes to the greater value, in one
// transaction, across transactions and across a reopen of the store.
func TestWritesAboveEveryTimestamp(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	cf := func() *store.Table { tb, _ := f.e.Catalog().Table("ks", "cf"); return tb }
	get := func(key string) string {
		t.Helper()
		return enginetest.CellsString(f.slice(cf(), key, store.SliceQuery{Count: all}).Cells)
	}
	put := func(key string, ops ...store.Op) {
		t.Helper()
		f.apply(store.RowMutation{Table: cf(), Key: []byte(key), Ops: ops})
	}

	put("k", enginetest.Put("c", "new", 100))
	put("k", enginetest.Put("c", "old", 50))
	put("k", enginetest.Put("d", "b", 100), enginetest.Put("d", "a", 100)) // a tie in one row mutation
	put("k", enginetest.Put("e", "x", 300), enginetest.Put("e", "y", 200))
	want := enginetest.CellsString([]store.Cell{
		{Name: []byte("c"), Value: []byte("new"), Timestamp: 100},
		{Name: []byte("d"), Value: []byte("b"), Timestamp: 100},
		{Name: []byte("e"), Value: []byte("x"), Timestamp: 300},
	})
	if got := get("k"); got != want {
		t.Fatalf("before the reopen: %s, want %s", got, want)
	}
	// Cells of one timestamp in one row mutation, all above every
	// timestamp of the store.
	put("k2", enginetest.Put("x", "1", 400), enginetest.Put("y", "1", 400), enginetest.Put("z", "1", 400))
	// c@100 and k2's three cells were above every timestamp; c@50 was
	// under c@100; d and e were each written twice in one row mutation,
	// where the second write reconciles with the first.
	if unread := f.e.unreadWrites.Load(); unread != 4 {
		t.Errorf("%d writes skipped their read, want 4 (c@100, x, y, z)", unread)
	}

	// After a reopen, the persisted bound is the floor: writes at or
	// under what is stored read it.
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	f = openTestEngine(t, dir, "Murmur3Partitioner")
	if floor := f.e.blindFloor(); floor < 400 || floor > 400+boundMargin {
		t.Fatalf("floor after the reopen %d, want between 400 and 400+%d", floor, boundMargin)
	}
	put("k", enginetest.Put("c", "older", 99), enginetest.Put("e", "z", 300))
	want = enginetest.CellsString([]store.Cell{
		{Name: []byte("c"), Value: []byte("new"), Timestamp: 100},
		{Name: []byte("d"), Value: []byte("b"), Timestamp: 100},
		{Name: []byte("e"), Value: []byte("z"), Timestamp: 300},
	})
	if got := get("k"); got != want {
		t.Fatalf("after the reopen: %s, want %s", got, want)
	}
	if n := f.e.unreadWrites.Load(); n != 0 {
		t.Errorf("%d writes under the floor skipped their read", n)
	}
	// Far above the floor: no read; the bound follows.
	far := int64(2_000_000_000_000_000)
	put("k", enginetest.Put("c", "far", far))
	if n := f.e.unreadWrites.Load(); n != 1 {
		t.Errorf("%d writes skipped their read, want 1", n)
	}
	if b := f.e.tsBound.Load(); b != far+boundMargin {
		t.Errorf("bound %d, want %d", b, far+boundMargin)
	}
}

// TestTimestampBoundOfAnOlderStore: a store with cells and no persisted
// bound (written before there was one) opens with every write reading,
// finds its greatest timestamp in the background, and persists it.
func TestTimestampBoundOfAnOlderStore(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	tb, _ := f.e.Catalog().Table("ks", "cf")
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{enginetest.Put("c", "v", 7_000)}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("l"), Ops: []store.Op{enginetest.Put("c", "v", 5_000)}})
	if err := f.e.db.Update(func(txn *badger.Txn) error { return txn.Delete(timestampBoundKey) }); err != nil {
		t.Fatal(err)
	}
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil

	f = openTestEngine(t, dir, "Murmur3Partitioner")
	deadline := time.Now().Add(time.Minute)
	for f.e.blindFloor() == math.MaxInt64 {
		if time.Now().After(deadline) {
			t.Fatal("the store's greatest timestamp was not found within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if floor := f.e.blindFloor(); floor != 7_000 {
		t.Fatalf("floor %d, want the greatest stored timestamp 7000", floor)
	}
	var stored int64
	err := f.e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(timestampBoundKey)
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err == nil && len(v) == 8 {
			stored = int64(binary.BigEndian.Uint64(v))
		}
		return err
	})
	if err != nil || stored != 7_000+boundMargin {
		t.Fatalf("persisted bound %d (%v), want %d", stored, err, 7_000+boundMargin)
	}
	tb, _ = f.e.Catalog().Table("ks", "cf")
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{enginetest.Put("c", "older", 6_000)}})
	if got := enginetest.CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != enginetest.CellsString([]store.Cell{{Name: []byte("c"), Value: []byte("v"), Timestamp: 7_000}}) {
		t.Fatalf("an older write after the scan: %s", got)
	}
}

// TestCounterUnderADeletionAcrossReopen: a counter update reads the
// row's deletions unless the counter is above every deletion; after a
// reopen the floor stands for the deletions stored before it.
func TestCounterUnderADeletionAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	counters := func() *store.Table { tb, _ := f.e.Catalog().Table("ks", "c"); return tb }
	add := func(d int64) {
		f.apply(store.RowMutation{Table: counters(), Key: []byte("k"), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: d}}})
	}
	add(5)
	f.apply(store.RowMutation{Table: counters(), Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: f.clock.Now().UnixMicro()}}})
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	f = openTestEngine(t, dir, "Murmur3Partitioner")
	f.clock.Advance(time.Millisecond)
	add(2)
	if got := enginetestCounters(f.slice(counters(), "k", store.SliceQuery{Count: all}).Cells); got != "hits=2" {
		t.Fatalf("a counter deleted before the reopen, then added to: %s, want hits=2", got)
	}
	add(3)
	if got := enginetestCounters(f.slice(counters(), "k", store.SliceQuery{Count: all}).Cells); got != "hits=5" {
		t.Fatalf("then added to again: %s, want hits=5", got)
	}
}

// enginetestCounters shows counter cells as name=value.
func enginetestCounters(cells []store.Cell) string {
	var out []string
	for _, c := range cells {
		out = append(out, fmt.Sprintf("%s=%d", c.Name, c.CounterValue))
	}
	return strings.Join(out, " ")
}
