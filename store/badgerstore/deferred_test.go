package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// holdApplier lets e's applier apply what is queued, then makes it wait
// before each batch until the returned function is called.
func holdApplier(t *testing.T, e *Engine) (release func()) {
	t.Helper()
	if err := e.settleAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	d := e.deferred
	d.mu.Lock()
	d.beforeApply = func() { <-gate }
	d.mu.Unlock()
	released := false
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(release)
	return release
}

// copyDir copies the files of src into a new directory: what a kill -9 of
// the process leaves, once every write in it is in the page cache.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		in, err := os.Open(path)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(filepath.Join(dst, rel))
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestDeferredWritesReplayedOnceAfterACrash: writes acknowledged but not
// yet applied when the process dies are applied at the next start, and
// only then: a counter counts each add once, however often the store is
// opened again.
func TestDeferredWritesReplayedOnceAfterACrash(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayoutDeferring(t, dir, false, clock, true)
	defer e.Close()
	counters := enginetest.CreateTable(t, e, store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	cells := enginetest.CreateTable(t, e, store.TableDef{Name: "s", Comparator: "UTF8Type"})
	for i := range 10 {
		enginetest.Apply(t, e, store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{add("n", 1)}})
		enginetest.Apply(t, e, store.RowMutation{Table: cells, Key: []byte("r"), Ops: []store.Op{enginetest.Put(fmt.Sprintf("a%d", i), "applied", 1)}})
	}
	release := holdApplier(t, e)
	for i := range 5 {
		enginetest.Apply(t, e, store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{add("n", 10)}})
		enginetest.Apply(t, e, store.RowMutation{Table: cells, Key: []byte("r"), Ops: []store.Op{
			enginetest.Put(fmt.Sprintf("p%d", i), "pending", 2),
			{Kind: store.OpPut, Name: []byte(fmt.Sprintf("t%d", i)), Value: []byte("expiring"), Timestamp: 2, HasTimestamp: true, TTL: 3600},
		}})
	}
	if got := e.deferred.total.Load(); got != 10 {
		t.Fatalf("%d writes pending while the applier is held, want 10", got)
	}
	crashed := copyDir(t, dir)
	release()

	want := func(e *Engine) {
		t.Helper()
		c, _ := e.Catalog().Table("ks", "c")
		if got := counterRow(t, e, c, "k"); !strings.HasPrefix(got, " n=60@") {
			t.Fatalf("counter after the restart: %s, want 60 (10 adds of 1 applied, 5 of 10 replayed)", got)
		}
		s, _ := e.Catalog().Table("ks", "s")
		res := enginetest.Slice(t, e, s, "r", store.SliceQuery{Count: all})
		if len(res.Cells) != 20 {
			t.Fatalf("%d cells after the restart, want 20: %s", len(res.Cells), enginetest.CellsString(res.Cells))
		}
		for _, c := range res.Cells {
			if c.Name[0] == 't' && c.TTL != 3600 {
				t.Fatalf("replayed cell %s has TTL %d, want 3600", c.Name, c.TTL)
			}
		}
	}
	for round := range 3 {
		r := openLayoutDeferring(t, crashed, false, clock, true)
		want(r)
		if round == 0 {
			// A write after the replay goes on from the replayed records.
			c, _ := r.Catalog().Table("ks", "c")
			enginetest.Apply(t, r, store.RowMutation{Table: c, Key: []byte("other"), Ops: []store.Op{add("n", 1)}})
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.settleAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	want(e)
}

// TestReadsWaitForTheirRowsDeferredWrites: a write is acknowledged before
// it is applied, and a read of its row, or a scan, waits for it; a read of
// another row does not; a read that cannot wait long enough times out.
func TestReadsWaitForTheirRowsDeferredWrites(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	e := openLayoutDeferring(t, t.TempDir(), false, clock, true)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "s", Comparator: "UTF8Type"})
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte("other"), Ops: []store.Op{enginetest.Put("c", "old", 1)}})
	// A key of another version slot than "other".
	slotOf := func(key string) rowSlot {
		rp, _ := e.rowPrefix(nil, tb, []byte(key))
		return e.rowLocks.slot(rp)
	}
	key := "k0"
	for i := 1; slotOf(key) == slotOf("other"); i++ {
		key = fmt.Sprintf("k%d", i)
	}
	release := holdApplier(t, e)
	enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte(key), Ops: []store.Op{enginetest.Put("c", "new", 2)}})

	if got := enginetest.CellsString(enginetest.Slice(t, e, tb, "other", store.SliceQuery{Count: all}).Cells); !strings.Contains(got, "old") {
		t.Fatalf("another row read %q while the write was pending", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var out store.SliceResult
	if err := e.Slice(ctx, tb, []byte(key), &store.SliceQuery{Count: all}, &out); !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("a read that could not wait for its row's write: %v, want a timeout", err)
	}

	type result struct {
		what string
		got  string
		err  error
	}
	done := make(chan result, 2)
	go func() {
		var out store.SliceResult
		err := e.Slice(context.Background(), tb, []byte(key), &store.SliceQuery{Count: all}, &out)
		done <- result{"read", enginetest.CellsString(out.Cells), err}
	}()
	go func() {
		var out store.SliceResult
		var keys []string
		err := e.Scan(context.Background(), tb, &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &out, func(k []byte) (bool, error) {
			keys = append(keys, string(k))
			return true, nil
		})
		done <- result{"scan", strings.Join(keys, ","), err}
	}()
	select {
	case r := <-done:
		t.Fatalf("the %s returned %q, %v before the write it must see was applied", r.what, r.got, r.err)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	for range 2 {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatalf("%s: %v", r.what, r.err)
			}
			if !strings.Contains(r.got, map[string]string{"read": "new", "scan": key}[r.what]) {
				t.Fatalf("the %s after the write was applied: %q", r.what, r.got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a read still waits 10 s after the applier was released")
		}
	}
}

// TestDeferredLogReadsWholeRecordsOnly: reading stops at a torn record,
// and at what is left of older records after the log started again.
func TestDeferredLogReadsWholeRecordsOnly(t *testing.T) {
	dir := t.TempDir()
	l, err := openDeferredLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	read := func(after uint64) []string {
		var got []string
		if err := l.records(after, func(seq uint64, p []byte) error {
			got = append(got, fmt.Sprintf("%d:%s", seq, p))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	for i := uint64(1); i <= 4; i++ {
		l.append(i, []byte(strings.Repeat("x", int(i)*10)))
	}
	if got := read(0); len(got) != 4 {
		t.Fatalf("read %d records, want 4", len(got))
	}
	if got := read(2); len(got) != 2 || !strings.HasPrefix(got[0], "3:") {
		t.Fatalf("records after 2: %v", got)
	}
	torn := l.off - 5
	l.data[torn] ^= 0xff
	if got := read(0); len(got) != 3 {
		t.Fatalf("read %d records with the last torn, want 3", len(got))
	}
	l.restart()
	l.append(5, []byte("y"))
	if got := read(0); !reflect.DeepEqual(got, []string{"5:y"}) {
		t.Fatalf("after the restart: %v, want only record 5", got)
	}
	l.append(6, []byte("z"))
	if got := read(5); !reflect.DeepEqual(got, []string{"6:z"}) {
		t.Fatalf("after record 5: %v", got)
	}
}

// FuzzDeferredPayload: a payload decodes to the rows it was made of, and
// any bytes decode without a panic.
func FuzzDeferredPayload(f *testing.F) {
	f.Add([]byte("k"), []byte("name"), []byte("value"), byte(store.OpPut), int64(5), int32(60), false, []byte{})
	f.Add([]byte{}, []byte{}, []byte(nil), byte(store.OpCounterAdd), int64(-1), int32(0), true, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, key, name, value []byte, kind byte, ts int64, ttl int32, super bool, junk []byte) {
		var d deferredRows
		_ = d.decode(junk)
		if key == nil {
			key = []byte{}
		}
		tb := &store.Table{Backend: &tableState{dataID: 7}}
		op := store.Op{Kind: store.OpKind(kind), Name: name, Value: value, Timestamp: ts, HasTimestamp: ts%2 == 0, TTL: ttl, Delta: ts / 3}
		if super {
			op.Super = bytes.Clone(name)
			op.Start, op.Finish = value, []byte{}
		}
		rows := []store.RowMutation{{Table: tb, Key: key, Ops: []store.Op{op, {Kind: store.OpDeleteRow, Timestamp: ts}}}, {Table: tb, Key: bytes.Clone(key), Ops: []store.Op{}}}
		p := appendDeferred(nil, ts, int64(ttl), rows)
		if err := d.decode(p); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if d.nowMicro != ts || d.realNow != int64(ttl) || !reflect.DeepEqual(d.dataIDs, []uint32{7, 7}) {
			t.Fatalf("decoded clock %d %d, ids %v", d.nowMicro, d.realNow, d.dataIDs)
		}
		for i := range rows {
			d.rows[i].Table = tb
		}
		norm := func(rs []store.RowMutation) string { return fmt.Sprintf("%#v", rs) }
		if norm(d.rows) != norm(rows) {
			t.Fatalf("decoded\n%s\nwant\n%s", norm(d.rows), norm(rows))
		}
		if err := d.decode(p[:len(p)-1]); err == nil {
			t.Fatal("a cut payload decoded")
		}
	})
}

// TestCloseLeavesWhatItCannotApply: a Close that cannot wait for the
// applier leaves the writes it has not applied in the log; an offline
// backup refuses the directory, and the next start applies them.
func TestCloseLeavesWhatItCannotApply(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	dir := t.TempDir()
	e := openLayoutDeferring(t, dir, false, clock, true)
	counters := enginetest.CreateTable(t, e, store.TableDef{Name: "c", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	enginetest.Apply(t, e, store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{add("n", 1)}})
	release := holdApplier(t, e)
	for range 3 {
		enginetest.Apply(t, e, store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{add("n", 10)}})
	}
	e.deferred.closeWait = 50 * time.Millisecond
	go func() {
		time.Sleep(200 * time.Millisecond)
		release()
	}()
	if err := e.Close(); err == nil || !strings.Contains(err.Error(), "3 acknowledged writes were not applied") {
		t.Fatalf("Close with the applier held: %v", err)
	}
	if ro, err := OpenReadOnly(context.Background(), dir, nil); err == nil || !strings.Contains(err.Error(), "3 acknowledged writes not yet applied") {
		if ro != nil {
			ro.Close()
		}
		t.Fatalf("read-only open of a store with writes not applied: %v", err)
	}
	r := openLayoutDeferring(t, dir, false, clock, true)
	c, _ := r.Catalog().Table("ks", "c")
	if got := counterRow(t, r, c, "k"); !strings.HasPrefix(got, " n=31@") {
		t.Fatalf("counter after the next start: %s, want 31", got)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(context.Background(), dir, nil)
	if err != nil {
		t.Fatalf("read-only open once the writes were applied: %v", err)
	}
	ro.Close()
}

// recordedLog is a slog handler that keeps the messages logged to it.
type recordedLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *recordedLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *recordedLog) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *recordedLog) WithGroup(string) slog.Handler            { return l }
func (l *recordedLog) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}

// count returns how many messages contained s.
func (l *recordedLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			n++
		}
	}
	return n
}

// damageQueued overwrites the record of the queued write that is nth from
// the end of e's queue, so that the applier cannot decode it.
func damageQueued(e *Engine, nth int) {
	d := e.deferred
	d.mu.Lock()
	defer d.mu.Unlock()
	j := d.queue[len(d.queue)-nth]
	for i := range j.payload {
		j.payload[i] = 0xff
	}
}

// waitForRetries waits until logs holds n messages of a deferred write
// retried.
func waitForRetries(t *testing.T, logs *recordedLog, n int) {
	t.Helper()
	const retrying = "could not be applied yet"
	deadline := time.Now().Add(20 * time.Second)
	for logs.count(retrying) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d retries logged in 20 s while the disk check failed, want %d", logs.count(retrying), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAWriteTheStoreCannotApplyIsDroppedOnce: an acknowledged write that
// the store keeps failing to apply, with the disk fine, is retried, then
// logged, counted and dropped, and the applied mark moves past it, so that
// no later start applies it; the writes before and after it are applied.
// While the disk check fails (a full disk, a data directory gone), the
// same write is retried and never dropped. The write is damaged in
// memory after its acknowledgement: the one failure a test can make that
// does not pass.
func TestAWriteTheStoreCannotApplyIsDroppedOnce(t *testing.T) {
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	open := func(dir string, h slog.Handler) *Engine {
		t.Helper()
		e, err := Open(context.Background(), Options{Dir: dir, Partitioner: p, Logger: slog.New(h), GCInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	logs := &recordedLog{}
	dir := t.TempDir()
	e := open(dir, logs)
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "s", Comparator: "UTF8Type"})
	put := func(row, name string) {
		enginetest.Apply(t, e, store.RowMutation{Table: tb, Key: []byte(row), Ops: []store.Op{enginetest.Put(name, "v", 1)}})
	}
	release := holdApplier(t, e)
	put("r1", "before")
	put("r2", "damaged")
	damageQueued(e, 1)
	e.disk.gone.Store(true) // the disk check fails: the failure may pass
	release()
	waitForRetries(t, logs, 7)
	st, err := e.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// The write before it is pending too if the applier took both in one
	// batch.
	if st.DeferredDropped != 0 || st.DeferredPending < 1 {
		t.Fatalf("while the disk check failed: %d dropped, %d pending; want none dropped, the write pending", st.DeferredDropped, st.DeferredPending)
	}

	e.disk.gone.Store(false) // the disk is fine: the failure does not pass
	if err := e.settleAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st, _ = e.Stats(); st.DeferredDropped != 1 || st.DeferredPending != 0 {
		t.Fatalf("once the disk check passed: %d dropped, %d pending; want 1 and 0", st.DeferredDropped, st.DeferredPending)
	}
	if n := logs.count("could not be applied and is dropped"); n != 1 {
		t.Fatalf("%d drops logged, want 1", n)
	}
	want := func(e *Engine, when string, rows map[string]string) {
		t.Helper()
		tb, _ := e.Catalog().Table("ks", "s")
		for row, cells := range rows {
			res := enginetest.Slice(t, e, tb, row, store.SliceQuery{Count: all})
			got := ""
			for _, c := range res.Cells {
				got += string(c.Name)
			}
			if got != cells {
				t.Fatalf("%s: row %s holds %q, want %q", when, row, got, cells)
			}
		}
	}
	want(e, "after the drop", map[string]string{"r1": "before", "r2": ""})

	// The log still holds the dropped write's record, the last one; a
	// start after a crash now applies it no more.
	crashed := copyDir(t, dir)
	r := open(crashed, slog.DiscardHandler)
	want(r, "after a start on a crashed copy", map[string]string{"r1": "before", "r2": ""})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	put("r3", "after")
	want(e, "after a write that followed the drop", map[string]string{"r1": "before", "r2": "", "r3": "after"})
}

// TestARetriedWriteHoldsBackOnlyItsOwnRows: a batch of deferred writes
// that fails is applied write by write. While one of them is retried (the
// disk check fails, so writes are refused and reads go on), the row
// applied before it in the batch is read; only the row written after it
// still waits, and its read ends in store.ErrTimeout.
func TestARetriedWriteHoldsBackOnlyItsOwnRows(t *testing.T) {
	p, err := partition.ByName("Murmur3Partitioner")
	if err != nil {
		t.Fatal(err)
	}
	logs := &recordedLog{}
	e, err := Open(context.Background(), Options{Dir: t.TempDir(), Partitioner: p, Logger: slog.New(logs), GCInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tb := enginetest.CreateTable(t, e, store.TableDef{Name: "s", Comparator: "UTF8Type"})
	stripe := func(row string) uint16 {
		rp, _ := e.rowPrefix(nil, tb, []byte(row))
		return e.rowLocks.stripe(rp)
	}
	// Three rows under three different locks.
	damaged := "damaged"
	rowNotUnder := func(name string, taken ...string) string {
		for i := 0; ; i++ {
			row := fmt.Sprintf("%s-%d", name, i)
			free := true
			for _, o := range taken {
				free = free && stripe(row) != stripe(o)
			}
			if free {
				return row
			}
		}
	}
	before := rowNotUnder("before", damaged)
	after := rowNotUnder("after", damaged, before)
	write := func(ctx context.Context, row, name string) error {
		return e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte(row), Ops: []store.Op{enginetest.Put(name, "v", 1)}}}})
	}
	read := func(ctx context.Context, row string) (string, error) {
		var res store.SliceResult
		if err := e.Slice(ctx, tb, []byte(row), &store.SliceQuery{Count: all}, &res); err != nil {
			return "", err
		}
		got := ""
		for _, c := range res.Cells {
			got += string(c.Name)
		}
		return got, nil
	}

	release := holdApplier(t, e)
	// The applier takes this one alone, or with the three below: either
	// way the three are applied in one batch.
	if err := write(context.Background(), "decoy", "x"); err != nil {
		t.Fatal(err)
	}
	for _, w := range [][2]string{{before, "b"}, {damaged, "d"}, {after, "a"}} {
		if err := write(context.Background(), w[0], w[1]); err != nil {
			t.Fatal(err)
		}
	}
	damageQueued(e, 2)
	e.disk.gone.Store(true) // the disk check fails: the write is retried
	release()
	waitForRetries(t, logs, 2)
	d := e.deferred

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if got, err := read(ctx, before); err != nil || got != "b" {
		t.Fatalf("read of the row applied before the retried write: %q, %v; want %q", got, err, "b")
	}
	short, cancelShort := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelShort()
	if got, err := read(short, after); !errors.Is(err, store.ErrTimeout) {
		t.Fatalf("read of the row written after the retried write: %q, %v; want store.ErrTimeout", got, err)
	}
	if st, err := e.Stats(); err != nil || st.DeferredDropped != 0 {
		t.Fatalf("while the disk check failed: %+v, %v; want nothing dropped", st, err)
	}

	e.disk.gone.Store(false) // the disk is fine: the write is dropped
	if err := e.settleAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, row := range []string{before, damaged, after, "decoy"} {
		rp, _ := e.rowPrefix(nil, tb, []byte(row))
		if n := d.pending[e.rowLocks.slot(rp)].Load(); n != 0 {
			t.Fatalf("after the drop: row %s's slot counts %d pending writes, want 0", row, n)
		}
	}
	for row, want := range map[string]string{before: "b", damaged: "", after: "a", "decoy": "x"} {
		if got, err := read(ctx, row); err != nil || got != want {
			t.Fatalf("after the drop: row %s holds %q, %v; want %q", row, got, err, want)
		}
	}
}
