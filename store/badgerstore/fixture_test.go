package badgerstore

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
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

// openTestEngine opens a store on a test clock that applies each write
// before acknowledging it, so that the tests of the write path see what a
// write did once it returns; the contract tests (contract_test.go) and
// the compared stores (openComparedStores) defer theirs.
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

		ApplyBeforeAcknowledging: true,
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
	return enginetest.CreateTable(f.t, f.e, def)
}

func (f *fixture) apply(rows ...store.RowMutation) {
	f.t.Helper()
	enginetest.Apply(f.t, f.e, rows...)
}

func (f *fixture) slice(t *store.Table, key string, q store.SliceQuery) *store.SliceResult {
	f.t.Helper()
	return enginetest.Slice(f.t, f.e, t, key, q)
}

const all = 1 << 30
