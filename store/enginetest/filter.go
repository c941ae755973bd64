package enginetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// testFilteredScans: a scan with a filter visits exactly the rows whose
// own live cells satisfy every expression, in ring order, each with what
// the slice selects; an EQ on an indexed column finds them however the
// engine does (through an index or not), and stale index entries (the
// value changed, the cell or the row deleted, the cell expired) never
// leak.
func testFilteredScans(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	idx := int32(0)
	tb := f.table(store.TableDef{Name: "users", Comparator: "UTF8Type", Columns: []store.ColumnDef{
		{Name: []byte("age"), Validator: "LongType", IndexType: &idx},
		{Name: []byte("city"), Validator: "UTF8Type"},
	}})
	long := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	cities := []string{"lyon", "paris", "rome"}
	ages := map[string]int64{}   // live ages
	homes := map[string]string{} // live cities
	var keys []string
	for i := 0; i < 24; i++ {
		k := fmt.Sprintf("u%02d", i)
		keys = append(keys, k)
		ages[k], homes[k] = int64(i%4), cities[i%3]
		f.apply(store.RowMutation{Table: tb, Key: []byte(k), Ops: []store.Op{
			{Kind: store.OpPut, Name: []byte("age"), Value: long(int64(i % 4)), Timestamp: 1},
			Put("city", cities[i%3], 1),
			Put("name", k, 1),
		}})
	}
	// Stale index entries for age = 1: a changed value, a deleted cell, a
	// deleted row, a range deletion over the cell.
	f.apply(store.RowMutation{Table: tb, Key: []byte("u01"), Ops: []store.Op{{Kind: store.OpPut, Name: []byte("age"), Value: long(3), Timestamp: 2}}},
		store.RowMutation{Table: tb, Key: []byte("u05"), Ops: []store.Op{{Kind: store.OpDeleteCell, Name: []byte("age"), Timestamp: 2}}},
		store.RowMutation{Table: tb, Key: []byte("u09"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}},
		store.RowMutation{Table: tb, Key: []byte("u13"), Ops: []store.Op{{Kind: store.OpDeleteRange, Start: []byte("age"), Finish: []byte("age"), Timestamp: 2}}})
	ages["u01"] = 3
	delete(ages, "u05")
	delete(ages, "u09")
	delete(homes, "u09")
	delete(ages, "u13")
	// And an expiring one: a row whose only age = 2 expires.
	f.apply(store.RowMutation{Table: tb, Key: []byte("x"), Ops: []store.Op{
		{Kind: store.OpPut, Name: []byte("age"), Value: long(2), Timestamp: 1, TTL: 1}, Put("city", "rome", 1),
	}})
	keys = append(keys, "x")
	homes["x"] = "rome"
	f.advance(2 * time.Second)

	part := f.e.Partitioner()
	sort.Slice(keys, func(i, j int) bool {
		return bytes.Compare(part.AppendRowKey(nil, []byte(keys[i])), part.AppendRowKey(nil, []byte(keys[j]))) < 0
	})
	// expect lists, in ring order, the rows from keys[lo] to keys[hi]
	// that match, each with all its cells (read by Slice) or those names.
	expect := func(lo, hi int, match func(k string) bool, names [][]byte) []string {
		var out []string
		for _, k := range keys[lo : hi+1] {
			if !match(k) {
				continue
			}
			q := store.SliceQuery{Count: all}
			if names != nil {
				q = store.SliceQuery{Names: names}
			}
			out = append(out, k+":"+CellsString(f.slice(tb, k, q).Cells))
		}
		return out
	}
	ageIs := func(op store.ExprOp, n int64) store.Expression {
		return store.Expression{Column: []byte("age"), Op: op, Value: long(n)}
	}
	cityIs := func(op store.ExprOp, c string) store.Expression {
		return store.Expression{Column: []byte("city"), Op: op, Value: []byte(c)}
	}
	hasAge := func(k string, ok func(int64) bool) bool { a, live := ages[k]; return live && ok(a) }
	last := len(keys) - 1
	for _, c := range []struct {
		name   string
		filter []store.Expression
		match  func(k string) bool
	}{
		{"indexed EQ", []store.Expression{ageIs(store.ExprEQ, 1)}, func(k string) bool { return hasAge(k, func(a int64) bool { return a == 1 }) }},
		{"indexed EQ of an expired value", []store.Expression{ageIs(store.ExprEQ, 2)}, func(k string) bool { return hasAge(k, func(a int64) bool { return a == 2 }) }},
		{"indexed EQ and GT", []store.Expression{cityIs(store.ExprGT, "m"), ageIs(store.ExprEQ, 3)}, func(k string) bool {
			return hasAge(k, func(a int64) bool { return a == 3 }) && homes[k] > "m"
		}},
		{"LT by the validator", []store.Expression{ageIs(store.ExprLT, 2)}, func(k string) bool { return hasAge(k, func(a int64) bool { return a < 2 }) }},
		{"GTE and LTE", []store.Expression{ageIs(store.ExprGTE, 1), ageIs(store.ExprLTE, 2)}, func(k string) bool {
			return hasAge(k, func(a int64) bool { return a >= 1 && a <= 2 })
		}},
		{"EQ on a column without index", []store.Expression{cityIs(store.ExprEQ, "paris")}, func(k string) bool { return homes[k] == "paris" }},
		{"a column no row has", []store.Expression{{Column: []byte("nope"), Op: store.ExprEQ, Value: []byte("x")}}, func(string) bool { return false }},
	} {
		got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}, Filter: c.filter}, all)
		want := expect(0, last, c.match, nil)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got  %q\n want %q", c.name, got, want)
		}
		if len(want) == 0 && c.name != "a column no row has" {
			t.Fatalf("%s: the test matches no row", c.name)
		}
		// Within key bounds, with a slice of other names than the filter's.
		names := [][]byte{[]byte("name")}
		got = f.scanKeys(tb, store.ScanQuery{
			Start:  store.RowBound{Kind: store.BoundKey, Key: []byte(keys[3])},
			End:    store.RowBound{Kind: store.BoundKey, Key: []byte(keys[12])},
			Slice:  store.SliceQuery{Names: names},
			Filter: c.filter,
		}, all)
		if want := expect(3, 12, c.match, names); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s between %s and %s:\n got  %q\n want %q", c.name, keys[3], keys[12], got, want)
		}
		// visit stops the walk.
		if got := f.scanKeys(tb, store.ScanQuery{Filter: c.filter}, 1); len(got) > 1 {
			t.Errorf("%s: the walk went on after visit stopped it: %q", c.name, got)
		}
	}

	// A column indexed later finds the rows written before.
	next := tb.Def
	next.Columns = []store.ColumnDef{next.Columns[0], {Name: []byte("city"), Validator: "UTF8Type", IndexType: &idx}}
	if err := f.e.UpdateTable(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	tb, _ = f.e.Catalog().Table("ks", "users")
	got := f.scanKeys(tb, store.ScanQuery{Slice: store.SliceQuery{Count: all}, Filter: []store.Expression{cityIs(store.ExprEQ, "paris")}}, all)
	if want := expect(0, last, func(k string) bool { return homes[k] == "paris" }, nil); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("EQ on a newly indexed column:\n got  %q\n want %q", got, want)
	}

	// The rows of a Super family have no cells at the top level: none
	// matches.
	sc := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	f.apply(store.RowMutation{Table: sc, Key: []byte("k"), Ops: []store.Op{PutSuper("age", "age", "1", 1)}})
	if got := f.scanKeys(sc, store.ScanQuery{Slice: store.SliceQuery{Count: all}, Filter: []store.Expression{{Column: []byte("age"), Op: store.ExprEQ, Value: []byte("1")}}}, all); len(got) != 0 {
		t.Errorf("a filter matched a Super family's row: %q", got)
	}
}
