package thriftsource

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/daemon"
	"github.com/thriftbridge/thriftbridge/daemon/daemontest"
	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// testClock is the clock of a test server, set by the test.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// startServer starts thriftd in-process on 127.0.0.1:0 over a Badger store
// in dir, with its clock pinned to clock; the server stops when the test
// ends.
func startServer(t *testing.T, dir string, part partition.Partitioner, clock *testClock) string {
	t.Helper()
	cfg := daemontest.Config(t)
	cfg.DataDir, cfg.Partitioner = dir, part.Name()
	return daemontest.Start(t, cfg, daemon.WithClock(clock.Now), daemon.WithGCInterval(-1))
}

// writeModel loads m into the server at addr under the keyspace name
// keyspace ("": the model's).
func writeModel(ctx context.Context, addr string, m *fixtures.Model, keyspace string) error {
	return Call(ctx, addr, ConnOptions{}, func(ctx context.Context, c *cassandra.CassandraClient) error {
		return m.WriteThrift(ctx, c, keyspace)
	})
}

// dropKeyspace drops keyspace on the server at addr.
func dropKeyspace(ctx context.Context, addr, keyspace string) error {
	return Call(ctx, addr, ConnOptions{}, func(ctx context.Context, c *cassandra.CassandraClient) error {
		_, err := c.SystemDropKeyspace(ctx, keyspace)
		return describeError(err)
	})
}
