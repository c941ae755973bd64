package store

import (
	"context"
	"errors"
)

// Consistency is the consistency level a request asks for, in Thrift's
// terms; an engine with replicas honours it, the embedded engine (one
// copy of everything) meets every level with its local read or write.
type Consistency uint8

// The consistency levels of cassandra.thrift, in its order.
const (
	// ConsistencyDefault is no level given: the engine's own default.
	ConsistencyDefault Consistency = iota
	ConsistencyOne
	ConsistencyQuorum
	ConsistencyLocalQuorum
	ConsistencyEachQuorum
	ConsistencyAll
	ConsistencyAny
	ConsistencyTwo
	ConsistencyThree
	ConsistencySerial
	ConsistencyLocalSerial
	ConsistencyLocalOne
)

var consistencyNames = [...]string{"DEFAULT", "ONE", "QUORUM", "LOCAL_QUORUM", "EACH_QUORUM", "ALL", "ANY", "TWO", "THREE", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"}

// String is the level's Thrift name.
func (c Consistency) String() string {
	if int(c) < len(consistencyNames) {
		return consistencyNames[c]
	}
	return "UNKNOWN"
}

type consistencyKey struct{}

// WithConsistency returns ctx carrying the consistency level of the
// request it belongs to.
func WithConsistency(ctx context.Context, c Consistency) context.Context {
	return context.WithValue(ctx, consistencyKey{}, c)
}

// ConsistencyFrom is the level ctx carries, ConsistencyDefault if none.
func ConsistencyFrom(ctx context.Context) Consistency {
	c, _ := ctx.Value(consistencyKey{}).(Consistency)
	return c
}

// ErrUnavailable reports a request the engine refused before trying it
// because too few replicas were alive to meet its consistency level (a
// Cassandra UnavailableException): nothing was applied. Errors wrapping
// it carry the engine's own text.
var ErrUnavailable = errors.New("not enough replicas available for the consistency level")
