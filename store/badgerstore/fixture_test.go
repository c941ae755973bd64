package badgerstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// The contract of store.Engine is tested by the backend-neutral suite in
// store/enginetest (contract_test.go). The tests of this package that use
// this fixture are of Badger's own workings: garbage collection of its
// keys, its benchmarks.

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type fixture struct {
	t     testing.TB
	e     *Engine
	clock *testClock
	dir   string
}

func openTestEngine(t testing.TB, dir string, part string) *fixture {
	t.Helper()
	p, err := partition.ByName(part)
	if err != nil {
		t.Fatal(err)
	}
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e, err := Open(context.Background(), Options{
		Dir:         dir,
		Partitioner: p,
		Logger:      slog.New(slog.DiscardHandler),
		Now:         clock.Now,
		InMemory:    dir == "",
	})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, e: e, clock: clock, dir: dir}
	t.Cleanup(func() {
		if f.e != nil {
			f.e.Close()
		}
	})
	return f
}

func newFixture(t *testing.T) *fixture {
	return openTestEngine(t, t.TempDir(), "Murmur3Partitioner")
}

func (f *fixture) table(def store.TableDef) *store.Table {
	f.t.Helper()
	ctx := context.Background()
	if _, ok := f.e.Catalog().Keyspace("ks"); !ok {
		if err := f.e.CreateKeyspace(ctx, store.KeyspaceDef{Name: "ks", StrategyClass: "org.apache.cassandra.locator.SimpleStrategy"}, nil); err != nil {
			f.t.Fatal(err)
		}
	}
	def.Keyspace = "ks"
	if err := f.e.CreateTable(ctx, def); err != nil {
		f.t.Fatal(err)
	}
	tb, ok := f.e.Catalog().Table("ks", def.Name)
	if !ok {
		f.t.Fatal("table not in catalog")
	}
	return tb
}

func (f *fixture) apply(rows ...store.RowMutation) {
	f.t.Helper()
	if err := f.e.Apply(context.Background(), &store.Batch{Rows: rows}); err != nil {
		f.t.Fatal(err)
	}
}

func put(name, value string, ts int64) store.Op {
	return store.Op{Kind: store.OpPut, Name: []byte(name), Value: []byte(value), Timestamp: ts, HasTimestamp: true}
}

func putSuper(super, name, value string, ts int64) store.Op {
	op := put(name, value, ts)
	op.Super = []byte(super)
	return op
}

func (f *fixture) slice(t *store.Table, key string, q store.SliceQuery) *store.SliceResult {
	f.t.Helper()
	var res store.SliceResult
	if err := f.e.Slice(context.Background(), t, []byte(key), &q, &res); err != nil {
		f.t.Fatal(err)
	}
	return &res
}

// cellsString renders cells as "name=value@ts" for compact assertions.
func cellsString(cells []store.Cell) string {
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

func supersString(supers []store.SuperColumn) string {
	var b bytes.Buffer
	for i, s := range supers {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s{%s}", s.Name, cellsString(s.Cells))
	}
	return b.String()
}

const all = 1 << 30
