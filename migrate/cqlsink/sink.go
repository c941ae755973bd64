package cqlsink

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/thriftbridge/thriftbridge/internal/cqlconn"
	"github.com/thriftbridge/thriftbridge/migrate"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// Config configures a Sink.
type Config struct {
	// Hosts are contact points, host:port.
	Hosts []string
	// Keyspace is the target keyspace.
	Keyspace    string
	Consistency gocql.Consistency
	// Concurrency is the number of batches in flight (default 8).
	Concurrency int
	// Rate limits statements per second (0: unlimited).
	Rate float64
	// BatchSize is the most statements per batch (default 50).
	BatchSize int
	// Retries is how many times a failed batch is retried (default 5),
	// waiting 100 ms, then twice as long each time, up to 10 s.
	Retries int
	// Timeout bounds each request (default 30 s).
	Timeout time.Duration
	Logger  *slog.Logger

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
	// DCAwareRoundRobinPolicy). The default is gocql's round robin over
	// every node.
	LocalDC string
	// Now is the clock a Target counts the TTLs it reads from (default:
	// the real clock). A conversion run as of another instant (convert
	// --now) writes each TTL as what is left of it at that instant: read
	// back as of the same instant, the TTLs match but for the time gone
	// by since they were written.
	Now func() time.Time
}

// ErrAuthentication is wrapped by the error of a connection the cluster
// refused for its credentials, or for the want of them.
var ErrAuthentication = cqlconn.ErrAuthentication

// ParseURL reads cql://host:port[,host:port...]/keyspace.
func ParseURL(s string) (hosts []string, keyspace string, err error) {
	rest, ok := strings.CutPrefix(s, "cql://")
	hostList, keyspace, _ := strings.Cut(rest, "/")
	if !ok || hostList == "" || keyspace == "" || strings.Contains(keyspace, "/") {
		return nil, "", fmt.Errorf("target %q: expected cql://host:port/keyspace", s)
	}
	for _, h := range strings.Split(hostList, ",") {
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(h, "9042")
		}
		hosts = append(hosts, h)
	}
	return hosts, keyspace, nil
}

// Sink is the gocql sink. It implements migrate.Sink and
// migrate.ResumeAwareSink.
type Sink struct {
	cfg     Config
	session *gocql.Session
	limiter *rate.Limiter

	group *errgroup.Group
	gctx  context.Context
	// resuming makes every counter increment probe first.
	resuming atomic.Bool
}

var _ migrate.ResumeAwareSink = (*Sink)(nil)

// Connect opens a session to the cluster.
func Connect(ctx context.Context, cfg Config) (*Sink, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 50
	}
	if cfg.Retries < 0 {
		cfg.Retries = 0
	} else if cfg.Retries == 0 {
		cfg.Retries = 5
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Consistency == 0 {
		cfg.Consistency = gocql.LocalQuorum
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	session, err := newSessionConfig(cfg)
	if err != nil {
		return nil, err
	}
	s := &Sink{cfg: cfg, session: session}
	if cfg.Rate > 0 {
		s.limiter = rate.NewLimiter(rate.Limit(cfg.Rate), max(cfg.BatchSize, int(cfg.Rate)))
	}
	s.newGroup(ctx)
	return s, nil
}

// newSession connects to hosts without login or TLS.
func newSession(hosts []string, consistency gocql.Consistency, timeout time.Duration) (*gocql.Session, error) {
	return newSessionConfig(Config{Hosts: hosts, Consistency: consistency, Timeout: timeout})
}

// newSessionConfig connects to the cluster with cfg's hosts, consistency,
// timeout, login, TLS and local data center.
func newSessionConfig(cfg Config) (*gocql.Session, error) {
	return cqlconn.NewSession(cqlconn.Config{Hosts: cfg.Hosts, Consistency: cfg.Consistency, Timeout: cfg.Timeout, Logger: cfg.Logger,
		Username: cfg.Username, Password: cfg.Password, TLS: cfg.TLS, LocalDC: cfg.LocalDC})
}

func (s *Sink) newGroup(ctx context.Context) {
	s.group, s.gctx = errgroup.WithContext(ctx)
	s.group.SetLimit(s.cfg.Concurrency)
}

// Session is the sink's gocql session.
func (s *Sink) Session() *gocql.Session { return s.session }

// Prepare implements migrate.Sink: it creates the keyspace and the
// missing tables and indexes, and checks the existing tables' columns.
func (s *Sink) Prepare(ctx context.Context, schema *migrate.Schema) error {
	stmts := schema.Statements()
	if err := s.exec(ctx, stmts[0].CQL); err != nil {
		return fmt.Errorf("create keyspace %s: %w", schema.Keyspace, err)
	}
	for _, t := range schema.Tables {
		existing, err := s.tableColumns(ctx, t.Keyspace, t.Name)
		if err != nil {
			return err
		}
		if len(existing) > 0 {
			if err := sameShape(t, existing); err != nil {
				return fmt.Errorf("refusing to write into the existing table %s: %w", t.QualifiedName(), err)
			}
		}
	}
	for _, st := range stmts[1:] {
		if err := s.exec(ctx, st.CQL); err != nil {
			return fmt.Errorf("%s: %w", st.CQL, err)
		}
	}
	if err := s.session.AwaitSchemaAgreement(ctx); err != nil {
		return fmt.Errorf("await schema agreement: %w", err)
	}
	return nil
}

func (s *Sink) exec(ctx context.Context, cql string) error {
	return s.session.Query(cql).ExecContext(ctx)
}

// schemaColumn is a row of system_schema.columns.
type schemaColumn struct {
	kind, typ, order string
}

func (s *Sink) tableColumns(ctx context.Context, keyspace, table string) (map[string]schemaColumn, error) {
	iter := s.session.Query(`SELECT column_name, kind, type, clustering_order FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?`,
		keyspace, table).IterContext(ctx)
	cols := map[string]schemaColumn{}
	var name string
	var c schemaColumn
	for iter.Scan(&name, &c.kind, &c.typ, &c.order) {
		cols[name] = c
	}
	if err := iter.Close(); err != nil {
		return nil, fmt.Errorf("read the columns of %s.%s: %w", keyspace, table, err)
	}
	return cols, nil
}

// sameShape compares a planned table with the columns of an existing one.
func sameShape(t *supercol.Table, existing map[string]schemaColumn) error {
	var diffs []string
	for _, c := range t.Columns {
		e, ok := existing[c.Name]
		if !ok {
			diffs = append(diffs, "no column "+c.Name)
			continue
		}
		if want := kindName(c.Kind); e.kind != want {
			diffs = append(diffs, fmt.Sprintf("column %s is %s, not %s", c.Name, e.kind, want))
		}
		if want := strings.Trim(c.Type.CQLType(), "'"); e.typ != want {
			diffs = append(diffs, fmt.Sprintf("column %s has type %s, not %s", c.Name, e.typ, want))
		}
		if c.Kind == supercol.Clustering {
			want := "asc"
			if c.Descending {
				want = "desc"
			}
			if e.order != want {
				diffs = append(diffs, fmt.Sprintf("column %s is ordered %s, not %s", c.Name, e.order, want))
			}
		}
	}
	if len(existing) != len(t.Columns) {
		diffs = append(diffs, fmt.Sprintf("it has %d columns, not %d", len(existing), len(t.Columns)))
	}
	if len(diffs) > 0 {
		return errors.New(strings.Join(diffs, "; "))
	}
	return nil
}

func kindName(k supercol.ColumnKind) string {
	switch k {
	case supercol.PartitionKey:
		return "partition_key"
	case supercol.Clustering:
		return "clustering"
	case supercol.Static:
		return "static"
	}
	return "regular"
}

// Resuming implements migrate.ResumeAwareSink.
func (s *Sink) Resuming(ctx context.Context) error {
	s.resuming.Store(true)
	return nil
}

// Write implements migrate.Sink: the statements (of one partition) are
// copied and sent in batches by the worker pool. An error of an earlier
// batch is returned by a later Write or by Flush.
func (s *Sink) Write(ctx context.Context, stmts []migrate.Statement) error {
	for len(stmts) > 0 {
		n := min(len(stmts), s.cfg.BatchSize)
		batch := copyStatements(stmts[:n])
		stmts = stmts[n:]
		if err := s.gctx.Err(); err != nil {
			return s.Flush(ctx)
		}
		s.group.Go(func() error { return s.send(s.gctx, batch) })
	}
	return nil
}

// copyStatements copies statements and their bytes into one allocation.
func copyStatements(in []migrate.Statement) []migrate.Statement {
	size, nvals := 0, 0
	for _, st := range in {
		nvals += len(st.Values)
		for _, v := range st.Values {
			size += len(v.Bytes)
		}
	}
	buf := make([]byte, 0, size)
	vals := make([]migrate.Value, 0, nvals)
	out := make([]migrate.Statement, len(in))
	for i, st := range in {
		start := len(vals)
		for _, v := range st.Values {
			b := len(buf)
			buf = append(buf, v.Bytes...)
			vals = append(vals, migrate.Value{Type: v.Type, Bytes: buf[b:len(buf):len(buf)]})
		}
		out[i] = migrate.Statement{CQL: st.CQL, Probe: st.Probe, Values: vals[start:len(vals):len(vals)]}
	}
	return out
}

// send writes one batch, retrying with exponential backoff.
func (s *Sink) send(ctx context.Context, batch []migrate.Statement) error {
	if s.limiter != nil {
		if err := s.limiter.WaitN(ctx, min(len(batch), s.limiter.Burst())); err != nil {
			return err
		}
	}
	counter := batch[0].Probe != ""
	probe := counter && s.resuming.Load()
	backoff := 100 * time.Millisecond
	var err error
	for attempt := 0; ; attempt++ {
		todo := batch
		if probe {
			if todo, err = s.unapplied(ctx, batch); err != nil {
				return err
			}
		}
		if err = s.execBatch(ctx, todo, counter); err == nil {
			return nil
		}
		if attempt >= s.cfg.Retries || !retryable(err) {
			return fmt.Errorf("write batch of %d statements (%s ...): %w", len(todo), batch[0].CQL, err)
		}
		s.cfg.Logger.Warn("batch failed, retrying", "attempt", attempt+1, "wait", backoff, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
		// An increment whose outcome is unknown is probed before a retry.
		probe = counter
	}
}

func (s *Sink) execBatch(ctx context.Context, stmts []migrate.Statement, counter bool) error {
	switch len(stmts) {
	case 0:
		return nil
	case 1:
		return s.session.Query(stmts[0].CQL, args(stmts[0].Values)...).Consistency(s.cfg.Consistency).ExecContext(ctx)
	}
	typ := gocql.UnloggedBatch
	if counter {
		typ = gocql.CounterBatch
	}
	b := s.session.Batch(typ).Consistency(s.cfg.Consistency)
	for _, st := range stmts {
		b.Query(st.CQL, args(st.Values)...)
	}
	return b.ExecContext(ctx)
}

// unapplied returns the increments whose counter cell is not in the
// target yet.
func (s *Sink) unapplied(ctx context.Context, stmts []migrate.Statement) ([]migrate.Statement, error) {
	var out []migrate.Statement
	for _, st := range stmts {
		var v rawValue
		err := s.session.Query(st.Probe, args(st.Values[1:])...).Consistency(s.cfg.Consistency).ScanContext(ctx, &v)
		switch {
		case errors.Is(err, gocql.ErrNotFound) || (err == nil && v.null):
			out = append(out, st)
		case err != nil:
			return nil, fmt.Errorf("probe counter (%s): %w", st.Probe, err)
		}
	}
	return out, nil
}

// retryable tells transient failures from requests the cluster refuses.
func retryable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var re gocql.RequestError
	if errors.As(err, &re) {
		switch re.Code() {
		case gocql.ErrCodeSyntax, gocql.ErrCodeInvalid, gocql.ErrCodeUnauthorized, gocql.ErrCodeConfig, gocql.ErrCodeCredentials:
			return false
		}
	}
	return true
}

// Flush implements migrate.Sink: it waits for every batch in flight.
func (s *Sink) Flush(ctx context.Context) error {
	err := s.group.Wait()
	s.newGroup(ctx)
	return err
}

// Close flushes and closes the session.
func (s *Sink) Close() error {
	err := s.group.Wait()
	s.session.Close()
	return err
}

// rawValue receives a column's bytes as they are.
type rawValue struct {
	b    []byte
	null bool
}

// UnmarshalCQL implements gocql.Unmarshaler.
func (r *rawValue) UnmarshalCQL(_ gocql.TypeInfo, data []byte) error {
	r.null = data == nil
	r.b = append(r.b[:0], data...)
	return nil
}
