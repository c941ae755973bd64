package enginetest

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

func testScanInTokenOrderWithGhosts(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	ghosts := f.caps().RangeGhosts
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	keys := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	for _, k := range keys {
		f.apply(store.RowMutation{Table: tb, Key: []byte(k), Ops: []store.Op{Put("c", k, 1)}})
	}
	f.apply(store.RowMutation{Table: tb, Key: []byte("delta"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}})
	part := f.e.Partitioner()
	sort.Slice(keys, func(i, j int) bool {
		return bytes.Compare(part.AppendRowKey(nil, []byte(keys[i])), part.AppendRowKey(nil, []byte(keys[j]))) < 0
	})
	// want is what a scan shows of each row, in ring order: the deleted
	// row as a range ghost, or not at all.
	var want []string
	for _, k := range keys {
		switch {
		case k != "delta":
			want = append(want, k+":c="+k+"@1")
		case ghosts:
			want = append(want, k+":")
		}
	}
	// between is what want holds of the rows from keys[i] to keys[j].
	between := func(i, j int) []string {
		var out []string
		for _, w := range want {
			k := w[:strings.IndexByte(w, ':')]
			for x := i; x <= j; x++ {
				if keys[x] == k {
					out = append(out, w)
				}
			}
		}
		return out
	}
	got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}}, all)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows (range ghosts %v):\n got  %q\n want %q", ghosts, got, want)
	}
	// Key bounds include both ends; the limit stops the walk.
	mid := f.scanKeys(tb, store.ScanQuery{
		Start: store.RowBound{Kind: store.BoundKey, Key: []byte(keys[1])},
		End:   store.RowBound{Kind: store.BoundKey, Key: []byte(keys[3])},
		Slice: store.SliceQuery{Count: all},
	}, all)
	if w := between(1, 3); fmt.Sprint(mid) != fmt.Sprint(w) {
		t.Fatalf("key range: %q, want %q", mid, w)
	}
	if two := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}}, 2); len(two) != 2 {
		t.Fatalf("limit: %v", two)
	}
	// A token start excludes the rows of that token; a token end includes them.
	tok := f.scanKeys(tb, store.ScanQuery{
		Start: store.RowBound{Kind: store.BoundToken, Token: part.Token([]byte(keys[1]))},
		End:   store.RowBound{Kind: store.BoundToken, Token: part.Token([]byte(keys[3]))},
		Slice: store.SliceQuery{Count: all},
	}, all)
	if w := between(2, 3); fmt.Sprint(tok) != fmt.Sprint(w) {
		t.Fatalf("token range: %q, want %q", tok, w)
	}
	// A scan that reads no cells still visits the rows.
	if keysOnly := f.scanKeys(tb, store.ScanQuery{}, all); len(keysOnly) != len(want) {
		t.Fatalf("scan without cells: %q", keysOnly)
	}
}

// testScanRowsHintChangesNothing: ScanQuery.Rows is a hint of how many
// rows the visitor takes; whatever it says, a scan visits the rows and
// cells the scan without it visits, rows with fewer cells than the count
// and rows cut by the count alike, also when the visitor takes more rows
// than the hint.
func testScanRowsHintChangesNothing(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	const rows = 90
	for i := range rows {
		var ops []store.Op
		for c := range 1 + i%4 {
			ops = append(ops, Put(fmt.Sprintf("c%d", c), fmt.Sprintf("v%d.%d", i, c), 1))
		}
		f.apply(store.RowMutation{Table: tb, Key: []byte(fmt.Sprintf("row%02d", i)), Ops: ops})
	}
	for _, count := range []int{3, 2, all} {
		whole := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: count}}, all)
		if len(whole) != rows {
			t.Fatalf("count %d: %d rows, want %d", count, len(whole), rows)
		}
		for _, c := range []struct{ hint, take int }{{1, 1}, {7, 7}, {33, 33}, {40, 40}, {rows, rows}, {7, all}, {34, 50}} {
			got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: count}, Rows: c.hint}, c.take)
			want := whole[:min(c.take, rows)]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("count %d, hint %d, %d rows taken:\n got  %q\n want %q", count, c.hint, c.take, got, want)
			}
		}
		// From a key inside the range.
		start := whole[20][:strings.IndexByte(whole[20], ':')]
		got := f.scanKeys(tb, store.ScanQuery{Start: store.RowBound{Kind: store.BoundKey, Key: []byte(start)},
			Slice: store.SliceQuery{Count: count}, Rows: 5}, 5)
		if fmt.Sprint(got) != fmt.Sprint(whole[20:25]) {
			t.Fatalf("count %d, from %s, hint 5:\n got  %q\n want %q", count, start, got, whole[20:25])
		}
	}
}

func testScanOrderedPartitionerAndLongKeys(t *testing.T, h *Harness) {
	f := open(t, h, "ByteOrderedPartitioner")
	f.need(f.caps().OrderedPartitioners, "OrderedPartitioners", "rows laid out by ByteOrderedPartitioner")
	tb := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	long := bytes.Repeat([]byte("m"), 65535)
	for _, k := range [][]byte{[]byte("b"), long, []byte("a"), []byte("z")} {
		f.apply(store.RowMutation{Table: tb, Key: k, Ops: []store.Op{PutSuper("s", "c", "v", 1)}})
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
	// Key bounds over an ordered layout, the long key included.
	mid := f.scanKeys(tb, store.ScanQuery{
		Start: store.RowBound{Kind: store.BoundKey, Key: []byte("b")},
		End:   store.RowBound{Kind: store.BoundKey, Key: long},
	}, all)
	if len(mid) != 2 || mid[0] != "b:" || mid[1] != string(long)+":" {
		t.Fatalf("key range over the long key: %d rows", len(mid))
	}
}
