package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/enginetest"
)

// backupFixture is a store on disk under ByteOrderedPartitioner (so that
// the restore must keep it) with a Standard and a Super family, and its
// backup.
func backupFixture(t *testing.T) (*fixture, []byte) {
	t.Helper()
	f := openTestEngine(t, t.TempDir(), "ByteOrderedPartitioner")
	cf := f.table(store.TableDef{Name: "cf", Comparator: "UTF8Type"})
	sc := f.table(store.TableDef{Name: "sc", Super: true, Comparator: "UTF8Type", SubComparator: "UTF8Type"})
	for i := range 200 {
		f.apply(store.RowMutation{Table: cf, Key: []byte(fmt.Sprintf("row%03d", i)),
			Ops: []store.Op{enginetest.Put("a", fmt.Sprint(i), 1), enginetest.Put("b", string(bytes.Repeat([]byte{'x'}, i*10)), 2)}})
	}
	f.apply(store.RowMutation{Table: sc, Key: []byte("k"), Ops: []store.Op{enginetest.PutSuper("s1", "a", "1", 1), enginetest.PutSuper("s2", "b", "2", 1)}})
	f.apply(store.RowMutation{Table: cf, Key: []byte("row007"), Ops: []store.Op{{Kind: store.OpDeleteRow, Timestamp: 5}}})
	var buf bytes.Buffer
	hdr, n, err := f.e.WriteBackup(context.Background(), &buf, BackupInfo{ClusterName: "Backup Cluster", Files: map[string][]byte{"thriftd-users.json": []byte(`{"users":{}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) || hdr.Partitioner != f.e.Partitioner().Name() {
		t.Fatalf("backup: %d bytes reported, %d written; header %+v", n, buf.Len(), hdr)
	}
	return f, buf.Bytes()
}

// dump reads every row of ks.cf and ks.sc as text.
func dump(t *testing.T, e *Engine) string {
	t.Helper()
	var out bytes.Buffer
	for _, name := range []string{"cf", "sc"} {
		tb, ok := e.Catalog().Table("ks", name)
		if !ok {
			t.Fatalf("table %s missing", name)
		}
		var res store.SliceResult
		err := e.Scan(context.Background(), tb, &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &res, func(key []byte) (bool, error) {
			fmt.Fprintf(&out, "%s/%s: %s%s\n", name, key, enginetest.CellsString(res.Cells), enginetest.SupersString(res.Supers))
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

func TestBackupRestoreRoundTrip(t *testing.T) {
	f, backup := backupFixture(t)
	want := dump(t, f.e)
	ctx := context.Background()

	hdr, n, err := VerifyBackup(ctx, bytes.NewReader(backup))
	if err != nil || n != int64(len(backup)) {
		t.Fatalf("verify: %v after %d of %d bytes", err, n, len(backup))
	}
	if hdr.ClusterName != "Backup Cluster" || len(hdr.Keyspaces) != 1 || len(hdr.Keyspaces[0].Tables) != 2 || hdr.SchemaVersion != f.e.Catalog().Version {
		t.Fatalf("header: %+v", hdr)
	}

	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := RestoreBackup(ctx, bytes.NewReader(backup), dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	users, err := os.ReadFile(filepath.Join(dir, "thriftd-users.json"))
	if err != nil || string(users) != `{"users":{}}` {
		t.Fatalf("users file: %q %v", users, err)
	}
	restored := openTestEngine(t, dir, "ByteOrderedPartitioner")
	if got := dump(t, restored.e); got != want {
		t.Fatalf("restored store differs:\n got %s\nwant %s", got, want)
	}
	if restored.e.Catalog().Version != f.e.Catalog().Version {
		t.Fatalf("schema version %s, want %s", restored.e.Catalog().Version, f.e.Catalog().Version)
	}
}

// TestBackupOfReadOnlyStore: a closed store's directory backs up read-only
// to the same bytes of data; the read-only store tells its stats.
func TestBackupOfReadOnlyStore(t *testing.T) {
	f, _ := backupFixture(t)
	want := dump(t, f.e)
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	ro, err := OpenReadOnly(context.Background(), f.dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Stats(); err != nil {
		t.Fatalf("stats of a read-only store: %v", err)
	}
	if got := dump(t, ro); got != want {
		t.Fatalf("read-only store differs:\n got %s\nwant %s", got, want)
	}
	var buf bytes.Buffer
	if _, _, err := ro.WriteBackup(context.Background(), &buf, BackupInfo{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "restored")
	if _, err := RestoreBackup(context.Background(), &buf, dir, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	restored := openTestEngine(t, dir, "ByteOrderedPartitioner")
	if got := dump(t, restored.e); got != want {
		t.Fatalf("restored store differs:\n got %s\nwant %s", got, want)
	}
}

// TestDamagedBackupRefused: every truncation and a flipped byte anywhere
// are refused, by VerifyBackup and by RestoreBackup.
func TestDamagedBackupRefused(t *testing.T) {
	_, backup := backupFixture(t)
	ctx := context.Background()
	var cases []struct {
		name string
		data []byte
	}
	for _, cut := range []int{0, 5, len(backupMagic) + 2, len(backupMagic) + 40, len(backup) / 2, len(backup) - 33, len(backup) - 1} {
		cases = append(cases, struct {
			name string
			data []byte
		}{fmt.Sprintf("truncated at %d", cut), backup[:cut]})
	}
	for _, at := range []int{3, len(backupMagic) + 1, len(backupMagic) + 30, len(backup) / 3, len(backup) - 40, len(backup) - 3} {
		damaged := bytes.Clone(backup)
		damaged[at] ^= 0x20
		cases = append(cases, struct {
			name string
			data []byte
		}{fmt.Sprintf("byte %d flipped", at), damaged})
	}
	cases = append(cases, struct {
		name string
		data []byte
	}{"trailing bytes", append(bytes.Clone(backup), 0)})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, _, err := VerifyBackup(ctx, bytes.NewReader(c.data)); !errors.Is(err, ErrBackupDamaged) {
				t.Errorf("verify: %v, want ErrBackupDamaged", err)
			}
			dir := filepath.Join(t.TempDir(), "restored")
			if _, err := RestoreBackup(ctx, bytes.NewReader(c.data), dir, slog.New(slog.DiscardHandler)); !errors.Is(err, ErrBackupDamaged) {
				t.Errorf("restore: %v, want ErrBackupDamaged", err)
			}
		})
	}
}

// TestBackupIsOneMoment: a backup taken while batches of two rows at the
// two ends of the key space commit holds each batch whole or not at all.
// The store is on disk in tables of many blocks, so that the backup stream
// splits the key space into ranges read side by side.
func TestBackupIsOneMoment(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	f := openTestEngine(t, dir, "ByteOrderedPartitioner")
	def := store.TableDef{Name: "cf", Comparator: "UTF8Type"}
	f.table(def)
	filler := strings.Repeat("f", 1000)
	for i := range 4000 {
		cf, _ := f.e.Catalog().Table("ks", "cf")
		f.apply(store.RowMutation{Table: cf, Key: fmt.Appendf(nil, "m%05d", i), Ops: []store.Op{enginetest.Put("v", filler, 1)}})
	}
	// Closing flushes the memtable into a table file.
	if err := f.e.Close(); err != nil {
		t.Fatal(err)
	}
	f.e = nil
	f = openTestEngine(t, dir, "ByteOrderedPartitioner")
	cf, _ := f.e.Catalog().Table("ks", "cf")

	// The writer stops after maxBatches, so that each backup stays small.
	const maxBatches, rounds = 20000, 5
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range maxBatches {
			select {
			case <-stop:
				return
			default:
			}
			// a… sorts before the filler rows, z… after them.
			err := f.e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{
				{Table: cf, Key: fmt.Appendf(nil, "a%06d", i), Ops: []store.Op{enginetest.Put("v", "x", 1)}},
				{Table: cf, Key: fmt.Appendf(nil, "z%06d", i), Ops: []store.Op{enginetest.Put("v", "x", 1)}},
			}})
			if err != nil {
				t.Error(err)
				return
			}
			written.Add(1)
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
	}()

	for round := range rounds {
		deadline := time.Now().Add(time.Minute)
		for n := written.Load(); written.Load() < min(n+50, maxBatches); {
			if time.Now().After(deadline) {
				t.Fatalf("backup %d: the writer stalled after %d batches", round, written.Load())
			}
			time.Sleep(time.Millisecond)
		}
		var buf bytes.Buffer
		if _, _, err := f.e.WriteBackup(ctx, &buf, BackupInfo{}); err != nil {
			t.Fatal(err)
		}
		restored := filepath.Join(t.TempDir(), "restored")
		if _, err := RestoreBackup(ctx, &buf, restored, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
		r := openTestEngine(t, restored, "ByteOrderedPartitioner")
		rcf, _ := r.e.Catalog().Table("ks", "cf")
		rows := map[byte]int{}
		var res store.SliceResult
		err := r.e.Scan(ctx, rcf, &store.ScanQuery{Slice: store.SliceQuery{Count: all}}, &res, func(key []byte) (bool, error) {
			if len(res.Cells) > 0 {
				rows[key[0]]++
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if rows['a'] != rows['z'] || rows['m'] != 4000 {
			t.Fatalf("backup %d: %d rows a…, %d rows z…, %d filler rows: batches are there in part", round, rows['a'], rows['z'], rows['m'])
		}
		if err := r.e.Close(); err != nil {
			t.Fatal(err)
		}
		r.e = nil
	}
}
