package cqlstore

import (
	"context"
	"errors"
	"fmt"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
)

// levels maps each Thrift level to the native protocol's; DEFAULT is
// the engine's configured level (Options.Consistency).
var levels = [...]gocql.Consistency{
	store.ConsistencyOne:         gocql.One,
	store.ConsistencyQuorum:      gocql.Quorum,
	store.ConsistencyLocalQuorum: gocql.LocalQuorum,
	store.ConsistencyEachQuorum:  gocql.EachQuorum,
	store.ConsistencyAll:         gocql.All,
	store.ConsistencyAny:         gocql.Any,
	store.ConsistencyTwo:         gocql.Two,
	store.ConsistencyThree:       gocql.Three,
	store.ConsistencySerial:      gocql.Serial,
	store.ConsistencyLocalSerial: gocql.LocalSerial,
	store.ConsistencyLocalOne:    gocql.LocalOne,
}

// consistency is the level of a request's reads and plain writes: the
// level ctx carries, the engine's default for none (or one it does not
// know). A SERIAL or LOCAL_SERIAL read is a serial (Paxos) read.
func (e *Engine) consistency(ctx context.Context) gocql.Consistency {
	c := store.ConsistencyFrom(ctx)
	if c == store.ConsistencyDefault || int(c) >= len(levels) {
		return e.opts.Consistency
	}
	return levels[c]
}

// readConsistency is the level of a read: consistency's, but ONE for ANY,
// which the cluster refuses for reads and which Cassandra 3.11's get_count
// accepted.
func (e *Engine) readConsistency(ctx context.Context) gocql.Consistency {
	if c := e.consistency(ctx); c != gocql.Any {
		return c
	}
	return gocql.One
}

// lwtConsistency is the levels of a lightweight transaction: its serial
// level (the Paxos round), the one store.SerialConsistencyFrom carries
// (SERIAL if none), and its commit level, the request's (the engine's
// default if none, or if it is a serial level itself: a SERIAL read).
func (e *Engine) lwtConsistency(ctx context.Context) (serial, commit gocql.Consistency) {
	serial, commit = gocql.Serial, e.consistency(ctx)
	if isSerial(commit) {
		serial, commit = commit, e.opts.Consistency
	}
	if s := store.SerialConsistencyFrom(ctx); s == store.ConsistencySerial || s == store.ConsistencyLocalSerial {
		serial = levels[s]
	}
	return serial, commit
}

func isSerial(c gocql.Consistency) bool { return c == gocql.Serial || c == gocql.LocalSerial }

// wrapErr gives a driver error the engine's text: a statement the cluster
// refused as invalid is a *store.CQLRefusedError with its reason; too few replicas
// alive, or no node reachable at all, wraps store.ErrUnavailable; a
// replica's read or write timeout, a conditional write of unknown outcome,
// a connection closed or no response in time and the end of ctx's deadline
// wrap store.ErrTimeout.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var invalid *gocql.RequestErrInvalid
	if errors.As(err, &invalid) {
		// The cluster refused the statement as the client's to fix (a TTL
		// past its expiry limit, a value too large): the client sees its
		// reason, as Cassandra's own clients did.
		return fmt.Errorf("cqlstore: %s: %w", what, &store.CQLRefusedError{Message: invalid.Message()})
	}
	var un *gocql.RequestErrUnavailable
	if errors.As(err, &un) {
		return fmt.Errorf("%w: %s: %d replicas needed at %s, %d alive", store.ErrUnavailable, what, un.Required, un.Consistency, un.Alive)
	}
	if errors.Is(err, gocql.ErrNoConnections) {
		// No node of the cluster is reachable: nothing was sent, as when
		// a coordinator knows too few replicas alive.
		return fmt.Errorf("%w: %s: no node of the cluster is reachable: %v", store.ErrUnavailable, what, err)
	}
	if errors.Is(err, gocql.ErrConnectionClosed) {
		// The node went away with the request: its outcome is unknown.
		return fmt.Errorf("%w: %s: %v", store.ErrTimeout, what, err)
	}
	var wt *gocql.RequestErrWriteTimeout
	var rt *gocql.RequestErrReadTimeout
	var cas *gocql.RequestErrCASWriteUnknown
	if errors.As(err, &wt) || errors.As(err, &rt) || errors.As(err, &cas) || errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %v", store.ErrTimeout, what, err)
	}
	return fmt.Errorf("cqlstore: %s: %w", what, err)
}
