package legacy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// thriftd is one node owning the whole ring: its token range starts and
// ends at its own token, so (token, token] is every token.

const (
	localDatacenter = "datacenter1"
	localRack       = "rack1"
)

// nodeToken is the node's token: the configured initial token, else the
// partitioner's minimum.
func (h *Handler) nodeToken() partition.Token {
	if h.cfg.InitialToken != "" {
		if t, err := h.engine.Partitioner().ParseToken(h.cfg.InitialToken); err == nil {
			return t
		}
	}
	return h.engine.Partitioner().MinToken()
}

func (h *Handler) ring(keyspace string) ([]*cassandra.TokenRange, error) {
	if _, ok := h.engine.Catalog().Keyspace(keyspace); !ok || isSystemKeyspace(keyspace) {
		return nil, iref("There is no ring for the keyspace: %s", keyspace)
	}
	tok := h.engine.Partitioner().FormatToken(h.nodeToken())
	addr := h.nodeAddress()
	dc, rack := localDatacenter, localRack
	return []*cassandra.TokenRange{{
		StartToken:      tok,
		EndToken:        tok,
		Endpoints:       []string{addr},
		RPCEndpoints:    []string{addr},
		EndpointDetails: []*cassandra.EndpointDetails{{Host: addr, Datacenter: dc, Rack: &rack}},
	}}, nil
}

// DescribeRing implements describe_ring.
func (h *Handler) DescribeRing(_ context.Context, keyspace string) ([]*cassandra.TokenRange, error) {
	return h.ring(keyspace)
}

// DescribeLocalRing implements describe_local_ring: the one node is local.
func (h *Handler) DescribeLocalRing(_ context.Context, keyspace string) ([]*cassandra.TokenRange, error) {
	return h.ring(keyspace)
}

// DescribeTokenMap implements describe_token_map.
func (h *Handler) DescribeTokenMap(context.Context) (map[string]string, error) {
	return map[string]string{h.engine.Partitioner().FormatToken(h.nodeToken()): h.nodeAddress()}, nil
}

// DescribeSplits implements describe_splits: the boundary tokens of
// DescribeSplitsEx's splits.
func (h *Handler) DescribeSplits(ctx context.Context, cf, start, end string, keysPerSplit int32) ([]string, error) {
	splits, err := h.DescribeSplitsEx(ctx, cf, start, end, keysPerSplit)
	if err != nil {
		return nil, err
	}
	out := []string{splits[0].StartToken}
	for _, s := range splits {
		out = append(out, s.EndToken)
	}
	return out, nil
}

// DescribeSplitsEx implements describe_splits_ex: the token range
// (start, end] cut into splits of about keysPerSplit rows, counted from the
// data, each ending on a row's token so rows of one token stay together.
func (h *Handler) DescribeSplitsEx(ctx context.Context, cf, start, end string, keysPerSplit int32) ([]*cassandra.CfSplit, error) {
	t, err := h.table(ctx, cf)
	if err != nil {
		return nil, err
	}
	if keysPerSplit <= 0 {
		return nil, iref("keys_per_split must be positive (got %d)", keysPerSplit)
	}
	p := h.engine.Partitioner()
	startTok, err := parseToken(p, start)
	if err != nil {
		return nil, err
	}
	endTok, err := parseToken(p, end)
	if err != nil {
		return nil, err
	}
	rr, err := validateKeyRange(p, &cassandra.KeyRange{StartToken: &start, EndToken: &end, Count: 1})
	if err != nil {
		return nil, err
	}
	var splits []*cassandra.CfSplit
	left := startTok
	var rows int64
	var last partition.Token
	var keys store.SliceResult
	for i := range rr.scans {
		scan := rr.scans[i]
		err := h.engine.Scan(ctx, t, &scan, &keys, func(key []byte) (bool, error) {
			tok := p.Token(key)
			if rows >= int64(keysPerSplit) && !bytes.Equal(tok, last) {
				splits = append(splits, &cassandra.CfSplit{StartToken: p.FormatToken(left), EndToken: p.FormatToken(last), RowCount: rows})
				left, rows = last, 0
			}
			last = tok
			rows++
			return true, nil
		})
		if err != nil {
			return nil, h.storageError(ctx, "describe_splits_ex", err)
		}
	}
	splits = append(splits, &cassandra.CfSplit{StartToken: p.FormatToken(left), EndToken: p.FormatToken(endTok), RowCount: rows})
	return splits, nil
}

// TraceNextQuery implements trace_next_query: it returns a time-based
// session id. Queries run untraced; no trace tables exist to hold events.
func (h *Handler) TraceNextQuery(ctx context.Context) ([]byte, error) {
	if s := SessionFrom(ctx); s != nil {
		s.SetTraceNextQuery(true)
	}
	return h.timeUUID(), nil
}

// timeUUID makes a version 1 UUID from the handler's clock and random
// clock sequence and node bits.
func (h *Handler) timeUUID() []byte {
	// 100 ns intervals since 1582-10-15.
	const gregorianOffset = 0x01b21dd213814000
	ts := uint64(h.cfg.Now().UnixNano()/100) + gregorianOffset
	u := make([]byte, 16)
	binary.BigEndian.PutUint32(u[0:], uint32(ts))
	binary.BigEndian.PutUint16(u[4:], uint16(ts>>32))
	binary.BigEndian.PutUint16(u[6:], uint16(ts>>48)&0x0fff|0x1000)
	_, _ = rand.Read(u[8:])
	u[8] = u[8]&0x3f | 0x80
	return u
}
