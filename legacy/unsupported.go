package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Unsupported answers every method of cassandra.Cassandra. Methods whose
// IDL declares an InvalidRequestException return one saying
// "<method> is not supported yet", <method> being the Thrift name; the six
// that declare none (login, describe_cluster_name, describe_version,
// describe_partitioner, describe_snitch, trace_next_query) answer a neutral
// value instead, documented on each. A handler embeds Unsupported and
// overrides the methods it implements, so that every request is answered.
type Unsupported struct{}

var _ cassandra.Cassandra = Unsupported{}

// notSupportedYet is the answer of a method that is not implemented.
func notSupportedYet(method string) *cassandra.InvalidRequestException {
	return &cassandra.InvalidRequestException{Why: method + " is not supported yet"}
}

// Login answers login by accepting it, with no effect on the session
// (Handler.Login records it): login declares no InvalidRequestException.
func (Unsupported) Login(context.Context, *cassandra.AuthenticationRequest) error {
	return nil
}

// SetKeyspace answers set_keyspace with "not supported yet".
func (Unsupported) SetKeyspace(context.Context, string) error {
	return notSupportedYet("set_keyspace")
}

// Get answers get with "not supported yet".
func (Unsupported) Get(context.Context, []byte, *cassandra.ColumnPath, cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	return nil, notSupportedYet("get")
}

// GetSlice answers get_slice with "not supported yet".
func (Unsupported) GetSlice(context.Context, []byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	return nil, notSupportedYet("get_slice")
}

// GetCount answers get_count with "not supported yet".
func (Unsupported) GetCount(context.Context, []byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) (int32, error) {
	return 0, notSupportedYet("get_count")
}

// MultigetSlice answers multiget_slice with "not supported yet".
func (Unsupported) MultigetSlice(context.Context, [][]byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) (map[string][]*cassandra.ColumnOrSuperColumn, error) {
	return nil, notSupportedYet("multiget_slice")
}

// MultigetCount answers multiget_count with "not supported yet".
func (Unsupported) MultigetCount(context.Context, [][]byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) (map[string]int32, error) {
	return nil, notSupportedYet("multiget_count")
}

// GetRangeSlices answers get_range_slices with "not supported yet".
func (Unsupported) GetRangeSlices(context.Context, *cassandra.ColumnParent, *cassandra.SlicePredicate, *cassandra.KeyRange, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return nil, notSupportedYet("get_range_slices")
}

// GetPagedSlice answers get_paged_slice with "not supported yet".
func (Unsupported) GetPagedSlice(context.Context, string, *cassandra.KeyRange, []byte, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return nil, notSupportedYet("get_paged_slice")
}

// GetIndexedSlices answers get_indexed_slices with "not supported yet".
func (Unsupported) GetIndexedSlices(context.Context, *cassandra.ColumnParent, *cassandra.IndexClause, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return nil, notSupportedYet("get_indexed_slices")
}

// Insert answers insert with "not supported yet".
func (Unsupported) Insert(context.Context, []byte, *cassandra.ColumnParent, *cassandra.Column, cassandra.ConsistencyLevel) error {
	return notSupportedYet("insert")
}

// Add answers add with "not supported yet".
func (Unsupported) Add(context.Context, []byte, *cassandra.ColumnParent, *cassandra.CounterColumn, cassandra.ConsistencyLevel) error {
	return notSupportedYet("add")
}

// Cas answers cas with "not supported yet".
func (Unsupported) Cas(context.Context, []byte, string, []*cassandra.Column, []*cassandra.Column, cassandra.ConsistencyLevel, cassandra.ConsistencyLevel) (*cassandra.CASResult_, error) {
	return nil, notSupportedYet("cas")
}

// Remove answers remove with "not supported yet".
func (Unsupported) Remove(context.Context, []byte, *cassandra.ColumnPath, int64, cassandra.ConsistencyLevel) error {
	return notSupportedYet("remove")
}

// RemoveCounter answers remove_counter with "not supported yet".
func (Unsupported) RemoveCounter(context.Context, []byte, *cassandra.ColumnPath, cassandra.ConsistencyLevel) error {
	return notSupportedYet("remove_counter")
}

// BatchMutate answers batch_mutate with "not supported yet".
func (Unsupported) BatchMutate(context.Context, map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel) error {
	return notSupportedYet("batch_mutate")
}

// AtomicBatchMutate answers atomic_batch_mutate with "not supported yet".
func (Unsupported) AtomicBatchMutate(context.Context, map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel) error {
	return notSupportedYet("atomic_batch_mutate")
}

// Truncate answers truncate with "not supported yet".
func (Unsupported) Truncate(context.Context, string) error {
	return notSupportedYet("truncate")
}

// GetMultiSlice answers get_multi_slice with "not supported yet".
func (Unsupported) GetMultiSlice(context.Context, *cassandra.MultiSliceRequest) ([]*cassandra.ColumnOrSuperColumn, error) {
	return nil, notSupportedYet("get_multi_slice")
}

// DescribeSchemaVersions answers describe_schema_versions with "not supported yet".
func (Unsupported) DescribeSchemaVersions(context.Context) (map[string][]string, error) {
	return nil, notSupportedYet("describe_schema_versions")
}

// DescribeKeyspaces answers describe_keyspaces with "not supported yet".
func (Unsupported) DescribeKeyspaces(context.Context) ([]*cassandra.KsDef, error) {
	return nil, notSupportedYet("describe_keyspaces")
}

// DescribeClusterName implements describe_cluster_name with an empty name
// (it declares no InvalidRequestException); a real handler reports the
// configured cluster name.
func (Unsupported) DescribeClusterName(context.Context) (string, error) { return "", nil }

// DescribeVersion implements describe_version with the version of the IDL
// the server speaks, cassandra.VERSION: it depends on nothing else, and
// clients parse it to choose features.
func (Unsupported) DescribeVersion(context.Context) (string, error) { return cassandra.VERSION, nil }

// DescribeRing answers describe_ring with "not supported yet".
func (Unsupported) DescribeRing(context.Context, string) ([]*cassandra.TokenRange, error) {
	return nil, notSupportedYet("describe_ring")
}

// DescribeLocalRing answers describe_local_ring with "not supported yet".
func (Unsupported) DescribeLocalRing(context.Context, string) ([]*cassandra.TokenRange, error) {
	return nil, notSupportedYet("describe_local_ring")
}

// DescribeTokenMap answers describe_token_map with "not supported yet".
func (Unsupported) DescribeTokenMap(context.Context) (map[string]string, error) {
	return nil, notSupportedYet("describe_token_map")
}

// DescribePartitioner implements describe_partitioner with an empty class
// name (it declares no InvalidRequestException); a real handler reports the
// partitioner of its store.
func (Unsupported) DescribePartitioner(context.Context) (string, error) { return "", nil }

// DescribeSnitch implements describe_snitch with an empty class name (it
// declares no InvalidRequestException); a real handler reports the
// configured snitch.
func (Unsupported) DescribeSnitch(context.Context) (string, error) { return "", nil }

// DescribeKeyspace answers describe_keyspace with "not supported yet".
func (Unsupported) DescribeKeyspace(context.Context, string) (*cassandra.KsDef, error) {
	return nil, notSupportedYet("describe_keyspace")
}

// DescribeSplits answers describe_splits with "not supported yet".
func (Unsupported) DescribeSplits(context.Context, string, string, string, int32) ([]string, error) {
	return nil, notSupportedYet("describe_splits")
}

// TraceNextQuery implements trace_next_query with an empty session id and
// no tracing (it declares no InvalidRequestException). The id is an empty,
// non-nil slice: a nil one would be sent as a missing result.
func (Unsupported) TraceNextQuery(context.Context) ([]byte, error) { return []byte{}, nil }

// DescribeSplitsEx answers describe_splits_ex with "not supported yet".
func (Unsupported) DescribeSplitsEx(context.Context, string, string, string, int32) ([]*cassandra.CfSplit, error) {
	return nil, notSupportedYet("describe_splits_ex")
}

// SystemAddColumnFamily answers system_add_column_family with "not supported yet".
func (Unsupported) SystemAddColumnFamily(context.Context, *cassandra.CfDef) (string, error) {
	return "", notSupportedYet("system_add_column_family")
}

// SystemDropColumnFamily answers system_drop_column_family with "not supported yet".
func (Unsupported) SystemDropColumnFamily(context.Context, string) (string, error) {
	return "", notSupportedYet("system_drop_column_family")
}

// SystemAddKeyspace answers system_add_keyspace with "not supported yet".
func (Unsupported) SystemAddKeyspace(context.Context, *cassandra.KsDef) (string, error) {
	return "", notSupportedYet("system_add_keyspace")
}

// SystemDropKeyspace answers system_drop_keyspace with "not supported yet".
func (Unsupported) SystemDropKeyspace(context.Context, string) (string, error) {
	return "", notSupportedYet("system_drop_keyspace")
}

// SystemUpdateKeyspace answers system_update_keyspace with "not supported yet".
func (Unsupported) SystemUpdateKeyspace(context.Context, *cassandra.KsDef) (string, error) {
	return "", notSupportedYet("system_update_keyspace")
}

// SystemUpdateColumnFamily answers system_update_column_family with "not supported yet".
func (Unsupported) SystemUpdateColumnFamily(context.Context, *cassandra.CfDef) (string, error) {
	return "", notSupportedYet("system_update_column_family")
}

// ExecuteCqlQuery answers execute_cql_query with "not supported yet".
func (Unsupported) ExecuteCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlResult_, error) {
	return nil, notSupportedYet("execute_cql_query")
}

// ExecuteCql3Query answers execute_cql3_query with "not supported yet".
func (Unsupported) ExecuteCql3Query(context.Context, []byte, cassandra.Compression, cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return nil, notSupportedYet("execute_cql3_query")
}

// PrepareCqlQuery answers prepare_cql_query with "not supported yet".
func (Unsupported) PrepareCqlQuery(context.Context, []byte, cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return nil, notSupportedYet("prepare_cql_query")
}

// PrepareCql3Query answers prepare_cql3_query with "not supported yet".
func (Unsupported) PrepareCql3Query(context.Context, []byte, cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return nil, notSupportedYet("prepare_cql3_query")
}

// ExecutePreparedCqlQuery answers execute_prepared_cql_query with "not supported yet".
func (Unsupported) ExecutePreparedCqlQuery(context.Context, int32, [][]byte) (*cassandra.CqlResult_, error) {
	return nil, notSupportedYet("execute_prepared_cql_query")
}

// ExecutePreparedCql3Query answers execute_prepared_cql3_query with "not supported yet".
func (Unsupported) ExecutePreparedCql3Query(context.Context, int32, [][]byte, cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return nil, notSupportedYet("execute_prepared_cql3_query")
}

// SetCqlVersion answers set_cql_version with "not supported yet".
func (Unsupported) SetCqlVersion(context.Context, string) error {
	return notSupportedYet("set_cql_version")
}
