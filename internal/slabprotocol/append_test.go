package slabprotocol

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// libraryAndAppend returns the library's binary protocol over a memory
// buffer and an AppendProtocol over a FramedTransport, with a function
// giving what each has written.
func libraryAndAppend(strict bool) (lib, appending thrift.TProtocol, written func() (want, got []byte)) {
	conf := &thrift.TConfiguration{TBinaryStrictWrite: thrift.BoolPtr(strict)}
	buf := thrift.NewTMemoryBuffer()
	lib = thrift.NewTBinaryProtocolConf(buf, conf)
	frames := &FramedTransport{OutFrame: NewOutFrame()}
	appending = NewAppendProtocol(thrift.NewTBinaryProtocolConf(frames, conf), &frames.OutFrame)
	return lib, appending, func() ([]byte, []byte) { return buf.Bytes(), frames.Out[frameHeaderLen:] }
}

// TestAppendProtocolWritesWhatTheLibraryWrites writes every kind of value,
// edge values included, through both protocols.
func TestAppendProtocolWritesWhatTheLibraryWrites(t *testing.T) {
	ctx := context.Background()
	for _, strict := range []bool{true, false} {
		lib, appending, written := libraryAndAppend(strict)
		for _, p := range []thrift.TProtocol{lib, appending} {
			steps := []error{
				p.WriteMessageBegin(ctx, "get_slice", thrift.REPLY, -7),
				p.WriteStructBegin(ctx, "s"),
				p.WriteFieldBegin(ctx, "f", thrift.STRUCT, 0),
				p.WriteFieldBegin(ctx, "f", thrift.I64, -1),
				p.WriteFieldBegin(ctx, "f", thrift.LIST, math.MaxInt16),
				p.WriteFieldEnd(ctx),
				p.WriteMapBegin(ctx, thrift.STRING, thrift.LIST, 3),
				p.WriteMapBegin(ctx, thrift.UTF7, thrift.STRUCT, 0),
				p.WriteMapEnd(ctx),
				p.WriteListBegin(ctx, thrift.STRUCT, 1<<20),
				p.WriteListEnd(ctx),
				p.WriteSetBegin(ctx, thrift.I32, 2),
				p.WriteSetEnd(ctx),
				p.WriteBool(ctx, true),
				p.WriteBool(ctx, false),
				p.WriteByte(ctx, -128),
				p.WriteI16(ctx, math.MinInt16),
				p.WriteI16(ctx, 0x1234),
				p.WriteI32(ctx, math.MinInt32),
				p.WriteI32(ctx, 0x01020304),
				p.WriteI64(ctx, math.MinInt64),
				p.WriteI64(ctx, 0x0102030405060708),
				p.WriteDouble(ctx, 0.1),
				p.WriteDouble(ctx, math.Inf(-1)),
				p.WriteDouble(ctx, math.NaN()),
				p.WriteString(ctx, ""),
				p.WriteString(ctx, "système"),
				p.WriteBinary(ctx, nil),
				p.WriteBinary(ctx, []byte{0, 0xff, 1}),
				p.WriteFieldStop(ctx),
				p.WriteStructEnd(ctx),
				p.WriteMessageEnd(ctx),
			}
			for i, err := range steps {
				if err != nil {
					t.Fatalf("%T step %d: %v", p, i, err)
				}
			}
		}
		if want, got := written(); !bytes.Equal(want, got) {
			t.Fatalf("strict=%v:\nlibrary %x\nappend  %x", strict, want, got)
		}
	}
}

// TestAppendProtocolEncodesResultsAsTheLibrary encodes the results of the
// calls that carry data, the definitions describe_keyspace returns and the
// arguments of the calls that carry the most, through both protocols.
func TestAppendProtocolEncodesResultsAsTheLibrary(t *testing.T) {
	ctx := context.Background()
	ts, ttl := int64(1700000000000000), int32(86400)
	column := func(i int) *cassandra.Column {
		c := &cassandra.Column{Name: fmt.Appendf(nil, "c%03d", i), Value: bytes.Repeat([]byte{byte(i)}, i), Timestamp: &ts}
		if i%2 == 1 {
			c.TTL = &ttl
		}
		return c
	}
	var coscs []*cassandra.ColumnOrSuperColumn
	for i := range 5 {
		coscs = append(coscs, &cassandra.ColumnOrSuperColumn{Column: column(i)})
	}
	coscs = append(coscs,
		&cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: []byte("s"), Columns: []*cassandra.Column{column(1), column(2)}}},
		&cassandra.ColumnOrSuperColumn{CounterColumn: &cassandra.CounterColumn{Name: []byte("n"), Value: -3}},
		&cassandra.ColumnOrSuperColumn{CounterSuperColumn: &cassandra.CounterSuperColumn{Name: []byte("cs"),
			Columns: []*cassandra.CounterColumn{{Name: []byte("a"), Value: math.MaxInt64}}}},
		&cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{Name: []byte("no value")}})
	rrc, rep := 0.1, true
	results := map[string]interface {
		Write(context.Context, thrift.TProtocol) error
	}{
		"get_slice":       &cassandra.CassandraGetSliceResult{Success: coscs},
		"get_slice empty": &cassandra.CassandraGetSliceResult{Success: []*cassandra.ColumnOrSuperColumn{}},
		"get":             &cassandra.CassandraGetResult{Success: coscs[1]},
		"get_range_slices": &cassandra.CassandraGetRangeSlicesResult{Success: []*cassandra.KeySlice{
			{Key: []byte("k1"), Columns: coscs}, {Key: []byte{}, Columns: []*cassandra.ColumnOrSuperColumn{}}}},
		"multiget_slice": &cassandra.CassandraMultigetSliceResult{Success: map[string][]*cassandra.ColumnOrSuperColumn{
			"k1": coscs[:2], "k2": {}}},
		"get_count":         &cassandra.CassandraGetCountResult{Success: thrift.Int32Ptr(42)},
		"invalid request":   &cassandra.CassandraGetSliceResult{Ire: &cassandra.InvalidRequestException{Why: "bad"}},
		"timed out":         &cassandra.CassandraGetResult{Te: &cassandra.TimedOutException{AcknowledgedBy: thrift.Int32Ptr(1)}},
		"not found":         &cassandra.CassandraGetResult{Nfe: &cassandra.NotFoundException{}},
		"describe_keyspace": &cassandra.CassandraDescribeKeyspaceResult{Success: &cassandra.KsDef{Name: "ks", StrategyClass: "SimpleStrategy", StrategyOptions: map[string]string{"replication_factor": "1"}, CfDefs: []*cassandra.CfDef{{Keyspace: "ks", Name: "cf", ReadRepairChance: &rrc, ReplicateOnWrite: &rep, ColumnMetadata: []*cassandra.ColumnDef{{Name: []byte("a"), ValidationClass: "UTF8Type"}}}}}},
		"application error": thrift.NewTApplicationException(thrift.INTERNAL_ERROR, "boom"),
		// Requests, as a client writes them.
		"batch_mutate args": &cassandra.CassandraBatchMutateArgs{ConsistencyLevel: cassandra.ConsistencyLevel_QUORUM,
			MutationMap: map[string]map[string][]*cassandra.Mutation{"k1": {"cf": {
				{ColumnOrSupercolumn: coscs[5]},
				{Deletion: &cassandra.Deletion{Timestamp: &ts, SuperColumn: []byte("s"), Predicate: &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("a")}}}}}}}},
		"get_range_slices args": &cassandra.CassandraGetRangeSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: "cf"},
			Predicate: &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte("z"), Reversed: true, Count: 10}},
			Range:     &cassandra.KeyRange{StartKey: []byte("a"), EndKey: []byte{}, Count: 100}, ConsistencyLevel: cassandra.ConsistencyLevel_ONE},
	}
	for name, result := range results {
		// A map of one entry encodes the same whatever Go's map order.
		if r, ok := result.(*cassandra.CassandraMultigetSliceResult); ok {
			delete(r.Success, "k2")
		}
		lib, appending, written := libraryAndAppend(true)
		for _, p := range []thrift.TProtocol{lib, appending} {
			if err := result.Write(ctx, p); err != nil {
				t.Fatalf("%s: %T: %v", name, p, err)
			}
		}
		if want, got := written(); !bytes.Equal(want, got) {
			t.Errorf("%s:\nlibrary %x\nappend  %x", name, want, got)
		}
	}
}
