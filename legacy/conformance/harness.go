package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/golden"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// CallTimeout bounds every call a test makes, so a server that hangs fails
// the test instead of stalling the run. It leaves room for a schema change
// on a busy cluster (thriftd over CQL waits for schema agreement), which
// takes tens of seconds when the machine is loaded.
const CallTimeout = 60 * time.Second

// Options describe the server a test needs.
type Options struct {
	// Partitioner is a short partitioner class name; empty means
	// Murmur3Partitioner.
	Partitioner string
	// ClusterName is the cluster name the server reports; empty means
	// "Test Cluster".
	ClusterName string
}

// Target is a server the suite runs against.
type Target struct {
	// Start starts (or empties) a server for one test and returns its
	// host:port. A started server must stop when the test ends (t.Cleanup).
	Start func(t testing.TB, opts Options) string
	// Cassandra is true when the server is a real Cassandra node: the tests
	// that meet a deliberate divergence of thriftd's (divergences.go) then
	// assert Cassandra's own behaviour instead of thriftd's.
	Cassandra bool
	// Backend, when set, is what thriftd's storage engine provides of the
	// engine contract (its store.Capabilities): thriftd serving from a
	// CQL cluster lacks some of it, and the tests that meet a missing
	// capability assert the cluster's behaviour, as named backend
	// divergences (divergences.go, Env.OnBackend). Nil is the whole
	// contract: the embedded store, or Cassandra itself.
	Backend *store.Capabilities
}

// Client is a connection to a server under test.
type Client struct {
	*cassandra.CassandraClient
	transport thrift.TTransport
	// Addr is the server's host:port.
	Addr string
}

// Dial opens a framed, binary-protocol connection to addr; it is closed when
// the test ends.
func Dial(t testing.TB, addr string) *Client {
	t.Helper()
	cfg := &thrift.TConfiguration{
		ConnectTimeout: CallTimeout,
		SocketTimeout:  CallTimeout,
	}
	sock := thrift.NewTSocketConf(addr, cfg)
	transport := thrift.NewTFramedTransportConf(sock, cfg)
	if err := transport.Open(); err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = transport.Close() })
	proto := thrift.NewTBinaryProtocolFactoryConf(cfg)
	client := cassandra.NewCassandraClientFactory(transport, proto)
	return &Client{CassandraClient: client, transport: transport, Addr: addr}
}

// Ctx returns a context bounded by CallTimeout for one call.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// Env is one test's server and a client connected to it.
type Env struct {
	T      *testing.T
	Target Target
	Opts   Options
	Addr   string
	C      *Client
}

// NewEnv starts a server through target and connects a client.
func NewEnv(t *testing.T, target Target, opts Options) *Env {
	t.Helper()
	addr := target.Start(t, opts)
	return &Env{T: t, Target: target, Opts: opts, Addr: addr, C: Dial(t, addr)}
}

// Dial opens another connection to the same server.
func (e *Env) Dial() *Client { return Dial(e.T, e.Addr) }

// VectorsDir returns the directory of the golden vectors observed on
// Cassandra 3.11.9: $THRIFTBRIDGE_VECTORS when set, otherwise
// testdata/cassandra-3.11 at the module root. The vectors are part of the
// repository, so an error means a broken checkout and callers fail the test.
func VectorsDir() (string, error) {
	if dir := os.Getenv("THRIFTBRIDGE_VECTORS"); dir != "" {
		return dir, nil
	}
	root, err := golden.Root()
	if err != nil {
		return "", fmt.Errorf("golden vectors: %w", err)
	}
	dir := filepath.Join(root, "testdata", "cassandra-3.11")
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("golden vectors: %w (they are part of the repository)", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("golden vectors: %s is not a directory", dir)
	}
	return dir, nil
}
