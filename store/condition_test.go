package store

import (
	"encoding/binary"
	"errors"
	"testing"
)

func newTestTable(t *testing.T, def TableDef) *Table {
	t.Helper()
	tb, err := NewTable(def)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestConditionHolds: expected columns match by the comparator and compare
// values byte for byte; Absent and RowEmpty hold only without live cells.
func TestConditionHolds(t *testing.T) {
	// IntegerType deems 0x01 and 0x0001 the same name.
	tb := newTestTable(t, TableDef{Keyspace: "ks", Name: "cf", Comparator: "IntegerType"})
	cells := []Cell{{Name: []byte{0x01}, Value: []byte("x")}, {Name: []byte{0x02}, Value: []byte{}}}
	for _, c := range []struct {
		name string
		cond Condition
		want bool
	}{
		{"zero condition", Condition{}, true},
		{"equal", Condition{Columns: []ExpectedColumn{{Name: []byte{0x01}, Value: []byte("x")}}}, true},
		{"equal under an equivalent name", Condition{Columns: []ExpectedColumn{{Name: []byte{0x00, 0x01}, Value: []byte("x")}}}, true},
		{"different value", Condition{Columns: []ExpectedColumn{{Name: []byte{0x01}, Value: []byte("y")}}}, false},
		{"empty value", Condition{Columns: []ExpectedColumn{{Name: []byte{0x02}, Value: []byte{}}}}, true},
		{"empty value is no absence", Condition{Columns: []ExpectedColumn{{Name: []byte{0x02}, Absent: true}}}, false},
		{"absent", Condition{Columns: []ExpectedColumn{{Name: []byte{0x03}, Absent: true}}}, true},
		{"missing", Condition{Columns: []ExpectedColumn{{Name: []byte{0x03}, Value: []byte{}}}}, false},
		{"all must hold", Condition{Columns: []ExpectedColumn{{Name: []byte{0x01}, Value: []byte("x")}, {Name: []byte{0x01}, Absent: true}}}, false},
		{"row not empty", Condition{RowEmpty: true}, false},
	} {
		if got := c.cond.Holds(tb, cells); got != c.want {
			t.Errorf("%s: Holds = %v, want %v", c.name, got, c.want)
		}
	}
	if !(&Condition{RowEmpty: true}).Holds(tb, nil) {
		t.Error("RowEmpty does not hold on an empty row")
	}
	if q := (&Condition{RowEmpty: true}).Reads(); q.Names != nil || q.Count != 1 {
		t.Errorf("RowEmpty reads %+v, want one cell", q)
	}
	if q := (&Condition{Columns: []ExpectedColumn{{Name: []byte{7}}, {Name: []byte{5}}}}).Reads(); len(q.Names) != 2 {
		t.Errorf("expected columns read %+v", q)
	}
}

func TestConditionValidate(t *testing.T) {
	std := newTestTable(t, TableDef{Keyspace: "ks", Name: "cf", Comparator: "UTF8Type"})
	sup := newTestTable(t, TableDef{Keyspace: "ks", Name: "sc", Comparator: "UTF8Type", Super: true})
	for _, c := range []struct {
		name string
		t    *Table
		cond Condition
		ok   bool
	}{
		{"standard", std, Condition{Columns: []ExpectedColumn{{Name: []byte("a"), Absent: true}}}, true},
		{"row empty", std, Condition{RowEmpty: true}, true},
		{"row empty with columns", std, Condition{RowEmpty: true, Columns: []ExpectedColumn{{Name: []byte("a")}}}, false},
		{"super family", sup, Condition{RowEmpty: true}, false},
	} {
		err := c.cond.Validate(c.t)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrBadCondition)) {
			t.Errorf("%s: Validate = %v", c.name, err)
		}
	}
}

// TestMatchFilter: expressions compare by the column's validator, every
// one must hold, and a missing cell fails its expression.
func TestMatchFilter(t *testing.T) {
	kind := int32(0)
	tb := newTestTable(t, TableDef{Keyspace: "ks", Name: "cf", Comparator: "UTF8Type", Columns: []ColumnDef{
		{Name: []byte("age"), Validator: "LongType", IndexType: &kind},
		{Name: []byte("city"), Validator: "UTF8Type"},
	}})
	long := func(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
	cells := []Cell{{Name: []byte("age"), Value: long(-3)}, {Name: []byte("city"), Value: []byte("rome")}}
	age := func(op ExprOp, n int64) Expression { return Expression{Column: []byte("age"), Op: op, Value: long(n)} }
	for _, c := range []struct {
		name   string
		filter []Expression
		want   bool
	}{
		{"no expression", nil, true},
		{"EQ", []Expression{age(ExprEQ, -3)}, true},
		{"LT by the validator, not the bytes", []Expression{age(ExprLT, 1)}, true},
		{"GT", []Expression{age(ExprGT, -3)}, false},
		{"GTE", []Expression{age(ExprGTE, -3)}, true},
		{"LTE", []Expression{age(ExprLTE, -4)}, false},
		{"both", []Expression{age(ExprEQ, -3), {Column: []byte("city"), Op: ExprGT, Value: []byte("paris")}}, true},
		{"one fails", []Expression{age(ExprEQ, -3), {Column: []byte("city"), Op: ExprLT, Value: []byte("paris")}}, false},
		{"missing cell", []Expression{{Column: []byte("name"), Op: ExprLT, Value: []byte("z")}}, false},
	} {
		if got := MatchFilter(tb, c.filter, cells); got != c.want {
			t.Errorf("%s: MatchFilter = %v, want %v", c.name, got, c.want)
		}
	}
	filter := []Expression{{Column: []byte("city"), Op: ExprEQ, Value: []byte("rome")}, age(ExprGT, 0), age(ExprEQ, 5)}
	if ix := IndexedExpression(tb, filter); ix != &filter[2] {
		t.Errorf("IndexedExpression = %+v, want the EQ on age", ix)
	}
	if ix := IndexedExpression(tb, filter[:2]); ix != nil {
		t.Errorf("IndexedExpression without an EQ on an indexed column = %+v", ix)
	}
}
