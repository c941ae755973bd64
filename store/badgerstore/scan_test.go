package badgerstore

import (
	"bytes"
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// scanKeys returns "key:cells" for every row a scan visits.
func (f *fixture) scanKeys(tb *store.Table, q store.ScanQuery, limit int) []string {
	f.t.Helper()
	var out []string
	var res store.SliceResult
	err := f.e.Scan(context.Background(), tb, &q, &res, func(key []byte) (bool, error) {
		out = append(out, string(key)+":"+cellsString(res.Cells)+supersString(res.Supers))
		return len(out) < limit, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func TestScanInTokenOrderWithGhosts(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	keys := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	for _, k := range keys {
		f.apply(store.RowMutation{Table: tb, Key: []byte(k), Ops: []store.Op{put("c", k, 1)}})
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("delta"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}})
	want := append([]string{}, keys...)
	part := f.e.Partitioner()
	sort.Slice(want, func(i, j int) bool {
		return bytes.Compare(part.AppendRowKey(nil, []byte(want[i])), part.AppendRowKey(nil, []byte(want[j]))) < 0
	})
	got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}}, all)
	if len(got) != len(want) {
		t.Fatalf("rows: %v", got)
	}
	for i, w := range want {
		cell := "c=" + w + "@1"
		if w == "delta" {
			cell = "" // a range ghost: the deleted row shows up empty
		}
		if got[i] != w+":"+cell {
			t.Fatalf("row %d = %q, want %q (all: %v)", i, got[i], w+":"+cell, got)
		}
	}
	// Key bounds include both ends; the limit stops the walk.
	mid := f.scanKeys(tb, store.ScanQuery{
		Start: store.RowBound{Kind: store.BoundKey, Key: []byte(want[1])},
		End:   store.RowBound{Kind: store.BoundKey, Key: []byte(want[3])},
		Slice: store.SliceQuery{Count: all},
	}, all)
	if len(mid) != 3 || !strings.HasPrefix(mid[0], want[1]+":") || !strings.HasPrefix(mid[2], want[3]+":") {
		t.Fatalf("key range: %v", mid)
	}
	if two := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}}, 2); len(two) != 2 {
		t.Fatalf("limit: %v", two)
	}
	// A token start excludes the rows of that token; a token end includes them.
	t1 := part.Token([]byte(want[1]))
	t3 := part.Token([]byte(want[3]))
	tok := f.scanKeys(tb, store.ScanQuery{
		Start: store.RowBound{Kind: store.BoundToken, Token: t1},
		End:   store.RowBound{Kind: store.BoundToken, Token: t3},
		Slice: store.SliceQuery{Count: all},
	}, all)
	if len(tok) != 2 || !strings.HasPrefix(tok[0], want[2]+":") || !strings.HasPrefix(tok[1], want[3]+":") {
		t.Fatalf("token range: %v", tok)
	}
}

func TestScanOrderedPartitionerAndLongKeys(t *testing.T) {
	f := openTestEngine(t, t.TempDir(), "ByteOrderedPartitioner")
	tb := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	long := bytes.Repeat([]byte("m"), 65535)
	for _, k := range [][]byte{[]byte("b"), long, []byte("a"), []byte("z")} {
		f.apply(store.RowMutation{Table: tb, Key: k, Ops: []store.Op{putSuper("s", "c", "v", 1)}})
	}
	got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}}, all)
	if len(got) != 4 || got[0] != "a:s{c=v@1}" || got[1] != "b:s{c=v@1}" || got[3] != "z:s{c=v@1}" {
		t.Fatalf("rows: %d, first %q", len(got), got[0])
	}
	if got[2] != string(long)+":s{c=v@1}" {
		t.Fatalf("long key row came back wrong (%d bytes)", len(got[2]))
	}
	// Inside a super column, for every row.
	in := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Super: []byte("s"), Count: all}}, all)
	if len(in) != 4 || in[0] != "a:c=v@1" {
		t.Fatalf("inside super: %v", in[0])
	}
}
