package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// TestDirectCommandLine: --cql is a loopback CQL address and takes the
// modes the direct load has; anything else is a usage error.
func TestDirectCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "--cql", "192.0.2.1:9042"}, "--cql \"192.0.2.1:9042\" is not a loopback address"},
		{[]string{"compare", "--cql", "no-port"}, "want host:port"},
		{[]string{"compare", "--cql", "127.0.0.1:9042", "--mode", "insert,counter"}, "--mode counter: the direct CQL load (--cql) has the modes insert, get, slice, batch, range"},
		{[]string{"compare", "--cql", "127.0.0.1:9042", "--mode", "get,get-super"}, "--mode get-super: the direct CQL load (--cql) has the modes insert, get, slice, batch, range"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage:") || stdout != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d, %q and the usage", tc.args, code, stdout, stderr, exitUsage, tc.want)
		}
	}
}

// TestCompareDirectCQL runs compare --cql on the Cassandra 5.0 node of
// CASSANDRA_TARGET_HOSTS with a real thriftd: every mode of the direct
// load measures calls on both thriftd and gocql without a failure, the
// ratio is filled in, and the run's keyspaces are gone afterwards.
func TestCompareDirectCQL(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: compare --cql needs CASSANDRA_TARGET_HOSTS (host:9042 of a Cassandra 5.0 node; test/cassandra/cassandra.sh start target) !!!")
	}
	res := runCompareJSON(t, buildBinaries(t), 5*time.Minute,
		"--cql", strings.Split(hosts, ",")[0], "--cassandra", "",
		"--thriftd-flags", "--write-request-timeout-ms 20000 --read-request-timeout-ms 20000 --range-request-timeout-ms 20000",
		"--timeout", "60s", "--mode", "insert,get,slice,batch,range", "--columns", "5", "--preload", "40", "--keys", "50",
		"--range-rows", "4", "--connections", "2", "--duration", "300ms", "--warmup", "0")
	if res.Direct == nil || len(res.Direct.Modes) != 5 {
		t.Fatalf("no direct gocql report: %+v", res.Direct)
	}
	for _, m := range res.Direct.Modes {
		if m.Ops == 0 || m.Errors != 0 {
			t.Errorf("direct gocql %s: %d calls, %d failed (%s)", m.Mode, m.Ops, m.Errors, m.FirstError)
		}
	}
	for _, r := range res.Rows {
		if r.Direct == nil || r.OverDirect == nil || *r.OverDirect <= 0 {
			t.Errorf("row %s: no thriftd/direct ratio: %+v", r.Mode, r)
		}
	}
	prefix := ""
	for i, f := range res.ThriftdFlags {
		if f == "--cql-keyspace-prefix" && i+1 < len(res.ThriftdFlags) {
			prefix = res.ThriftdFlags[i+1]
		}
	}
	if prefix == "" {
		t.Fatalf("thriftd ran without a keyspace prefix: %v", res.ThriftdFlags)
	}
	cluster := gocql.NewCluster(strings.Split(hosts, ",")...)
	cluster.Timeout = time.Minute
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	iter := s.Query("SELECT keyspace_name FROM system_schema.keyspaces").IterContext(ctx)
	var name string
	for iter.Scan(&name) {
		if strings.HasPrefix(name, prefix) {
			t.Errorf("keyspace %s is left on the cluster", name)
		}
	}
	if err := iter.Close(); err != nil {
		t.Fatal(err)
	}
}
