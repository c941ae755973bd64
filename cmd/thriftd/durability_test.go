package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// childArgsEnv makes the test binary run thriftd itself, with these
// arguments (separated by newlines), so a test can kill it for real.
const childArgsEnv = "THRIFTD_TEST_CHILD_ARGS"

func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv(childArgsEnv); ok {
		// thriftd's own main, exit statuses included.
		os.Args = append([]string{"thriftd"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var listeningRE = regexp.MustCompile(`msg="thriftd listening" addr=(\S+)`)

// startChild runs thriftd in a child process and returns it with its
// address, once it listens.
func startChild(t *testing.T, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childArgsEnv+"="+strings.Join(append([]string{"--listen", "127.0.0.1:0"}, args...), "\n"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return cmd, addr
	case <-time.After(20 * time.Second):
		t.Fatal("child thriftd did not start listening")
		return nil, ""
	}
}

func dialTest(t *testing.T, addr string) *cassandra.CassandraClient {
	t.Helper()
	conf := &thrift.TConfiguration{ConnectTimeout: 5 * time.Second, SocketTimeout: 10 * time.Second}
	tr := thrift.NewTFramedTransportConf(thrift.NewTSocketConf(addr, conf), conf)
	if err := tr.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	pf := thrift.NewTBinaryProtocolFactoryConf(conf)
	return cassandra.NewCassandraClient(thrift.NewTStandardClient(pf.GetProtocol(tr), pf.GetProtocol(tr)))
}

// TestBatchSyncSurvivesKill9: with --commitlog-sync batch, every write
// acknowledged before a SIGKILL is there after a restart.
func TestBatchSyncSurvivesKill9(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	child, addr := startChild(t, "--data-dir", dir, "--commitlog-sync", "batch")
	c := dialTest(t, addr)
	if _, err := c.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: "dur", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetKeyspace(ctx, "dur"); err != nil {
		t.Fatal(err)
	}
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name = "dur", "cf"
	if _, err := c.SystemAddColumnFamily(ctx, cf); err != nil {
		t.Fatal(err)
	}
	const writes = 300
	for i := 0; i < writes; i++ {
		ts := int64(i + 1)
		err := c.Insert(ctx, []byte(fmt.Sprintf("row%d", i%7)), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.Column{Name: []byte(fmt.Sprintf("col%04d", i)), Value: []byte("v"), Timestamp: &ts}, cassandra.ConsistencyLevel_ONE)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	_, addr = startChild(t, "--data-dir", dir, "--commitlog-sync", "batch")
	c = dialTest(t, addr)
	if err := c.SetKeyspace(ctx, "dur"); err != nil {
		t.Fatalf("keyspace lost after kill -9: %v", err)
	}
	total := int32(0)
	for r := 0; r < 7; r++ {
		n, err := c.GetCount(ctx, []byte(fmt.Sprintf("row%d", r)), &cassandra.ColumnParent{ColumnFamily: "cf"},
			&cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 10000}}, cassandra.ConsistencyLevel_ONE)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != writes {
		t.Fatalf("after kill -9: %d of %d acknowledged writes survived", total, writes)
	}
	// The writes before the kill skipped reading the cells they
	// overwrote (their timestamps were above every stored one); after
	// the restart, a write older than a stored cell still loses.
	old := int64(writes - 1)
	path := &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte(fmt.Sprintf("col%04d", writes-1))}
	key := []byte(fmt.Sprintf("row%d", (writes-1)%7))
	if err := c.Insert(ctx, key, &cassandra.ColumnParent{ColumnFamily: "cf"},
		&cassandra.Column{Name: path.Column, Value: []byte("older"), Timestamp: &old}, cassandra.ConsistencyLevel_ONE); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, key, path, cassandra.ConsistencyLevel_ONE)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Column.Value) != "v" || got.Column.GetTimestamp() != writes {
		t.Fatalf("after kill -9, an older write replaced a stored cell: %q at %d", got.Column.Value, got.Column.GetTimestamp())
	}
}
