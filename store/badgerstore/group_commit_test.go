package badgerstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// groupFamilies creates a Standard, a packed Super and a counter family.
func groupFamilies(f *fixture) (std, super, counters func() *store.Table) {
	f.table(store.TableDef{Name: "std", Comparator: "UTF8Type"})
	f.table(store.TableDef{Name: "sup", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	f.table(store.TableDef{Name: "cnt", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	get := func(name string) func() *store.Table {
		return func() *store.Table { tb, _ := f.e.Catalog().Table("ks", name); return tb }
	}
	return get("std"), get("sup"), get("cnt")
}

// applyQueued applies each batch from a goroutine of its own, all of
// them queued for a group as if another writer's transaction were
// committing, then lets them commit; it returns each batch's error.
func applyQueued(t *testing.T, e *Engine, batches []*store.Batch) []error {
	t.Helper()
	return runQueued(t, e, len(batches), func(i int) error { return e.Apply(context.Background(), batches[i]) })
}

// runQueued runs n writers, each from a goroutine of its own, queued for
// a group as applyQueued queues them; it returns each writer's error.
func runQueued(t *testing.T, e *Engine, n int, write func(i int) error) []error {
	t.Helper()
	g := &e.group
	g.mu.Lock()
	if g.leading {
		g.mu.Unlock()
		t.Fatal("a group is committing already")
	}
	g.leading = true
	g.mu.Unlock()

	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = write(i)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		queued := len(g.queue)
		g.mu.Unlock()
		if queued == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers queued after 10 s, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
	e.passLead()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("queued writers still waiting after 30 s")
	}
	return errs
}

// ownStripes names rows that lock stripes no other row of the test
// locks: a writer whose row shares a stripe with a queued writer's waits
// for that lock, not in the queue.
type ownStripes struct {
	e    *Engine
	used map[uint16]bool
}

// key returns base, or base with a suffix, for a row of tb on a stripe of
// its own.
func (o *ownStripes) key(tb *store.Table, base string) []byte {
	for i := 0; ; i++ {
		key := []byte(base)
		if i > 0 {
			key = fmt.Appendf(nil, "%s-%d", base, i)
		}
		rp, _ := o.e.rowPrefix(nil, tb, key)
		if s := o.e.rowLocks.stripe(rp); !o.used[s] {
			o.used[s] = true
			return key
		}
	}
}

// TestGroupCommitSharesOneTransaction: writers queued behind a committing
// writer commit in one transaction, and each one's cells are stored as if
// it had committed alone: Standard cells, packed subcolumns, counter
// updates, an atomic batch of two rows and a row deletion.
func TestGroupCommitSharesOneTransaction(t *testing.T) {
	f := newFixture(t)
	std, super, counters := groupFamilies(f)
	rows := ownStripes{e: f.e, used: map[uint16]bool{}}
	a, s, n := rows.key(std(), "a"), rows.key(super(), "s"), rows.key(counters(), "n")
	b1, b2, gone := rows.key(std(), "b1"), rows.key(std(), "b2"), rows.key(std(), "gone")
	enginetest.Apply(t, f.e, store.RowMutation{Table: std(), Key: gone, Ops: []store.Op{enginetest.Put("c", "old", 10)}})
	f.e.groupedWrites.Store(0)

	batches := []*store.Batch{
		{Rows: []store.RowMutation{{Table: std(), Key: a, Ops: []store.Op{enginetest.Put("c1", "v1", 100), enginetest.Put("c2", "v2", 100)}}}},
		{Rows: []store.RowMutation{{Table: super(), Key: s, Ops: []store.Op{enginetest.PutSuper("sc", "x", "1", 100), enginetest.PutSuper("sc", "y", "2", 100)}}}},
		{Rows: []store.RowMutation{{Table: counters(), Key: n, Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: 7}}}}},
		{Atomic: true, Rows: []store.RowMutation{
			{Table: std(), Key: b1, Ops: []store.Op{enginetest.Put("c", "b1", 100)}},
			{Table: std(), Key: b2, Ops: []store.Op{enginetest.Put("c", "b2", 100)}},
		}},
		{Rows: []store.RowMutation{{Table: std(), Key: gone, Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 20}}}}},
	}
	errs := applyQueued(t, f.e, batches)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	if n := f.e.groupedWrites.Load(); n != int64(len(batches)) {
		t.Errorf("%d writers committed in a shared transaction, want %d", n, len(batches))
	}
	if st, err := f.e.Stats(); err != nil || st.GroupedWrites != int64(len(batches)) || st.AloneAfterGroup != 0 {
		t.Errorf("Stats: %d grouped, %d alone after a failed group (%v); want %d and 0", st.GroupedWrites, st.AloneAfterGroup, err, len(batches))
	}

	cells := func(tb *store.Table, key string) string {
		return enginetest.CellsString(f.slice(tb, key, store.SliceQuery{Count: all}).Cells)
	}
	checks := []struct{ got, want string }{
		{cells(std(), string(a)), "c1=v1@100 c2=v2@100"},
		{cells(std(), string(b1)), "c=b1@100"},
		{cells(std(), string(b2)), "c=b2@100"},
		{cells(std(), string(gone)), ""},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	sup := f.slice(super(), string(s), store.SliceQuery{Count: all})
	if len(sup.Supers) != 1 || enginetest.CellsString(sup.Supers[0].Cells) != "x=1@100 y=2@100" {
		t.Errorf("super row: %+v", sup.Supers)
	}
	cnt := f.slice(counters(), string(n), store.SliceQuery{Count: all})
	if len(cnt.Cells) != 1 || cnt.Cells[0].CounterValue != 7 {
		t.Errorf("counter row: %+v", cnt.Cells)
	}
}

// TestGroupCommitFailingMemberFailsAlone: when one member of a group
// cannot be written, it gets its own error and writes nothing, not even
// the first row of its atomic batch, while every other member of the
// group is stored.
func TestGroupCommitFailingMemberFailsAlone(t *testing.T) {
	f := newFixture(t)
	std, _, _ := groupFamilies(f)
	rows := ownStripes{e: f.e, used: map[uint16]bool{}}
	bad1, bad2 := rows.key(std(), "bad1"), rows.key(std(), "bad2")
	bad := &store.Batch{Atomic: true, Rows: []store.RowMutation{
		{Table: std(), Key: bad1, Ops: []store.Op{enginetest.Put("c", "v", 100)}},
		{Table: std(), Key: bad2, Ops: []store.Op{{Kind: store.OpKind(200), Name: []byte("c"), Timestamp: 100}}},
	}}
	var goodKeys []string
	good := func(base string) *store.Batch {
		key := rows.key(std(), base)
		goodKeys = append(goodKeys, string(key))
		return &store.Batch{Rows: []store.RowMutation{{Table: std(), Key: key, Ops: []store.Op{enginetest.Put("c", string(key), 100)}}}}
	}
	batches := []*store.Batch{good("g1"), bad, good("g2"), good("g3")}
	errs := applyQueued(t, f.e, batches)

	for i, err := range errs {
		if batches[i] == bad {
			if err == nil || !strings.Contains(err.Error(), "not supported") {
				t.Errorf("the failing batch: %v, want its own error", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("batch %d, queued beside a failing one: %v", i, err)
		}
	}
	if n := f.e.aloneAfterGroup.Load(); n != int64(len(batches)) {
		t.Errorf("%d writers applied alone after their group failed, want %d", n, len(batches))
	}
	if st, err := f.e.Stats(); err != nil || st.AloneAfterGroup != int64(len(batches)) {
		t.Errorf("Stats: %d alone after a failed group (%v), want %d", st.AloneAfterGroup, err, len(batches))
	}
	for _, key := range goodKeys {
		if got := enginetest.CellsString(f.slice(std(), key, store.SliceQuery{Count: all}).Cells); got != "c="+key+"@100" {
			t.Errorf("row %s: %q", key, got)
		}
	}
	for _, key := range []string{string(bad1), string(bad2)} {
		if got := enginetest.CellsString(f.slice(std(), key, store.SliceQuery{Count: all}).Cells); got != "" {
			t.Errorf("row %s of the failed batch holds %q", key, got)
		}
	}
}

// TestGroupCommitSurvivesAPanic: when writing a group panics (here, a
// row mutation without its table, which Apply would refuse), the panic is
// the leader's call's, the other members apply alone, and writers after
// it still commit: one bad call does not stall the writers behind it.
func TestGroupCommitSurvivesAPanic(t *testing.T) {
	f := newFixture(t)
	std, _, _ := groupFamilies(f)
	rows := ownStripes{e: f.e, used: map[uint16]bool{}}
	keys := [][]byte{rows.key(std(), "p1"), rows.key(std(), "p2"), rows.key(std(), "p3")}
	const bad = 1
	panicked := make([]bool, len(keys))
	errs := runQueued(t, f.e, len(keys), func(i int) (err error) {
		defer func() {
			if r := recover(); r != nil {
				panicked[i] = true
			}
		}()
		m := store.RowMutation{Table: std(), Key: keys[i], Ops: []store.Op{enginetest.Put("c", "v", 100)}}
		if i == bad {
			m.Table = nil
		}
		return f.e.commitRows(context.Background(), []store.RowMutation{m})
	})
	if !panicked[bad] {
		t.Fatalf("the write without a table did not panic: %v", errs[bad])
	}
	for i, key := range keys {
		if i == bad || panicked[i] {
			continue // a leader's call carries its group's panic
		}
		if errs[i] != nil {
			t.Errorf("writer %d: %v", i, errs[i])
		}
		if got := enginetest.CellsString(f.slice(std(), string(key), store.SliceQuery{Count: all}).Cells); got != "c=v@100" {
			t.Errorf("row %s: %q", key, got)
		}
	}
	// The lead was passed on: a write after the panic commits.
	after := rows.key(std(), "after")
	enginetest.Apply(t, f.e, store.RowMutation{Table: std(), Key: after, Ops: []store.Op{enginetest.Put("c", "v", 100)}})
	f.e.group.mu.Lock()
	led := f.e.group.leading
	f.e.group.mu.Unlock()
	if led {
		t.Error("the group is still led after every writer returned")
	}
}

// TestGroupCommitPanicAfterCommit: when a group's write panics after its
// transaction committed, while the caches are told, the panic is the
// leader's call's and every member's rows stay committed once: no member
// applies its counter add a second time.
func TestGroupCommitPanicAfterCommit(t *testing.T) {
	f := newFixture(t)
	_, _, counters := groupFamilies(f)
	rows := ownStripes{e: f.e, used: map[uint16]bool{}}
	keys := [][]byte{rows.key(counters(), "n1"), rows.key(counters(), "n2"), rows.key(counters(), "n3")}
	var hookRuns atomic.Int32
	f.e.group.beforePublish = func() {
		if hookRuns.Add(1) == 1 {
			panic("publishing failed")
		}
	}
	panicked := make([]bool, len(keys))
	errs := runQueued(t, f.e, len(keys), func(i int) (err error) {
		defer func() {
			if r := recover(); r != nil {
				panicked[i] = true
			}
		}()
		m := store.RowMutation{Table: counters(), Key: keys[i], Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: 7}}}
		return f.e.commitRows(context.Background(), []store.RowMutation{m})
	})
	f.e.group.beforePublish = nil
	if n := hookRuns.Load(); n != 1 {
		t.Fatalf("%d transactions reached publishing, want the group's one", n)
	}
	leaders := 0
	for i := range keys {
		if panicked[i] {
			leaders++
			continue
		}
		if errs[i] != nil {
			t.Errorf("member %d: %v", i, errs[i])
		}
	}
	if leaders != 1 {
		t.Errorf("%d calls carried the panic, want the leader's", leaders)
	}
	for i, key := range keys {
		cnt := f.slice(counters(), string(key), store.SliceQuery{Count: all})
		if len(cnt.Cells) != 1 || cnt.Cells[0].CounterValue != 7 {
			t.Errorf("counter of writer %d: %+v, want 7 counted once", i, cnt.Cells)
		}
	}
	// The lead was passed on, and the counters read right after another add.
	enginetest.Apply(t, f.e, store.RowMutation{Table: counters(), Key: keys[0], Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: 1}}})
	if cnt := f.slice(counters(), string(keys[0]), store.SliceQuery{Count: all}); len(cnt.Cells) != 1 || cnt.Cells[0].CounterValue != 8 {
		t.Errorf("counter after one more add: %+v, want 8", cnt.Cells)
	}
}

// TestGroupCommitUnderContention: many writers adding to shared and to
// their own counters, and writing cells, lose no update whatever groups
// they happen to form.
func TestGroupCommitUnderContention(t *testing.T) {
	f := newFixture(t)
	std, _, counters := groupFamilies(f)
	const writers, rounds = 16, 150
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error {
			own := fmt.Sprintf("own%02d", w)
			for i := range rounds {
				b := &store.Batch{Rows: []store.RowMutation{
					{Table: counters(), Key: []byte(fmt.Sprintf("shared%d", i%4)), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: 1}}},
					{Table: counters(), Key: []byte(own), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("hits"), Delta: 2}}},
				}}
				if i%3 == 0 {
					b = &store.Batch{Rows: []store.RowMutation{{Table: std(), Key: []byte(own), Ops: []store.Op{enginetest.Put(fmt.Sprintf("c%03d", i), own, int64(i+1))}}}}
				}
				if err := f.e.Apply(context.Background(), b); err != nil {
					return fmt.Errorf("writer %d, round %d: %w", w, i, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	counterOf := func(key string) int64 {
		res := f.slice(counters(), key, store.SliceQuery{Count: all})
		if len(res.Cells) != 1 {
			t.Fatalf("counter row %s: %+v", key, res.Cells)
		}
		return res.Cells[0].CounterValue
	}
	adds := 0 // counter batches per writer
	for i := range rounds {
		if i%3 != 0 {
			adds++
		}
	}
	var shared int64
	for s := range 4 {
		shared += counterOf(fmt.Sprintf("shared%d", s))
	}
	if shared != int64(writers*adds) {
		t.Errorf("shared counters sum to %d, want %d", shared, writers*adds)
	}
	for w := range writers {
		own := fmt.Sprintf("own%02d", w)
		if got := counterOf(own); got != int64(2*adds) {
			t.Errorf("counter %s = %d, want %d", own, got, 2*adds)
		}
		if n := len(f.slice(std(), own, store.SliceQuery{Count: all}).Cells); n != rounds-adds {
			t.Errorf("row %s holds %d cells, want %d", own, n, rounds-adds)
		}
	}
	t.Logf("%d of %d writers committed in a shared transaction", f.e.groupedWrites.Load(), writers*rounds)
}

// TestLargeWritersCommitAlone: writers of more than groupAloneOps
// operations never join a group, however many write at once, and every
// cell of theirs is stored.
func TestLargeWritersCommitAlone(t *testing.T) {
	f := newFixture(t)
	std, _, _ := groupFamilies(f)
	f.e.groupedWrites.Store(0)
	const writers, rounds = 8, 20
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error {
			for i := range rounds {
				ops := make([]store.Op, groupAloneOps+1)
				for c := range ops {
					ops[c] = enginetest.Put(fmt.Sprintf("c%03d", c), fmt.Sprintf("v%d", i), int64(i+1))
				}
				b := &store.Batch{Rows: []store.RowMutation{{Table: std(), Key: []byte(fmt.Sprintf("w%d-%d", w, i)), Ops: ops}}}
				if err := f.e.Apply(context.Background(), b); err != nil {
					return fmt.Errorf("writer %d, round %d: %w", w, i, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := f.e.groupedWrites.Load(); n != 0 {
		t.Errorf("%d large writers committed in a shared transaction, want none", n)
	}
	for w := range writers {
		for i := range rounds {
			if n := len(f.slice(std(), fmt.Sprintf("w%d-%d", w, i), store.SliceQuery{Count: all}).Cells); n != groupAloneOps+1 {
				t.Fatalf("row w%d-%d holds %d cells, want %d", w, i, n, groupAloneOps+1)
			}
		}
	}
}

// TestLargeWritersJoinGroupsUnderTheSyncBatch: with the sync batch, where
// every transaction waits for its own sync of Badger's log, writers of
// more than groupAloneOps operations queue for a group like the others
// and commit in one transaction, each with all its cells stored.
func TestLargeWritersJoinGroupsUnderTheSyncBatch(t *testing.T) {
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), Partitioner: p, Sync: SyncBatch,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.deferred != nil {
		t.Fatal("the sync batch deferred writes")
	}
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "std", Comparator: "UTF8Type"})
	rows := ownStripes{e: e, used: map[uint16]bool{}}
	const writers = 4
	keys := make([][]byte, writers)
	batches := make([]*store.Batch, writers)
	for w := range writers {
		keys[w] = rows.key(tb, fmt.Sprintf("w%d", w))
		ops := make([]store.Op, groupAloneOps+1)
		for c := range ops {
			ops[c] = enginetest.Put(fmt.Sprintf("c%03d", c), fmt.Sprintf("v%d", w), 1)
		}
		batches[w] = &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: keys[w], Ops: ops}}}
	}
	for w, err := range applyQueued(t, e, batches) {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	if n := e.groupedWrites.Load(); n != writers {
		t.Errorf("%d of %d large writers committed in a shared transaction, want all", n, writers)
	}
	for w := range writers {
		res := enginetest.Slice(t, e, tb, string(keys[w]), store.SliceQuery{Count: all})
		if len(res.Cells) != groupAloneOps+1 || string(res.Cells[0].Value) != fmt.Sprintf("v%d", w) {
			t.Fatalf("row %s: %s, want %d cells of v%d", keys[w], enginetest.CellsString(res.Cells), groupAloneOps+1, w)
		}
	}
}
