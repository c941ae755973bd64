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

// lwtConsistency is the levels of a lightweight transaction: its serial
// level (the Paxos phase) and its commit level. ctx carries one level:
// SERIAL or LOCAL_SERIAL is the serial level (committed at the engine's
// default), any other the commit level (serialised at SERIAL).
func (e *Engine) lwtConsistency(ctx context.Context) (serial, commit gocql.Consistency) {
	c := e.consistency(ctx)
	if isSerial(c) {
		return c, e.opts.Consistency
	}
	return gocql.Serial, c
}

func isSerial(c gocql.Consistency) bool { return c == gocql.Serial || c == gocql.LocalSerial }

// wrapErr gives a driver error the engine's text: too few replicas
// alive wraps store.ErrUnavailable; a replica's read or write timeout, a
// conditional write of unknown outcome, no response in time and the end
// of ctx's deadline wrap store.ErrTimeout.
func wrapErr(what string, err error) error {
	if err == nil {
		return nil
	}
	var un *gocql.RequestErrUnavailable
	if errors.As(err, &un) {
		return fmt.Errorf("%w: %s: %d replicas needed at %s, %d alive", store.ErrUnavailable, what, un.Required, un.Consistency, un.Alive)
	}
	var wt *gocql.RequestErrWriteTimeout
	var rt *gocql.RequestErrReadTimeout
	var cas *gocql.RequestErrCASWriteUnknown
	if errors.As(err, &wt) || errors.As(err, &rt) || errors.As(err, &cas) || errors.Is(err, gocql.ErrTimeoutNoResponse) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %s: %v", store.ErrTimeout, what, err)
	}
	return fmt.Errorf("cqlstore: %s: %w", what, err)
}
