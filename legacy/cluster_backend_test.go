package legacy_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/internal/testcluster"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/legacy/conformance"
	"github.com/thriftbridge/thriftbridge/store/cqlstore"
)

// clusterThriftd is a Thrift server in process over a cqlstore engine on
// the Cassandra 5.0 node (CASSANDRA_TARGET_HOSTS), with a metadata
// keyspace of its own, dropped at the end.
type clusterThriftd struct {
	addr   string
	engine *cqlstore.Engine
}

// startClusterThriftd starts one, serving with cfg (its Ring, say), or
// skips loudly without the node.
func startClusterThriftd(t *testing.T, cfg legacy.HandlerConfig) *clusterThriftd {
	t.Helper()
	meta := testcluster.Keyspace("tb_meta")
	dropWhenDone(t, meta)
	return startClusterThriftdOn(t, cfg, meta, "127.0.0.1:0")
}

// targetHosts are the contact points of the Cassandra 5.0 node, or the
// test is skipped loudly.
func targetHosts(t *testing.T) []string {
	t.Helper()
	hosts := strings.TrimSpace(os.Getenv("CASSANDRA_TARGET_HOSTS"))
	if hosts == "" {
		t.Skip("!!! SKIPPED: the cluster backend's Thrift calls need CASSANDRA_TARGET_HOSTS (Cassandra 5.0, host:port); `test/cassandra/cassandra.sh start` prints it !!!")
	}
	return strings.Split(hosts, ",")
}

// dropWhenDone drops keyspaces of the Cassandra 5.0 node when t ends.
func dropWhenDone(t *testing.T, keyspaces ...string) {
	t.Helper()
	session := testcluster.Session(t, testcluster.Cluster{Name: "cassandra-5.0", Env: "CASSANDRA_TARGET_HOSTS", Hosts: targetHosts(t)})
	testcluster.DropWhenDone(t, session, keyspaces...)
}

// startClusterThriftdOn starts one on listen, with the legacy definitions
// in the metadata keyspace meta (which instances over one cluster share).
func startClusterThriftdOn(t *testing.T, cfg legacy.HandlerConfig, meta, listen string) *clusterThriftd {
	t.Helper()
	hosts := targetHosts(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	logger := slog.New(slog.DiscardHandler)
	engine, err := cqlstore.Open(ctx, cqlstore.Options{Hosts: hosts, MetaKeyspace: meta, RefreshInterval: -1, Logger: logger})
	if err != nil {
		t.Fatalf("open the cluster engine on %s: %v", hosts, err)
	}
	t.Cleanup(func() { engine.Close() })

	srv := legacy.NewServer(legacy.ServerConfig{Listen: listen}, legacy.NewHandler(engine, cfg, logger), logger)
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; !errors.Is(err, legacy.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return &clusterThriftd{addr: srv.Addr().String(), engine: engine}
}

// referenceThrift is the Thrift address of Cassandra 3.11
// (CASSANDRA_THRIFT), or "" when it is not set: the comparisons with it
// are then skipped loudly, the rest runs.
func referenceThrift(t *testing.T) string {
	addr := strings.TrimSpace(os.Getenv("CASSANDRA_THRIFT"))
	if addr == "" {
		t.Log("!!! SKIPPED PART: CASSANDRA_THRIFT (Cassandra 3.11's Thrift port) is not set: no comparison with the reference !!!")
	}
	return addr
}

// dial opens a Thrift client to addr, closed when t ends.
func dial(t *testing.T, addr string) *conformance.Client {
	t.Helper()
	return conformance.Dial(t, addr)
}
