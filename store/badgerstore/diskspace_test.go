package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// TestWritesStopWhenTheDataDirectoryGoes: a data directory removed (moved
// away, as far as the store can tell) or replaced by another under an open
// store turns every write into ErrDataDirGone, since it would be
// acknowledged into files no restart finds, and the health check into an
// error; reads go on from the open files; Close returns at once with the
// error instead of flushing into a directory that is not the store's.
func TestWritesStopWhenTheDataDirectoryGoes(t *testing.T) {
	ctx := context.Background()
	for _, replaced := range []bool{false, true} {
		name := "removed"
		if replaced {
			name = "replaced"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			f := openTestEngine(t, dir, "Murmur3Partitioner")
			tb := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
			put := func(i int) error {
				return f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{{Table: tb, Key: []byte("k"),
					Ops: []store.Op{{Kind: store.OpPut, Name: []byte("c"), Value: fmt.Appendf(nil, "v%d", i), Timestamp: int64(i), HasTimestamp: true}}}}})
			}
			if err := put(1); err != nil {
				t.Fatal(err)
			}
			if err := f.e.Check(ctx); err != nil {
				t.Fatalf("health of an intact store: %v", err)
			}

			moved := filepath.Join(root, "moved")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			if replaced {
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// Writes are refused within the guard's period (diskCheckEvery).
			acked, i := 1, 2
			var err error
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); i++ {
				if err = put(i); err != nil {
					break
				}
				acked = i
				time.Sleep(10 * time.Millisecond)
			}
			if !errors.Is(err, ErrDataDirGone) {
				t.Fatalf("a write after the data directory was %s: %v; want ErrDataDirGone", name, err)
			}
			if err := put(i + 1); !errors.Is(err, ErrDataDirGone) {
				t.Errorf("the next write: %v; want ErrDataDirGone", err)
			}
			if err := f.e.Check(ctx); !errors.Is(err, ErrDataDirGone) {
				t.Errorf("health: %v; want ErrDataDirGone", err)
			}
			// Reads go on, and see the last acknowledged write, not the
			// refused ones.
			res := f.slice(tb, "k", store.SliceQuery{Count: all})
			if want := fmt.Sprintf("v%d", acked); len(res.Cells) != 1 || string(res.Cells[0].Value) != want {
				t.Errorf("read after the refusals: %+v; want one cell %q", res.Cells, want)
			}

			// Close neither hangs nor writes into the replacement.
			done := make(chan error, 1)
			go func() { done <- f.e.Close() }()
			select {
			case err := <-done:
				if !errors.Is(err, ErrDataDirGone) {
					t.Errorf("Close: %v; want ErrDataDirGone", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not return in 10 s")
			}
			if replaced {
				if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
					t.Errorf("the replacement directory after Close: %v, %v; want it empty", entries, err)
				}
				if err := os.Remove(dir); err != nil {
					t.Fatal(err)
				}
			}
			// Put the directory back and close Badger for real, so the
			// test leaves nothing running.
			if err := os.Rename(moved, dir); err != nil {
				t.Fatal(err)
			}
			if err := f.e.db.Close(); err != nil {
				t.Errorf("closing Badger once its directory is back: %v", err)
			}
			f.e = nil
		})
	}
}

// TestCompactionRoom: the room kept for compactions is level 0 and the
// base level whole, and the largest compaction of a table into its next
// level beside it.
func TestCompactionRoom(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		name   string
		levels []badger.LevelInfo
		want   uint64
	}{
		{"empty", []badger.LevelInfo{{Level: 0}, {Level: 1}, {Level: 2, IsBaseLevel: true}}, 0},
		{"an empty base level above the last one", []badger.LevelInfo{
			{Level: 0, NumTables: 2, Size: 18 * mib},
			{Level: 1, TargetFileSize: 2 * mib}, // above the base level: never filled
			{Level: 2, IsBaseLevel: true, TargetFileSize: 2 * mib},
			{Level: 3, NumTables: 7, Size: 28 * mib, TargetFileSize: 4 * mib},
		}, 18*mib + 0 + 2*mib + 28*mib},
		{"a small store: level 0 into the last level", []badger.LevelInfo{
			{Level: 0, NumTables: 5, Size: 40 * mib},
			{Level: 1, TargetFileSize: 2 * mib},
			{Level: 2, IsBaseLevel: true, NumTables: 10, Size: 60 * mib, TargetFileSize: 2 * mib},
		}, 40*mib + 60*mib + 2*6*mib},
		{"a table into a level ten times its own", []badger.LevelInfo{
			{Level: 0, NumTables: 2, Size: 16 * mib},
			{Level: 1, IsBaseLevel: true, NumTables: 5, Size: 10 * mib, TargetFileSize: 2 * mib},
			{Level: 2, NumTables: 25, Size: 100 * mib, TargetFileSize: 4 * mib},
			{Level: 3, NumTables: 125, Size: 1000 * mib, TargetFileSize: 8 * mib},
		}, 16*mib + 10*mib + 4*mib + 4*mib*11},
		{"the next level whole at most", []badger.LevelInfo{
			{Level: 0},
			{Level: 1, IsBaseLevel: true, NumTables: 1, Size: 64 * mib, TargetFileSize: 2 * mib},
			{Level: 2, NumTables: 1, Size: 3 * mib, TargetFileSize: 4 * mib},
		}, 64*mib + 64*mib + 3*mib},
	} {
		if got := compactionRoom(c.levels); got != c.want {
			t.Errorf("%s: %d MiB, want %d MiB", c.name, got/mib, c.want/mib)
		}
	}
}
