package main

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestSecondSignalEndsAHungStop: a stop that cannot finish (here the
// store cannot flush its memtable: its directory was deleted under the
// running server, and Badger retries the flush without end) is ended by
// a second signal, as an operator's second Ctrl-C or a service manager's
// second SIGTERM expects.
func TestSecondSignalEndsAHungStop(t *testing.T) {
	dir := t.TempDir() + "/data"
	child, addr := startChild(t, "--data-dir", dir)
	c := dialTest(t, addr)
	createKeyspace(t, c, "hung", cfDef("cf", "UTF8Type", false))
	ctx := context.Background()
	for i := range 50 {
		ts := int64(i + 1)
		if err := c.Insert(ctx, []byte(fmt.Sprintf("row%d", i)), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, one); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		t.Fatalf("thriftd stopped on the first signal (%v): the scenario no longer hangs, so it tests nothing", err)
	case <-time.After(3 * time.Second):
	}
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("thriftd exited with status 0 after a stop that did not finish")
		}
		t.Logf("after the second signal: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("thriftd still running 10 s after a second SIGTERM")
	}
}
