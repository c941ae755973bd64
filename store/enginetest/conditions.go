package enginetest

import (
	"context"
	"errors"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// testConditionalWrites: ApplyIf applies its mutation exactly when the
// condition holds on the row (expected columns equal byte for byte,
// absent, or a row without live cells), and reports the cells the
// condition looked at.
func testConditionalWrites(t *testing.T, h *Harness) {
	f := newEnv(t, h)
	f.need(f.caps().FreeConditions, "FreeConditions", "writes under conditions on other columns and on an empty row, at the writes' own timestamps")
	tb := f.table(store.TableDef{Name: "cas", Comparator: "UTF8Type"})
	ctx := context.Background()
	ts := int64(10)
	// try applies a write of cell "w" under cond and checks the outcome
	// and the current cells reported.
	try := func(what, key string, cond store.Condition, wantApplied bool, wantCurrent string) {
		t.Helper()
		ts++
		m := &store.RowMutation{Table: tb, Key: []byte(key), Ops: []store.Op{Put("w", what, ts)}}
		var cur store.SliceResult
		applied, err := f.e.ApplyIf(ctx, m, &cond, &cur)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if applied != wantApplied {
			t.Errorf("%s: applied = %v, want %v", what, applied, wantApplied)
		}
		if got := CellsString(cur.Cells); got != wantCurrent {
			t.Errorf("%s: current = %q, want %q", what, got, wantCurrent)
		}
		w := f.slice(tb, key, store.SliceQuery{Names: [][]byte{[]byte("w")}})
		if written := len(w.Cells) == 1 && string(w.Cells[0].Value) == what; written != wantApplied {
			t.Errorf("%s: cell written = %v, want %v", what, written, wantApplied)
		}
	}
	expect := func(cols ...store.ExpectedColumn) store.Condition { return store.Condition{Columns: cols} }
	equal := func(name, value string) store.ExpectedColumn {
		return store.ExpectedColumn{Name: []byte(name), Value: []byte(value)}
	}
	absent := func(name string) store.ExpectedColumn { return store.ExpectedColumn{Name: []byte(name), Absent: true} }

	// A row with no live cell, then with one.
	try("empty row", "k", store.Condition{RowEmpty: true}, true, "")
	try("row not empty", "k", store.Condition{RowEmpty: true}, false, "w=empty row@11")
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("a", "1", 1), Put("b", "2", 1)}})
	try("first live cell reported", "k", store.Condition{RowEmpty: true}, false, "a=1@1")

	try("equal", "k", expect(equal("a", "1")), true, "a=1@1")
	try("equal, both", "k", expect(equal("b", "2"), equal("a", "1")), true, "a=1@1 b=2@1")
	try("one differs", "k", expect(equal("a", "1"), equal("b", "3")), false, "a=1@1 b=2@1")
	try("expected but missing", "k", expect(equal("c", "")), false, "")
	try("absent", "k", expect(absent("c"), equal("a", "1")), true, "a=1@1")
	try("not absent", "k", expect(absent("a")), false, "a=1@1")
	// An empty value is a value, not an absence.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{Put("e", "", 1)}})
	try("empty value", "k", expect(equal("e", "")), true, "e=@1")
	try("empty value is not absent", "k", expect(absent("e")), false, "e=@1")
	// A deleted cell is absent.
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteCell, Name: []byte("b"), Timestamp: 5}}})
	try("deleted is absent", "k", expect(absent("b")), true, "")
	// A row whose cells are all deleted is empty again.
	f.apply(store.RowMutation{Table: tb, Key: []byte("gone"), Ops: []store.Op{Put("a", "1", 1)}})
	f.apply(store.RowMutation{Table: tb, Key: []byte("gone"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 2}}})
	try("deleted row is empty", "gone", store.Condition{RowEmpty: true}, true, "")
	// The zero condition always holds.
	try("no condition", "k", store.Condition{}, true, "")

	// Conditions an engine refuses change nothing.
	sc := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	for _, c := range []struct {
		what string
		m    *store.RowMutation
		cond store.Condition
	}{
		{"a Super family", &store.RowMutation{Table: sc, Key: []byte("k"), Ops: []store.Op{PutSuper("s", "w", "x", 1)}}, store.Condition{RowEmpty: true}},
		{"RowEmpty with columns", &store.RowMutation{Table: tb, Key: []byte("new"), Ops: []store.Op{Put("w", "x", 1)}}, store.Condition{RowEmpty: true, Columns: []store.ExpectedColumn{absent("a")}}},
	} {
		var cur store.SliceResult
		applied, err := f.e.ApplyIf(ctx, c.m, &c.cond, &cur)
		if !errors.Is(err, store.ErrBadCondition) || applied {
			t.Errorf("%s: ApplyIf = %v, %v; want an error wrapping store.ErrBadCondition", c.what, applied, err)
		}
		var res store.SliceResult
		if err := f.e.Slice(ctx, c.m.Table, c.m.Key, &store.SliceQuery{Count: all}, &res); err != nil || res.Len() != 0 {
			t.Errorf("%s: a refused condition wrote %d cells (%v)", c.what, res.Len(), err)
		}
	}
}
