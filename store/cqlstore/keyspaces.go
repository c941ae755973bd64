package cqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
)

// maxKeyspaceSessions bounds the sessions bound to a keyspace that an
// engine keeps open: each holds a control connection and a connection to
// every node, and a server's CQL clients seldom use more keyspaces than
// this at once. The least recently used one is closed for a new one.
const maxKeyspaceSessions = 8

// errSessionsClosed is acquire's error once the engine is closed.
var errSessionsClosed = errors.New("cqlstore: engine closed")

// keyspaceSessions are the sessions of an engine whose protocol (version
// 4: Cassandra 3.x, ScyllaDB) cannot name a request's keyspace: CQL
// passed through from a Thrift client runs on a session whose every
// connection is in the client's keyspace (ClusterConfig.Keyspace), so
// that the cluster reads unqualified names as Cassandra 3.11 does for
// CQL over Thrift, the statement's text untouched. Sessions are opened
// on first use and closed with the engine, or when the least recently
// used of more than max.
type keyspaceSessions struct {
	conn cqlconn.Config // as the engine's, but for Keyspace
	max  int

	mu     sync.Mutex
	closed bool
	byName map[string]*boundSession
	clock  uint64 // use counter, for the least recently used
}

// boundSession is a session in one keyspace, shared by the requests
// that hold it (refs); one evicted is closed by the last to let go.
type boundSession struct {
	keyspace string
	ready    chan struct{} // closed once session or err is set
	session  *gocql.Session
	err      error
	refs     int
	used     uint64
	evicted  bool
}

func newKeyspaceSessions(conn cqlconn.Config, limit int) *keyspaceSessions {
	conn.Protocol = nil
	return &keyspaceSessions{conn: conn, max: limit, byName: map[string]*boundSession{}}
}

// acquire is the session bound to keyspace (the cluster's name), opened
// now if needed; release must follow.
func (k *keyspaceSessions) acquire(ctx context.Context, keyspace string) (*boundSession, error) {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, errSessionsClosed
	}
	b, found := k.byName[keyspace]
	if !found {
		k.evictLocked(k.max - 1)
		b = &boundSession{keyspace: keyspace, ready: make(chan struct{})}
		k.byName[keyspace] = b
	}
	b.refs++
	k.clock++
	b.used = k.clock
	k.mu.Unlock()

	if !found {
		// NewSession is bounded by the connection timeout, not by ctx: the
		// requests waiting for the same keyspace share its outcome.
		cfg := k.conn
		cfg.Keyspace = keyspace
		s, err := cqlconn.NewSession(cfg)
		k.mu.Lock()
		b.session, b.err = s, err
		if err != nil && k.byName[keyspace] == b {
			// Not kept: the keyspace may be created later.
			delete(k.byName, keyspace)
		}
		close(b.ready)
		k.mu.Unlock()
	}
	select {
	case <-b.ready:
	case <-ctx.Done():
		k.release(b)
		return nil, ctx.Err()
	}
	if b.err != nil {
		k.release(b)
		return nil, fmt.Errorf("open a session in keyspace %s: %w", keyspace, b.err)
	}
	return b, nil
}

// release lets go of b.
func (k *keyspaceSessions) release(b *boundSession) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b.refs--
	k.closeIfDoneLocked(b)
}

// discard forgets b, so that the keyspace's next request opens a new
// session: b's connections have failed (the keyspace was dropped, say,
// and the connections cannot be reopened in it).
func (k *keyspaceSessions) discard(b *boundSession) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byName[b.keyspace] == b {
		delete(k.byName, b.keyspace)
		b.evicted = true
	}
}

// evictLocked evicts the least recently used sessions until at most n
// remain.
func (k *keyspaceSessions) evictLocked(n int) {
	for len(k.byName) > n {
		var lru *boundSession
		for _, b := range k.byName {
			if lru == nil || b.used < lru.used {
				lru = b
			}
		}
		delete(k.byName, lru.keyspace)
		lru.evicted = true
		k.closeIfDoneLocked(lru)
	}
}

// closeIfDoneLocked closes b's session once it is evicted and no request
// holds it.
func (k *keyspaceSessions) closeIfDoneLocked(b *boundSession) {
	if b.evicted && b.refs == 0 && b.session != nil {
		b.session.Close()
		b.session = nil
	}
}

// close closes every session, those in use when they are released.
func (k *keyspaceSessions) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	k.evictLocked(0)
}

// passthroughSession is the session on which CQL passed through runs
// with keyspace (the cluster's name; "" for none) as the default of
// unqualified names, and the keyspace to set on its requests (protocol
// 5 and later; "" otherwise). done must follow with the outcome of the
// requests: a session without connections is forgotten, for the next
// request to open a new one. A keyspace no session can be opened in (it does not exist,
// say) is left to the cluster: the engine's session runs the statement
// without it, and the cluster refuses unqualified names.
func (e *Engine) passthroughSession(ctx context.Context, keyspace string) (s *gocql.Session, perRequest string, done func(error)) {
	if keyspace == "" {
		return e.session, "", func(error) {}
	}
	if e.bound == nil {
		return e.session, keyspace, func(error) {}
	}
	b, err := e.bound.acquire(ctx, keyspace)
	if err != nil {
		e.log.DebugContext(ctx, "cqlstore: no session in the client's keyspace; the statement runs without it",
			"keyspace", keyspace, "err", err)
		return e.session, "", func(error) {}
	}
	return b.session, "", func(err error) {
		if errors.Is(err, gocql.ErrNoConnections) || errors.Is(err, gocql.ErrSessionClosed) {
			e.bound.discard(b)
		}
		e.bound.release(b)
	}
}
