package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// thriftd keeps data in Thrift-era column families only; it has no CQL
// engine. The CQL calls of the Thrift API refuse with a reason that says
// where to go instead.

const (
	cql2Refusal = "CQL2 is not supported by thriftd; use the Thrift data calls (get_slice, batch_mutate, ...) or CQL3 on a Cassandra or ScyllaDB cluster"
	cql3Refusal = "CQL over Thrift is not supported by thriftd; use the Thrift data calls (get_slice, batch_mutate, ...), or CQL3 through the native protocol of a Cassandra or ScyllaDB cluster"
)

// ExecuteCqlQuery implements execute_cql_query (CQL2).
func (h *Handler) ExecuteCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlResult_, error) {
	return nil, ire(cql2Refusal)
}

// PrepareCqlQuery implements prepare_cql_query (CQL2).
func (h *Handler) PrepareCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return nil, ire(cql2Refusal)
}

// ExecutePreparedCqlQuery implements execute_prepared_cql_query (CQL2).
func (h *Handler) ExecutePreparedCqlQuery(context.Context, int32, [][]byte) (*cassandra.CqlResult_, error) {
	return nil, ire(cql2Refusal)
}

// ExecuteCql3Query implements execute_cql3_query.
func (h *Handler) ExecuteCql3Query(ctx context.Context, _ []byte, _ cassandra.Compression, _ cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	if err := h.requireLogin(ctx); err != nil {
		return nil, err
	}
	return nil, ire(cql3Refusal)
}

// PrepareCql3Query implements prepare_cql3_query.
func (h *Handler) PrepareCql3Query(ctx context.Context, _ []byte, _ cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	if err := h.requireLogin(ctx); err != nil {
		return nil, err
	}
	return nil, ire(cql3Refusal)
}

// ExecutePreparedCql3Query implements execute_prepared_cql3_query.
func (h *Handler) ExecutePreparedCql3Query(context.Context, int32, [][]byte, cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return nil, ire(cql3Refusal)
}

// SetCqlVersion implements set_cql_version: recorded, without effect
// (Cassandra 3.x ignores it too).
func (h *Handler) SetCqlVersion(ctx context.Context, version string) error {
	if s := SessionFrom(ctx); s != nil {
		s.SetCQLVersion(version)
	}
	return nil
}
