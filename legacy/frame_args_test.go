package legacy

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// frameReadArgs are arguments that read themselves from the frame.
type frameReadArgs interface {
	Read(context.Context, thrift.TProtocol) error
	readFrame(*slabprotocol.Frame, int32) bool
}

// argsKind is a call's arguments, read by us and by the generated
// reader.
type argsKind struct {
	// ours is new arguments read our way; generated is their generated
	// struct.
	ours func() (args frameReadArgs, generated func() any)
	// theirs is new generated arguments.
	theirs func() thrift.TStruct
}

var frameArgKinds = map[string]argsKind{
	"get_slice": {
		ours: func() (frameReadArgs, func() any) {
			a := &getSliceArgs{}
			return a, func() any { return &a.CassandraGetSliceArgs }
		},
		theirs: func() thrift.TStruct { return &cassandra.CassandraGetSliceArgs{} },
	},
	"get": {
		ours: func() (frameReadArgs, func() any) {
			a := &getArgs{}
			return a, func() any { return &a.CassandraGetArgs }
		},
		theirs: func() thrift.TStruct { return &cassandra.CassandraGetArgs{} },
	},
	"insert": {
		ours: func() (frameReadArgs, func() any) {
			a := &insertArgs{}
			return a, func() any { return &a.CassandraInsertArgs }
		},
		theirs: func() thrift.TStruct { return &cassandra.CassandraInsertArgs{} },
	},
	"add": {
		ours: func() (frameReadArgs, func() any) {
			a := &addArgs{}
			return a, func() any { return &a.CassandraAddArgs }
		},
		theirs: func() thrift.TStruct { return &cassandra.CassandraAddArgs{} },
	},
}

// frameArgsSeeds are the arguments of inserts and adds as the generated
// writer encodes them, each with whether it is read from the frame.
func frameArgsSeeds(tb testing.TB) map[string][]struct {
	data      []byte
	fromFrame bool
} {
	ts, ttl := int64(1700000000000000), int32(60)
	encode := func(s thrift.TStruct) []byte { return encodeStruct(tb, s) }
	type seed = struct {
		data      []byte
		fromFrame bool
	}
	sliceArgs := func(parent *cassandra.ColumnParent, p *cassandra.SlicePredicate) []byte {
		return encode(&cassandra.CassandraGetSliceArgs{Key: []byte("row"), ColumnParent: parent, Predicate: p, ConsistencyLevel: cassandra.ConsistencyLevel_ONE})
	}
	standard, super := &cassandra.ColumnParent{ColumnFamily: "Standard1"}, &cassandra.ColumnParent{ColumnFamily: "Super1", SuperColumn: []byte("sc")}
	return map[string][]seed{
		"get_slice": {
			{sliceArgs(standard, &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("a"), {}, []byte("c")}}), true},
			{sliceArgs(standard, &cassandra.SlicePredicate{ColumnNames: [][]byte{}}), true},
			{sliceArgs(super, &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte("z"), Reversed: true, Count: 20}}), true},
			{sliceArgs(standard, &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte("a"), Finish: []byte{}, Count: 100}}), true},
			// Both: read, and refused by the handler.
			{sliceArgs(standard, &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("a")}, SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 1}}), true},
			{sliceArgs(standard, &cassandra.SlicePredicate{}), true},
			// A slice range without its count: left to the generated
			// reader, which refuses it.
			{sliceRangeWithoutCount(tb), false},
		},
		"get": {
			{encode(&cassandra.CassandraGetArgs{Key: []byte("row"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Standard1", Column: []byte("c")},
				ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), true},
			{encode(&cassandra.CassandraGetArgs{Key: []byte("row"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Super1", SuperColumn: []byte("sc"), Column: []byte{}},
				ConsistencyLevel: cassandra.ConsistencyLevel_QUORUM}), true},
			{encode(&cassandra.CassandraGetArgs{Key: []byte{}, ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Super1", SuperColumn: []byte("sc")},
				ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), true},
			{encode(&cassandra.CassandraGetArgs{Key: []byte("row"), ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), false},
		},
		"insert": {
			{encode(&cassandra.CassandraInsertArgs{Key: []byte("row"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Standard1"},
				Column: &cassandra.Column{Name: []byte("c"), Value: []byte("v"), Timestamp: &ts}, ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), true},
			{encode(&cassandra.CassandraInsertArgs{Key: []byte{}, ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Super1", SuperColumn: []byte("sc")},
				Column: &cassandra.Column{Name: []byte("c"), Value: []byte{}, Timestamp: &ts, TTL: &ttl}, ConsistencyLevel: cassandra.ConsistencyLevel_QUORUM}), true},
			// No value and no timestamp: read, and refused by the handler.
			{encode(&cassandra.CassandraInsertArgs{Key: []byte("row"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Standard1"},
				Column: &cassandra.Column{Name: []byte("c")}, ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), true},
			// Required parts missing: left to the generated reader.
			{encode(&cassandra.CassandraInsertArgs{Key: []byte("row"), ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), false},
		},
		"add": {
			{encode(&cassandra.CassandraAddArgs{Key: []byte("row"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Counters"},
				Column: &cassandra.CounterColumn{Name: []byte("n"), Value: -7}, ConsistencyLevel: cassandra.ConsistencyLevel_ONE}), true},
			{encode(&cassandra.CassandraAddArgs{Key: []byte("row"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "SuperCounters", SuperColumn: []byte("sc")},
				Column: &cassandra.CounterColumn{Name: []byte("n"), Value: 1}, ConsistencyLevel: cassandra.ConsistencyLevel_ALL}), true},
			{encode(&cassandra.CassandraAddArgs{Key: []byte("row"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Counters"}}), false},
		},
	}
}

// sliceRangeWithoutCount is get_slice's arguments with a slice range
// that lacks its count, a required field, written field by field.
func sliceRangeWithoutCount(tb testing.TB) []byte {
	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, nil)
	write := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	write(p.WriteFieldBegin(ctx, "key", thrift.STRING, 1))
	write(p.WriteBinary(ctx, []byte("row")))
	write(p.WriteFieldBegin(ctx, "column_parent", thrift.STRUCT, 2))
	write((&cassandra.ColumnParent{ColumnFamily: "Standard1"}).Write(ctx, p))
	write(p.WriteFieldBegin(ctx, "predicate", thrift.STRUCT, 3))
	write(p.WriteFieldBegin(ctx, "slice_range", thrift.STRUCT, 2))
	write(p.WriteFieldBegin(ctx, "start", thrift.STRING, 1))
	write(p.WriteBinary(ctx, []byte{}))
	write(p.WriteFieldBegin(ctx, "finish", thrift.STRING, 2))
	write(p.WriteBinary(ctx, []byte{}))
	write(p.WriteFieldBegin(ctx, "reversed", thrift.BOOL, 3))
	write(p.WriteBool(ctx, false))
	write(p.WriteFieldStop(ctx)) // the slice range
	write(p.WriteFieldStop(ctx)) // the predicate
	write(p.WriteFieldBegin(ctx, "consistency_level", thrift.I32, 4))
	write(p.WriteI32(ctx, int32(cassandra.ConsistencyLevel_ONE)))
	write(p.WriteFieldStop(ctx))
	return buf.Bytes()
}

// frameArgsSameAsGenerated reads data as the server does, from its frame:
// the result must be the generated reader's, and where readFrame reads
// the arguments itself, it must leave the frame where the protocol does.
// It reports whether readFrame read them.
func frameArgsSameAsGenerated(t *testing.T, kind string, data []byte) bool {
	ctx := context.Background()
	k := frameArgKinds[kind]
	want := k.theirs()
	wantErr := want.Read(ctx, binaryOver(data))

	args, got := k.ours()
	in, frame := frameOver(data)
	err := args.Read(ctx, in)
	switch {
	case (wantErr == nil) != (err == nil):
		t.Fatalf("%s %x: the generated reader says %v, from the frame %v", kind, data, wantErr, err)
	case err == nil && !reflect.DeepEqual(got(), want):
		t.Fatalf("%s %x: from the frame\n%v\nthe generated reader\n%v", kind, data, got(), want)
	}

	direct, _ := k.ours()
	probe := &slabprotocol.Frame{Buf: data}
	read := direct.readFrame(probe, int32(max(len(data), 1)))
	switch {
	case read && wantErr != nil:
		t.Fatalf("%s %x: readFrame read what the generated reader refuses (%v)", kind, data, wantErr)
	case read && probe.Pos != frame.Pos:
		t.Fatalf("%s %x: readFrame stopped at %d, the protocol at %d", kind, data, probe.Pos, frame.Pos)
	case !read && probe.Pos != 0:
		t.Fatalf("%s %x: readFrame gave up at %d but moved the frame", kind, data, probe.Pos)
	}
	return read
}

func TestFrameArgsReadAsGenerated(t *testing.T) {
	for kind, seeds := range frameArgsSeeds(t) {
		for i, seed := range seeds {
			if read := frameArgsSameAsGenerated(t, kind, seed.data); read != seed.fromFrame {
				t.Errorf("%s seed %d: read from the frame %v, want %v", kind, i, read, seed.fromFrame)
			}
			// Every cut, and a changed byte: a wrong type, a length, a
			// field id.
			for i := range len(seed.data) {
				frameArgsSameAsGenerated(t, kind, seed.data[:i])
				for _, b := range []byte{0x00, 0x0b, 0x0c, 0x7f, 0xff} {
					changed := append([]byte(nil), seed.data...)
					changed[i] = b
					frameArgsSameAsGenerated(t, kind, changed)
				}
			}
		}
	}
	// A size over the protocol's limit is left to the protocol.
	var a insertArgs
	if a.readFrame(&slabprotocol.Frame{Buf: frameArgsSeeds(t)["insert"][0].data}, 2) {
		t.Error("readFrame read a key larger than the protocol accepts")
	}
}

func FuzzFrameArgs(f *testing.F) {
	kinds := slices.Sorted(maps.Keys(frameArgKinds))
	seeds := frameArgsSeeds(f)
	for i, kind := range kinds {
		for _, seed := range seeds[kind] {
			f.Add(uint8(i), seed.data)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		frameArgsSameAsGenerated(t, kinds[int(kind)%len(kinds)], data)
	})
}
