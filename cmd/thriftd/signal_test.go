package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestSecondSignalEndsAHungStop: a stop that cannot finish soon (here a
// connection whose client asked for 48 MiB of replies and reads none: the
// stop lets the call in flight finish, for up to its grace of 30 s) is
// ended by a second signal, as an operator's second Ctrl-C or a service
// manager's second SIGTERM expects.
func TestSecondSignalEndsAHungStop(t *testing.T) {
	dir := t.TempDir() + "/data"
	child, addr := startChild(t, "--data-dir", dir, "--client-idle-timeout-ms", "60000")
	c := dialTest(t, addr)
	createKeyspace(t, c, "hung", cfDef("cf", "UTF8Type", false))
	ctx := context.Background()
	value := make([]byte, 1<<20)
	for i := range 12 {
		if err := c.Insert(ctx, []byte("wide"), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.Column{Name: fmt.Appendf(nil, "c%02d", i), Value: value, Timestamp: thrift.Int64Ptr(1)}, one); err != nil {
			t.Fatal(err)
		}
	}
	// Four get_slice calls of the whole 12 MiB row, sent at once on a
	// connection that never reads: the replies fill the socket buffers
	// and the server's write of the second one waits.
	buf := thrift.NewTMemoryBuffer()
	proto := thrift.NewTBinaryProtocolConf(buf, nil)
	call := func(name string, seq int32, args thrift.TStruct) []byte {
		buf.Reset()
		if err := proto.WriteMessageBegin(ctx, name, thrift.CALL, seq); err != nil {
			t.Fatal(err)
		}
		if err := args.Write(ctx, proto); err != nil {
			t.Fatal(err)
		}
		if err := proto.WriteMessageEnd(ctx); err != nil {
			t.Fatal(err)
		}
		frame := binary.BigEndian.AppendUint32(nil, uint32(buf.Len()))
		return append(frame, buf.Bytes()...)
	}
	frames := call("set_keyspace", 1, &cassandra.CassandraSetKeyspaceArgs{Keyspace: "hung"})
	for seq := int32(2); seq < 6; seq++ {
		frames = append(frames, call("get_slice", seq, &cassandra.CassandraGetSliceArgs{Key: []byte("wide"),
			ColumnParent: &cassandra.ColumnParent{ColumnFamily: "cf"}, Predicate: everything, ConsistencyLevel: one})...)
	}
	stuck, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stuck.Close()
	// A fixed receive buffer: the kernel grows none while nothing is read,
	// but a fixed one leaves nothing to its tuning.
	if err := stuck.(*net.TCPConn).SetReadBuffer(64 << 10); err != nil {
		t.Fatal(err)
	}
	if _, err := stuck.Write(frames); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	exited := terminate(t, child)
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

// terminate sends SIGTERM to a child thriftd and returns what its Wait
// returns, once it exits.
func terminate(t *testing.T, child *exec.Cmd) <-chan error {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	return exited
}
