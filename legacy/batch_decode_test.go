package legacy

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// binaryOver is the binary protocol reading data, with a message size
// limit of its length (as the server's is its frame limit: a count
// beyond it is refused before anything is made for it).
func binaryOver(data []byte) thrift.TProtocol {
	buf := thrift.NewTMemoryBufferLen(len(data))
	buf.Write(data)
	return thrift.NewTBinaryProtocolConf(buf, &thrift.TConfiguration{MaxMessageSize: int32(max(len(data), 1))})
}

// batchArgsSeeds are batch_mutate arguments of every kind of mutation,
// encoded by the generated writer.
func batchArgsSeeds(tb testing.TB) [][]byte {
	ts := func(v int64) *int64 { return &v }
	ttl := func(v int32) *int32 { return &v }
	col := func(name, value string, t int64) *cassandra.Column {
		return &cassandra.Column{Name: []byte(name), Value: []byte(value), Timestamp: ts(t)}
	}
	put := func(c *cassandra.Column) *cassandra.Mutation {
		return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{Column: c}}
	}
	super := func(name string, cols ...*cassandra.Column) *cassandra.Mutation {
		return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: []byte(name), Columns: cols}}}
	}
	var subs []*cassandra.Column
	for i := range 40 {
		subs = append(subs, col(string(rune('a'+i%26))+string(rune('0'+i/26)), "v", int64(i)))
	}
	maps := []map[string]map[string][]*cassandra.Mutation{
		{"k1": {"Standard1": {put(col("c1", "v1", 1)), put(&cassandra.Column{Name: []byte("c2"), Value: []byte{}, Timestamp: ts(2), TTL: ttl(60)}), put(&cassandra.Column{Name: []byte("c3")})}}},
		{"k1": {"Super1": {super("sc1", col("a", "1", 1), col("b", "2", 2)), super("sc2", subs...), super("empty")}},
			"k2": {"Super1": {super("sc1", col("a", "x", 3))}, "Standard1": {put(col("c", "v", 4))}}},
		{"k1": {"Standard1": {
			{Deletion: &cassandra.Deletion{Timestamp: ts(5), Predicate: &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("c1"), []byte("c2")}}}},
			{Deletion: &cassandra.Deletion{Timestamp: ts(6), SuperColumn: []byte("sc1"), Predicate: &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte("a"), Finish: []byte("m"), Count: 100}}}},
			{Deletion: &cassandra.Deletion{}},
			{},
		}}},
		{"k1": {"Counter1": {
			{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{CounterColumn: &cassandra.CounterColumn{Name: []byte("n"), Value: 7}}},
			{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{CounterSuperColumn: &cassandra.CounterSuperColumn{Name: []byte("s"), Columns: []*cassandra.CounterColumn{{Name: []byte("n"), Value: -1}}}}},
		}}},
		{"k1": {"Standard1": {}}, "k2": {}},
		{},
	}
	var seeds [][]byte
	for _, m := range maps {
		buf := thrift.NewTMemoryBuffer()
		args := cassandra.CassandraBatchMutateArgs{MutationMap: m, ConsistencyLevel: cassandra.ConsistencyLevel_QUORUM}
		if err := args.Write(context.Background(), thrift.NewTBinaryProtocolConf(buf, nil)); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, buf.Bytes())
	}
	return seeds
}

// sameAsGenerated decodes data with the generated reader and with
// batchDecoder: both must refuse it, or both give the same arguments.
func sameAsGenerated(t *testing.T, data []byte) {
	ctx := context.Background()
	var want cassandra.CassandraBatchMutateArgs
	wantErr := want.Read(ctx, binaryOver(data))
	var d batchDecoder
	got, level, err := d.readArgs(ctx, binaryOver(data))
	switch {
	case (wantErr == nil) != (err == nil):
		t.Fatalf("%x: the generated reader says %v, batchDecoder %v", data, wantErr, err)
	case err != nil:
		return
	case level != want.ConsistencyLevel:
		t.Fatalf("%x: consistency level %v, generated %v", data, level, want.ConsistencyLevel)
	case !reflect.DeepEqual(got, want.MutationMap):
		t.Fatalf("%x: batchDecoder read\n%v\nthe generated reader\n%v", data, got, want.MutationMap)
	}
}

// frameOver is the frame protocol reading data as the server reads a
// request, with a message size limit of its length.
func frameOver(data []byte) (*messageRecorder, *slabprotocol.Frame) {
	cfg := &thrift.TConfiguration{MaxMessageSize: int32(max(len(data), 1))}
	frame := &slabprotocol.Frame{Buf: data}
	p := slabprotocol.NewFrameProtocol(thrift.NewTBinaryProtocolConf(frameReadTransport{frame}, cfg), frame, cfg, requestFieldChunks)
	return &messageRecorder{TProtocol: p}, frame
}

// frameReadTransport reads the frame, as the server's transport does
// under its frame protocol (which reads through it what it does not take
// from the frame itself: skipped fields, values cut short).
type frameReadTransport struct{ *slabprotocol.Frame }

func (frameReadTransport) Open() error                 { return nil }
func (frameReadTransport) Close() error                { return nil }
func (frameReadTransport) IsOpen() bool                { return true }
func (frameReadTransport) Write([]byte) (int, error)   { return 0, io.ErrClosedPipe }
func (frameReadTransport) Flush(context.Context) error { return nil }

// frameSameAsGenerated decodes data as the server does, from its frame,
// with a decoder that read a super batch before and was kept for reuse:
// the result must be the generated reader's, and where readFrame reads
// the arguments itself, it must leave the frame where reading them
// through the protocol does. It reports whether readFrame read them.
func frameSameAsGenerated(t *testing.T, data []byte) bool {
	ctx := context.Background()
	var want cassandra.CassandraBatchMutateArgs
	wantErr := want.Read(ctx, binaryOver(data))

	var d batchDecoder
	before, _ := frameOver(superBatchArgs(t))
	if _, _, err := d.readBatchArgs(ctx, before); err != nil || !d.reuse() {
		t.Fatalf("a super batch: %v, or its decoder is not kept", err)
	}
	in, frame := frameOver(data)
	got, level, err := d.readBatchArgs(ctx, in)
	switch {
	case (wantErr == nil) != (err == nil):
		t.Fatalf("%x: the generated reader says %v, from the frame %v", data, wantErr, err)
	case err == nil && level != want.ConsistencyLevel:
		t.Fatalf("%x: consistency level %v from the frame, generated %v", data, level, want.ConsistencyLevel)
	case err == nil && !reflect.DeepEqual(got, want.MutationMap):
		t.Fatalf("%x: from the frame\n%v\nthe generated reader\n%v", data, got, want.MutationMap)
	}

	var direct batchDecoder
	probe := &slabprotocol.Frame{Buf: data}
	_, _, read := direct.readFrame(probe, int32(max(len(data), 1)))
	switch {
	case read && wantErr != nil:
		t.Fatalf("%x: readFrame read what the generated reader refuses (%v)", data, wantErr)
	case read && probe.Pos != frame.Pos:
		t.Fatalf("%x: readFrame stopped at %d, the protocol at %d", data, probe.Pos, frame.Pos)
	case !read && probe.Pos != 0:
		t.Fatalf("%x: readFrame gave up at %d but moved the frame", data, probe.Pos)
	}
	return read
}

func TestBatchDecoderReadsWhatTheGeneratedReaderReads(t *testing.T) {
	both := func(data []byte) {
		sameAsGenerated(t, data)
		frameSameAsGenerated(t, data)
	}
	for _, seed := range batchArgsSeeds(t) {
		both(seed)
		// Every cut of it: both refuse it at the same places.
		for i := range len(seed) {
			both(seed[:i])
		}
		// A changed byte: a wrong type, a length, a field id.
		for i := range len(seed) {
			for _, b := range []byte{0x00, 0x0b, 0x7f, 0xff} {
				changed := append([]byte(nil), seed...)
				changed[i] = b
				both(changed)
			}
		}
	}
}

// The batches clients send are read from the frame; those with deletions
// or counters through the protocol.
func TestBatchesOfColumnsAreReadFromTheFrame(t *testing.T) {
	seeds := batchArgsSeeds(t)
	for i, want := range []bool{true, true, false, false, true, true} {
		if read := frameSameAsGenerated(t, seeds[i]); read != want {
			t.Errorf("seed %d: read from the frame %v, want %v", i, read, want)
		}
	}
	if !frameSameAsGenerated(t, superBatchArgs(t)) {
		t.Error("a batch of 10 super columns was not read from the frame")
	}
	// A size over the protocol's limit (values of 64 bytes under a limit
	// of 32) is left to the protocol, which refuses it.
	var d batchDecoder
	if _, _, read := d.readFrame(&slabprotocol.Frame{Buf: superBatchArgs(t)}, 32); read {
		t.Error("readFrame read values larger than the protocol accepts")
	}
	// Trailing bytes after the arguments stay unread, as the protocol
	// leaves them.
	if !frameSameAsGenerated(t, append(superBatchArgs(t), 0xde, 0xad)) {
		t.Error("arguments followed by other bytes were not read from the frame")
	}
}

// A decoder kept for reuse reads each batch as a new one does, whatever
// it read before: the seeds (columns with and without TTLs, super
// columns, deletions, counters) and a super batch, over and over.
func TestBatchDecoderReused(t *testing.T) {
	ctx := context.Background()
	inputs := append(batchArgsSeeds(t), superBatchArgs(t))
	var d batchDecoder
	for round := range 3 {
		for i := range inputs {
			data := inputs[(i*(round+1))%len(inputs)]
			var want cassandra.CassandraBatchMutateArgs
			if err := want.Read(ctx, binaryOver(data)); err != nil {
				t.Fatal(err)
			}
			in, _ := frameOver(data)
			got, _, err := d.readBatchArgs(ctx, in)
			if err != nil || !reflect.DeepEqual(got, want.MutationMap) {
				t.Fatalf("round %d, input %d: %v\n%v\nthe generated reader\n%v", round, i, err, got, want.MutationMap)
			}
			if !d.reuse() {
				t.Fatal("a small decoder is not kept")
			}
		}
	}
}

func TestBatchDecoderSharesBlocks(t *testing.T) {
	seeds := batchArgsSeeds(t)
	super := seeds[1] // 44 cells, 43 of them in super columns
	ctx := context.Background()
	allocs := testing.AllocsPerRun(20, func() {
		var d batchDecoder
		if _, _, err := d.readArgs(ctx, binaryOver(super)); err != nil {
			t.Fatal(err)
		}
	})
	generated := testing.AllocsPerRun(20, func() {
		var a cassandra.CassandraBatchMutateArgs
		if err := a.Read(ctx, binaryOver(super)); err != nil {
			t.Fatal(err)
		}
	})
	// Each of the 44 cells costs the generated reader a Column and its
	// timestamp; batchDecoder a share of blocks.
	if allocs > generated-60 {
		t.Errorf("batchDecoder: %.0f allocations for a batch of 44 cells, the generated reader %.0f: want at least 60 fewer", allocs, generated)
	}
}

func FuzzBatchMutateDecoder(f *testing.F) {
	for _, seed := range batchArgsSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsGenerated(t, data)
		frameSameAsGenerated(t, data)
	})
}

// superBatchArgs are batch_mutate arguments of one row of 10 super
// columns of 10 subcolumns (names of 8 bytes, values of 64), thriftbench's
// batch-super call.
func superBatchArgs(tb testing.TB) []byte {
	var muts []*cassandra.Mutation
	value := make([]byte, 64)
	for s := range 10 {
		sc := &cassandra.SuperColumn{Name: fmt.Appendf(nil, "super%03d", s)}
		for c := range 10 {
			ts := int64(1700000000000000 + c)
			sc.Columns = append(sc.Columns, &cassandra.Column{Name: fmt.Appendf(nil, "col%05d", c), Value: value, Timestamp: &ts})
		}
		muts = append(muts, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: sc}})
	}
	args := cassandra.CassandraBatchMutateArgs{
		MutationMap:      map[string]map[string][]*cassandra.Mutation{"row0000000000042": {"Supers": muts}},
		ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
	}
	buf := thrift.NewTMemoryBuffer()
	if err := args.Write(context.Background(), thrift.NewTBinaryProtocolConf(buf, nil)); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkBatchDecode reads a super batch's arguments from a frame in
// memory, through the protocol the server reads requests with.
func BenchmarkBatchDecode(b *testing.B) {
	data := superBatchArgs(b)
	cfg := &thrift.TConfiguration{MaxMessageSize: 16 << 20}
	frame := &slabprotocol.Frame{}
	in := &messageRecorder{TProtocol: slabprotocol.NewFrameProtocol(thrift.NewTBinaryProtocolConf(frameReadTransport{frame}, cfg), frame, cfg, requestFieldChunks)}
	ctx := context.Background()
	for _, way := range []struct {
		name string
		read func(d *batchDecoder) error
	}{
		{"protocol", func(d *batchDecoder) error { _, _, err := d.readArgs(ctx, in); return err }},
		{"frame", func(d *batchDecoder) error { _, _, err := d.readBatchArgs(ctx, in); return err }},
	} {
		b.Run(way.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				frame.Buf, frame.Pos = data, 0
				var d batchDecoder
				if err := way.read(&d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// As the server reads batches: from the frame, with a decoder kept
	// for reuse.
	b.Run("frame-reused", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var d batchDecoder
		for b.Loop() {
			frame.Buf, frame.Pos = data, 0
			if _, _, err := d.readBatchArgs(ctx, in); err != nil {
				b.Fatal(err)
			}
			d.reuse()
		}
	})
}
