package enginetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// Options are what a test asks of the engine Harness.Open opens.
type Options struct {
	// Partitioner lays the rows out. Open skips the test (t.Skip) if the
	// backend cannot use it.
	Partitioner partition.Partitioner
	// Now is the clock the engine must follow (for expiry and its own
	// timestamps) when Harness.Clock is set.
	Now func() time.Time
}

// Harness opens the engines of one backend for the suite.
type Harness struct {
	// Open returns a new, empty engine for one test and closes it when the
	// test ends (t.Cleanup), unless Reopen closed it before.
	Open func(t testing.TB, opts Options) store.Engine
	// Reopen closes e, an engine Open returned, and opens the same store
	// again: everything written must still be there, under the same
	// schema version. nil skips the tests of persistence.
	Reopen func(t testing.TB, e store.Engine) store.Engine
	// Clock tells whether the engines follow Options.Now: the tests then
	// let time pass at once. Without it they use the real clock, sleep for
	// short waits and skip the tests that need long ones.
	Clock bool
	// LostConflicts, if set, counts the writes the engine had to retry
	// because concurrent writers made them fail; the contention tests then
	// require that it does not grow (writers of one row take turns).
	LostConflicts func() int64
	// ModelSeeds, if positive, is how many of the model test's seeds to
	// play per family kind (default: all): a remote backend pays a network
	// round trip per call and plays fewer.
	ModelSeeds int
}

// test is one test of the suite.
type test struct {
	name string
	run  func(t *testing.T, h *Harness)
}

// tests is the suite, in the order Run runs it.
var tests = []test{
	{"PutAndSliceInComparatorOrder", testPutAndSliceInComparatorOrder},
	{"Reconciliation", testReconciliation},
	{"RowDeletionShadowsOlderWrites", testRowDeletionShadowsOlderWrites},
	{"TTLExpiryAndOriginalTTL", testTTLExpiryAndOriginalTTL},
	{"SuperColumns", testSuperColumns},
	{"PersistenceAcrossReopen", testPersistenceAcrossReopen},
	{"TruncateAndDrop", testTruncateAndDrop},
	{"LongKeysAndNames", testLongKeysAndNames},
	{"EngineAgainstModel", testEngineAgainstModel},
	{"ScanInTokenOrderWithGhosts", testScanInTokenOrderWithGhosts},
	{"ScanRowsHintChangesNothing", testScanRowsHintChangesNothing},
	{"ScanOrderedPartitionerAndLongKeys", testScanOrderedPartitionerAndLongKeys},
	{"FilteredScans", testFilteredScans},
	{"PagedScans", testPagedScans},
	{"ScansReadEachRowAsASlice", testScansReadEachRowAsASlice},
	{"CountersAddAndDelete", testCountersAddAndDelete},
	{"ConcurrentCounterAddsLoseNothing", testConcurrentCounterAddsLoseNothing},
	{"RangeTombstones", testRangeTombstones},
	{"SuperLevelRangeTombstone", testSuperLevelRangeTombstone},
	{"ConditionalWrites", testConditionalWrites},
	{"ManyCounterWritersNeverConflict", testManyCounterWritersNeverConflict},
	{"ManyConditionalWritersNeverConflict", testManyConditionalWritersNeverConflict},
	{"UpdateTableRefusesWhatStoredDataDependsOn", testUpdateTableRefusesWhatStoredDataDependsOn},
	{"UpdateTableAllowsChangesThatKeepDataReadable", testUpdateTableAllowsChangesThatKeepDataReadable},
}

// Run runs the suite against the backend h opens, each test as a subtest
// of t.
func Run(t *testing.T, h Harness) {
	if h.Open == nil {
		t.Fatal("enginetest: Harness.Open is required")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, &h) })
	}
}

// clock is the suite's clock: settable when the harness lets engines
// follow it, the real clock otherwise.
type clock struct {
	settable bool
	mu       sync.Mutex
	now      time.Time
}

func (c *clock) Now() time.Time {
	if !c.settable {
		return time.Now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// maxSleep is the longest wait the suite sleeps through on the real clock.
const maxSleep = 2 * time.Second

// env is one test's engine.
type env struct {
	t     testing.TB
	h     *Harness
	e     store.Engine
	clock *clock
	opts  Options
}

// open opens an engine laid out by the named partitioner.
func open(t testing.TB, h *Harness, partitioner string) *env {
	t.Helper()
	p, err := partition.ByName(partitioner)
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{settable: h.Clock, now: time.Unix(1_800_000_000, 0)}
	opts := Options{Partitioner: p, Now: c.Now}
	e := h.Open(t, opts)
	if e == nil {
		t.Fatal("enginetest: Harness.Open returned no engine")
	}
	return &env{t: t, h: h, e: e, clock: c, opts: opts}
}

func newEnv(t testing.TB, h *Harness) *env {
	return open(t, h, "Murmur3Partitioner")
}

// advance lets d pass: at once on a settable clock, by sleeping through a
// short wait on the real one; a test that needs a longer wait is skipped.
func (f *env) advance(d time.Duration) {
	f.t.Helper()
	if f.clock.settable {
		f.clock.mu.Lock()
		f.clock.now = f.clock.now.Add(d)
		f.clock.mu.Unlock()
		return
	}
	if d > maxSleep {
		f.t.Skipf("letting %v pass needs a settable clock (Harness.Clock)", d)
	}
	time.Sleep(d)
}

// needClock skips a test that lets a long time pass unless the harness
// has a settable clock.
func needClock(t testing.TB, h *Harness) {
	t.Helper()
	if !h.Clock {
		t.Skip("needs a settable clock (Harness.Clock)")
	}
}

// need skips a test that needs a capability the engine lacks.
func (f *env) need(has bool, name, what string) {
	f.t.Helper()
	if !has {
		f.t.Skipf("the engine lacks Capabilities.%s: %s", name, what)
	}
}

func (f *env) caps() store.Capabilities { return f.e.Capabilities() }

// table creates a family in keyspace ks (created on first use) and
// returns it from the catalog.
func (f *env) table(def store.TableDef) *store.Table {
	f.t.Helper()
	return CreateTable(f.t, f.e, def)
}

func (f *env) apply(rows ...store.RowMutation) {
	f.t.Helper()
	Apply(f.t, f.e, rows...)
}

func (f *env) slice(t *store.Table, key string, q store.SliceQuery) *store.SliceResult {
	f.t.Helper()
	return Slice(f.t, f.e, t, key, q)
}

func (f *env) count(t *store.Table, key string, q store.SliceQuery) int {
	f.t.Helper()
	n, err := f.e.Count(context.Background(), t, []byte(key), &q)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// scanKeys returns "key:cells" for every row a scan visits, up to limit.
func (f *env) scanKeys(tb *store.Table, q store.ScanQuery, limit int) []string {
	f.t.Helper()
	var out []string
	var res store.SliceResult
	err := f.e.Scan(context.Background(), tb, &q, &res, func(key []byte) (bool, error) {
		out = append(out, string(key)+":"+CellsString(res.Cells)+SupersString(res.Supers))
		return len(out) < limit, nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

func counterValues(cells []store.Cell) string {
	s := ""
	for i, c := range cells {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%d", c.Name, c.CounterValue)
	}
	return s
}

// all is a count that takes everything.
const all = 1 << 30
