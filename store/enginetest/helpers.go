package enginetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/thriftbridge/thriftbridge/store"
)

// The helpers below serve the suite and the tests of a backend's own
// workings (its garbage collection, its benchmarks) alike.

// CreateTable creates def in keyspace "ks" of e (created on first use) and
// returns the family from the catalog.
func CreateTable(tb testing.TB, e store.Engine, def store.TableDef) *store.Table {
	tb.Helper()
	ctx := context.Background()
	if _, ok := e.Catalog().Keyspace("ks"); !ok {
		if err := e.CreateKeyspace(ctx, store.KeyspaceDef{Name: "ks", StrategyClass: "org.apache.cassandra.locator.SimpleStrategy"}, nil); err != nil {
			tb.Fatal(err)
		}
	}
	def.Keyspace = "ks"
	if err := e.CreateTable(ctx, def); err != nil {
		tb.Fatal(err)
	}
	t, ok := e.Catalog().Table("ks", def.Name)
	if !ok {
		tb.Fatal("table not in catalog")
	}
	return t
}

// Apply applies rows as one batch.
func Apply(tb testing.TB, e store.Engine, rows ...store.RowMutation) {
	tb.Helper()
	if err := e.Apply(context.Background(), &store.Batch{Rows: rows}); err != nil {
		tb.Fatal(err)
	}
}

// Slice reads what q selects of one row.
func Slice(tb testing.TB, e store.Engine, t *store.Table, key string, q store.SliceQuery) *store.SliceResult {
	tb.Helper()
	var res store.SliceResult
	if err := e.Slice(context.Background(), t, []byte(key), &q, &res); err != nil {
		tb.Fatal(err)
	}
	return &res
}

// Put is a write of one column with the client's timestamp.
func Put(name, value string, ts int64) store.Op {
	return store.Op{Kind: store.OpPut, Name: []byte(name), Value: []byte(value), Timestamp: ts, HasTimestamp: true}
}

// PutSuper is a write of one subcolumn.
func PutSuper(super, name, value string, ts int64) store.Op {
	op := Put(name, value, ts)
	op.Super = []byte(super)
	return op
}

// CellsString renders cells as "name=value@ts" for compact assertions.
func CellsString(cells []store.Cell) string {
	var b bytes.Buffer
	for i, c := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%s@%d", c.Name, c.Value, c.Timestamp)
		if c.TTL > 0 {
			fmt.Fprintf(&b, "/ttl%d", c.TTL)
		}
	}
	return b.String()
}

// SupersString renders super columns as "name{cells}".
func SupersString(supers []store.SuperColumn) string {
	var b bytes.Buffer
	for i, s := range supers {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s{%s}", s.Name, CellsString(s.Cells))
	}
	return b.String()
}
