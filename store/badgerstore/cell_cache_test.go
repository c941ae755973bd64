package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// getOne reads one named cell of a row, as a Thrift get does.
func getOne(t *testing.T, e *Engine, tb *store.Table, row, name string) string {
	t.Helper()
	res := enginetest.Slice(t, e, tb, row, store.SliceQuery{Names: [][]byte{[]byte(name)}, Count: all})
	return enginetest.CellsString(res.Cells)
}

// sliceQueries are reads of every kind of a row of the names c0 to c4;
// the first four may take the row's image, and all may read it.
var sliceQueries = []store.SliceQuery{
	{Count: all},
	{Count: all, Reversed: true},
	{Count: 3},
	{Count: 2, Reversed: true},
	{Start: []byte("c1"), Finish: []byte("c3"), Count: all},
	{Start: []byte("c3"), Finish: []byte("c1"), Reversed: true, Count: all},
	{Start: []byte("c2"), Count: 2},
	{Finish: []byte("c2"), Reversed: true, Count: all},
	{Names: [][]byte{[]byte("c4"), []byte("c0"), []byte("c2"), []byte("c0")}, Count: all},
	{Names: [][]byte{[]byte("c9")}, Count: all},
	{Ranges: []store.NameRange{{Start: []byte("c3")}, {Start: []byte("c0"), Finish: []byte("c1")}}, Count: all},
	{Ranges: []store.NameRange{{Start: []byte("c4"), Finish: []byte("c3")}, {Start: []byte("c1"), Finish: []byte("c0")}}, Reversed: true, Count: 3},
}

// randomSliceQuery is a slice of names, of a range, or of two ranges of a
// row of the names c0 to c4, whose bounds may fall between names or past
// them.
func randomSliceQuery(rng *rand.Rand) store.SliceQuery {
	bound := func() []byte {
		if rng.Intn(4) == 0 {
			return nil
		}
		return fmt.Appendf(nil, "c%d%s", rng.Intn(6), []string{"", "", "5"}[rng.Intn(3)])
	}
	q := store.SliceQuery{Count: 1 + rng.Intn(6), Reversed: rng.Intn(2) == 0}
	switch rng.Intn(3) {
	case 0:
		for n := 1 + rng.Intn(3); n > 0; n-- {
			if b := bound(); b != nil {
				q.Names = append(q.Names, b)
			}
		}
		if q.Names == nil {
			q.Names = [][]byte{[]byte("c0")}
		}
	case 1:
		q.Start, q.Finish = bound(), bound()
	default:
		q.Ranges = []store.NameRange{{Start: bound(), Finish: bound()}, {Start: bound(), Finish: bound()}}
	}
	return q
}

// TestCellCacheChangesNoResult runs the same random writes, expiring
// cells, cell, row and range deletions, failed batches, collections and
// truncations on two stores on one clock, one without a cell cache, and
// compares a get of every name of every row, the slices of sliceQueries
// and four random slices after each step, each twice, so that the second
// is answered from the cache where the first filled it.
func TestCellCacheChangesNoResult(t *testing.T) {
	clock := &testClock{now: time.Unix(1_800_000_000, 0)}
	// Badger expires records on the wall clock, grace seconds after the
	// engine's clock says they died; a grace longer than the test keeps
	// the two stores' reads, a moment apart, from straddling an expiry.
	grace := int32(3600)
	engines, tables := openComparedStores(t, clock, store.TableDef{Name: "S", Comparator: "UTF8Type", GCGraceSeconds: &grace})
	engines[1].cells = nil
	rng := rand.New(rand.NewSource(7))
	// The row "wide" also holds cells past the names, more than an image
	// holds: its gets read cells, not an image.
	rows := []string{"r0", "r1", "r2", "r3", "wide"}
	names := []string{"c0", "c1", "c2", "c3", "c4"}
	widen := func(step int) {
		var ops []store.Op
		for i := range maxRowImage/1024 + 2 {
			ops = append(ops, store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "w%02d", i), Value: bytes.Repeat([]byte("w"), 1024), Timestamp: 1, HasTimestamp: true})
		}
		applyToBoth(t, engines, tables, []store.RowMutation{{Key: []byte("wide"), Ops: ops}}, false, step)
	}
	widen(0)
	ts := func() int64 { return clock.Now().UnixMicro() - int64(rng.Intn(3000)) }
	rowOps := func() []store.Op {
		var ops []store.Op
		for n := 1 + rng.Intn(4); n > 0; n-- {
			op := store.Op{Name: []byte(names[rng.Intn(len(names))]), Timestamp: ts(), HasTimestamp: true}
			switch r := rng.Intn(100); {
			case r < 70:
				op.Kind, op.Value = store.OpPut, []byte(fmt.Sprint(rng.Intn(100)))
				if rng.Intn(4) == 0 {
					op.TTL = int32(1 + rng.Intn(3))
				}
			case r < 88:
				op.Kind = store.OpDeleteCell
			case r < 95:
				op.Kind, op.Name = store.OpDeleteRow, nil
			default:
				op.Kind, op.Name = store.OpDeleteRange, nil
				op.Start, op.Finish = []byte("c1"), []byte("c3")
			}
			ops = append(ops, op)
		}
		return ops
	}
	collected, truncated := 0, 0
	for step := 0; step < 600; step++ {
		key := rows[rng.Intn(len(rows))]
		ops := rowOps()
		if key == "wide" {
			for i := range ops {
				if ops[i].Kind == store.OpDeleteRow {
					ops[i].Kind, ops[i].Name = store.OpDeleteCell, []byte("c0")
				}
			}
		}
		batch := []store.RowMutation{{Key: []byte(key), Ops: ops}}
		collected += stepBoth(t, engines, tables, batch, rng.Intn(12) == 0, rows, rng, clock, grace, step)
		if rng.Intn(150) == 0 {
			for i, e := range engines {
				if err := e.Truncate(context.Background(), "ks", "S"); err != nil {
					t.Fatal(err)
				}
				tb, ok := e.Catalog().Table("ks", "S")
				if !ok {
					t.Fatal("the family is gone after its truncation")
				}
				tables[i] = tb
			}
			truncated++
			widen(step)
		}
		for _, row := range rows {
			for _, name := range names {
				for pass := 0; pass < 2; pass++ {
					with, without := getOne(t, engines[0], tables[0], row, name), getOne(t, engines[1], tables[1], row, name)
					if with != without {
						t.Fatalf("step %d, row %s, name %s, read %d:\nwith the cache    %q\nwithout the cache %q", step, row, name, pass+1, with, without)
					}
				}
			}
			// Each step starts from another query, so that each kind
			// of slice that may take an image reads the row first, and
			// ends with random ones, bounds between the names included.
			queries := append([]store.SliceQuery(nil), sliceQueries[step%len(sliceQueries):]...)
			queries = append(queries, sliceQueries[:step%len(sliceQueries)]...)
			for range 4 {
				queries = append(queries, randomSliceQuery(rng))
			}
			for i, q := range queries {
				for pass := 0; pass < 2; pass++ {
					with := enginetest.CellsString(enginetest.Slice(t, engines[0], tables[0], row, q).Cells)
					without := enginetest.CellsString(enginetest.Slice(t, engines[1], tables[1], row, q).Cells)
					if with != without {
						t.Fatalf("step %d, row %s, slice %d %+v, read %d:\nwith the cache    %q\nwithout the cache %q", step, row, i, q, pass+1, with, without)
					}
				}
			}
		}
	}
	st := engines[0].cells.stats()
	if st.hits == 0 || st.rowHits == 0 || collected == 0 || truncated == 0 {
		t.Fatalf("the test missed a path: cache %+v, cells collected %d, truncations %d", st, collected, truncated)
	}
	t.Logf("cell cache: %+v; cells collected: %d; truncations: %d", st, collected, truncated)
}

// TestCellCacheAfterAcknowledgedWrites: writers and readers of the same
// cells at once. A read never returns a cell older than the last write
// acknowledged before it began, nor older than what the same reader read
// before, while the readers are answered from the cache between writes.
//
// In a Super family of row packs the cell is a subcolumn, and its gets
// read the row pack, which the cache keeps too.
func TestCellCacheAfterAcknowledgedWrites(t *testing.T) {
	t.Run("standard", func(t *testing.T) { checkCacheAfterAcknowledgedWrites(t, nil) })
	t.Run("row packs", func(t *testing.T) { checkCacheAfterAcknowledgedWrites(t, []byte("s")) })
}

// checkCacheAfterAcknowledgedWrites is TestCellCacheAfterAcknowledgedWrites
// in a standard family (super nil) or in the super column super of a
// Super family.
func checkCacheAfterAcknowledgedWrites(t *testing.T, super []byte) {
	f := newFixture(t)
	def := store.TableDef{Name: "cf", Comparator: "BytesType"}
	if super != nil {
		def.Super, def.SubComparator = true, "BytesType"
	}
	tb := f.table(def)
	if super != nil && !rowPackedTable(tb) {
		t.Fatal("a new Super family has no row packs")
	}
	const rows, writes, readers = 8, 300, 4
	var acked [rows]atomic.Int64
	put := func(row int, ts int64) error {
		v := binary.BigEndian.AppendUint64(nil, uint64(ts))
		return f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: fmt.Appendf(nil, "row%d", row),
			Ops: []store.Op{{Kind: store.OpPut, Super: super, Name: []byte("c"), Value: v, Timestamp: ts, HasTimestamp: true}}}}})
	}
	get := func(row int) string {
		res := enginetest.Slice(t, f.e, tb, fmt.Sprintf("row%d", row), store.SliceQuery{Super: super, Names: [][]byte{[]byte("c")}, Count: all})
		return enginetest.CellsString(res.Cells)
	}
	for row := range rows {
		if err := put(row, 1); err != nil {
			t.Fatal(err)
		}
		acked[row].Store(1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, rows+readers)
	stop := make(chan struct{})
	for row := range rows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ts := int64(2); ts <= writes; ts++ {
				if err := put(row, ts); err != nil {
					errs <- err
					return
				}
				acked[row].Store(ts)
			}
		}()
	}
	var readerWG sync.WaitGroup
	for r := range readers {
		readerWG.Add(1)
		go func() {
			defer readerWG.Done()
			rng := rand.New(rand.NewSource(int64(r)))
			var seen [rows]int64
			for {
				select {
				case <-stop:
					return
				default:
				}
				row := rng.Intn(rows)
				floor := max(acked[row].Load(), seen[row])
				var res store.SliceResult
				// Gets of the cell, and slices of its row, which read the
				// row's image.
				q := &store.SliceQuery{Super: super, Names: [][]byte{[]byte("c")}, Count: 1}
				if rng.Intn(2) == 0 {
					q = &store.SliceQuery{Super: super, Count: all}
				}
				if err := f.e.Slice(context.Background(), tb, fmt.Appendf(nil, "row%d", row), q, &res); err != nil || len(res.Cells) != 1 {
					errs <- fmt.Errorf("read row%d: %d cells, %v", row, len(res.Cells), err)
					return
				}
				c := res.Cells[0]
				if int64(binary.BigEndian.Uint64(c.Value)) != c.Timestamp {
					errs <- fmt.Errorf("row%d: value %x at timestamp %d", row, c.Value, c.Timestamp)
					return
				}
				if c.Timestamp < floor {
					errs <- fmt.Errorf("row%d: read the write of %d after the write of %d was acknowledged or read", row, c.Timestamp, floor)
					return
				}
				seen[row] = c.Timestamp
			}
		}()
	}
	wg.Wait()
	close(stop)
	readerWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// With the writes done, the third read of a cell at the latest is the
	// cache's: the first may leave a mark and the second take the row's
	// image (row_image.go), or, while reads of names take no images, the
	// first fills the cell. Every read gives the last write.
	before := f.e.cells.stats()
	hits := before.hits + before.rowHits
	for row := range rows {
		for range 3 {
			if got := get(row); !strings.HasSuffix(got, fmt.Sprintf("@%d", writes)) {
				t.Fatalf("row%d after the writes: %s, want the write of %d", row, got, writes)
			}
		}
	}
	if st := f.e.cells.stats(); st.hits+st.rowHits < hits+rows {
		t.Fatalf("cache after three reads of each row once the writes were done: %+v, %d hits before (want %d more at least)", st, hits, rows)
	}
}

// TestCellCacheWhatItKeeps: bounded slices, slices of rows with more
// cells than they count or larger than maxRowImage, and reads of counter
// families put nothing in the cache. A first read of names of a row
// leaves a mark, and the second takes the row's image, which then answers
// every read of the row, as the image a slice of the whole row takes. In
// a row too wide for an image, the second read of names leaves a mark
// that says so, and gets of one cell read the cell the first one kept.
func TestCellCacheWhatItKeeps(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	counters := f.table(store.TableDef{Name: "counters", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	put := func(row string, cells int, value string) {
		var ops []store.Op
		for i := range cells {
			ops = append(ops, store.Op{Kind: store.OpPut, Name: fmt.Appendf(nil, "c%03d", i), Value: []byte(value), Timestamp: 1, HasTimestamp: true})
		}
		f.apply(store.RowMutation{Table: tb, Key: []byte(row), Ops: ops})
	}
	put("k", 2, "v")
	put("s", 2, "v")
	put("wide", 2*maxRowImage/100, strings.Repeat("v", 100))
	f.apply(store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("n"), Delta: 3}}})
	want := func(what string, entries, hits, rowHits int64) {
		t.Helper()
		if st := f.e.cells.stats(); st.entries != entries || st.hits != hits || st.rowHits != rowHits {
			t.Fatalf("cell cache after %s: %+v (want %d entries, %d hits, %d row hits)", what, st, entries, hits, rowHits)
		}
	}
	f.slice(tb, "k", store.SliceQuery{Start: []byte("c000"), Count: all})
	f.slice(tb, "k", store.SliceQuery{Count: 1})
	f.slice(tb, "wide", store.SliceQuery{Count: all})
	for range 2 {
		if got := enginetest.CellsString(f.slice(counters, "k", store.SliceQuery{Names: [][]byte{[]byte("n")}, Count: all}).Cells); got == "" {
			t.Fatal("the counter is missing")
		}
	}
	want("reads it does not serve", 0, 0, 0)

	both := store.SliceQuery{Names: [][]byte{[]byte("c001"), []byte("c000")}, Count: all}
	if got := enginetest.CellsString(f.slice(tb, "k", both).Cells); got != "c000=v@1 c001=v@1" {
		t.Fatalf("read of two names: %s", got)
	}
	want("a first read of names", 1, 0, 0)
	if got := getOne(t, f.e, tb, "k", "c000"); got != "c000=v@1" {
		t.Fatalf("get c000: %s", got)
	}
	want("a second read of names, which takes the image", 1, 0, 0)
	if got := getOne(t, f.e, tb, "k", "c001"); got != "c001=v@1" {
		t.Fatalf("get c001: %s", got)
	}
	if got := enginetest.CellsString(f.slice(tb, "k", store.SliceQuery{Count: 2}).Cells); got != "c000=v@1 c001=v@1" {
		t.Fatalf("slice of the row: %s", got)
	}
	if got := enginetest.CellsString(f.slice(tb, "k", store.SliceQuery{Start: []byte("c001"), Reversed: true, Count: all}).Cells); got != "c001=v@1 c000=v@1" {
		t.Fatalf("reversed slice: %s", got)
	}
	want("reads of the row with an image", 1, 0, 3)

	if got := enginetest.CellsString(f.slice(tb, "s", store.SliceQuery{Count: 2}).Cells); got != "c000=v@1 c001=v@1" {
		t.Fatalf("slice of the whole row: %s", got)
	}
	want("a slice of a whole row", 2, 0, 3)
	if got := getOne(t, f.e, tb, "s", "c001"); got != "c001=v@1" {
		t.Fatalf("get c001 of the sliced row: %s", got)
	}
	want("a get of the sliced row", 2, 0, 4)

	for i, w := range []struct {
		what                   string
		entries, hits, rowHits int64
	}{
		{"a first get of a wide row, which leaves a mark and keeps its cell", 4, 0, 4},
		{"a second get of a wide row, which marks it too wide and reads its cell", 4, 1, 4},
		{"a third get of a wide row", 4, 2, 4},
	} {
		if got := getOne(t, f.e, tb, "wide", "c000"); !strings.HasPrefix(got, "c000=vvv") {
			t.Fatalf("get %d of the wide row: %s", i+1, got)
		}
		want(w.what, w.entries, w.hits, w.rowHits)
	}
}

// A reader given back to the pool keeps nothing of its read: a get of a
// counter right after a get of a standard row must not take that row's
// cache ticket, which no add to the counter's row would ever move, and
// so must see every add.
func TestReusedReadersKeepNoTicket(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	counters := f.table(store.TableDef{Name: "counters", Comparator: "UTF8Type", DefaultValidator: "CounterColumnType"})
	f.apply(store.RowMutation{Table: tb, Key: []byte("row"), Ops: []store.Op{{Kind: store.OpPut, Name: []byte("c"), Value: []byte("v"), Timestamp: 1, HasTimestamp: true}}})
	for i := range 20 {
		f.apply(store.RowMutation{Table: counters, Key: []byte("k"), Ops: []store.Op{{Kind: store.OpCounterAdd, Name: []byte("n"), Delta: 1}}})
		if got := getOne(t, f.e, tb, "row", "c"); got != getOne(t, f.e, tb, "row", "c") {
			t.Fatalf("two gets of an unchanged cell: %s", got)
		}
		var res store.SliceResult
		if err := f.e.Slice(context.Background(), counters, []byte("k"), &store.SliceQuery{Names: [][]byte{[]byte("n")}, Count: 1}, &res); err != nil {
			t.Fatal(err)
		}
		if len(res.Cells) != 1 || res.Cells[0].CounterValue != int64(i+1) {
			t.Fatalf("after %d adds: %+v", i+1, res.Cells)
		}
	}
}

// TestReadsOfNamesTakeImagesOnlyWhileTheyPay: a window of reads of names
// whose images answered fewer reads than were taken turns images off for
// imageOffWindows windows; a window whose images answered more, or that
// took too few to judge, leaves them on.
func TestReadsOfNamesTakeImagesOnlyWhileTheyPay(t *testing.T) {
	var p imagePayoff
	// window runs one window of counted reads of names (slot 0), answered
	// of them answered by images, after takes images were taken. It
	// returns how many of the others would leave a mark or take an image,
	// of how many, and whether images are on after the window, which the
	// last read closes.
	window := func(takes, answered int) (paying, others int, on bool) {
		p.taken.Add(int64(takes))
		for range answered / imageCountSample {
			p.answer(0)
		}
		others = (imageWindowReads - answered) / imageCountSample
		for range others {
			if p.pays(0) {
				paying++
			}
		}
		return paying, others, p.off.Load() == 0
	}
	if paying, others, on := window(1000, 8000); !on || paying != others {
		t.Fatalf("a window whose images answered 8 reads each: %d of %d reads paying, on %v", paying, others, on)
	}
	if paying, others, on := window(imageJudgedTakes-1, 0); !on || paying != others {
		t.Fatalf("a window with too few images to judge: %d of %d reads paying, on %v", paying, others, on)
	}
	// The window's last read finds images off.
	if paying, others, on := window(1000, 800); on || paying != others-1 {
		t.Fatalf("a window whose images answered fewer reads than they took: %d of %d reads paying, on %v", paying, others, on)
	}
	for w := 1; w <= imageOffWindows; w++ {
		paying, _, on := window(0, 800)
		last := w == imageOffWindows // its last read finds images on again
		if on != last || (paying != 0) != last || paying > 1 {
			t.Fatalf("window %d after images turned off: %d reads paying, on %v", w, paying, on)
		}
	}
	if paying, others, on := window(1000, 16000); !on || paying != others {
		t.Fatalf("the window of the new trial: %d of %d reads paying, on %v", paying, others, on)
	}
}

// A write takes from the cache the images of every row of its version
// slot, not only its own row's. Writes to rows the cache does not hold
// must leave most images of the rows being read: after 1,000 rows took
// their images and 20,000 other rows were written once each, at least
// 85% of the 1,000 must still be answered from their images (about 93%
// with 2^18 version slots; about 74% with the 2^16 there used to be).
func TestWritesOfOtherRowsLeaveMostImages(t *testing.T) {
	f := newFixture(t)
	tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	const readRows, writtenRows = 1000, 20000
	put := func(row string) {
		f.apply(store.RowMutation{Table: tb, Key: []byte(row), Ops: []store.Op{
			{Kind: store.OpPut, Name: []byte("c0"), Value: []byte("v"), Timestamp: 1, HasTimestamp: true},
			{Kind: store.OpPut, Name: []byte("c1"), Value: []byte("v"), Timestamp: 1, HasTimestamp: true},
		}})
	}
	for i := range readRows {
		put(fmt.Sprintf("r%04d", i))
	}
	for i := range readRows {
		row := fmt.Sprintf("r%04d", i)
		// The first read of names leaves a mark, the second takes the image.
		for range 2 {
			if got := getOne(t, f.e, tb, row, "c1"); got != "c1=v@1" {
				t.Fatalf("get of %s: %s", row, got)
			}
		}
	}
	for i := range writtenRows {
		put(fmt.Sprintf("w%05d", i))
	}
	before := f.e.cells.stats().rowHits
	for i := range readRows {
		row := fmt.Sprintf("r%04d", i)
		if got := getOne(t, f.e, tb, row, "c0"); got != "c0=v@1" {
			t.Fatalf("get of %s after the writes: %s", row, got)
		}
	}
	if answered := f.e.cells.stats().rowHits - before; answered < readRows*85/100 {
		t.Fatalf("%d of %d rows were answered from their images after %d writes of other rows, want at least 85%%", answered, readRows, writtenRows)
	}
}
