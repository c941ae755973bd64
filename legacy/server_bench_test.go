package legacy

import (
	"context"
	"encoding/binary"
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
	srv := NewServer(cfg, Unsupported{}, slog.New(slog.DiscardHandler))
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
	}
	for name, frame := range requests {
		b.Run(name, func(b *testing.B) {
			conn, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			reply := make([]byte, 4096)
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
