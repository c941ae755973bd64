package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

func testPutAndSliceInComparatorOrder(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "LongType"})
	long := func(n int64) string {
		var b [8]byte
		for i := 7; i >= 0; i-- {
			b[i] = byte(n)
			n >>= 8
		}
		return string(b[:])
	}
	names := []int64{832416, 3, 976, 123, -5}
	var ops []store.Op
	for i, n := range names {
		ops = append(ops, Put(long(n), fmt.Sprint(n), int64(i+1)))
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("row"), Ops: ops})
	res := f.slice(tb, "row", store.SliceQuery{Count: all})
	var got []string
	for _, c := range res.Cells {
		got = append(got, string(c.Value))
	}
	if fmt.Sprint(got) != "[-5 3 123 976 832416]" {
		t.Fatalf("forward order: %v", got)
	}
	res = f.slice(tb, "row", store.SliceQuery{Count: 2, Reversed: true})
	if got := []string{string(res.Cells[0].Value), string(res.Cells[1].Value)}; fmt.Sprint(got) != "[832416 976]" || len(res.Cells) != 2 {
		t.Fatalf("reversed count 2: %v", got)
	}
	res = f.slice(tb, "row", store.SliceQuery{Start: []byte(long(3)), Finish: []byte(long(976)), Count: all})
	if len(res.Cells) != 3 {
		t.Fatalf("range 3..976: %s", CellsString(res.Cells))
	}
	if n := f.count(tb, "row", store.SliceQuery{Count: all}); n != 5 {
		t.Fatalf("count = %d", n)
	}
	if n := f.count(tb, "row", store.SliceQuery{Count: 4, Reversed: true}); n != 4 {
		t.Fatalf("count capped = %d", n)
	}
}

func testReconciliation(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	row := func(ops ...store.Op) { f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: ops}) }
	get := func() string {
		return CellsString(f.slice(tb, "k", store.SliceQuery{Names: [][]byte{[]byte("c")}}).Cells)
	}
	row(Put("c", "b", 10))
	row(Put("c", "old", 9)) // older timestamp loses
	if got := get(); got != "c=b@10" {
		t.Fatalf("older write won: %s", got)
	}
	row(Put("c", "a", 10)) // tie: greater value wins
	if got := get(); got != "c=b@10" {
		t.Fatalf("tie with smaller value won: %s", got)
	}
	row(Put("c", "z", 10))
	if got := get(); got != "c=z@10" {
		t.Fatalf("tie with greater value lost: %s", got)
	}
	row(store.Op{Kind: store.OpDeleteCell, Name: []byte("c"), Timestamp: 10})
	if got := get(); got != "" {
		t.Fatalf("tie with deletion: deletion must win, got %s", got)
	}
	row(Put("c", "zz", 10))
	if got := get(); got != "" {
		t.Fatalf("write at deletion's timestamp must stay deleted, got %s", got)
	}
	row(Put("c", "new", 11))
	if got := get(); got != "c=new@11" {
		t.Fatalf("newer write after deletion: %s", got)
	}
}

func testRowDeletionShadowsOlderWrites(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("a", "1", 5), Put("b", "2", 20)}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 10}}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "b=2@20" {
		t.Fatalf("after row delete: %s", got)
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("c", "late-but-old", 9)}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "b=2@20" {
		t.Fatalf("write older than the row deletion came back: %s", got)
	}
	// An older deletion does not move the row deletion back.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 1}, Put("d", "4", 8)}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "b=2@20" {
		t.Fatalf("after older row deletion: %s", got)
	}
	if n := f.count(tb, "k", store.SliceQuery{Count: all}); n != 1 {
		t.Fatalf("count = %d", n)
	}
}

// testTTLExpiryAndOriginalTTL: an expiring cell reads back with its TTL
// (the original one, or with Capabilities.OriginalTTL lacking, what is
// left of it) and its exact expiry until it expires, then never.
func testTTLExpiryAndOriginalTTL(t *testing.T, h *Harness) {
	needClock(t, h)
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	ttlPut := Put("t", "v", 1)
	ttlPut.TTL = 100
	written := f.clock.Now().Unix()
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{ttlPut, Put("p", "v", 1)}})
	f.advance(60 * time.Second)
	want := "p=v@1 t=v@1/ttl100"
	if !f.caps().OriginalTTL {
		want = "p=v@1 t=v@1/ttl40"
	}
	res := f.slice(tb, "k", store.SliceQuery{Count: all})
	if got := CellsString(res.Cells); got != want {
		t.Fatalf("before expiry: %s, want %s (original TTL %v)", got, want, f.caps().OriginalTTL)
	}
	if got := int64(res.Cells[1].ExpiresAt); got != written+100 {
		t.Fatalf("expires at %d, want %d", got, written+100)
	}
	f.advance(40 * time.Second)
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "p=v@1" {
		t.Fatalf("at expiry: %s", got)
	}
	// An expired cell still shadows an older write of the same name.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("t", "older", 0)}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "p=v@1" {
		t.Fatalf("expired cell did not shadow an older write: %s", got)
	}
}

func testSuperColumns(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		PutSuper("s2", "b", "2b", 1), PutSuper("s2", "a", "2a", 1),
		PutSuper("s1", "z", "1z", 1), PutSuper("s1", "y", "1y", 1),
		PutSuper("s3", "c", "3c", 1),
	}})
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Count: all}).Supers); got != "s1{y=1y@1 z=1z@1} s2{a=2a@1 b=2b@1} s3{c=3c@1}" {
		t.Fatalf("super level: %s", got)
	}
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Count: 2, Reversed: true}).Supers); got != "s3{c=3c@1} s2{b=2b@1 a=2a@1}" {
		t.Fatalf("super level reversed: %s", got)
	}
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Names: [][]byte{[]byte("s3"), []byte("s1"), []byte("nope")}}).Supers); got != "s1{y=1y@1 z=1z@1} s3{c=3c@1}" {
		t.Fatalf("super names: %s", got)
	}
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Super: []byte("s2"), Count: all, Reversed: true}).Cells); got != "b=2b@1 a=2a@1" {
		t.Fatalf("inside super reversed: %s", got)
	}
	if n := f.count(tb, "k", store.SliceQuery{Count: all}); n != 3 {
		t.Fatalf("super count = %d", n)
	}
	if n := f.count(tb, "k", store.SliceQuery{Super: []byte("s1"), Count: 1}); n != 1 {
		t.Fatalf("count inside super with a small count = %d", n)
	}
	// Delete a whole super column, then one subcolumn of another.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{
		{Kind: store.OpDeleteSuper, Super: []byte("s1"), Timestamp: 2},
		{Kind: store.OpDeleteCell, Super: []byte("s3"), Name: []byte("c"), Timestamp: 2},
	}})
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Count: all}).Supers); got != "s2{a=2a@1 b=2b@1}" {
		t.Fatalf("after deletions: %s", got)
	}
	if n := f.count(tb, "k", store.SliceQuery{Count: all}); n != 1 {
		t.Fatalf("count after deletions = %d", n)
	}
	// A write newer than the super column's deletion brings it back.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{PutSuper("s1", "n", "new", 3), PutSuper("s1", "o", "old", 2)}})
	if got := SupersString(f.slice(tb, "k", store.SliceQuery{Names: [][]byte{[]byte("s1")}}).Supers); got != "s1{n=new@3}" {
		t.Fatalf("after re-insert: %s", got)
	}
}

func testPersistenceAcrossReopen(t *testing.T, h *Harness) {
	if h.Reopen == nil {
		t.Skip("the harness cannot reopen a store (Harness.Reopen)")
	}
	f := open(t, h, "RandomPartitioner")
	tb := f.table(store.TableDef{Name: "cf", Comparator: "AsciiType"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("a", "1", 1)}})
	version := f.e.Catalog().Version
	f.e = h.Reopen(t, f.e)
	if f.e.Catalog().Version != version {
		t.Fatalf("schema version changed across restart: %s != %s", f.e.Catalog().Version, version)
	}
	tb2, ok := f.e.Catalog().Table("ks", "cf")
	if !ok {
		t.Fatal("table lost across restart")
	}
	if got := CellsString(f.slice(tb2, "k", store.SliceQuery{Count: all}).Cells); got != "a=1@1" {
		t.Fatalf("data after restart: %s", got)
	}
	if f.e.Partitioner().Name() != f.opts.Partitioner.Name() {
		t.Fatalf("partitioner after restart: %s", f.e.Partitioner().Name())
	}
}

func testTruncateAndDrop(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("a", "1", 1)}})
	ctx := context.Background()
	if err := f.e.Truncate(ctx, "ks", "cf"); err != nil {
		t.Fatal(err)
	}
	tb, _ = f.e.Catalog().Table("ks", "cf")
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "" {
		t.Fatalf("after truncate: %s", got)
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("b", "2", 1)}})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "b=2@1" {
		t.Fatalf("write after truncate: %s", got)
	}
	if err := f.e.DropTable(ctx, "ks", "cf"); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.e.Catalog().Table("ks", "cf"); ok {
		t.Fatal("dropped table still in catalog")
	}
	// Recreating the family starts empty.
	tb = f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	if got := CellsString(f.slice(tb, "k", store.SliceQuery{Count: all}).Cells); got != "" {
		t.Fatalf("recreated table not empty: %s", got)
	}
}

func testLongKeysAndNames(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	key := bytes.Repeat([]byte{0xff}, 65535)
	// Names of 65535 bytes that share long prefixes: their keys are cut
	// and must still come back whole and in comparator order.
	var names [][]byte
	for _, last := range []byte{3, 1, 2, 0} {
		n := bytes.Repeat([]byte{0}, 65535)
		n[len(n)-1] = last
		names = append(names, n)
	}
	short := []byte{0, 0, 1}
	var ops []store.Op
	for i, n := range names {
		ops = append(ops, store.Op{Kind: store.OpPut, Name: n, Value: []byte{byte(i)}, Timestamp: 1})
	}
	ops = append(ops, store.Op{Kind: store.OpPut, Name: short, Value: []byte("short"), Timestamp: 1})
	f.apply(store.RowMutation{Table: tb, Key: key, Ops: ops})
	res := f.slice(tb, string(key), store.SliceQuery{Count: all})
	if len(res.Cells) != 5 {
		t.Fatalf("got %d cells", len(res.Cells))
	}
	for i := 0; i < 4; i++ {
		if !bytes.Equal(res.Cells[i].Name[:65534], names[0][:65534]) || res.Cells[i].Name[65534] != byte(i) {
			t.Fatalf("cell %d out of order or damaged (len %d, last %d)", i, len(res.Cells[i].Name), res.Cells[i].Name[len(res.Cells[i].Name)-1])
		}
	}
	if !bytes.Equal(res.Cells[4].Name, short) {
		t.Fatalf("short name not last")
	}
	rev := f.slice(tb, string(key), store.SliceQuery{Count: 2, Reversed: true})
	if !bytes.Equal(rev.Cells[0].Name, short) || rev.Cells[1].Name[65534] != 3 {
		t.Fatal("reverse order over cut keys is wrong")
	}
	// A range whose bounds are long names selects exactly the middle two.
	mid := f.slice(tb, string(key), store.SliceQuery{Start: names[2], Finish: names[0], Count: all})
	if len(mid.Cells) != 2 || mid.Cells[0].Name[65534] != 2 || mid.Cells[1].Name[65534] != 3 {
		t.Fatalf("range over long names: %d cells", len(mid.Cells))
	}
	got := f.slice(tb, string(key), store.SliceQuery{Names: [][]byte{names[1]}})
	if len(got.Cells) != 1 || !bytes.Equal(got.Cells[0].Name, names[1]) {
		t.Fatal("point read of a long name failed")
	}
}
