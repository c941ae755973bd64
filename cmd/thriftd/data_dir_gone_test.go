package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestDeletedDataDirectory: when the data directory is deleted under a
// running thriftd, writes fail with TimedOutException (Cassandra's answer
// to a write its storage cannot take) instead of being acknowledged into
// files no restart finds, the log says why, reads go on, and a SIGTERM
// stops thriftd at once with an error, where the store's last flush into
// the missing directory used to hold the stop for ever.
func TestDeletedDataDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir() + "/data"
	child, addr, logs := startChildLogs(t, "--data-dir", dir)
	c := dialTest(t, addr)
	createKeyspace(t, c, "gone", cfDef("cf", "UTF8Type", false))
	insert := func(i int) error {
		return c.Insert(ctx, []byte("row"), &cassandra.ColumnParent{ColumnFamily: "cf"}, column("c", fmt.Sprintf("v%d", i), int64(i)), one)
	}
	if err := insert(1); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	acked, i := 1, 2
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); i++ {
		if err = insert(i); err != nil {
			break
		}
		acked = i
		time.Sleep(10 * time.Millisecond)
	}
	var timedOut *cassandra.TimedOutException
	if !errors.As(err, &timedOut) {
		t.Fatalf("a write after the data directory was deleted: %v; want TimedOutException\n%s", err, logs())
	}
	// The log says why. Its lines reach the test through a pipe, and the
	// guard may refuse a write between marking the directory gone and
	// logging it, so the line can come after the refusal.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs(), "the data directory was removed or replaced"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("the log does not say why writes are refused:\n%s", logs())
			break
		}
	}
	got, err := c.Get(ctx, []byte("row"), &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("c")}, one)
	if want := fmt.Sprintf("v%d", acked); err != nil || string(got.Column.Value) != want {
		t.Errorf("read after the refusals: %v %v; want %q", got, err, want)
	}

	select {
	case err := <-terminate(t, child):
		if err == nil {
			t.Errorf("thriftd exited with status 0 though its last writes could not be flushed\n%s", logs())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("thriftd still running 20 s after SIGTERM\n%s", logs())
	}
}
