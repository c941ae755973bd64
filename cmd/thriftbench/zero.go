package main

import (
	"context"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// zeroCassandra implements every method of the Cassandra service with an
// immediate, empty answer: nil for void methods, "" and 0 for scalars,
// empty (not nil) lists, maps and structs, since the generated processor
// reports a nil result as MISSING_RESULT. The echo server embeds it and
// overrides the calls the load generator makes.
type zeroCassandra struct{}

var _ cassandra.Cassandra = zeroCassandra{}

func (zeroCassandra) Login(_ context.Context, _ *cassandra.AuthenticationRequest) error { return nil }

func (zeroCassandra) SetKeyspace(_ context.Context, _ string) error { return nil }

func (zeroCassandra) Get(_ context.Context, _ []byte, _ *cassandra.ColumnPath, _ cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	return new(cassandra.ColumnOrSuperColumn), nil
}

func (zeroCassandra) GetSlice(_ context.Context, _ []byte, _ *cassandra.ColumnParent, _ *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	return []*cassandra.ColumnOrSuperColumn{}, nil
}

func (zeroCassandra) GetCount(_ context.Context, _ []byte, _ *cassandra.ColumnParent, _ *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) (int32, error) {
	return 0, nil
}

func (zeroCassandra) MultigetSlice(_ context.Context, _ [][]byte, _ *cassandra.ColumnParent, _ *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) (map[string][]*cassandra.ColumnOrSuperColumn, error) {
	return map[string][]*cassandra.ColumnOrSuperColumn{}, nil
}

func (zeroCassandra) MultigetCount(_ context.Context, _ [][]byte, _ *cassandra.ColumnParent, _ *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) (map[string]int32, error) {
	return map[string]int32{}, nil
}

func (zeroCassandra) GetRangeSlices(_ context.Context, _ *cassandra.ColumnParent, _ *cassandra.SlicePredicate, _ *cassandra.KeyRange, _ cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return []*cassandra.KeySlice{}, nil
}

func (zeroCassandra) GetPagedSlice(_ context.Context, _ string, _ *cassandra.KeyRange, _ []byte, _ cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return []*cassandra.KeySlice{}, nil
}

func (zeroCassandra) GetIndexedSlices(_ context.Context, _ *cassandra.ColumnParent, _ *cassandra.IndexClause, _ *cassandra.SlicePredicate, _ cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return []*cassandra.KeySlice{}, nil
}

func (zeroCassandra) Insert(_ context.Context, _ []byte, _ *cassandra.ColumnParent, _ *cassandra.Column, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) Add(_ context.Context, _ []byte, _ *cassandra.ColumnParent, _ *cassandra.CounterColumn, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) Cas(_ context.Context, _ []byte, _ string, _ []*cassandra.Column, _ []*cassandra.Column, _ cassandra.ConsistencyLevel, _ cassandra.ConsistencyLevel) (*cassandra.CASResult_, error) {
	return new(cassandra.CASResult_), nil
}

func (zeroCassandra) Remove(_ context.Context, _ []byte, _ *cassandra.ColumnPath, _ int64, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) RemoveCounter(_ context.Context, _ []byte, _ *cassandra.ColumnPath, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) BatchMutate(_ context.Context, _ map[string]map[string][]*cassandra.Mutation, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) AtomicBatchMutate(_ context.Context, _ map[string]map[string][]*cassandra.Mutation, _ cassandra.ConsistencyLevel) error {
	return nil
}

func (zeroCassandra) Truncate(_ context.Context, _ string) error { return nil }

func (zeroCassandra) GetMultiSlice(_ context.Context, _ *cassandra.MultiSliceRequest) ([]*cassandra.ColumnOrSuperColumn, error) {
	return []*cassandra.ColumnOrSuperColumn{}, nil
}

func (zeroCassandra) DescribeSchemaVersions(_ context.Context) (map[string][]string, error) {
	return map[string][]string{}, nil
}

func (zeroCassandra) DescribeKeyspaces(_ context.Context) ([]*cassandra.KsDef, error) {
	return []*cassandra.KsDef{}, nil
}

func (zeroCassandra) DescribeClusterName(_ context.Context) (string, error) { return "", nil }

func (zeroCassandra) DescribeVersion(_ context.Context) (string, error) { return "", nil }

func (zeroCassandra) DescribeRing(_ context.Context, _ string) ([]*cassandra.TokenRange, error) {
	return []*cassandra.TokenRange{}, nil
}

func (zeroCassandra) DescribeLocalRing(_ context.Context, _ string) ([]*cassandra.TokenRange, error) {
	return []*cassandra.TokenRange{}, nil
}

func (zeroCassandra) DescribeTokenMap(_ context.Context) (map[string]string, error) {
	return map[string]string{}, nil
}

func (zeroCassandra) DescribePartitioner(_ context.Context) (string, error) { return "", nil }

func (zeroCassandra) DescribeSnitch(_ context.Context) (string, error) { return "", nil }

func (zeroCassandra) DescribeKeyspace(_ context.Context, _ string) (*cassandra.KsDef, error) {
	return new(cassandra.KsDef), nil
}

func (zeroCassandra) DescribeSplits(_ context.Context, _ string, _ string, _ string, _ int32) ([]string, error) {
	return []string{}, nil
}

func (zeroCassandra) TraceNextQuery(_ context.Context) ([]byte, error) { return []byte{}, nil }

func (zeroCassandra) DescribeSplitsEx(_ context.Context, _ string, _ string, _ string, _ int32) ([]*cassandra.CfSplit, error) {
	return []*cassandra.CfSplit{}, nil
}

func (zeroCassandra) SystemAddColumnFamily(_ context.Context, _ *cassandra.CfDef) (string, error) {
	return "", nil
}

func (zeroCassandra) SystemDropColumnFamily(_ context.Context, _ string) (string, error) {
	return "", nil
}

func (zeroCassandra) SystemAddKeyspace(_ context.Context, _ *cassandra.KsDef) (string, error) {
	return "", nil
}

func (zeroCassandra) SystemDropKeyspace(_ context.Context, _ string) (string, error) { return "", nil }

func (zeroCassandra) SystemUpdateKeyspace(_ context.Context, _ *cassandra.KsDef) (string, error) {
	return "", nil
}

func (zeroCassandra) SystemUpdateColumnFamily(_ context.Context, _ *cassandra.CfDef) (string, error) {
	return "", nil
}

func (zeroCassandra) ExecuteCqlQuery(_ context.Context, _ []byte, _ cassandra.Compression) (*cassandra.CqlResult_, error) {
	return new(cassandra.CqlResult_), nil
}

func (zeroCassandra) ExecuteCql3Query(_ context.Context, _ []byte, _ cassandra.Compression, _ cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return new(cassandra.CqlResult_), nil
}

func (zeroCassandra) PrepareCqlQuery(_ context.Context, _ []byte, _ cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return new(cassandra.CqlPreparedResult_), nil
}

func (zeroCassandra) PrepareCql3Query(_ context.Context, _ []byte, _ cassandra.Compression) (*cassandra.CqlPreparedResult_, error) {
	return new(cassandra.CqlPreparedResult_), nil
}

func (zeroCassandra) ExecutePreparedCqlQuery(_ context.Context, _ int32, _ [][]byte) (*cassandra.CqlResult_, error) {
	return new(cassandra.CqlResult_), nil
}

func (zeroCassandra) ExecutePreparedCql3Query(_ context.Context, _ int32, _ [][]byte, _ cassandra.ConsistencyLevel) (*cassandra.CqlResult_, error) {
	return new(cassandra.CqlResult_), nil
}

func (zeroCassandra) SetCqlVersion(_ context.Context, _ string) error { return nil }
