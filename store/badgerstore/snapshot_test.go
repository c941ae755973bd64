package badgerstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// TestWritesGoThroughTheSnapshotGuard: a write to Badger that bypassed
// commit, update, dropPrefix and writeBatch would leave the shared read
// snapshot current, and later reads would miss it. Only snapshot.go may
// call Badger's writing methods.
func TestWritesGoThroughTheSnapshotGuard(t *testing.T) {
	writing := regexp.MustCompile(`\.Commit\(\)|\.CommitWith\(|\bdb\.Update\(|\.DropPrefix\(|\.DropAll\(|\.NewWriteBatch\(|\.NewKVLoader\(|\.NewStreamWriter\(|\be\.db\.Load\(`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "snapshot.go" {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); writing.MatchString(code) {
				t.Errorf("%s:%d writes to Badger around the snapshot guard: %s", name, i+1, strings.TrimSpace(line))
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files: not run in the package's directory?", checked)
	}
}

// TestReadsShareASnapshotUntilAWrite: reads with no write between them
// share a transaction; the first read after a write sees it.
func TestReadsShareASnapshotUntilAWrite(t *testing.T) {
	f := newFixture(t)
	// The row's image would answer the reads without a snapshot
	// (row_image.go).
	f.e.cells = nil
	std, sup, _ := groupFamilies(f)
	put := func(value string, ts int64) {
		enginetest.Apply(t, f.e, store.RowMutation{Table: std(), Key: []byte("r"), Ops: []store.Op{enginetest.Put("c", value, ts)}})
	}
	read := func() string {
		return enginetest.CellsString(f.slice(std(), "r", store.SliceQuery{Count: all}).Cells)
	}
	put("v1", 1)
	if got := read(); got != "c=v1@1" {
		t.Fatalf("after the first write: %q", got)
	}
	before := f.e.snapshots.shared.Load()
	for range 3 {
		if got := read(); got != "c=v1@1" {
			t.Fatalf("read again: %q", got)
		}
	}
	if n := f.e.snapshots.shared.Load() - before; n != 3 {
		t.Errorf("%d of 3 reads without a write between them shared a snapshot", n)
	}
	for i, c := range []struct {
		write func(ts int64)
		want  string
	}{
		{func(ts int64) { put("new", ts) }, "c=new@201"},
		{func(ts int64) {
			enginetest.Apply(t, f.e, store.RowMutation{Table: std(), Key: []byte("r"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: ts}}})
		}, ""},
		{func(int64) {
			if err := f.e.Truncate(context.Background(), "ks", "std"); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		ts := int64(100 * (i + 2))
		put("old", ts)
		if got := read(); got != fmt.Sprintf("c=old@%d", ts) { // a snapshot is current again
			t.Fatalf("case %d: read %q before the write", i, got)
		}
		c.write(ts + 1)
		if got := read(); got != c.want {
			t.Errorf("case %d: read %q after the write, want %q", i, got, c.want)
		}
	}
	// Counts and scans take the snapshot too.
	rows := func() int {
		n := 0
		var res store.SliceResult
		err := f.e.Scan(context.Background(), sup(), &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &res, func([]byte) (bool, error) {
			n++
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i, key := range []string{"s1", "s2"} {
		if n := rows(); n != i { // a snapshot is current again
			t.Fatalf("scan before writing %s: %d rows, want %d", key, n, i)
		}
		enginetest.Apply(t, f.e, store.RowMutation{Table: sup(), Key: []byte(key), Ops: []store.Op{enginetest.PutSuper("sc", "a", "x", 5)}})
		if n, err := f.e.Count(context.Background(), sup(), []byte(key), &store.SliceQuery{Count: all}); err != nil || n != 1 {
			t.Errorf("count after writing %s: %d, %v", key, n, err)
		}
		if n := rows(); n != i+1 {
			t.Errorf("scan after writing %s: %d rows, want %d", key, n, i+1)
		}
	}
}

// TestReadsSeeEveryAcknowledgedWrite: writers read their own writes back
// at once while other readers keep a snapshot shared; no read may miss a
// write acknowledged before it began. Under -race it also checks the
// shared transaction's use from many goroutines.
func TestReadsSeeEveryAcknowledgedWrite(t *testing.T) {
	f := newFixture(t)
	std, _, _ := groupFamilies(f)
	enginetest.Apply(t, f.e, store.RowMutation{Table: std(), Key: []byte("shared"), Ops: []store.Op{enginetest.Put("c", "v", 1)}})
	const writers, readers, rounds = 4, 4, 200
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error {
			key := fmt.Sprintf("own%d", w)
			for i := 1; i <= rounds; i++ {
				m := store.RowMutation{Table: std(), Key: []byte(key), Ops: []store.Op{enginetest.Put("c", fmt.Sprint(i), int64(i))}}
				if err := f.e.Apply(context.Background(), &store.Batch{Rows: []store.RowMutation{m}}); err != nil {
					return err
				}
				var out store.SliceResult
				if err := f.e.Slice(context.Background(), std(), []byte(key), &store.SliceQuery{Count: all}, &out); err != nil {
					return err
				}
				if len(out.Cells) != 1 || string(out.Cells[0].Value) != fmt.Sprint(i) {
					return fmt.Errorf("writer %d read %v after writing %d", w, out.Cells, i)
				}
			}
			return nil
		})
	}
	for range readers {
		g.Go(func() error {
			for range rounds * 2 {
				var out store.SliceResult
				if err := f.e.Slice(context.Background(), std(), []byte("shared"), &store.SliceQuery{Count: all}, &out); err != nil {
					return err
				}
				if len(out.Cells) != 1 {
					return fmt.Errorf("shared row: %v", out.Cells)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reads shared a snapshot", f.e.snapshots.shared.Load())
}
