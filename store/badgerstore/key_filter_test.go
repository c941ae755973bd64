package badgerstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// TestCounterFilterHoldsEveryKeyItWasGiven: a filter grown through many
// parts holds every key put into it, and few others.
func TestCounterFilterHoldsEveryKeyItWasGiven(t *testing.T) {
	fs := newKeyFilters(counterKeys, 64<<20)
	f := newKeyFilter()
	const keys = 200_000
	for i := range keys {
		f.add(fs, fs.hash(fmt.Appendf(nil, "key-%d", i)))
	}
	for i := range keys {
		if !f.holds(fs.hash(fmt.Appendf(nil, "key-%d", i))) {
			t.Fatalf("key %d was put into the filter and is not held", i)
		}
	}
	parts := *f.parts.Load()
	if len(parts) < 5 || f.full.Load() {
		t.Fatalf("%d parts, full %v: the filter did not grow as expected", len(parts), f.full.Load())
	}
	if fs.bytes.Load() != f.size() {
		t.Fatalf("accounted %d bytes, the parts hold %d", fs.bytes.Load(), f.size())
	}
	falsePositives := 0
	for i := range keys {
		if f.holds(fs.hash(fmt.Appendf(nil, "other-%d", i))) {
			falsePositives++
		}
	}
	// About 0.5% a part; the parts' rates add up.
	if rate := float64(falsePositives) / keys; rate > 0.04 {
		t.Fatalf("%.1f%% of keys never put in are held", 100*rate)
	}
	t.Logf("%d parts, %d bytes, %.2f%% false positives", len(parts), f.size(), 100*float64(falsePositives)/keys)
}

// TestCounterFilterStopsVouchingWhenFull: a filter vouches for no key
// before it is complete, nor once it could not grow within its bound; a
// retired filter gives its memory back.
func TestCounterFilterStopsVouchingWhenFull(t *testing.T) {
	fs := newKeyFilters(counterKeys, newBloomPart(keyFilterFirstKeys).size())
	f := newKeyFilter()
	unknown := keyProbe{f: f, h: fs.hash([]byte("never"))}
	if unknown.absent() {
		t.Fatal("a filter not yet complete vouches that a key is absent")
	}
	f.known.Store(true)
	for i := range 2 * keyFilterFirstKeys {
		f.add(fs, fs.hash(fmt.Appendf(nil, "key-%d", i)))
	}
	if !f.full.Load() {
		t.Fatal("the filter grew past its bound")
	}
	p := keyProbe{f: f, h: fs.hash([]byte("never")), known: true}
	p.held = f.holds(p.h)
	if p.absent() {
		t.Fatal("a full filter vouches that a key is absent")
	}
	f.retire(fs)
	if n := fs.bytes.Load(); n != 0 {
		t.Fatalf("%d bytes accounted after the filter retired", n)
	}
}

// counterFamily creates a Standard counter family "c".
func counterFamily(f *fixture) *store.Table {
	return f.table(store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
}

// addEach adds delta to counters n0..n(count-1) of row k, one call each.
func addEach(f *fixture, tb *store.Table, count int, delta int64) {
	f.t.Helper()
	for i := range count {
		f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{add(fmt.Sprintf("n%03d", i), delta)}})
	}
}

// counterValues renders row k's counters as name=value.
func counterValues(t *testing.T, f *fixture, tb *store.Table) string {
	t.Helper()
	var b strings.Builder
	for _, c := range f.slice(tb, "k", store.SliceQuery{Count: all}).Cells {
		fmt.Fprintf(&b, "%s=%d ", c.Name, c.CounterValue)
	}
	return b.String()
}

func wantCounters(count int, value int64) string {
	var b strings.Builder
	for i := range count {
		fmt.Fprintf(&b, "n%03d=%d ", i, value)
	}
	return b.String()
}

// waitCountersListed waits, boundedly, for the scan at open to complete the
// filter of tb's family.
func waitCountersListed(t *testing.T, f *fixture, tb *store.Table) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f.e.counterFilters.of(tb).known.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the counters of a store with data were not listed in 20 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCounterFilterSparesFirstAdds: the first add of each counter of a new
// family reads nothing, later adds read their counter and lose nothing;
// after a reopen the family's keys are listed and adds to the counters
// stored before add to them; a truncated family starts again from zero,
// vouched for at once.
func TestCounterFilterSparesFirstAdds(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	tb := counterFamily(f)
	addEach(f, tb, 50, 1)
	if n := f.e.counterFilters.skipped.Load(); n != 50 {
		t.Fatalf("%d first adds read nothing, want 50", n)
	}
	addEach(f, tb, 50, 2)
	if n := f.e.counterFilters.skipped.Load(); n != 50 {
		t.Fatalf("%d adds read nothing after the second adds, want 50", n)
	}
	if got, want := counterValues(t, f, tb), wantCounters(50, 3); got != want {
		t.Fatalf("counters:\n got %s\nwant %s", got, want)
	}

	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	f = openTestEngine(t, dir, "Murmur3Partitioner")
	tb, _ = f.e.Catalog().Table("ks", "c")
	waitCountersListed(t, f, tb)
	addEach(f, tb, 100, 4)
	if n := f.e.counterFilters.skipped.Load(); n != 50 {
		t.Fatalf("after the reopen %d adds read nothing, want 50 (the new counters)", n)
	}
	if got, want := counterValues(t, f, tb), wantCounters(50, 7)+wantCounters(100, 4)[len(wantCounters(50, 4)):]; got != want {
		t.Fatalf("counters after the reopen:\n got %s\nwant %s", got, want)
	}

	if err := f.e.Truncate(context.Background(), "ks", "c"); err != nil {
		t.Fatal(err)
	}
	tb, _ = f.e.Catalog().Table("ks", "c")
	if !f.e.counterFilters.of(tb).known.Load() {
		t.Fatal("a truncated family's filter waits for a scan")
	}
	addEach(f, tb, 10, 5)
	if n := f.e.counterFilters.skipped.Load(); n != 60 {
		t.Fatalf("after the truncation %d adds read nothing, want 60", n)
	}
	if got, want := counterValues(t, f, tb), wantCounters(10, 5); got != want {
		t.Fatalf("counters after the truncation:\n got %s\nwant %s", got, want)
	}
}

// TestCounterFilterDeletedCounterIsRead: a counter deleted before its
// first add is read by that add (its tombstone decides), as without the
// filter.
func TestCounterFilterDeletedCounterIsRead(t *testing.T) {
	f := newFixture(t)
	tb := counterFamily(f)
	later := f.clock.Now().Add(time.Hour).UnixMicro()
	f.apply(store.RowMutation{Table: tb, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpDeleteCell, Name: []byte("n000"), Timestamp: later}}})
	addEach(f, tb, 1, 1)
	if n := f.e.counterFilters.skipped.Load(); n != 0 {
		t.Fatalf("an add to a deleted counter read nothing (%d skipped)", n)
	}
	if got := counterValues(t, f, tb); got != "" {
		t.Fatalf("an add older than the counter's deletion shows: %s", got)
	}
}

// TestCounterFilterAddsDuringTheListing: adds to counters stored before a
// reopen, made while the scan lists them, lose nothing.
func TestCounterFilterAddsDuringTheListing(t *testing.T) {
	dir := t.TempDir()
	f := openTestEngine(t, dir, "Murmur3Partitioner")
	tb := counterFamily(f)
	const rows, names = 200, 20
	batch := func(row int, delta int64) store.RowMutation {
		ops := make([]store.Op, names)
		for i := range ops {
			ops[i] = add(fmt.Sprintf("n%03d", i), delta)
		}
		return store.RowMutation{Table: tb, Key: fmt.Appendf(nil, "r%d", row), Ops: ops}
	}
	for r := range rows {
		f.apply(batch(r, 1))
	}
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	f = openTestEngine(t, dir, "Murmur3Partitioner")
	tb, _ = f.e.Catalog().Table("ks", "c")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for r := w; r < rows; r += 4 {
				if err := f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{batch(r, 1)}}); err != nil {
					t.Error(err)
					return
				}
				// One counter at a time too, as add does.
				m := batch(r, 1)
				m.Ops = m.Ops[:1]
				if err := f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{m}}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	waitCountersListed(t, f, tb)
	for r := range rows {
		m := batch(r, 1)
		m.Ops = m.Ops[:1]
		f.apply(m)
	}
	for r := range rows {
		cells := f.slice(tb, fmt.Sprintf("r%d", r), store.SliceQuery{Count: all}).Cells
		if len(cells) != names {
			t.Fatalf("row r%d has %d counters, want %d", r, len(cells), names)
		}
		for i, c := range cells {
			want := int64(2)
			if i == 0 {
				want = 4
			}
			if c.CounterValue != want {
				t.Fatalf("row r%d, counter %s = %d, want %d", r, c.Name, c.CounterValue, want)
			}
		}
	}
	if n := f.e.counterFilters.skipped.Load(); n != 0 {
		t.Fatalf("%d adds to stored counters read nothing", n)
	}
}

// TestCounterFilterListingKeepsWritesMadeBeforeIt: a filter registered
// incomplete takes the keys written before its listing ends from the
// writers themselves, and once listed holds the stored keys too; adds to
// all of them read, adds to new counters do not.
func TestCounterFilterListingKeepsWritesMadeBeforeIt(t *testing.T) {
	f := newFixture(t)
	tb := counterFamily(f)
	addEach(f, tb, 10, 1) // stored before the filter below exists
	fs := newKeyFilters(counterKeys, f.e.memory.CounterFilter)
	f.e.counterFilters = fs
	unscanned := fs.publish(f.e.Catalog(), math.MaxUint32)
	if len(unscanned) != 1 || fs.of(tb).known.Load() {
		t.Fatalf("a family with data got a complete filter (%d to list)", len(unscanned))
	}
	addEach(f, tb, 20, 1) // n000-n009 again, n010-n019 new: all read
	if n := fs.skipped.Load(); n != 0 {
		t.Fatalf("%d adds read nothing before the listing", n)
	}
	if err := f.e.listKeys(context.Background(), fs, unscanned); err != nil {
		t.Fatal(err)
	}
	if !fs.of(tb).known.Load() {
		t.Fatal("the listing did not complete the filter")
	}
	addEach(f, tb, 30, 1) // n000-n019 read, n020-n029 new
	if n := fs.skipped.Load(); n != 10 {
		t.Fatalf("%d adds read nothing after the listing, want 10", n)
	}
	if got, want := counterValues(t, f, tb), wantCounters(10, 3)+wantCounters(20, 2)[len(wantCounters(10, 2)):]+wantCounters(30, 1)[len(wantCounters(20, 1)):]; got != want {
		t.Fatalf("counters:\n got %s\nwant %s", got, want)
	}
}
