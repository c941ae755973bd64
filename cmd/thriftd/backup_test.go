package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/auth"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

const one = cassandra.ConsistencyLevel_ONE

// stopChild stops a child thriftd gracefully and waits for it.
func stopChild(t *testing.T, child *exec.Cmd) {
	t.Helper()
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("thriftd did not stop cleanly: %v", err)
	}
}

// createKeyspace creates keyspace ks with the families cfs over c and
// makes it c's keyspace.
func createKeyspace(t *testing.T, c *cassandra.CassandraClient, ks string, cfs ...*cassandra.CfDef) {
	t.Helper()
	ctx := context.Background()
	for _, cf := range cfs {
		cf.Keyspace = ks
	}
	if _, err := c.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: ks, StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: cfs}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetKeyspace(ctx, ks); err != nil {
		t.Fatal(err)
	}
}

func cfDef(name, comparator string, super bool) *cassandra.CfDef {
	d := cassandra.NewCfDef()
	d.Name, d.ComparatorType = name, comparator
	if super {
		d.ColumnType = "Super"
		sub := "UTF8Type"
		d.SubcomparatorType = &sub
	}
	return d
}

func column(name, value string, ts int64) *cassandra.Column {
	return &cassandra.Column{Name: []byte(name), Value: []byte(value), Timestamp: &ts}
}

func put(c *cassandra.Column) *cassandra.Mutation {
	return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: c}}
}

// everything is a slice predicate of whole rows.
var everything = &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 1 << 20}}

// pairWriter writes, over its own connection, batches that must be seen
// whole: row p<w>-<i> gets columns a and b, row m<w>-<i> column a, in one
// batch_mutate, i = 0, 1, 2... acked is how many were acknowledged.
type pairWriter struct {
	id    int
	c     *cassandra.CassandraClient
	acked atomic.Int64
	err   error
}

func (pw *pairWriter) run(ctx context.Context, stop <-chan struct{}, maxWrites int) {
	value := strings.Repeat(fmt.Sprintf("w%d", pw.id), 100)
	for i := range maxWrites {
		select {
		case <-stop:
			return
		default:
		}
		ts := int64(i + 1)
		v := fmt.Sprintf("%s-%d", value, i)
		err := pw.c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{
			fmt.Sprintf("p%d-%06d", pw.id, i): {"pairs": {put(column("a", v, ts)), put(column("b", v, ts))}},
			fmt.Sprintf("m%d-%06d", pw.id, i): {"pairs": {put(column("a", v, ts))}},
		}, one)
		if err != nil {
			pw.err = err
			return
		}
		pw.acked.Store(int64(i + 1))
	}
}

// waitAcked waits until every writer has had at least n writes
// acknowledged (bounded by a deadline).
func waitAcked(t *testing.T, writers []*pairWriter, n int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for _, pw := range writers {
		for pw.acked.Load() < n {
			if pw.err != nil {
				t.Fatalf("writer %d: %v", pw.id, pw.err)
			}
			if time.Now().After(deadline) {
				t.Fatalf("writer %d: %d writes acknowledged, waiting for %d", pw.id, pw.acked.Load(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// TestOnlineBackupUnderLoad: a backup taken through a running thriftd
// while several connections write holds every write acknowledged before
// the backup began, and a consistent state: each writer's batches are a
// prefix of what it wrote, and no batch is there in part.
func TestOnlineBackupUnderLoad(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "online.backup")
	child, addr := startChild(t, "--data-dir", dir)
	createKeyspace(t, dialTest(t, addr), "bk_online", cfDef("pairs", "UTF8Type", false))

	const nWriters, maxWrites = 4, 100000
	writers := make([]*pairWriter, nWriters)
	for w := range writers {
		c := dialTest(t, addr)
		if err := c.SetKeyspace(ctx, "bk_online"); err != nil {
			t.Fatal(err)
		}
		writers[w] = &pairWriter{id: w, c: c}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, pw := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pw.run(ctx, stop, maxWrites)
		}()
	}
	stopped := false
	stopWriters := func() {
		if !stopped {
			close(stop)
			wg.Wait()
			stopped = true
		}
	}
	defer stopWriters()

	waitAcked(t, writers, 500)
	before := make([]int64, nWriters)
	for w, pw := range writers {
		before[w] = pw.acked.Load()
	}
	start := time.Now()
	status, stderr := runMain(t, "backup", "--data-dir", dir, "--to", file)
	took := time.Since(start)
	if status != 0 {
		t.Fatalf("online backup: exit %d: %s", status, stderr)
	}
	after := make([]int64, nWriters)
	for w, pw := range writers {
		after[w] = pw.acked.Load()
	}
	// The writes go on after the backup, and are not in it.
	waitAcked(t, writers, after[0]+200)
	stopWriters()
	for _, pw := range writers {
		if pw.err != nil {
			t.Fatalf("writer %d: %v", pw.id, pw.err)
		}
	}
	stopChild(t, child)
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	start = time.Now()
	if status, stderr := runMain(t, "restore", "--from", file, "--data-dir", restored); status != 0 {
		t.Fatalf("restore: exit %d: %s", status, stderr)
	}
	restoreTook := time.Since(start)
	_, addr = startChild(t, "--data-dir", restored)
	c := dialTest(t, addr)
	if err := c.SetKeyspace(ctx, "bk_online"); err != nil {
		t.Fatal(err)
	}
	var total, written int64
	for w, pw := range writers {
		n := pw.acked.Load() + 1 // one more may have been applied, unacknowledged
		written += pw.acked.Load()
		keys := make([][]byte, 0, 2*n)
		for i := range n {
			keys = append(keys, fmt.Appendf(nil, "p%d-%06d", w, i), fmt.Appendf(nil, "m%d-%06d", w, i))
		}
		rows := map[string][]*cassandra.ColumnOrSuperColumn{}
		for len(keys) > 0 {
			chunk := keys[:min(len(keys), 1000)]
			keys = keys[len(chunk):]
			got, err := c.MultigetSlice(ctx, chunk, &cassandra.ColumnParent{ColumnFamily: "pairs"}, everything, one)
			if err != nil {
				t.Fatal(err)
			}
			for k, cols := range got {
				if len(cols) > 0 {
					rows[k] = cols
				}
			}
		}
		// The rows of writer w are those of its first k batches, whole.
		k := int64(0)
		for ; k < n; k++ {
			if _, ok := rows[fmt.Sprintf("p%d-%06d", w, k)]; !ok {
				break
			}
		}
		if k < before[w] {
			t.Errorf("writer %d: the backup holds %d batches; %d were acknowledged before it began", w, k, before[w])
		}
		if k > after[w]+1 {
			t.Errorf("writer %d: the backup holds %d batches; only %d were acknowledged when it ended", w, k, after[w])
		}
		for i := range k {
			p, m := rows[fmt.Sprintf("p%d-%06d", w, i)], rows[fmt.Sprintf("m%d-%06d", w, i)]
			if len(p) != 2 || len(m) != 1 || string(p[0].Column.Value) != string(p[1].Column.Value) || string(m[0].Column.Value) != string(p[0].Column.Value) {
				t.Fatalf("writer %d batch %d is there in part: p=%v m=%v", w, i, p, m)
			}
		}
		if int64(len(rows)) != 2*k {
			t.Errorf("writer %d: %d rows beyond its first %d batches (not a prefix: the backup is not one moment)", w, int64(len(rows))-2*k, k)
		}
		total += k
	}
	t.Logf("online backup of %d batches (of %d acknowledged by the end) while 4 connections wrote: %d bytes in %s; restore in %s",
		total, written, st.Size(), took.Round(time.Millisecond), restoreTook.Round(time.Millisecond))
}

// readAll reads every row of every family of keyspace ks over c, as the
// bytes of the replies' Thrift encoding, and the keyspace's definition.
func readAll(t *testing.T, c *cassandra.CassandraClient, ks string) ([]byte, *cassandra.KsDef) {
	t.Helper()
	ctx := context.Background()
	if err := c.SetKeyspace(ctx, ks); err != nil {
		t.Fatal(err)
	}
	def, err := c.DescribeKeyspace(ctx, ks)
	if err != nil {
		t.Fatal(err)
	}
	ser := thrift.NewTSerializer()
	var out bytes.Buffer
	for _, cf := range def.CfDefs {
		slices, err := c.GetRangeSlices(ctx, &cassandra.ColumnParent{ColumnFamily: cf.Name}, everything,
			&cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 1 << 20}, one)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range slices {
			b, err := ser.Write(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			out.Write(b)
		}
	}
	return out.Bytes(), def
}

// TestOfflineBackupRoundTrip: a stopped thriftd's data directory backs up
// and restores into a store that answers every read byte for byte as the
// original did, users file included.
func TestOfflineBackupRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if status, _, stderr := runUserCmd(t, "s3cret-pass\n", "user", "add", "alice", "--data-dir", dir); status != 0 {
		t.Fatalf("user add: %s", stderr)
	}
	child, addr := startChild(t, "--data-dir", dir, "--partitioner", "ByteOrderedPartitioner", "--cluster-name", "Backup Test")
	c := dialTest(t, addr)
	createKeyspace(t, c, "bk_offline", cfDef("Std", "UTF8Type", false), cfDef("Sup", "LongType", true), cfDef("Bytes", "BytesType", false))
	long := func(n int64) string { return string([]byte{0, 0, 0, 0, 0, 0, byte(n >> 8), byte(n)}) }
	for i := range 300 {
		key := fmt.Sprintf("row%03d", i)
		ttl := int32(86400)
		withTTL := column("ttl", "expiring", int64(i))
		withTTL.TTL = &ttl
		err := c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{key: {
			"Std":   {put(column("name", key, 1)), put(column("n", fmt.Sprint(i*i), 2)), put(withTTL)},
			"Bytes": {put(column(string([]byte{byte(i), 0xff, 0}), strings.Repeat("x", i), 3))},
			"Sup": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: []byte(long(int64(i % 7))),
				Columns: []*cassandra.Column{column("s", key, 4), column("t", "u", 4)}}}}},
		}}, one)
		if err != nil {
			t.Fatal(err)
		}
	}
	ts := int64(10)
	if err := c.Remove(ctx, []byte("row005"), &cassandra.ColumnPath{ColumnFamily: "Std"}, ts, one); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(ctx, []byte("row006"), &cassandra.ColumnPath{ColumnFamily: "Std", Column: []byte("n")}, ts, one); err != nil {
		t.Fatal(err)
	}
	want, wantDef := readAll(t, c, "bk_offline")
	stopChild(t, child)

	file := filepath.Join(t.TempDir(), "offline.backup")
	start := time.Now()
	status, stderr := runMain(t, "backup", "--data-dir", dir, "--to", file, "--cluster-name", "Backup Test")
	if status != 0 {
		t.Fatalf("offline backup: exit %d: %s", status, stderr)
	}
	took := time.Since(start)
	restored := filepath.Join(t.TempDir(), "restored")
	if err := os.Mkdir(restored, 0o755); err != nil { // an empty directory will do
		t.Fatal(err)
	}
	start = time.Now()
	if status, stderr := runMain(t, "restore", "--from", file, "--data-dir", restored); status != 0 {
		t.Fatalf("restore: exit %d: %s", status, stderr)
	}
	restoreTook := time.Since(start)
	for _, name := range []string{auth.UsersFile} {
		a, err1 := os.ReadFile(filepath.Join(dir, name))
		b, err2 := os.ReadFile(filepath.Join(restored, name))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s not restored as it was: %v %v", name, err1, err2)
		}
	}
	// The partitioner comes with the store: another one is refused.
	if status, stderr := runMain(t, "--listen", "127.0.0.1:0", "--data-dir", restored); status != 1 || !strings.Contains(stderr, "ByteOrderedPartitioner") {
		t.Fatalf("restored store opened with the default partitioner: exit %d: %s", status, stderr)
	}
	_, addr = startChild(t, "--data-dir", restored, "--partitioner", "ByteOrderedPartitioner", "--cluster-name", "Backup Test")
	got, gotDef := readAll(t, dialTest(t, addr), "bk_offline")
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the restored store reads differently from byte %d of %d: %q, want %q", i, len(want), got[i:min(len(got), i+40)], want[i:min(len(want), i+40)])
	}
	if !reflect.DeepEqual(gotDef, wantDef) {
		t.Fatalf("the restored keyspace is described as\n%v\nwant\n%v", gotDef, wantDef)
	}
	st, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offline backup: %d bytes in %s (whole command); restore in %s; %d bytes of Thrift replies identical", st.Size(), took.Round(time.Millisecond), restoreTook.Round(time.Millisecond), len(want))
}

// TestBackupCommandLine: a wrong command line exits 2 with the usage; a
// refused backup or restore exits 1 with the reason, and a refused restore
// leaves nothing behind.
func TestBackupCommandLine(t *testing.T) {
	dir := t.TempDir()
	child, addr := startChild(t, "--data-dir", dir)
	createKeyspace(t, dialTest(t, addr), "bk_cli", cfDef("cf", "UTF8Type", false))
	stopChild(t, child)
	work := t.TempDir()
	good := filepath.Join(work, "good.backup")
	if status, stderr := runMain(t, "backup", "--data-dir", dir, "--to", good); status != 0 {
		t.Fatalf("backup: exit %d: %s", status, stderr)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	writeFile := func(name string, b []byte) string {
		path := filepath.Join(work, name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	flipped := bytes.Clone(data)
	flipped[len(flipped)/2] ^= 1
	damaged := writeFile("damaged.backup", flipped)
	truncated := writeFile("truncated.backup", data[:len(data)-10])
	notBackup := writeFile("not.backup", []byte("hello\n"))
	full := filepath.Join(work, "full")
	if err := os.MkdirAll(filepath.Join(full, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(work, "target")

	cases := []struct {
		name   string
		args   []string
		status int
		says   string
	}{
		{"backup without --to", []string{"backup", "--data-dir", dir}, 2, "--to FILE is required"},
		{"backup stray argument", []string{"backup", "--data-dir", dir, "--to", filepath.Join(work, "x"), "now"}, 2, `unexpected argument "now"`},
		{"backup unknown flag", []string{"backup", "--from", good}, 2, "flag provided but not defined: -from"},
		{"restore without --from", []string{"restore", "--data-dir", target}, 2, "--from FILE is required"},
		{"restore without --data-dir", []string{"restore", "--from", good}, 2, "--data-dir NEWDIR is required"},
		{"backup of a missing directory", []string{"backup", "--data-dir", filepath.Join(work, "nowhere"), "--to", filepath.Join(work, "x.backup")}, 1, "nowhere"},
		{"backup over an existing file", []string{"backup", "--data-dir", dir, "--to", good}, 1, "exists; choose a new file name"},
		{"restore into a directory that holds something", []string{"restore", "--from", good, "--data-dir", full}, 1, "is not empty"},
		{"restore of a damaged file", []string{"restore", "--from", damaged, "--data-dir", target}, 1, "backup file damaged: checksum mismatch"},
		{"restore of a truncated file", []string{"restore", "--from", truncated, "--data-dir", target}, 1, "backup file damaged: truncated"},
		{"restore of another file", []string{"restore", "--from", notBackup, "--data-dir", target}, 1, "not a thriftd backup file"},
		{"restore of a missing file", []string{"restore", "--from", filepath.Join(work, "missing"), "--data-dir", target}, 1, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, stderr := runMain(t, c.args...)
			if status != c.status || !strings.Contains(stderr, c.says) {
				t.Errorf("thriftd %v: exit %d, stderr %q; want exit %d and %q", c.args, status, stderr, c.status, c.says)
			}
			if c.status == 2 && !strings.Contains(stderr, "usage: thriftd") {
				t.Errorf("no usage: %q", stderr)
			}
		})
	}
	// Nothing half-written: no target, no staging directory, no partial file.
	entries, err := os.ReadDir(work)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "good.backup", "damaged.backup", "truncated.backup", "not.backup", "full":
		default:
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// A data directory held by a thriftd whose admin socket is gone.
	lock, err := auth.LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	status, stderr := runMain(t, "backup", "--data-dir", dir, "--to", filepath.Join(work, "online.backup"))
	if status != 1 || !strings.Contains(stderr, "admin socket") || !strings.Contains(stderr, dir) {
		t.Errorf("backup of a held directory without its socket: exit %d, stderr %q", status, stderr)
	}
}
