package badgerstore

import (
	"context"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

func TestDbgRepeat(t *testing.T) {
	f := newFixture(t)
	_, super, _ := groupFamilies(f)
	ops := func(sub string) []store.Op {
		var o []store.Op
		for _, sc := range []string{"a", "b", "c", "d", "e"} {
			o = append(o, enginetest.PutSuper(sc, sub, "v", 10))
		}
		return o
	}
	err := f.e.Apply(context.Background(), &store.Batch{Atomic: true, Rows: []store.RowMutation{
		{Table: super(), Key: []byte("k"), Ops: ops("x")},
		{Table: super(), Key: []byte("k"), Ops: ops("y")},
	}})
	t.Log(err, enginetest.SupersString(f.slice(super(), "k", store.SliceQuery{Count: all}).Supers))
}
