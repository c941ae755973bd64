package legacy

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// TestOneColumnIsThriftifysAnswer: a get's one-allocation answer is the
// column thriftify gives for the same cell, with and without a TTL, with
// an empty value.
func TestOneColumnIsThriftifysAnswer(t *testing.T) {
	tb := &store.Table{Def: store.TableDef{Name: "cf"}}
	for _, c := range []store.Cell{
		{Name: []byte("a"), Value: []byte("v"), Timestamp: 42},
		{Name: []byte("b"), Value: []byte{}, Timestamp: -7, TTL: 60, ExpiresAt: 1000},
		{Name: []byte{0, 1}, Value: []byte("x"), Timestamp: 1 << 60},
	} {
		want := new(replyBlocks).thriftify(tb, &store.SliceResult{Cells: []store.Cell{c}})[0]
		got := oneColumn(&c)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("cell %q: oneColumn gives %+v (column %+v), thriftify %+v (column %+v)", c.Name, got, got.Column, want, want.Column)
		}
	}
	c := store.Cell{Name: []byte("a"), Value: []byte("v"), Timestamp: 1}
	if n := testing.AllocsPerRun(100, func() { _ = oneColumn(&c) }); n != 1 {
		t.Errorf("oneColumn allocates %.0f times, want 1", n)
	}
}

// TestRowsShareBlocks: the rows of one reply, made from shared blocks,
// are what each row gives alone, of every kind of family, and a range of
// 10 rows of 20 columns takes a few allocations, not a few per row.
func TestRowsShareBlocks(t *testing.T) {
	cells := func(n int, ttl int32) []store.Cell {
		var cs []store.Cell
		for i := range n {
			cs = append(cs, store.Cell{Name: fmt.Appendf(nil, "c%02d", i), Value: []byte("v"), Timestamp: int64(i), TTL: ttl * int32(i%2), CounterValue: int64(i) - 3})
		}
		return cs
	}
	results := []*store.SliceResult{
		{Cells: cells(3, 60)},
		{},
		{Cells: cells(20, 0)},
		{Supers: []store.SuperColumn{{Name: []byte("s1"), Cells: cells(2, 30)}, {Name: []byte("s2")}}},
	}
	for _, counter := range []bool{false, true} {
		tb := &store.Table{Def: store.TableDef{Name: "cf"}, Counter: counter}
		var shared replyBlocks
		var rows []any
		for i, res := range results {
			rows = append(rows, shared.row(fmt.Appendf(nil, "key%d", i), shared.thriftify(tb, res)))
		}
		for i, res := range results {
			want := new(replyBlocks).row(fmt.Appendf(nil, "key%d", i), new(replyBlocks).thriftify(tb, res))
			if !reflect.DeepEqual(rows[i], want) {
				t.Errorf("counter %v, row %d: shared %+v, alone %+v", counter, i, rows[i], want)
			}
		}
	}
	tb := &store.Table{Def: store.TableDef{Name: "cf"}}
	row := &store.SliceResult{Cells: cells(20, 0)}
	key := []byte("p000000001")
	n := testing.AllocsPerRun(50, func() {
		var b replyBlocks
		for range 10 {
			_ = b.row(key, b.thriftify(tb, row))
		}
	})
	if n > 25 { // 70 when each row had arrays of its own
		t.Errorf("10 rows of 20 columns take %.0f allocations, want at most 25", n)
	}
}
