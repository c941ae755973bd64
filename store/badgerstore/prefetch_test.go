package badgerstore

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestPrefetchMatchesPointReads applies the same random row mutations of
// many cells to two stores: whole, in batches of one to three, to one
// (their cells are prefetched) and one operation at a time to the other
// (every cell is read on its own). A batch applies its row mutations and a
// row mutation its operations in order, so both stores must hold the same
// data after every batch: the same names written twice in one mutation,
// a mutation's cells in order or not,
// a row written twice in one batch, equal timestamps, TTLs, deletions of
// cells written earlier in it, an indexed column, over cells stored
// before.
func TestPrefetchMatchesPointReads(t *testing.T) {
	for _, super := range []bool{false, true} {
		t.Run(fmt.Sprintf("super=%v", super), func(t *testing.T) {
			whole := openTestEngine(t, t.TempDir(), "Murmur3Partitioner")
			single := openTestEngine(t, t.TempDir(), "Murmur3Partitioner")
			def := store.TableDef{Name: "cf", Comparator: "UTF8Type"}
			if super {
				def.Super, def.SubComparator = true, "UTF8Type"
			} else {
				kind := int32(0)
				def.Columns = []store.ColumnDef{{Name: []byte("a"), Validator: "BytesType", IndexType: &kind}}
			}
			tw, ts := whole.table(def), single.table(def)
			rng := rand.New(rand.NewSource(7))
			names := []string{"a", "b", "ba", "c", "d", "e", "z"}
			pick := func() []byte { return []byte(names[rng.Intn(len(names))]) }
			rows := []string{"r0", "r1", "r2"}
			same := func(when string, key string) {
				t.Helper()
				got := whole.slice(tw, key, store.SliceQuery{Count: all})
				want := single.slice(ts, key, store.SliceQuery{Count: all})
				g := enginetest.CellsString(got.Cells) + enginetest.SupersString(got.Supers)
				w := enginetest.CellsString(want.Cells) + enginetest.SupersString(want.Supers)
				if g != w {
					t.Fatalf("%s, row %s:\nprefetched  %s\npoint reads %s", when, key, g, w)
				}
			}
			for step := 0; step < 300; step++ {
				// One to three row mutations in one transaction, a row
				// possibly twice: a row's prefetch must see what the
				// transaction wrote of it before.
				var batch []store.RowMutation
				for range 1 + rng.Intn(3) {
					key := []byte(rows[rng.Intn(len(rows))])
					ops := make([]store.Op, prefetchMinCells+rng.Intn(12))
					for i := range ops {
						op := store.Op{Kind: store.OpPut, Name: pick(), Value: []byte(fmt.Sprint(rng.Intn(4))), Timestamp: int64(rng.Intn(30))}
						switch r := rng.Intn(10); {
						case r == 0:
							op.Kind, op.Value = store.OpDeleteCell, nil
						case r == 1:
							op.TTL = 100
						case r == 2 && super:
							op.Kind, op.Name, op.Value = store.OpDeleteSuper, nil, nil
						}
						if super {
							op.Super = pick()
						}
						ops[i] = op
					}
					if rng.Intn(2) == 0 {
						// In order, as clients mostly send them: a super
						// column's cells one after the other.
						slices.SortStableFunc(ops, func(a, b store.Op) int {
							return cmp.Or(bytes.Compare(a.Super, b.Super), bytes.Compare(a.Name, b.Name))
						})
					}
					batch = append(batch, store.RowMutation{Table: tw, Key: key, Ops: ops})
				}
				if err := whole.e.Apply(context.Background(), &store.Batch{Rows: batch, Atomic: true}); err != nil {
					t.Fatal(err)
				}
				for _, m := range batch {
					for _, op := range m.Ops {
						enginetest.Apply(t, single.e, store.RowMutation{Table: ts, Key: m.Key, Ops: []store.Op{op}})
					}
				}
				for _, m := range batch {
					same(fmt.Sprintf("step %d", step), string(m.Key))
				}
			}
			lasting := 0
			for _, key := range rows {
				lasting += whole.slice(tw, key, store.SliceQuery{Count: all}).Len()
			}
			if lasting == 0 {
				t.Errorf("rows %v are empty: the test wrote nothing that lasted", rows)
			}
			if !super {
				for _, v := range []string{"0", "1", "2", "3"} {
					q := &store.ScanQuery{Slice: store.SliceQuery{Count: all}, Filter: []store.Expression{{Column: []byte("a"), Op: store.ExprEQ, Value: []byte(v)}}}
					g, w := scanKeys(t, whole, tw, q), scanKeys(t, single, ts, q)
					if g != w {
						t.Errorf("index a=%s: prefetched %q, point reads %q", v, g, w)
					}
				}
			}
		})
	}
}

// scanKeys returns the keys of the rows a scan returns.
func scanKeys(t *testing.T, f *fixture, tb *store.Table, q *store.ScanQuery) string {
	t.Helper()
	var res store.SliceResult
	keys := ""
	err := f.e.Scan(t.Context(), tb, q, &res, func(key []byte) (bool, error) {
		keys += string(key) + " "
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestRowTwiceInOneBatch: a packed super row written by two row mutations
// of one atomic batch keeps the subcolumns of both. The second mutation's
// prefetch must read the packs the first wrote in the same transaction
// (rowReader), not the store's, which has none yet.
func TestRowTwiceInOneBatch(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "sup", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	ops := func(sub string) []store.Op {
		var o []store.Op
		for _, sc := range []string{"a", "b", "c", "d", "e"} { // enough to prefetch
			o = append(o, enginetest.PutSuper(sc, sub, "v", 10))
		}
		return o
	}
	err := f.e.Apply(context.Background(), &store.Batch{Atomic: true, Rows: []store.RowMutation{
		{Table: tb, Key: []byte("k"), Ops: ops("x")},
		{Table: tb, Key: []byte("k"), Ops: ops("y")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := enginetest.SupersString(f.slice(tb, "k", store.SliceQuery{Count: all}).Supers)
	if want := "a{x=v@10 y=v@10} b{x=v@10 y=v@10} c{x=v@10 y=v@10} d{x=v@10 y=v@10} e{x=v@10 y=v@10}"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
