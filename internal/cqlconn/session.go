package cqlconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
)

// Config is how NewSession connects.
type Config struct {
	// Hosts are contact points, host:port.
	Hosts       []string
	Consistency gocql.Consistency
	// Timeout bounds each request and each connection attempt.
	Timeout time.Duration
	// NumConns is the number of connections per node (default 2).
	NumConns int
	Logger   *slog.Logger

	// Username and Password, when Username is set, log in through
	// PasswordAuthenticator (SASL PLAIN).
	Username, Password string
	// TLS, when set, encrypts every connection. Unless
	// InsecureSkipVerify is set, each node's certificate is verified,
	// against the node's address when ServerName is empty.
	TLS *tls.Config
	// LocalDC, when set, routes each request token-aware to a replica in
	// that data center, other nodes of the data center next, the other
	// data centers last (gocql's TokenAwareHostPolicy over
	// DCAwareRoundRobinPolicy); a data center with no node is an error.
	LocalDC string
	// TokenAware, without LocalDC, routes each request to a replica of
	// its partition, round robin over the nodes otherwise. Without either,
	// requests go round robin over every node.
	TokenAware bool
	// Keyspace, when set, is the keyspace of every connection of the
	// session (a USE on each): the default keyspace of unqualified names
	// on protocol versions that cannot carry one per request.
	Keyspace string
	// Protocol, when set, records the native protocol version the
	// session speaks.
	Protocol *Protocol
}

// Protocol records the native protocol version a session speaks, which
// gocql negotiates (the highest the contact node accepts) but does not
// tell: it is read off the header of every frame the session receives.
// After the session has answered a request, Version is the negotiated
// version (the driver never mixes versions within a session).
type Protocol struct{ version atomic.Int32 }

// ObserveFrameHeader implements gocql.FrameHeaderObserver.
func (p *Protocol) ObserveFrameHeader(_ context.Context, h gocql.ObservedFrameHeader) {
	// The high bit of the version byte is the direction, set on responses.
	v := int32(h.Version & 0x7f)
	if p.version.Load() != v {
		p.version.Store(v)
	}
}

// Version is the protocol version of the last frame received, 0 before
// any.
func (p *Protocol) Version() int { return int(p.version.Load()) }

// ErrAuthentication is wrapped by the error of a connection the cluster
// refused for its credentials, or for the want of them.
var ErrAuthentication = errors.New("authentication failed")

// NewSession connects to the cluster. A node too busy to answer its own
// system tables in time is tried again a few times; anything else (no
// node reachable, a refused login, an unknown data center) is an error
// that names the hosts.
func NewSession(cfg Config) (*gocql.Session, error) {
	cluster := gocql.NewCluster(cfg.Hosts...)
	cluster.Consistency = cfg.Consistency
	cluster.Timeout = cfg.Timeout
	cluster.ConnectTimeout = cfg.Timeout
	cluster.NumConns = cfg.NumConns
	if cluster.NumConns <= 0 {
		cluster.NumConns = 2
	}
	cluster.Logger = gocqlLogger{cfg.Logger}
	cluster.RegisteredTypes = opaqueTypes()
	cluster.Keyspace = cfg.Keyspace
	if cfg.Protocol != nil {
		cluster.FrameHeaderObserver = cfg.Protocol
	}
	if cfg.Username != "" {
		cluster.Authenticator = gocql.PasswordAuthenticator{Username: cfg.Username, Password: cfg.Password}
	}
	if cfg.TLS != nil {
		cluster.SslOpts = &gocql.SslOptions{Config: cfg.TLS, EnableHostVerification: !cfg.TLS.InsecureSkipVerify}
	}
	var dcs dcSet
	switch {
	case cfg.LocalDC != "":
		cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.DCAwareRoundRobinPolicy(cfg.LocalDC))
		cluster.HostFilter = gocql.HostFilterFunc(func(h *gocql.HostInfo) bool {
			dcs.add(h.DataCenter())
			return true
		})
	case cfg.TokenAware:
		cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	}
	where := strings.Join(cfg.Hosts, ",")
	session, err := cluster.CreateSession()
	for wait := time.Second; err != nil && IsServerTimeout(err) && wait <= 4*time.Second; wait *= 2 {
		if cfg.Logger != nil {
			cfg.Logger.Warn("connecting: the cluster timed out; trying again", "hosts", where, "in", wait)
		}
		time.Sleep(wait)
		session, err = cluster.CreateSession()
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", where, sessionError(err))
	}
	if cfg.LocalDC != "" && !dcs.has(cfg.LocalDC) {
		session.Close()
		return nil, fmt.Errorf("connect to %s: local data center %q has no node (the cluster's: %s)", where, cfg.LocalDC, dcs.String())
	}
	return session, nil
}

// IsServerTimeout reports a timeout the cluster itself answered.
func IsServerTimeout(err error) bool {
	var read *gocql.RequestErrReadTimeout
	var write *gocql.RequestErrWriteTimeout
	return errors.As(err, &read) || errors.As(err, &write)
}

// sessionError makes gocql's session errors, flat strings, readable: its
// prefixes dropped, and ErrAuthentication wrapped around a refused login.
func sessionError(err error) error {
	msg := err.Error()
	for _, p := range []string{"gocql: unable to create session: ", "unable to discover protocol version: ", "control: unable to connect to initial hosts: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	switch {
	case strings.Contains(msg, "authentication required"):
		return fmt.Errorf("%w: the cluster requires a login (%s)", ErrAuthentication, msg)
	case strings.Contains(msg, "password are incorrect"), strings.Contains(msg, "Username and/or password"), strings.Contains(msg, "Authentication") && strings.Contains(msg, "fail"):
		return fmt.Errorf("%w: %s", ErrAuthentication, msg)
	}
	return errors.New(msg)
}

// dcSet collects the data centers of the nodes gocql discovers.
type dcSet struct {
	mu  sync.Mutex
	dcs map[string]bool
}

func (d *dcSet) add(dc string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dcs == nil {
		d.dcs = map[string]bool{}
	}
	d.dcs[dc] = true
}

func (d *dcSet) has(dc string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dcs[dc]
}

func (d *dcSet) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.dcs))
	for dc := range d.dcs {
		names = append(names, dc)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none found"
	}
	return strings.Join(names, ", ")
}

// gocqlLogger sends gocql's log lines (reconnections, nodes down) to the
// caller's logger at debug level: callers report what matters themselves.
type gocqlLogger struct{ l *slog.Logger }

func (g gocqlLogger) Error(msg string, fields ...gocql.LogField)   { g.log(msg, fields) }
func (g gocqlLogger) Warning(msg string, fields ...gocql.LogField) { g.log(msg, fields) }
func (g gocqlLogger) Info(msg string, fields ...gocql.LogField)    { g.log(msg, fields) }
func (g gocqlLogger) Debug(msg string, fields ...gocql.LogField)   { g.log(msg, fields) }

func (g gocqlLogger) log(msg string, fields []gocql.LogField) {
	if g.l == nil || !g.l.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	attrs := make([]any, 0, 2+2*len(fields))
	attrs = append(attrs, "from", "gocql")
	for _, f := range fields {
		attrs = append(attrs, f.Name, f.Value.Any())
	}
	g.l.Debug(strings.TrimSpace(msg), attrs...)
}

// CASOutcomeUnknown reports the error of a lightweight transaction whose
// outcome is unknown: a CAS write timeout, or Cassandra 5's CAS write
// unknown result. A serial read of the row tells what happened.
func CASOutcomeUnknown(err error) bool {
	var timeout *gocql.RequestErrWriteTimeout
	var unknown *gocql.RequestErrCASWriteUnknown
	return errors.As(err, &unknown) || (errors.As(err, &timeout) && timeout.WriteType == "CAS")
}
