package enginetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// testPagedScans: a scan with a page budget returns what reading the rows
// one by one would (the first row from PageStart on, each row with what is
// left of the budget, until it is spent), in one call, and the bytes of
// every row it visited stay valid to the end.
func testPagedScans(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	std := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	sup := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	for i := 0; i < 12; i++ {
		key := []byte(fmt.Sprintf("row%02d", i))
		width := i % 5
		if i == 7 {
			width = 25 // a wide row
		}
		var ops, sops []store.Op
		for c := 0; c < width; c++ {
			ops = append(ops, Put(fmt.Sprintf("c%02d", c), fmt.Sprintf("v%d.%d", i, c), 1))
			sops = append(sops, PutSuper(fmt.Sprintf("s%02d", c), "a", "x", 1), PutSuper(fmt.Sprintf("s%02d", c), "b", "y", 1))
		}
		if width == 0 {
			// A row that is only a deletion: a range ghost, if any.
			ops = []store.Op{{Kind: store.OpDeleteRow, Timestamp: 1}}
			sops = ops
		}
		f.apply(store.RowMutation{Table: std, Key: key, Ops: ops}, store.RowMutation{Table: sup, Key: key, Ops: sops})
	}
	for _, tb := range []*store.Table{std, sup} {
		var rows []string
		f.scan(tb, store.ScanQuery{}, func(key []byte, _ *store.SliceResult) { rows = append(rows, string(key)) })
		for _, budget := range []int{1, 2, 3, 5, 8, 13, 40, 1000} {
			for _, start := range [][]byte{nil, []byte("c03"), []byte("s02")} {
				for _, reversed := range []bool{false, true} {
					for _, from := range []int{0, 5} {
						q := store.ScanQuery{Slice: store.SliceQuery{Reversed: reversed}, PageCells: budget, PageStart: start}
						if from > 0 {
							q.Start = store.RowBound{Kind: store.BoundKey, Key: []byte(rows[from])}
						}
						want := pageRowByRow(f, tb, rows[from:], budget, start, reversed)
						got := f.page(tb, q)
						if fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("%s budget %d start %q reversed %v from %s:\n got  %q\n want %q",
								tb.Def.Name, budget, start, reversed, rows[from], got, want)
						}
					}
				}
			}
		}
	}
}

// page runs a paged scan, keeping each row's cells (their bytes stay in
// the result) and rendering them only at the end.
func (f *env) page(tb *store.Table, q store.ScanQuery) []string {
	f.t.Helper()
	type row struct {
		key    string
		cells  []store.Cell
		supers []store.SuperColumn
	}
	var rows []row
	f.scan(tb, q, func(key []byte, res *store.SliceResult) {
		rows = append(rows, row{string(key), append([]store.Cell(nil), res.Cells...), append([]store.SuperColumn(nil), res.Supers...)})
	})
	var out []string
	for _, r := range rows {
		out = append(out, r.key+":"+CellsString(r.cells)+SupersString(r.supers))
	}
	return out
}

// scan runs a scan to its end (or the engine's), visiting every row.
func (f *env) scan(tb *store.Table, q store.ScanQuery, visit func(key []byte, res *store.SliceResult)) {
	f.t.Helper()
	var res store.SliceResult
	err := f.e.Scan(context.Background(), tb, &q, &res, func(key []byte) (bool, error) {
		visit(key, &res)
		return true, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
}

// pageRowByRow is the oracle of a paged scan: each row read on its own.
func pageRowByRow(f *env, tb *store.Table, rows []string, budget int, start []byte, reversed bool) []string {
	var out []string
	for i, key := range rows {
		q := store.SliceQuery{Count: budget, Reversed: reversed}
		if i == 0 {
			q.Start = start
		}
		res := f.slice(tb, key, q)
		out = append(out, key+":"+CellsString(res.Cells)+SupersString(res.Supers))
		if budget -= res.Len(); budget <= 0 {
			break
		}
	}
	return out
}
