package badgerstore

import (
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestHeaderFilter: a row deleted (so with a header) is looked up, others
// are not; the filter survives a reopen, and a store without one (written
// before there was one) finds its headers by a scan, every row looked up
// meanwhile; deleted rows read as deleted all along.
func TestHeaderFilter(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	cf := func() *store.Table { tb, _ := f.e.Catalog().Table("ks", "cf"); return tb }
	rp := func(key string) []byte { p, _ := f.e.rowPrefix(nil, cf(), []byte(key)); return p }
	for _, key := range []string{"kept", "gone"} {
		f.apply(store.RowMutation{Table: cf(), Key: []byte(key), Ops: []store.Op{enginetest.Put("c", key, 1)}})
	}
	f.apply(store.RowMutation{Table: cf(), Key: []byte("gone"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}})
	check := func(when string) {
		t.Helper()
		if got := enginetest.CellsString(f.slice(cf(), "gone", store.SliceQuery{Count: all}).Cells); got != "" {
			t.Fatalf("%s: the deleted row reads %s", when, got)
		}
		if got := enginetest.CellsString(f.slice(cf(), "kept", store.SliceQuery{Count: all}).Cells); got == "" {
			t.Fatalf("%s: the kept row reads nothing", when)
		}
		if !f.e.headers.mayHave(rp("gone")) {
			t.Fatalf("%s: the deleted row is not looked up", when)
		}
	}
	check("before the reopen")
	if f.e.headers.mayHave(rp("kept")) && headerBit(rp("kept")) != headerBit(rp("gone")) {
		t.Fatal("a row without a header is looked up")
	}
	reopen := func() {
		t.Helper()
		if err := f.e.Close(); err != nil {
			t.Fatal(err)
		}
		f.e = nil
		f = openTestEngine(t, dir, "Murmur3Partitioner")
	}
	reopen()
	if !f.e.headers.known.Load() || f.e.headers.mayHave(rp("kept")) && headerBit(rp("kept")) != headerBit(rp("gone")) {
		t.Fatal("after the reopen, the filter is not the one stored")
	}
	check("after the reopen")

	// A store without the filter.
	err := f.e.db.Update(func(txn *badger.Txn) error {
		if err := txn.Delete(headerMarkerKey); err != nil {
			return err
		}
		return txn.Delete(headerBitKey(headerBit(rp("gone"))))
	})
	if err != nil {
		t.Fatal(err)
	}
	reopen()
	check("while the headers are listed")
	deadline := time.Now().Add(time.Minute)
	for !f.e.headers.known.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the headers were not listed within a minute")
		}
		time.Sleep(5 * time.Millisecond)
	}
	check("after the headers were listed")
	reopen()
	check("after the listing and a reopen")
}
