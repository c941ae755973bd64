package cqlstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

var _ store.RingSource = (*Engine)(nil)

// ringToken is one token of the ring and the node that owns it.
type ringToken struct {
	value partition.Token
	owner store.Node
}

// Ring implements store.RingSource: the token ranges of the driver's view
// of the cluster (every node's tokens, as the nodes gossip them), each
// owned by the node of its end token, and the data center and rack of the
// node that answers the engine's requests first.
func (e *Engine) Ring(ctx context.Context) (*store.Ring, error) {
	tokens, err := e.ringTokens()
	if err != nil {
		return nil, err
	}
	r := &store.Ring{Ranges: make([]store.TokenRange, len(tokens))}
	for i, t := range tokens {
		prev := tokens[(i+len(tokens)-1)%len(tokens)]
		r.Ranges[i] = store.TokenRange{
			Start: e.part.FormatToken(prev.value),
			End:   e.part.FormatToken(t.value),
			Owner: t.owner,
		}
	}
	if err := e.session.Query("SELECT data_center, rack FROM system.local").
		Consistency(gocql.LocalOne).ScanContext(ctx, &r.Datacenter, &r.Rack); err != nil {
		return nil, wrapErr("read the local node's data center", err)
	}
	return r, nil
}

// ringTokens are the tokens of every node the driver knows, in ring
// order.
func (e *Engine) ringTokens() ([]ringToken, error) {
	var tokens []ringToken
	for _, h := range e.session.GetHosts() {
		owner := store.Node{Address: h.ConnectAddress().String(), Datacenter: h.DataCenter(), Rack: h.Rack()}
		for _, s := range h.Tokens() {
			v, err := e.part.ParseToken(s)
			if err != nil {
				return nil, fmt.Errorf("cqlstore: node %s has token %q: %w", owner.Address, s, err)
			}
			tokens = append(tokens, ringToken{value: v, owner: owner})
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("cqlstore: the driver knows no token of the cluster's nodes")
	}
	slices.SortFunc(tokens, func(a, b ringToken) int { return bytes.Compare(a.value, b.value) })
	return tokens, nil
}
