package thriftsource

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/thriftbridge/thriftbridge/fixtures"
	"github.com/thriftbridge/thriftbridge/legacy"
	"github.com/thriftbridge/thriftbridge/store/badgerstore"
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
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine, err := badgerstore.Open(ctx, badgerstore.Options{
		Dir: dir, Partitioner: part, Logger: logger, Now: clock.Now, GCInterval: -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	handler := legacy.NewHandler(engine, legacy.HandlerConfig{Now: clock.Now}, logger)
	srv := legacy.NewServer(legacy.ServerConfig{Listen: "127.0.0.1:0"}, handler, logger)
	if err := srv.Listen(); err != nil {
		engine.Close()
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(context.WithoutCancel(ctx)) }()
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(stopCtx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, legacy.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
		if err := engine.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return srv.Addr().String()
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
