package main

import (
	"bytes"
	"context"
	"errors"
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
// empty; thriftd sets both aside. Every write acknowledged before any of
// the kills must read back whole, super columns included, and every
// counter must hold its acknowledged adds, each once, and at most the
// adds whose answers the kill cut off: a killed process loses nothing
// the kernel holds, so the default periodic sync keeps them all.
func TestKilledUnderWritesRestarts(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	args := []string{"--data-dir", dir, "--memory", "64"}
	rng := rand.New(rand.NewPCG(11, 13))
	var all, last crashWrites
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
			counters := cfDef("cnt", "UTF8Type", false)
			counters.DefaultValidationClass = ptr("CounterColumnType")
			createKeyspace(t, c, "crash", cfDef("cf", "BytesType", false), cfDef("sup", "UTF8Type", true), counters)
		} else if err := c.SetKeyspace(ctx, "crash"); err != nil {
			t.Fatalf("start %d: %v\n%s", cycle, err, logs())
		}
		verifyCounters(t, c, &all, cycle)
		if cycle < kills {
			// The rows of the cycle just killed; every row at the end.
			verifyCrashRows(t, c, &last, cycle)
			last = writeUntilKilled(t, addr, child, cycle, time.Second+time.Duration(rng.Int64N(int64(1500*time.Millisecond))))
			all.rows = append(all.rows, last.rows...)
			all.supers = append(all.supers, last.supers...)
			for i := range all.added {
				all.added[i] += last.added[i]
				all.unanswered[i] += last.unanswered[i]
			}
			continue
		}
		verifyCrashRows(t, c, &all, cycle)
		stopChild(t, child)
	}
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	t.Logf("%d rows and %d super rows acknowledged and read back after %d kills; counters %v; %d tables at the end; %d starts set files aside",
		len(all.rows), len(all.supers), kills, all.added, len(tables), setAside)
}

func ptr[T any](v T) *T { return &v }

// crashCounters is the number of counter columns the load adds to.
const crashCounters = 4

// crashWrites is what the load wrote and had acknowledged.
type crashWrites struct {
	rows   []string // standard rows, crashColumns columns each
	supers []string // super rows, 4 super columns of 4 subcolumns each
	// added are the acknowledged adds of 1 to each counter column;
	// unanswered the adds cut off by a kill, which may have been applied.
	added, unanswered [crashCounters]int64
}

// writeUntilKilled runs four writers of new standard rows, one of super
// rows and one of counter adds against addr, kills child after d, and
// returns what was acknowledged.
func writeUntilKilled(t *testing.T, addr string, child *exec.Cmd, cycle int, d time.Duration) crashWrites {
	t.Helper()
	var (
		mu  sync.Mutex
		out crashWrites
		wg  sync.WaitGroup
	)
	stop := make(chan struct{})
	// run calls call until it fails or the kill; call returns how to
	// record its outcome.
	run := func(call func(i int) (func(), error)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				record, err := call(i)
				mu.Lock()
				record()
				mu.Unlock()
				if err != nil {
					return // the kill broke the connection
				}
			}
		}()
	}
	ctx := context.Background()
	for w := range 4 {
		c := dialCrash(t, addr)
		run(func(i int) (func(), error) {
			row := fmt.Sprintf("c%d-w%d-%06d", cycle, w, i)
			muts := make([]*cassandra.Mutation, crashColumns)
			for col := range muts {
				muts[col] = put(column(fmt.Sprintf("col%02d", col), string(crashValue(row, col)), 1))
			}
			if err := c.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{row: {"cf": muts}}, one); err != nil {
				return func() {}, err
			}
			return func() { out.rows = append(out.rows, row) }, nil
		})
	}
	sc := dialCrash(t, addr)
	run(func(i int) (func(), error) {
		row := fmt.Sprintf("s%d-%06d", cycle, i)
		var muts []*cassandra.Mutation
		for super := range 4 {
			sup := &cassandra.SuperColumn{Name: []byte(fmt.Sprintf("sc%d", super))}
			for sub := range 4 {
				sup.Columns = append(sup.Columns, column(fmt.Sprintf("s%d", sub), superValue(row, super, sub), 1))
			}
			muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: sup}})
		}
		if err := sc.BatchMutate(ctx, map[string]map[string][]*cassandra.Mutation{row: {"sup": muts}}, one); err != nil {
			return func() {}, err
		}
		return func() { out.supers = append(out.supers, row) }, nil
	})
	cc := dialCrash(t, addr)
	run(func(i int) (func(), error) {
		n := i % crashCounters
		err := cc.Add(ctx, []byte("counters"), &cassandra.ColumnParent{ColumnFamily: "cnt"},
			&cassandra.CounterColumn{Name: []byte(fmt.Sprintf("n%d", n)), Value: 1}, one)
		if err != nil {
			return func() { out.unanswered[n]++ }, err
		}
		return func() { out.added[n]++ }, nil
	})
	time.Sleep(d)
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	close(stop)
	wg.Wait()
	return out
}

// dialCrash opens a connection to addr in the crash test's keyspace.
func dialCrash(t *testing.T, addr string) *cassandra.CassandraClient {
	t.Helper()
	c := dialTest(t, addr)
	if err := c.SetKeyspace(context.Background(), "crash"); err != nil {
		t.Fatal(err)
	}
	return c
}

// superValue is the value of a subcolumn of a super row.
func superValue(row string, super, sub int) string {
	return fmt.Sprintf("%s/%d/%d", row, super, sub)
}

// verifyCrashRows reads the acknowledged rows of w back.
func verifyCrashRows(t *testing.T, c *cassandra.CassandraClient, w *crashWrites, start int) {
	t.Helper()
	ctx := context.Background()
	all := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: crashColumns + 1}}
	for _, row := range w.rows {
		got, err := c.GetSlice(ctx, []byte(row), &cassandra.ColumnParent{ColumnFamily: "cf"}, all, one)
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
	for _, row := range w.supers {
		got, err := c.GetSlice(ctx, []byte(row), &cassandra.ColumnParent{ColumnFamily: "sup"}, all, one)
		if err != nil {
			t.Fatalf("start %d: super row %s: %v", start, row, err)
		}
		if len(got) != 4 {
			t.Fatalf("start %d: super row %s acknowledged before a kill has %d of its 4 super columns", start, row, len(got))
		}
		for super, cosc := range got {
			if cosc.SuperColumn == nil || len(cosc.SuperColumn.Columns) != 4 {
				t.Fatalf("start %d: super row %s, super column %d: %v", start, row, super, cosc)
			}
			for sub, col := range cosc.SuperColumn.Columns {
				if want := superValue(row, super, sub); string(col.Value) != want {
					t.Fatalf("start %d: super row %s reads %q, want %q", start, row, col.Value, want)
				}
			}
		}
	}
}

// verifyCounters checks that each counter holds its acknowledged adds and
// at most the unanswered ones too, and then takes what it holds as
// acknowledged: after a restart the unanswered adds are settled.
func verifyCounters(t *testing.T, c *cassandra.CassandraClient, w *crashWrites, start int) {
	t.Helper()
	for n := range crashCounters {
		var got int64
		cosc, err := c.Get(context.Background(), []byte("counters"), &cassandra.ColumnPath{ColumnFamily: "cnt", Column: []byte(fmt.Sprintf("n%d", n))}, one)
		var nf *cassandra.NotFoundException
		switch {
		case err == nil:
			got = cosc.CounterColumn.Value
		case errors.As(err, &nf):
		default:
			t.Fatalf("start %d: counter n%d: %v", start, n, err)
		}
		if got < w.added[n] || got > w.added[n]+w.unanswered[n] {
			t.Fatalf("start %d: counter n%d holds %d after %d acknowledged adds and %d unanswered", start, n, got, w.added[n], w.unanswered[n])
		}
		w.added[n], w.unanswered[n] = got, 0
	}
}
