package legacy

import (
	"context"
	"reflect"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

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

func TestBatchDecoderReadsWhatTheGeneratedReaderReads(t *testing.T) {
	for _, seed := range batchArgsSeeds(t) {
		sameAsGenerated(t, seed)
		// Every cut of it: both refuse it at the same places.
		for i := range len(seed) {
			sameAsGenerated(t, seed[:i])
		}
		// A changed byte: a wrong type, a length, a field id.
		for i := range len(seed) {
			for _, b := range []byte{0x00, 0x0b, 0x7f, 0xff} {
				changed := append([]byte(nil), seed...)
				changed[i] = b
				sameAsGenerated(t, changed)
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
	f.Fuzz(sameAsGenerated)
}
