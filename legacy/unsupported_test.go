package legacy

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

type unsupportedClientCall func(ctx context.Context, c *cassandra.CassandraClient) error

func dropResult[T any](_ T, err error) error { return err }

// unsupportedCalls drives every method that answers "not supported yet",
// keyed by its Thrift name.
var unsupportedCalls = unsupportedCallTable()

func unsupportedCallTable() map[string]unsupportedClientCall {
	one := cassandra.ConsistencyLevel_ONE
	parent := &cassandra.ColumnParent{ColumnFamily: "cf"}
	path := &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("c")}
	predicate := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 10}}
	keyRange := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10}
	cfDef := &cassandra.CfDef{Keyspace: "ks", Name: "cf"}
	ksDef := &cassandra.KsDef{Name: "ks", StrategyClass: "SimpleStrategy", CfDefs: []*cassandra.CfDef{}}
	mutations := map[string]map[string][]*cassandra.Mutation{"k": {"cf": {}}}

	return map[string]unsupportedClientCall{
		"set_keyspace": func(ctx context.Context, c *cassandra.CassandraClient) error { return c.SetKeyspace(ctx, "ks") },
		"get": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.Get(ctx, []byte("k"), path, one))
		},
		"get_slice": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.GetSlice(ctx, []byte("k"), parent, predicate, one))
		},
		"get_count": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.GetCount(ctx, []byte("k"), parent, predicate, one))
		},
		"multiget_slice": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.MultigetSlice(ctx, [][]byte{[]byte("k")}, parent, predicate, one))
		},
		"multiget_count": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.MultigetCount(ctx, [][]byte{[]byte("k")}, parent, predicate, one))
		},
		"get_range_slices": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.GetRangeSlices(ctx, parent, predicate, keyRange, one))
		},
		"get_paged_slice": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.GetPagedSlice(ctx, "cf", keyRange, []byte{}, one))
		},
		"get_indexed_slices": func(ctx context.Context, c *cassandra.CassandraClient) error {
			clause := &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{}, StartKey: []byte{}, Count: 10}
			return dropResult(c.GetIndexedSlices(ctx, parent, clause, predicate, one))
		},
		"insert": func(ctx context.Context, c *cassandra.CassandraClient) error {
			ts := int64(1)
			return c.Insert(ctx, []byte("k"), parent, &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, one)
		},
		"add": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.Add(ctx, []byte("k"), parent, &cassandra.CounterColumn{Name: []byte("c"), Value: 1}, one)
		},
		"cas": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.Cas(ctx, []byte("k"), "cf", nil, nil, cassandra.ConsistencyLevel_SERIAL, cassandra.ConsistencyLevel_QUORUM))
		},
		"remove": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.Remove(ctx, []byte("k"), path, 1, one)
		},
		"remove_counter": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.RemoveCounter(ctx, []byte("k"), path, one)
		},
		"batch_mutate": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.BatchMutate(ctx, mutations, one)
		},
		"atomic_batch_mutate": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.AtomicBatchMutate(ctx, mutations, one)
		},
		"truncate": func(ctx context.Context, c *cassandra.CassandraClient) error { return c.Truncate(ctx, "cf") },
		"get_multi_slice": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.GetMultiSlice(ctx, &cassandra.MultiSliceRequest{Key: []byte("k"), ColumnParent: parent}))
		},
		"describe_schema_versions": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeSchemaVersions(ctx))
		},
		"describe_keyspaces": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeKeyspaces(ctx))
		},
		"describe_ring": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeRing(ctx, "ks"))
		},
		"describe_local_ring": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeLocalRing(ctx, "ks"))
		},
		"describe_token_map": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeTokenMap(ctx))
		},
		"describe_keyspace": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeKeyspace(ctx, "ks"))
		},
		"describe_splits": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeSplits(ctx, "cf", "0", "0", 100))
		},
		"describe_splits_ex": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.DescribeSplitsEx(ctx, "cf", "0", "0", 100))
		},
		"system_add_column_family": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemAddColumnFamily(ctx, cfDef))
		},
		"system_drop_column_family": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemDropColumnFamily(ctx, "cf"))
		},
		"system_add_keyspace": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemAddKeyspace(ctx, ksDef))
		},
		"system_drop_keyspace": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemDropKeyspace(ctx, "ks"))
		},
		"system_update_keyspace": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemUpdateKeyspace(ctx, ksDef))
		},
		"system_update_column_family": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.SystemUpdateColumnFamily(ctx, cfDef))
		},
		"execute_cql_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.ExecuteCqlQuery(ctx, []byte("SELECT * FROM cf"), cassandra.Compression_NONE))
		},
		"execute_cql3_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.ExecuteCql3Query(ctx, []byte("SELECT * FROM cf"), cassandra.Compression_NONE, one))
		},
		"prepare_cql_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.PrepareCqlQuery(ctx, []byte("SELECT * FROM cf"), cassandra.Compression_NONE))
		},
		"prepare_cql3_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.PrepareCql3Query(ctx, []byte("SELECT * FROM cf"), cassandra.Compression_NONE))
		},
		"execute_prepared_cql_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.ExecutePreparedCqlQuery(ctx, 1, [][]byte{}))
		},
		"execute_prepared_cql3_query": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return dropResult(c.ExecutePreparedCql3Query(ctx, 1, [][]byte{}, one))
		},
		"set_cql_version": func(ctx context.Context, c *cassandra.CassandraClient) error {
			return c.SetCqlVersion(ctx, "3.0.0")
		},
	}
}

// answeredMethods are the methods without an InvalidRequestException in
// the IDL, and what Unsupported answers.
var answeredMethods = map[string]func(ctx context.Context, c *cassandra.CassandraClient) (any, error){
	"login": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		return nil, c.Login(ctx, &cassandra.AuthenticationRequest{Credentials: map[string]string{"username": "u"}})
	},
	"describe_cluster_name": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		return c.DescribeClusterName(ctx)
	},
	"describe_version": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		return c.DescribeVersion(ctx)
	},
	"describe_partitioner": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		return c.DescribePartitioner(ctx)
	},
	"describe_snitch": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		return c.DescribeSnitch(ctx)
	},
	"trace_next_query": func(ctx context.Context, c *cassandra.CassandraClient) (any, error) {
		b, err := c.TraceNextQuery(ctx)
		return string(b), err
	},
}

var wantAnswers = map[string]any{
	"login":                 nil,
	"describe_cluster_name": "",
	"describe_version":      cassandra.VERSION,
	"describe_partitioner":  "",
	"describe_snitch":       "",
	"trace_next_query":      "",
}

// TestTablesCoverEveryMethod ties the tables to the IDL: every method the
// generated processor dispatches is driven by exactly one of them.
func TestTablesCoverEveryMethod(t *testing.T) {
	var names []string
	for name := range cassandra.NewCassandraProcessor(Unsupported{}).ProcessorMap() {
		names = append(names, name)
		_, unsupported := unsupportedCalls[name]
		_, answered := answeredMethods[name]
		if unsupported == answered {
			t.Errorf("method %s: in the unsupported table %v, in the answered table %v", name, unsupported, answered)
		}
	}
	if got, want := len(unsupportedCalls)+len(answeredMethods), len(names); got != want {
		t.Errorf("tables drive %d methods, the IDL has %d", got, want)
	}
	if len(names) != 45 {
		t.Errorf("the processor dispatches %d methods, cassandra.thrift 19.39.0 has 45", len(names))
	}
}

func TestUnsupportedOverTheWire(t *testing.T) {
	ts := startWireTestServer(t, Unsupported{})
	ctx := wireTestContext(t)
	client := dialWireClient(t, ts.addr, true)
	names := make([]string, 0, len(unsupportedCalls))
	for name := range unsupportedCalls {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		err := unsupportedCalls[name](ctx, client.CassandraClient)
		var ire *cassandra.InvalidRequestException
		if !errors.As(err, &ire) {
			t.Errorf("%s: %v (%T); want InvalidRequestException", name, err, err)
			continue
		}
		if want := name + " is not supported yet"; ire.Why != want {
			t.Errorf("%s: why %q, want %q", name, ire.Why, want)
		}
	}
	for name, call := range answeredMethods {
		got, err := call(ctx, client.CassandraClient)
		if err != nil || got != wantAnswers[name] {
			t.Errorf("%s: %#v, %v; want %#v", name, got, err, wantAnswers[name])
		}
	}
}
