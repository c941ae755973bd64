package legacy

import (
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
		want := thriftify(tb, &store.SliceResult{Cells: []store.Cell{c}})[0]
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
