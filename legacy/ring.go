package legacy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"net"
	"slices"
	"strconv"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Over the embedded engine, thriftd is one node owning the whole ring: its
// token range starts and ends at its own token, so (token, token] is every
// token.
//
// Over a cluster (an engine that is a store.RingSource), the ring is the
// cluster's token ranges, but its endpoints are thriftd instances, never
// the cluster's nodes, which speak no Thrift: this instance (RingConfig's
// Advertise, else the address the client connected to) and its peers.
// Every range lists every instance, any of which serves any key; the list
// is rotated one step per range so that clients that prefer a range's
// first endpoint (Hadoop's input formats, token-aware pools) spread their
// requests over the instances. The instances are sorted first, so every
// instance configured with the same set answers the same ring.

const (
	localDatacenter = "datacenter1"
	localRack       = "rack1"
)

// RingConfig is where the ring of a cluster backend sends clients.
type RingConfig struct {
	// Advertise is this instance's host:port as clients reach it; empty:
	// the address each client connected to.
	Advertise string
	// Peers are the other thriftd instances serving the same cluster,
	// host:port.
	Peers []string
}

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

// hasRing reports whether keyspace has a ring to describe: a keyspace of
// the catalog, or a replicated system keyspace (system_auth,
// system_distributed, system_traces), as in Cassandra 3.11; the local
// ones (system, system_schema) have none. Hector's node discovery asks
// for the ring of the first keyspace describe_keyspaces lists other than
// system.
func (h *Handler) hasRing(keyspace string) bool {
	if sys := systemKeyspaceDef(keyspace); sys != nil {
		return sys.StrategyClass != locatorPackage+"LocalStrategy"
	}
	_, ok := h.engine.Catalog().Keyspace(keyspace)
	return ok
}

func (h *Handler) ring(ctx context.Context, op, keyspace string) ([]*cassandra.TokenRange, error) {
	if !h.hasRing(keyspace) {
		return nil, iref("There is no ring for the keyspace: %s", keyspace)
	}
	src, ok := h.engine.(store.RingSource)
	if !ok {
		return h.localRing(), nil
	}
	r, err := src.Ring(ctx)
	if err != nil {
		return nil, h.ringError(ctx, op, err)
	}
	endpoints := h.instances(ctx)
	dc, rack := r.Datacenter, r.Rack
	if dc == "" {
		dc, rack = localDatacenter, localRack
	}
	out := make([]*cassandra.TokenRange, len(r.Ranges))
	for i, tr := range r.Ranges {
		eps := rotated(endpoints, i)
		details := make([]*cassandra.EndpointDetails, len(eps))
		for j, ep := range eps {
			details[j] = &cassandra.EndpointDetails{Host: ep, Datacenter: dc, Rack: &rack}
		}
		out[i] = &cassandra.TokenRange{StartToken: tr.Start, EndToken: tr.End, Endpoints: eps, RPCEndpoints: eps, EndpointDetails: details}
	}
	return out, nil
}

// localRing is the one-node ring of an engine that is not a cluster.
func (h *Handler) localRing() []*cassandra.TokenRange {
	tok := h.engine.Partitioner().FormatToken(h.nodeToken())
	addr := h.nodeAddress()
	dc, rack := localDatacenter, localRack
	return []*cassandra.TokenRange{{
		StartToken:      tok,
		EndToken:        tok,
		Endpoints:       []string{addr},
		RPCEndpoints:    []string{addr},
		EndpointDetails: []*cassandra.EndpointDetails{{Host: addr, Datacenter: dc, Rack: &rack}},
	}}
}

// errRingUnknown is what a client sees of a ring the engine failed to
// read (logged by ringError): the describe calls declare no timeout.
var errRingUnknown = errors.New("the cluster's ring could not be read; see the server log")

func (h *Handler) ringError(ctx context.Context, op string, err error) error {
	h.log.ErrorContext(ctx, "reading the cluster's ring failed", "op", op, "err", err)
	return errRingUnknown
}

// rotated is eps rotated left by i steps, in a new slice.
func rotated(eps []string, i int) []string {
	n := len(eps)
	out := make([]string, n)
	for j := range eps {
		out[j] = eps[(i+j)%n]
	}
	return out
}

// instances are the thriftd instances a cluster ring lists, sorted: this
// one and its peers. They are bare hosts, as Cassandra lists its nodes,
// when they all listen on one port (the port clients are configured
// with); host:port when their ports differ, which Astyanax connects to as
// given and Hector reads as the host (with its configured port).
func (h *Handler) instances(ctx context.Context) []string {
	all := []string{h.selfEndpoint(ctx)}
	all = append(all, h.cfg.Ring.Peers...)
	slices.Sort(all)
	all = slices.Compact(all)
	port := ""
	samePort := true
	for i, ep := range all {
		_, p, err := net.SplitHostPort(ep)
		if err != nil || (i > 0 && p != port) {
			samePort = false
		}
		port = p
	}
	if !samePort {
		return all
	}
	hosts := make([]string, len(all))
	for i, ep := range all {
		hosts[i], _, _ = net.SplitHostPort(ep)
	}
	return hosts
}

// selfEndpoint is this instance's host:port: the advertised one, else
// the address the client connected to, else the configured RPC address.
func (h *Handler) selfEndpoint(ctx context.Context) string {
	if h.cfg.Ring.Advertise != "" {
		return h.cfg.Ring.Advertise
	}
	if a, ok := localAddrFrom(ctx).(*net.TCPAddr); ok && a != nil {
		return net.JoinHostPort(a.IP.String(), strconv.Itoa(a.Port))
	}
	_, port, err := net.SplitHostPort(h.cfg.RPCAddress)
	if err != nil {
		port = "9160"
	}
	return net.JoinHostPort(h.nodeAddress(), port)
}

// localAddrKey is the context key of the server's end of the connection.
type localAddrKey struct{}

// withLocalAddr returns ctx carrying the address a client connected to.
func withLocalAddr(ctx context.Context, addr net.Addr) context.Context {
	return context.WithValue(ctx, localAddrKey{}, addr)
}

// localAddrFrom is the address the request's client connected to, or nil.
func localAddrFrom(ctx context.Context) net.Addr {
	a, _ := ctx.Value(localAddrKey{}).(net.Addr)
	return a
}

// DescribeRing implements describe_ring.
func (h *Handler) DescribeRing(ctx context.Context, keyspace string) ([]*cassandra.TokenRange, error) {
	return h.ring(ctx, "describe_ring", keyspace)
}

// DescribeLocalRing implements describe_local_ring: every thriftd
// instance is in the local data center (over a cluster: the data center
// of the node the engine contacts first), so it is the whole ring.
func (h *Handler) DescribeLocalRing(ctx context.Context, keyspace string) ([]*cassandra.TokenRange, error) {
	return h.ring(ctx, "describe_local_ring", keyspace)
}

// DescribeTokenMap implements describe_token_map: each range's end token
// and its first endpoint.
func (h *Handler) DescribeTokenMap(ctx context.Context) (map[string]string, error) {
	src, ok := h.engine.(store.RingSource)
	if !ok {
		return map[string]string{h.engine.Partitioner().FormatToken(h.nodeToken()): h.nodeAddress()}, nil
	}
	r, err := src.Ring(ctx)
	if err != nil {
		return nil, h.ringError(ctx, "describe_token_map", err)
	}
	endpoints := h.instances(ctx)
	out := make(map[string]string, len(r.Ranges))
	for i, tr := range r.Ranges {
		out[tr.End] = endpoints[i%len(endpoints)]
	}
	return out, nil
}

// schemaVersionEndpoints are the endpoints describe_schema_versions lists
// under the catalog's version: the one node, or every thriftd instance of
// a cluster (each reloads its catalog from the cluster; see
// docs/CQL-BACKEND.md).
func (h *Handler) schemaVersionEndpoints(ctx context.Context) []string {
	if _, ok := h.engine.(store.RingSource); ok {
		return h.instances(ctx)
	}
	return []string{h.nodeAddress()}
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
// (start, end] cut into splits of about keysPerSplit rows. Over the
// embedded engine the rows are counted from the data, and each split ends
// on a row's token so rows of one token stay together; over a cluster
// (store.SplitSource) they are the cluster's size estimates, as Cassandra
// cuts ranges from its own estimates without reading the rows.
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
	if src, ok := h.engine.(store.SplitSource); ok {
		return h.clusterSplits(ctx, src, t, p.FormatToken(startTok), p.FormatToken(endTok), keysPerSplit)
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

// clusterSplits are the splits of a cluster engine. As Cassandra 3.11
// (CASSANDRA-7322), a split's row count is never below the family's
// min_index_interval (128 by default), so that no client takes a split
// for empty: rows not yet flushed have no estimate.
func (h *Handler) clusterSplits(ctx context.Context, src store.SplitSource, t *store.Table, start, end string, keysPerSplit int32) ([]*cassandra.CfSplit, error) {
	splits, err := src.Splits(ctx, t, start, end, int(keysPerSplit))
	if err != nil {
		return nil, h.storageError(ctx, "describe_splits_ex", err)
	}
	floor := int64(128)
	if p := t.Def.MinIndexInterval; p != nil {
		floor = int64(*p)
	}
	out := make([]*cassandra.CfSplit, len(splits))
	for i, s := range splits {
		out[i] = &cassandra.CfSplit{StartToken: s.Start, EndToken: s.End, RowCount: max(s.Rows, floor)}
	}
	return out, nil
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
