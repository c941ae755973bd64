package legacy

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// BenchmarkServerRoundTrip measures one request over loopback with a
// client that allocates nothing, so allocs/op are the server's (the
// generated code's decoding and encoding included).
func BenchmarkServerRoundTrip(b *testing.B) {
	cfg := ServerConfig{Listen: "127.0.0.1:0"}
	srv := NewServer(cfg, rangeRows{rows: benchRangeRows()}, slog.New(slog.DiscardHandler))
	if err := srv.Listen(); err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(context.Background()) }()
	b.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	requests := map[string][]byte{
		"describe_version": encodeFramedCall(b, "describe_version", &cassandra.CassandraDescribeVersionArgs{}),
		"get_slice": encodeFramedCall(b, "get_slice", &cassandra.CassandraGetSliceArgs{
			Key:              []byte("row-key-0123456789"),
			ColumnParent:     &cassandra.ColumnParent{ColumnFamily: "Standard1"},
			Predicate:        &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100}},
			ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
		}),
		// Answered with 10 rows of 20 columns of 64 bytes, as under
		// cmd/thriftbench's range mode: the reply's writing.
		"get_range_slices": encodeFramedCall(b, "get_range_slices", &cassandra.CassandraGetRangeSlicesArgs{
			ColumnParent:     &cassandra.ColumnParent{ColumnFamily: "Preloaded"},
			Predicate:        &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 20}},
			Range:            &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10},
			ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
		}),
	}
	// batch_mutate of cmd/thriftbench's batch-super mode: one row, 10
	// super columns of 10 subcolumns of 64 bytes (the handler refuses it
	// once decoded; the decoding is what this measures).
	var supers []*cassandra.Mutation
	ts := int64(1)
	for s := 0; s < 10; s++ {
		var subs []*cassandra.Column
		for c := 0; c < 10; c++ {
			subs = append(subs, &cassandra.Column{Name: fmt.Appendf(nil, "c%05d", c), Value: make([]byte, 64), Timestamp: &ts})
		}
		supers = append(supers, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
			SuperColumn: &cassandra.SuperColumn{Name: fmt.Appendf(nil, "s%05d", s), Columns: subs}}})
	}
	requests["batch_mutate_super"] = encodeFramedCall(b, "batch_mutate", &cassandra.CassandraBatchMutateArgs{
		MutationMap:      map[string]map[string][]*cassandra.Mutation{"w000000001": {"Supers": supers}},
		ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
	})
	for name, frame := range requests {
		b.Run(name, func(b *testing.B) {
			conn, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			reply := make([]byte, 64<<10)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(frame); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, reply[:4]); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(conn, reply[:binary.BigEndian.Uint32(reply)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// rangeRows answers get_range_slices with its rows, and every other
// method as Unsupported does.
type rangeRows struct {
	Unsupported
	rows []*cassandra.KeySlice
}

func (r rangeRows) GetRangeSlices(context.Context, *cassandra.ColumnParent, *cassandra.SlicePredicate, *cassandra.KeyRange, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return r.rows, nil
}

// benchRangeRows are 10 rows of 20 columns of 64 bytes.
func benchRangeRows() []*cassandra.KeySlice {
	ts := int64(1700000000000000)
	var rows []*cassandra.KeySlice
	for r := range 10 {
		row := &cassandra.KeySlice{Key: fmt.Appendf(nil, "p%09d", r)}
		for c := range 20 {
			row.Columns = append(row.Columns, &cassandra.ColumnOrSuperColumn{Column: &cassandra.Column{
				Name: fmt.Appendf(nil, "c%05d", c), Value: make([]byte, 64), Timestamp: &ts}})
		}
		rows = append(rows, row)
	}
	return rows
}

// encodeFramedCall returns a framed call message.
func encodeFramedCall(b *testing.B, name string, args thrift.TStruct) []byte {
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{})
	if err := p.WriteMessageBegin(ctx, name, thrift.CALL, 1); err != nil {
		b.Fatal(err)
	}
	if err := args.Write(ctx, p); err != nil {
		b.Fatal(err)
	}
	if err := p.WriteMessageEnd(ctx); err != nil {
		b.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(buf.Len())), buf.Bytes()...)
}
