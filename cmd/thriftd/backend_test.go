package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// TestBackendCommandLine: a wrong --backend is a wrong command line
// (usage, exit 2); a cluster that cannot be reached is a failure to start
// (exit 1) that names it.
func TestBackendCommandLine(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
		says   string
	}{
		{"unknown backend", []string{"--backend", "mysql://db"}, 2, "must be badger:DIR or cql://host:port"},
		{"cql with a keyspace", []string{"--backend", "cql://127.0.0.1:9042/Blog"}, 2, "takes no keyspace"},
		{"bad consistency", []string{"--backend", "cql://127.0.0.1", "--cql-consistency", "MOSTLY"}, 2, "--cql-consistency"},
		{"order-preserving partitioner", []string{"--backend", "cql://127.0.0.1", "--partitioner", "OrderPreservingPartitioner"}, 2, "serves clusters of Murmur3Partitioner, RandomPartitioner and ByteOrderedPartitioner"},
		{"unreachable cluster", []string{"--listen", "127.0.0.1:0", "--backend", "cql://127.0.0.1:1"}, 1, "connect to 127.0.0.1:1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, stderr := runMain(t, c.args...)
			if status != c.status || !strings.Contains(stderr, c.says) {
				t.Errorf("thriftd %v: exit %d, stderr %q; want exit %d and %q", c.args, status, stderr, c.status, c.says)
			}
		})
	}
}

// TestBackendCQLServes runs the thriftd binary on the Cassandra 5.0
// cluster of CASSANDRA_TARGET_HOSTS: a family created and written through
// Thrift is a CQL table on the cluster, read back through Thrift.
func TestBackendCQLServes(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: thriftd on the CQL backend needs CASSANDRA_TARGET_HOSTS (host:9042 of a Cassandra 5.0 node; test/cassandra/cassandra.sh start) !!!")
	}
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	run := "tbb" + hex.EncodeToString(id[:])
	admin := cqlAdminSession(t, hosts)
	t.Cleanup(func() { dropKeyspaces(t, admin, func(name string) bool { return strings.HasPrefix(name, run+"_") }) })
	_, addr := startChild(t, "--backend", "cql://"+hosts, "--cql-keyspace-prefix", run+"_", "--cql-meta-keyspace", run+"_meta", "--cql-consistency", "one")
	ctx := context.Background()
	c := dialTest(t, addr)
	cf := cassandra.NewCfDef()
	cf.Keyspace, cf.Name, cf.ComparatorType = "Legacy", "Users", "UTF8Type"
	if _, err := c.SystemAddKeyspace(ctx, &cassandra.KsDef{Name: "Legacy", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{cf}}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetKeyspace(ctx, "Legacy"); err != nil {
		t.Fatal(err)
	}
	ts := int64(42)
	if err := c.Insert(ctx, []byte("alice"), &cassandra.ColumnParent{ColumnFamily: "Users"},
		&cassandra.Column{Name: []byte("email"), Value: []byte("alice@example.com"), Timestamp: &ts}, cassandra.ConsistencyLevel_QUORUM); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, []byte("alice"), &cassandra.ColumnPath{ColumnFamily: "Users", Column: []byte("email")}, cassandra.ConsistencyLevel_ONE)
	if err != nil || string(got.Column.Value) != "alice@example.com" || got.Column.GetTimestamp() != 42 {
		t.Fatalf("get: %+v, %v", got, err)
	}
	// The same cell, as CQL sees it.
	var key, name, value string
	var wt int64
	if err := admin.Query(`SELECT key, column1, value, writetime(value) FROM "`+run+`_Legacy"."Users"`).ScanContext(ctx, &key, &name, &value, &wt); err != nil {
		t.Fatalf("the cell on the cluster: %v", err)
	}
	if key != "alice" || name != "email" || value != "alice@example.com" || wt != 42 {
		t.Errorf("on the cluster: %q %q %q at %d", key, name, value, wt)
	}
}

// TestBackendBadgerDir: --backend badger:DIR keeps the embedded store, in
// DIR rather than --data-dir.
func TestBackendBadgerDir(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	_, addr := startChild(t, "--backend", "badger:"+dir, "--data-dir", other)
	c := dialTest(t, addr)
	if _, err := c.SystemAddKeyspace(context.Background(), &cassandra.KsDef{Name: "here", StrategyClass: "SimpleStrategy",
		StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST")); err != nil {
		t.Errorf("no store in the backend's directory %s: %v", dir, err)
	}
	if entries, err := os.ReadDir(other); err != nil || len(entries) != 0 {
		t.Errorf("--data-dir %s was used too: %v %v", other, entries, err)
	}
}
