package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// mountSmallFS mounts a tmpfs of size bytes on a new directory, for the
// test only; it skips loudly where mounting is impossible (not root, no
// mount capability).
func mountSmallFS(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("!!! SKIPPED: disk full: cannot mount a %s tmpfs (root and mount are needed): %v: %s !!!", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestDiskFull: on a nearly full disk a write fails with
// TimedOutException (as Cassandra's fail when its commit log cannot be
// written), the log says why, the server stays up, and reads go on.
func TestDiskFull(t *testing.T) {
	ctx := context.Background()
	// thriftd keeps free twice the memtable, a value log file, 32 MiB and
	// what compactions may write: 80 MiB and level 0 and the base level
	// with the smallest memory budget, whose memtables are 8 MiB. Filling
	// 160 MiB leaves level 0 with enough tables that Badger compacts them
	// while writes are refused; a reserve without the compactions' room
	// let that compaction write into a full file system, and thriftd died
	// of SIGBUS during the reads below.
	dir := filepath.Join(mountSmallFS(t, "160m"), "data")
	child, addr, logs := startChildLogs(t, "--data-dir", dir, "--memory", "64", "--log-level", "debug")
	c := dialTest(t, addr)
	createKeyspace(t, c, "full", cfDef("cf", "UTF8Type", false))
	// Random bytes: the store compresses its tables.
	random := make([]byte, 256<<10)
	chacha := rand.NewChaCha8([32]byte{1})
	_, _ = chacha.Read(random)
	value := string(random)
	acked := 0
	var writeErr error
	for i := 0; i < 4000 && writeErr == nil; i++ {
		writeErr = c.Insert(ctx, []byte(fmt.Sprintf("row%05d", i)), &cassandra.ColumnParent{ColumnFamily: "cf"}, column("c", value, 1), one)
		if writeErr == nil {
			acked++
		}
	}
	var timedOut *cassandra.TimedOutException
	if !errors.As(writeErr, &timedOut) {
		t.Fatalf("after %d writes of 256 KiB on a 160 MiB file system: %v; want TimedOutException\n%s", acked, writeErr, logs())
	}
	// The log says so (its lines reach the test through a pipe).
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs(), "disk nearly full"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the log does not say the disk is full:\n%s", logs())
		}
	}
	// The next writes fail alike, on this connection and on a new one.
	c2 := dialTest(t, addr)
	if err := c2.SetKeyspace(ctx, "full"); err != nil {
		t.Fatal(err)
	}
	if err := c2.Insert(ctx, []byte("more"), &cassandra.ColumnParent{ColumnFamily: "cf"}, column("c", "v", 1), one); !errors.As(err, &timedOut) {
		t.Errorf("a write on a new connection: %v; want TimedOutException", err)
	}
	// Reads go on: every acknowledged write is there.
	for i := 0; i < acked; i++ {
		got, err := c.Get(ctx, []byte(fmt.Sprintf("row%05d", i)), &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("c")}, one)
		if err != nil || len(got.Column.Value) != len(value) {
			t.Fatalf("read of row%05d after the disk filled: %v\n%s", i, err, logs())
		}
	}
	if v, err := c2.DescribeVersion(ctx); err != nil || v == "" {
		t.Fatalf("describe_version: %q %v", v, err)
	}
	t.Logf("%d writes of 256 KiB acknowledged, then TimedOutException; reads and new connections served", acked)

	// A graceful stop flushes the memtable into the reserve.
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("thriftd did not stop cleanly on the full disk: %v\n%s", err, logs())
	}
}
