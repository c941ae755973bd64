package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/store"
)

// cqlBackendCapabilities is what thriftd's CQL backend provides of the
// engine contract (store/cqlstore's Capabilities): the suite asserts the
// cluster's behaviour where the rest is missing.
var cqlBackendCapabilities = store.Capabilities{}

// TestConformanceCQL runs the backend-neutral Thrift API suite against
// thriftd serving from the Cassandra 5.0 cluster of
// CASSANDRA_TARGET_HOSTS, which speaks native protocol version 5.
func TestConformanceCQL(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_TARGET_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: the conformance suite on the CQL backend needs CASSANDRA_TARGET_HOSTS (host:9042 of a Cassandra 5.0 node; test/cassandra/cassandra.sh start) !!!")
	}
	t.Parallel()
	runConformanceCQL(t, hosts, nil)
}

// TestConformanceCQLOn311 runs the suite against thriftd serving from
// the CQL side of the Cassandra 3.11 cluster of CASSANDRA_HOSTS, which
// speaks native protocol version 4 at most: the clusters (ScyllaDB, 3.x)
// whose requests cannot name their keyspace. The tests that ask for
// ByteOrderedPartitioner or RandomPartitioner run on the 3.11 clusters of
// those partitioners (CASSANDRA_HOSTS_BOP, CASSANDRA_HOSTS_RP).
func TestConformanceCQLOn311(t *testing.T) {
	hosts := os.Getenv("CASSANDRA_HOSTS")
	if hosts == "" {
		t.Skip("!!! SKIPPED: the conformance suite on the CQL backend over protocol v4 needs CASSANDRA_HOSTS (host:9042 of a Cassandra 3.11 node; test/cassandra/cassandra.sh start) !!!")
	}
	t.Parallel()
	others := map[string]string{}
	for name, c := range testcluster.OtherPartitioners() {
		others[name] = strings.Join(c.Hosts, ",")
	}
	for _, name := range []string{"ByteOrderedPartitioner", "RandomPartitioner"} {
		if others[name] == "" {
			t.Logf("!!! SKIPPED: the tests of %s on the CQL backend need a cluster of it (CASSANDRA_HOSTS_BOP, CASSANDRA_HOSTS_RP; test/cassandra/cassandra.sh start bop rp) !!!", name)
		}
	}
	runConformanceCQL(t, hosts, others)
}

// runConformanceCQL runs the suite against thriftd serving from the
// cluster of hosts, and the tests that ask for another partitioner from
// the cluster of others of that partitioner (short class name to
// hosts). Every test gets its own thriftd and keyspace prefix (its
// keyspaces are dropped when it ends); the run shares one metadata
// keyspace on each cluster, dropped at the end.
func runConformanceCQL(t *testing.T, hosts string, others map[string]string) {
	var id [3]byte
	if _, err := rand.Read(id[:]); err != nil {
		t.Fatal(err)
	}
	run := "tbc" + hex.EncodeToString(id[:])
	meta := run + "_meta"
	admins := map[string]*gocql.Session{}
	for _, on := range append([]string{hosts}, slices.Collect(maps.Values(others))...) {
		admin := cqlAdminSession(t, on)
		admins[on] = admin
		t.Cleanup(func() { dropKeyspaces(t, admin, func(name string) bool { return strings.HasPrefix(name, run+"_") }) })
	}
	var n atomic.Int64
	target := conformance.Target{
		Backend: &cqlBackendCapabilities,
		Start: func(t testing.TB, opts conformance.Options) string {
			t.Helper()
			on := hosts
			if opts.Partitioner != "" && opts.Partitioner != "Murmur3Partitioner" {
				if on = others[opts.Partitioner]; on == "" {
					t.Skipf("!!! SKIPPED: no %s cluster here; TestConformanceCQLOn311 runs this test on 3.11's (CASSANDRA_HOSTS_BOP, CASSANDRA_HOSTS_RP) !!!", opts.Partitioner)
				}
			}
			admin := admins[on]
			prefix := fmt.Sprintf("%s_%d_", run, n.Add(1))
			cfg := daemontest.Config(t)
			if opts.ClusterName != "" {
				cfg.ClusterName = opts.ClusterName
			}
			cfg.Backend = "cql://" + on
			cfg.CQLKeyspacePrefix = prefix
			cfg.CQLMetaKeyspace = meta
			cfg.CQLConsistency = "ONE"
			// Registered before the daemon's own cleanup, so run after it.
			t.Cleanup(func() { dropKeyspaces(t, admin, func(name string) bool { return strings.HasPrefix(name, prefix) }) })
			return startLogged(t, cfg)
		},
	}
	conformance.Run(t, target)
}

// startLogged starts thriftd in process as daemontest.Start does, its
// warnings and errors in the test's log: the storage failures a client
// sees only as TimedOutException.
func startLogged(t testing.TB, cfg daemon.Config) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := daemon.Start(context.Background(), cfg, logger)
	if err != nil {
		t.Fatalf("start thriftd: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("stop thriftd: %v", err)
		}
	})
	return d.Addr().String()
}

// testLogWriter writes log lines to a test's log.
type testLogWriter struct{ t testing.TB }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// cqlAdminSession is a session for the test's own schema changes.
func cqlAdminSession(t *testing.T, hosts string) *gocql.Session {
	t.Helper()
	cluster := gocql.NewCluster(strings.Split(hosts, ",")...)
	cluster.Timeout = 30 * time.Second
	cluster.Consistency = gocql.One
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("connect to %s: %v", hosts, err)
	}
	t.Cleanup(s.Close)
	return s
}

// dropKeyspaces drops the keyspaces of the cluster whose names match.
func dropKeyspaces(t testing.TB, s *gocql.Session, match func(string) bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	iter := s.Query("SELECT keyspace_name FROM system_schema.keyspaces").IterContext(ctx)
	var name string
	var drop []string
	for iter.Scan(&name) {
		if match(name) {
			drop = append(drop, name)
		}
	}
	if err := iter.Close(); err != nil {
		t.Errorf("list keyspaces: %v", err)
		return
	}
	for _, ks := range drop {
		if err := s.Query(`DROP KEYSPACE IF EXISTS "` + ks + `"`).ExecContext(ctx); err != nil {
			t.Errorf("drop keyspace %s: %v", ks, err)
		}
	}
}
