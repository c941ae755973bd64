package cqlstore

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// Options configure Open.
type Options struct {
	// Hosts are the contact points, host:port (port 9042 when left out).
	Hosts []string
	// Partitioner, when set, is the partitioner the caller expects: Open
	// fails with ErrPartitioner unless the cluster uses it.
	Partitioner partition.Partitioner
	// MetaKeyspace holds the legacy definitions (default
	// "thriftbridge_meta"); MetaReplication is its replication map as CQL
	// text (default SimpleStrategy, replication_factor 1).
	MetaKeyspace    string
	MetaReplication string
	// KeyspacePrefix is put before every keyspace name on the cluster
	// (default none): a legacy keyspace "Blog" lives in the CQL keyspace
	// KeyspacePrefix+"Blog". Tests use it to share a cluster.
	KeyspacePrefix string
	// Consistency of reads and writes (default QUORUM); serial reads and
	// lightweight transactions use SERIAL.
	Consistency gocql.Consistency
	// RefreshInterval is how often the catalog is reloaded from the
	// metadata table, to see other instances' schema changes (default
	// 10s; negative: never, only after own changes and on Refresh).
	RefreshInterval time.Duration
	// Timeout of one request (default 10s).
	Timeout time.Duration
	Logger  *slog.Logger

	// Username and Password, TLS and LocalDC are the login, encryption
	// and local data center of the connection (see cqlconn.Config).
	// Requests always go token-aware to a replica of their partition: in
	// LocalDC first when it is set.
	Username, Password string
	TLS                *tls.Config
	LocalDC            string
}

// ErrPartitioner reports a cluster whose partitioner is not the one asked
// for, or one the engine does not serve.
var ErrPartitioner = errors.New("cqlstore: partitioner mismatch")

// Engine is a store.Engine over a Cassandra or ScyllaDB cluster.
type Engine struct {
	opts    Options
	session *gocql.Session
	part    partition.Partitioner
	log     *slog.Logger
	meta    string // quoted metadata keyspace

	// protocol is the native protocol version of session. Below 5 a
	// request cannot name its keyspace, and CQL passed through runs on
	// bound, sessions whose connections are in the client's keyspace.
	protocol int
	bound    *keyspaceSessions

	catalog  atomic.Pointer[store.Catalog]
	schemaMu sync.Mutex // serialises this instance's schema changes
	// rowLocks are the stripes that serialise this instance's conditional
	// writes of one row.
	rowLocks [256]sync.Mutex

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// Open connects to the cluster, creates the metadata keyspace if needed
// and loads the catalog.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if len(opts.Hosts) == 0 {
		return nil, errors.New("cqlstore: no hosts")
	}
	if opts.MetaKeyspace == "" {
		opts.MetaKeyspace = "thriftbridge_meta"
	}
	if opts.MetaReplication == "" {
		opts.MetaReplication = "{'class': 'SimpleStrategy', 'replication_factor': 1}"
	}
	if opts.Consistency == 0 {
		opts.Consistency = gocql.Quorum
	}
	if opts.RefreshInterval == 0 {
		opts.RefreshInterval = 10 * time.Second
	}
	if opts.Timeout == 0 {
		opts.Timeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	conn := connConfig(opts)
	conn.Protocol = new(cqlconn.Protocol)
	session, err := cqlconn.NewSession(conn)
	if err != nil {
		return nil, fmt.Errorf("cqlstore: %w", err)
	}
	e := &Engine{opts: opts, session: session, log: opts.Logger, meta: quote(opts.MetaKeyspace), stop: make(chan struct{})}
	if err := e.open(ctx); err != nil {
		session.Close()
		return nil, err
	}
	// open has had answers: the protocol is the negotiated one.
	e.protocol = conn.Protocol.Version()
	if e.protocol < 5 {
		conn.NumConns = 1
		e.bound = newKeyspaceSessions(conn, maxKeyspaceSessions)
	}
	if opts.RefreshInterval > 0 {
		e.wg.Add(1)
		go e.refreshLoop()
	}
	return e, nil
}

// connConfig is how the engine connects with opts, defaults set.
func connConfig(opts Options) cqlconn.Config {
	return cqlconn.Config{
		Hosts:       opts.Hosts,
		Consistency: opts.Consistency,
		Timeout:     opts.Timeout,
		Logger:      opts.Logger,
		Username:    opts.Username,
		Password:    opts.Password,
		TLS:         opts.TLS,
		LocalDC:     opts.LocalDC,
		TokenAware:  true,
	}
}

func (e *Engine) open(ctx context.Context) error {
	var name string
	if err := e.session.Query("SELECT partitioner FROM system.local").ScanContext(ctx, &name); err != nil {
		return fmt.Errorf("cqlstore: read the cluster's partitioner: %w", err)
	}
	p, err := partition.ByName(name)
	if err != nil || !served(p) {
		return fmt.Errorf("%w: the cluster uses %s; cqlstore serves clusters of Murmur3Partitioner, RandomPartitioner and ByteOrderedPartitioner", ErrPartitioner, name)
	}
	if e.opts.Partitioner != nil && e.opts.Partitioner.Name() != p.Name() {
		return fmt.Errorf("%w: the cluster uses %s, not %s", ErrPartitioner, p.Name(), e.opts.Partitioner.Name())
	}
	e.part = p
	if err := e.createMeta(ctx); err != nil {
		return err
	}
	return e.Refresh(ctx)
}

func (e *Engine) refreshLoop() {
	defer e.wg.Done()
	t := time.NewTicker(e.opts.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), e.opts.Timeout)
			if err := e.Refresh(ctx); err != nil {
				e.log.Warn("cqlstore: catalog refresh failed", "err", err)
			}
			cancel()
		}
	}
}

// Partitioner implements store.Engine.
func (e *Engine) Partitioner() partition.Partitioner { return e.part }

// served reports a partitioner whose clusters the engine serves:
// OrderPreservingPartitioner, deprecated since Cassandra 1.2, is not.
func served(p partition.Partitioner) bool {
	switch p.(type) {
	case partition.Murmur3Partitioner, partition.RandomPartitioner, partition.ByteOrderedPartitioner:
		return true
	}
	return false
}

// Capabilities implements store.Engine: see the package documentation.
func (e *Engine) Capabilities() store.Capabilities {
	return store.Capabilities{OrderedPartitioners: e.part.Ordered()}
}

// Catalog implements store.Engine.
func (e *Engine) Catalog() *store.Catalog { return e.catalog.Load() }

// Close implements store.Engine.
func (e *Engine) Close() error {
	e.once.Do(func() {
		close(e.stop)
		e.wg.Wait()
		if e.bound != nil {
			e.bound.close()
		}
		e.session.Close()
	})
	return nil
}

// quote quotes a CQL identifier when needed.
func quote(name string) string {
	return supercolQuote(name)
}

// Session is the engine's connection to the cluster, for the other
// tables of the metadata keyspace (thriftd's users, auth/cqlusers); it
// stays the engine's to close.
func (e *Engine) Session() *gocql.Session { return e.session }

// MetaKeyspace is the metadata keyspace, unquoted.
func (e *Engine) MetaKeyspace() string { return e.opts.MetaKeyspace }
