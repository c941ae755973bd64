package legacy

import (
	"context"
	"net"
)

// Session is the state of one client connection: the current keyspace, the
// login, and per-connection flags. A connection is served by one goroutine,
// one request at a time, so a Session needs no locking; it must not be
// shared between connections or kept after its request returns.
type Session struct {
	id         uint64
	remoteAddr net.Addr

	keyspace string

	loggedIn bool
	user     string

	traceNextQuery bool
	cqlVersion     string

	// calls is the deadline clock of the connection's calls, whose
	// parent context is the connection's (deadline.go); nil outside a
	// connection.
	calls *callClock
}

// NewSession returns the session of a new connection from remoteAddr; id
// tells connections apart in logs.
func NewSession(id uint64, remoteAddr net.Addr) *Session {
	return &Session{id: id, remoteAddr: remoteAddr}
}

// ID identifies the connection in logs.
func (s *Session) ID() uint64 { return s.id }

// RemoteAddr is the client's address (nil if unknown).
func (s *Session) RemoteAddr() net.Addr { return s.remoteAddr }

// Keyspace is the keyspace set by set_keyspace, or "" if none was set.
func (s *Session) Keyspace() string { return s.keyspace }

// SetKeyspace records the keyspace for the following requests. The caller
// validates it.
func (s *Session) SetKeyspace(keyspace string) { s.keyspace = keyspace }

// Login records a successful login as user.
func (s *Session) Login(user string) {
	s.loggedIn = true
	s.user = user
}

// LoggedIn reports whether a login succeeded on this connection.
func (s *Session) LoggedIn() bool { return s.loggedIn }

// User is the user of the last successful login, or "".
func (s *Session) User() string { return s.user }

// SetTraceNextQuery asks for the next query of this connection to be traced
// (trace_next_query).
func (s *Session) SetTraceNextQuery(trace bool) { s.traceNextQuery = trace }

// TakeTraceNextQuery reports whether the current query is to be traced and
// clears the flag, which holds for one query only.
func (s *Session) TakeTraceNextQuery() bool {
	trace := s.traceNextQuery
	s.traceNextQuery = false
	return trace
}

// CQLVersion is the version set by set_cql_version, or "".
func (s *Session) CQLVersion() string { return s.cqlVersion }

// SetCQLVersion records the CQL version the client asked for.
func (s *Session) SetCQLVersion(version string) { s.cqlVersion = version }

// sessionKey is the context key of the Session.
type sessionKey struct{}

// WithSession returns a context carrying s; the server gives every request
// of a connection such a context.
func WithSession(ctx context.Context, s *Session) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the Session carried by ctx, or nil.
func SessionFrom(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}
