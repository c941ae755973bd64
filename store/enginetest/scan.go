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

// testScansReadEachRowAsASlice: every row a scan visits holds what a
// slice of that row alone holds, whatever the rows before it held: wide
// and narrow rows, rows with deleted cells, rows whose names are cut in
// their keys (names of tens of kilobytes sharing long prefixes), super
// columns, under every kind of slice.
func testScansReadEachRowAsASlice(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	std := f.table(store.TableDef{Name: "cf", Comparator: "BytesType"})
	sup := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "BytesType", SubComparator: "BytesType"})
	// Names of 65535 bytes, and super column names of 65000 (in a CQL
	// table a super column's name and its subcolumn's share one
	// clustering key of at most 65535 bytes).
	longOf := func(n int, last byte) string {
		b := bytes.Repeat([]byte{'c'}, n)
		b[n-1] = last
		return string(b)
	}
	long := func(last byte) string { return longOf(65535, last) }
	for i := range 16 {
		key := []byte(fmt.Sprintf("row%02d", i))
		var ops, sops []store.Op
		for c := range 1 + (i*7)%11 {
			name := fmt.Sprintf("c%02d", c)
			ops = append(ops, Put(name, fmt.Sprintf("v%d.%d", i, c), 2))
			sops = append(sops, PutSuper(name, "a", "x", 2), PutSuper(name, fmt.Sprintf("b%d", c%3), "y", 2))
		}
		if i%4 == 1 {
			for _, last := range []byte{'3', '1', '2'} {
				ops = append(ops, Put(long(last), fmt.Sprintf("long%d", i), 2))
				sops = append(sops, PutSuper(longOf(65000, last), "a", "long", 2))
			}
		}
		if i%3 == 2 {
			ops = append(ops, store.Op{Kind: store.OpDeleteCell, Name: []byte("c01"), Timestamp: 3})
			sops = append(sops, store.Op{Kind: store.OpDeleteSuper, Super: []byte("c02"), Timestamp: 3})
		}
		f.apply(store.RowMutation{Table: std, Key: key, Ops: ops}, store.RowMutation{Table: sup, Key: key, Ops: sops})
	}
	queries := []store.SliceQuery{
		{Count: all},
		{Count: 2},
		{Count: 3, Start: []byte("c02")},
		{Count: all, Start: []byte("c01"), Finish: []byte("c04")},
		{Count: 4, Reversed: true},
		{Count: all, Start: []byte("c05"), Finish: []byte("c01"), Reversed: true},
		{Names: [][]byte{[]byte("c03"), []byte("c00"), []byte(long('1')), []byte(longOf(65000, '1')), []byte("zz")}},
		{Count: all, Ranges: []store.NameRange{{Start: []byte("c01"), Finish: []byte("c02")}, {Start: []byte("c06"), Finish: []byte("c07")}}},
		{Count: all, Start: []byte("cc")},
	}
	render := func(res *store.SliceResult) string {
		// Long names are told apart by their length and last byte.
		short := func(b []byte) string {
			if len(b) > 64 {
				return fmt.Sprintf("<%d bytes ending %q>", len(b), b[len(b)-1])
			}
			return string(b)
		}
		var s strings.Builder
		for _, c := range res.Cells {
			fmt.Fprintf(&s, "%s=%s@%d ", short(c.Name), c.Value, c.Timestamp)
		}
		for _, sc := range res.Supers {
			fmt.Fprintf(&s, "%s{", short(sc.Name))
			for _, c := range sc.Cells {
				fmt.Fprintf(&s, "%s=%s@%d ", short(c.Name), c.Value, c.Timestamp)
			}
			s.WriteString("} ")
		}
		return s.String()
	}
	for _, tb := range []*store.Table{std, sup} {
		for qi, q := range queries {
			n := 0
			f.scan(tb, store.ScanQuery{Slice: q}, func(key []byte, res *store.SliceResult) {
				n++
				want := render(f.slice(tb, string(key), q))
				if got := render(res); got != want {
					t.Fatalf("%s, query %d, row %s:\n scan  %s\n slice %s", tb.Def.Name, qi, key, got, want)
				}
			})
			if n != 16 {
				t.Fatalf("%s, query %d: the scan visited %d rows of 16", tb.Def.Name, qi, n)
			}
		}
	}
}
