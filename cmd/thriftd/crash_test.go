package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// crashColumns and crashValueSize shape a write of the crash test: a
// row of 16 columns of 16 KiB that do not compress, so that a 64 MiB
// budget's 8 MiB memtables flush every few calls and level 0 compacts.
const (
	crashColumns   = 16
	crashValueSize = 16 << 10
)

// crashValue is the value of a column of a row: random bytes that the
// row and column names seed.
func crashValue(row string, col int) []byte {
	var seed uint64
	for _, b := range []byte(row) {
		seed = seed*131 + uint64(b)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(col)))
	v := make([]byte, crashValueSize)
	for i := 0; i+8 <= len(v); i += 8 {
		x := rng.Uint64()
		for j := range 8 {
			v[i+j] = byte(x >> (8 * j))
		}
	}
	return v
}

// TestKilledUnderWritesRestarts kills thriftd (SIGKILL) at random moments
// of a write load that keeps its memtables flushing and its level 0
// compacting, and starts it again on the same directory each time. Every
// start must succeed: a flush or compaction the kill interrupted leaves
// tables no MANIFEST lists, and a kill as a log is created leaves it
// empty; thriftd sets both aside. Every write
// acknowledged before any of the kills must read back whole: a killed
// process loses nothing the kernel holds, so the default periodic sync
// keeps them all.
func TestKilledUnderWritesRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	args := []string{"--data-dir", dir, "--memory", "64"}
	rng := rand.New(rand.NewPCG(11, 13))
	var acked, last []string
	setAside := 0
	const kills = 4
	for cycle := 0; cycle <= kills; cycle++ {
		child, addr, logs := startChildLogs(t, args...)
		for _, line := range strings.Split(logs(), "\n") {
			if strings.Contains(line, "set aside what a crash left") {
				setAside++
				t.Logf("start %d set aside what the kill left: %s", cycle, line[strings.Index(line, " dir="):])
			}
		}
		c := dialTest(t, addr)
		if cycle == 0 {
			createKeyspace(t, c, "crash", cfDef("cf", "BytesType", false))
		} else if err := c.SetKeyspace(ctx, "crash"); err != nil {
			t.Fatalf("start %d: %v\n%s", cycle, err, logs())
		}
		if cycle < kills {
			// The rows of the cycle just killed; every row at the end.
			verifyCrashRows(t, c, last, cycle)
			last = writeUntilKilled(t, addr, child, cycle, time.Second+time.Duration(rng.Int64N(int64(1500*time.Millisecond))))
			acked = append(acked, last...)
			continue
		}
		verifyCrashRows(t, c, acked, cycle)
		stopChild(t, child)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	t.Logf("%d rows acknowledged and read back after %d kills; %d tables at the end; %d starts set files aside", len(acked), kills, len(tables), setAside)
}

// writeUntilKilled runs four writers of new rows against addr and kills
// child after d, and returns the rows whose writes were acknowledged.
func writeUntilKilled(t *testing.T, addr string, child *exec.Cmd, cycle int, d time.Duration) []string {
	t.Helper()
	const writers = 4
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range writers {
		c := dialTest(t, addr)
		if err := c.SetKeyspace(context.Background(), "crash"); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				row := fmt.Sprintf("c%d-w%d-%06d", cycle, w, i)
				muts := make([]*cassandra.Mutation, crashColumns)
				for col := range muts {
					muts[col] = &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
						Column: column(fmt.Sprintf("col%02d", col), string(crashValue(row, col)), 1)}}
				}
				err := c.BatchMutate(context.Background(), map[string]map[string][]*cassandra.Mutation{row: {"cf": muts}}, one)
				if err != nil {
					return // the kill broke the connection
				}
				mu.Lock()
				acked = append(acked, row)
				mu.Unlock()
			}
		}()
	}
	time.Sleep(d)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	close(stop)
	wg.Wait()
	return acked
}

// verifyCrashRows reads every acknowledged row back.
func verifyCrashRows(t *testing.T, c *cassandra.CassandraClient, rows []string, start int) {
	t.Helper()
	all := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: crashColumns + 1}}
	for _, row := range rows {
		got, err := c.GetSlice(context.Background(), []byte(row), &cassandra.ColumnParent{ColumnFamily: "cf"}, all, one)
		if err != nil {
			t.Fatalf("start %d: row %s: %v", start, row, err)
		}
		if len(got) != crashColumns {
			t.Fatalf("start %d: row %s acknowledged before a kill has %d of its %d columns", start, row, len(got), crashColumns)
		}
		for col, cosc := range got {
			if !bytes.Equal(cosc.Column.Value, crashValue(row, col)) {
				t.Fatalf("start %d: row %s, column %d reads other bytes than were written", start, row, col)
			}
		}
	}
}
