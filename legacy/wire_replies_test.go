package legacy

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/replywire"
	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// randomResult is a result of standard or counter cells, or of super
// columns, with names and values empty or nil now and then, TTLs and
// negative numbers.
func randomResult(r *rand.Rand, counter bool) *store.SliceResult {
	res := new(store.SliceResult)
	bytesOf := func() []byte {
		switch r.IntN(8) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	cells := func() []store.Cell {
		cs := make([]store.Cell, r.IntN(6))
		for i := range cs {
			cs[i] = store.Cell{Name: bytesOf(), Timestamp: int64(r.Uint64())}
			if counter {
				cs[i].CounterValue = int64(r.Uint64())
				continue
			}
			cs[i].Value = bytesOf()
			if r.IntN(3) == 0 {
				cs[i].TTL = r.Int32N(1<<20) - 10
			}
		}
		return cs
	}
	if r.IntN(3) == 0 {
		res.Supers = make([]store.SuperColumn, 1+r.IntN(4))
		for i := range res.Supers {
			res.Supers[i] = store.SuperColumn{Name: bytesOf(), Cells: cells()}
		}
		return res
	}
	res.Cells = cells()
	return res
}

// TestWireCellsAsThriftify holds the cells appended from an engine's
// results to what replywire appends for thriftify's structures of them,
// alone (get_slice) and as rows (get_range_slices).
func TestWireCellsAsThriftify(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		table := &store.Table{Counter: r.IntN(2) == 0}
		res := randomResult(r, table.Counter)
		got := appendCells([]byte("head"), table, res)
		want := replywire.Columns([]byte("head"), new(replyBlocks).thriftify(table, res))
		if !bytes.Equal(got, want) {
			t.Fatalf("result %d (counter %v): %+v\n got  %x\n want %x", i, table.Counter, res, got, want)
		}
	}
	for i := range 300 {
		table := &store.Table{Counter: r.IntN(2) == 0}
		wire, structs := newWireKeySlices([]byte("head")), keySlices{}
		for range r.IntN(5) {
			key := make([]byte, r.IntN(10))
			for j := range key {
				key[j] = byte(r.Uint32())
			}
			res := randomResult(r, table.Counter)
			wire.add(key, table, res)
			structs.add(key, table, res)
		}
		got := wire.field()
		want := replywire.KeySlices(successField([]byte("head"), thrift.LIST), structs.structures())
		if !bytes.Equal(got, want) {
			t.Fatalf("rows %d: got %x\n want %x", i, got, want)
		}
	}
}

// TestWireReadsOfAStore answers reads of a real store on the wire, as the
// server does, and with the generated processor over the handler's
// structures, and wants the same replies byte for byte (get, get_slice,
// get_range_slices, get_indexed_slices, get_paged_slice; multiget_slice
// row by row): standard rows
// with TTLs, empty values and deleted columns, a deleted row, super
// columns, counters, an index.
func TestWireReadsOfAStore(t *testing.T) {
	b := newFuzzBackend(t, t.TempDir())
	h := b.handler
	ctx := WithSession(context.Background(), NewSession(0, nil))
	if err := h.SetKeyspace(ctx, fuzzKeyspace); err != nil {
		t.Fatal(err)
	}
	cl := cassandra.ConsistencyLevel_ONE
	ts := int64(1_700_000_000_000_000)
	ttl := int32(3600)
	column := func(name, value string, ttl *int32) *cassandra.Mutation {
		return &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
			Column: &cassandra.Column{Name: []byte(name), Value: []byte(value), Timestamp: &ts, TTL: ttl}}}
	}
	mutations := map[string]map[string][]*cassandra.Mutation{}
	for i := range 30 {
		key := fmt.Sprintf("row%02d", i)
		var ms []*cassandra.Mutation
		for j := range i % 7 {
			var t *int32
			if j%3 == 1 {
				t = &ttl
			}
			ms = append(ms, column(fmt.Sprintf("c%d", j), fmt.Sprintf("v%d-%d", i, j), t))
		}
		ms = append(ms, column("empty", "", nil), column("state", []string{"CA", "NY", "TX"}[i%3], nil))
		if i%5 == 1 {
			// Longer than the first room of a get's result.
			ms = append(ms, column("long", strings.Repeat(key, 60), nil))
		}
		sub := []*cassandra.Column{{Name: []byte("a"), Value: []byte("x"), Timestamp: &ts}, {Name: []byte("b"), Value: []byte{}, Timestamp: &ts, TTL: &ttl}}
		name := []byte{0, 0, 0, 0, 0, 0, 0, byte(i)}
		mutations[key] = map[string][]*cassandra.Mutation{
			"Std": ms,
			"Sup": {{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{SuperColumn: &cassandra.SuperColumn{Name: name, Columns: sub}}}},
		}
	}
	if err := h.BatchMutate(ctx, mutations, cl); err != nil {
		t.Fatal(err)
	}
	later := ts + 1
	for _, key := range []string{"row03", "row04"} {
		if err := h.Remove(ctx, []byte(key), &cassandra.ColumnPath{ColumnFamily: "Std"}, later, cl); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.Remove(ctx, []byte("row05"), &cassandra.ColumnPath{ColumnFamily: "Std", Column: []byte("c1")}, later, cl); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		c := &cassandra.CounterColumn{Name: []byte(fmt.Sprintf("n%d", i%4)), Value: int64(i) - 5}
		if err := h.Add(ctx, []byte(fmt.Sprintf("ctr%d", i%3)), &cassandra.ColumnParent{ColumnFamily: "Cnt"}, c, cl); err != nil {
			t.Fatal(err)
		}
	}

	everything := &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 100}}
	predicates := []*cassandra.SlicePredicate{
		everything,
		{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 2, Reversed: true}},
		{SliceRange: &cassandra.SliceRange{Start: []byte("c1"), Finish: []byte("c4"), Count: 100}},
		{ColumnNames: [][]byte{[]byte("c0"), []byte("c2"), []byte("empty"), []byte("missing")}},
	}
	allRows := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 100}
	var calls []thrift.TStruct
	for _, p := range predicates {
		for _, key := range []string{"row06", "row03", "row05", "nothing"} {
			calls = append(calls, &cassandra.CassandraGetSliceArgs{Key: []byte(key), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: p, ConsistencyLevel: cl})
		}
		for _, count := range []int32{100, 7, 1} {
			rng := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: count}
			calls = append(calls, &cassandra.CassandraGetRangeSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: p, Range: rng, ConsistencyLevel: cl})
		}
		calls = append(calls, &cassandra.CassandraGetIndexedSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"},
			IndexClause: &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{{ColumnName: []byte("state"), Op: cassandra.IndexOperator_EQ, Value: []byte("NY")}},
				StartKey: []byte{}, Count: 100},
			ColumnPredicate: p, ConsistencyLevel: cl})
	}
	for _, count := range []int32{100, 9, 1} {
		for _, start := range []string{"", "c2"} {
			rng := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: count}
			calls = append(calls, &cassandra.CassandraGetPagedSliceArgs{ColumnFamily: "Std", Range: rng, StartColumn: []byte(start), ConsistencyLevel: cl})
		}
	}
	for _, cf := range []string{"Sup", "Cnt"} {
		calls = append(calls,
			&cassandra.CassandraGetSliceArgs{Key: []byte("row07"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: cf}, Predicate: everything, ConsistencyLevel: cl},
			&cassandra.CassandraGetSliceArgs{Key: []byte("ctr1"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: cf}, Predicate: everything, ConsistencyLevel: cl},
			&cassandra.CassandraGetRangeSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: cf}, Predicate: everything, Range: allRows, ConsistencyLevel: cl},
			&cassandra.CassandraGetPagedSliceArgs{ColumnFamily: cf, Range: allRows, StartColumn: []byte{}, ConsistencyLevel: cl})
	}
	super := &cassandra.ColumnParent{ColumnFamily: "Sup", SuperColumn: []byte{0, 0, 0, 0, 0, 0, 0, 9}}
	calls = append(calls,
		&cassandra.CassandraGetSliceArgs{Key: []byte("row09"), ColumnParent: super, Predicate: everything, ConsistencyLevel: cl},
		&cassandra.CassandraGetRangeSlicesArgs{ColumnParent: super, Predicate: everything, Range: allRows, ConsistencyLevel: cl},
		// Refused: the reply is the generated one's exception.
		&cassandra.CassandraGetSliceArgs{Key: []byte("row01"), ColumnParent: &cassandra.ColumnParent{ColumnFamily: "NoSuchFamily"}, Predicate: everything, ConsistencyLevel: cl},
		&cassandra.CassandraGetRangeSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: everything, Range: &cassandra.KeyRange{Count: 10}, ConsistencyLevel: cl},
		&cassandra.CassandraGetIndexedSlicesArgs{ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"},
			IndexClause:     &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{}, StartKey: []byte{}, Count: 10},
			ColumnPredicate: everything, ConsistencyLevel: cl},
		&cassandra.CassandraGetPagedSliceArgs{ColumnFamily: "Std", ConsistencyLevel: cl,
			Range: &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10,
				RowFilter: []*cassandra.IndexExpression{{ColumnName: []byte("state"), Op: cassandra.IndexOperator_EQ, Value: []byte("NY")}}}})

	// Gets, twice over in turns, so that the second of each reuses what
	// another get gave back, and may be answered from the cell cache.
	var gets []thrift.TStruct
	for _, key := range []string{"row06", "row03", "row05", "row11", "nothing"} {
		for _, column := range []string{"c0", "c1", "empty", "long", "missing"} {
			gets = append(gets, &cassandra.CassandraGetArgs{Key: []byte(key), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Std", Column: []byte(column)}, ConsistencyLevel: cl})
		}
	}
	for _, key := range []string{"row07", "row08"} {
		name := []byte{0, 0, 0, 0, 0, 0, 0, 7}
		gets = append(gets,
			&cassandra.CassandraGetArgs{Key: []byte(key), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Sup", SuperColumn: name}, ConsistencyLevel: cl},
			&cassandra.CassandraGetArgs{Key: []byte(key), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Sup", SuperColumn: name, Column: []byte("b")}, ConsistencyLevel: cl})
	}
	gets = append(gets,
		&cassandra.CassandraGetArgs{Key: []byte("ctr1"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Cnt", Column: []byte("n1")}, ConsistencyLevel: cl},
		&cassandra.CassandraGetArgs{Key: []byte("ctr1"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Cnt", Column: []byte("n9")}, ConsistencyLevel: cl},
		&cassandra.CassandraGetArgs{Key: []byte("row01"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "NoSuchFamily", Column: []byte("c0")}, ConsistencyLevel: cl},
		&cassandra.CassandraGetArgs{Key: []byte{}, ColumnPath: &cassandra.ColumnPath{ColumnFamily: "Std", Column: []byte("c0")}, ConsistencyLevel: cl})
	calls = append(calls, gets...)
	calls = append(calls, gets...)

	ours := readProcessors(withConsistencyLevels(h))
	generated := cassandra.NewCassandraProcessor(h).ProcessorMap()
	answered, found := 0, 0
	for i, args := range calls {
		name := "get_slice"
		switch args.(type) {
		case *cassandra.CassandraGetArgs:
			name = "get"
		case *cassandra.CassandraGetRangeSlicesArgs:
			name = "get_range_slices"
		case *cassandra.CassandraGetIndexedSlicesArgs:
			name = "get_indexed_slices"
		case *cassandra.CassandraGetPagedSliceArgs:
			name = "get_paged_slice"
		}
		encoded := encodedArgs(t, args)
		want, wantOK, wantErr := processIn(ctx, t, generated[name], encoded, false)
		got, ok, err := processIn(ctx, t, ours[name], encoded, true)
		if !bytes.Equal(got, want) || ok != wantOK || (err == nil) != (wantErr == nil) {
			t.Errorf("call %d, %s %+v:\n got  %x, %v, %v\n want %x, %v, %v", i, name, args, got, ok, err, want, wantOK, wantErr)
		}
		if name == "get" {
			if getFound(t, want) {
				found++
			}
		} else if len(want) > 64 {
			answered++
		}
	}
	if answered < (len(calls)-2*len(gets))/2 {
		t.Fatalf("only %d of %d calls answered more than an empty reply: the data was not written", answered, len(calls)-2*len(gets))
	}
	if found < len(gets)/2 {
		t.Fatalf("only %d of %d gets found their column", found, 2*len(gets))
	}

	// multiget_slice's rows come in the order of their first request
	// on the wire, in the map's order from the generated writer: the
	// replies are compared row by row.
	keys := [][]byte{[]byte("row06"), []byte("row03"), []byte("nothing"), []byte("row05"), []byte("row06"), []byte("ctr1"), []byte("row07")}
	var multigets []*cassandra.CassandraMultigetSliceArgs
	for _, p := range predicates {
		multigets = append(multigets, &cassandra.CassandraMultigetSliceArgs{Keys: keys, ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: p, ConsistencyLevel: cl})
	}
	for _, parent := range []*cassandra.ColumnParent{{ColumnFamily: "Sup"}, {ColumnFamily: "Cnt"}, super, {ColumnFamily: "NoSuchFamily"}} {
		multigets = append(multigets, &cassandra.CassandraMultigetSliceArgs{Keys: keys, ColumnParent: parent, Predicate: everything, ConsistencyLevel: cl})
	}
	multigets = append(multigets, &cassandra.CassandraMultigetSliceArgs{Keys: [][]byte{}, ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: everything, ConsistencyLevel: cl},
		&cassandra.CassandraMultigetSliceArgs{Keys: [][]byte{[]byte("row01"), {}}, ColumnParent: &cassandra.ColumnParent{ColumnFamily: "Std"}, Predicate: everything, ConsistencyLevel: cl})
	for i, args := range multigets {
		encoded := encodedArgs(t, args)
		want, wantOK, wantErr := processIn(ctx, t, generated["multiget_slice"], encoded, false)
		got, ok, err := processIn(ctx, t, ours["multiget_slice"], encoded, true)
		if ok != wantOK || (err == nil) != (wantErr == nil) {
			t.Errorf("multiget %d: returned %v, %v; the generated processor %v, %v", i, ok, err, wantOK, wantErr)
		}
		gotRows, wantRows := multigetRows(t, got), multigetRows(t, want)
		if fmt.Sprint(gotRows) != fmt.Sprint(wantRows) || (wantRows == nil && !bytes.Equal(got, want)) {
			t.Errorf("multiget %d, %+v:\n got  %x\n want %x", i, args, got, want)
		}
	}
}

// readReply reads a reply message's result into r.
func readReply(t *testing.T, reply []byte, r interface {
	Read(context.Context, thrift.TProtocol) error
}) {
	t.Helper()
	ctx := context.Background()
	p := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportR(bytes.NewReader(reply)), &thrift.TConfiguration{})
	if _, _, _, err := p.ReadMessageBegin(ctx); err != nil {
		t.Fatalf("reply %x: %v", reply, err)
	}
	if err := r.Read(ctx, p); err != nil {
		t.Fatalf("reply %x: %v", reply, err)
	}
}

// getFound reads a get reply and reports whether it holds a column.
func getFound(t *testing.T, reply []byte) bool {
	t.Helper()
	var r cassandra.CassandraGetResult
	readReply(t, reply, &r)
	return r.Success != nil
}

// multigetRows reads a multiget_slice reply: each row's columns by key,
// appended again by replywire (nil when the reply holds no rows).
func multigetRows(t *testing.T, reply []byte) map[string]string {
	t.Helper()
	var r cassandra.CassandraMultigetSliceResult
	readReply(t, reply, &r)
	if r.Success == nil {
		return nil
	}
	rows := make(map[string]string, len(r.Success))
	for k, cs := range r.Success {
		rows[k] = string(replywire.Columns(nil, cs))
	}
	return rows
}

// benchStore is a handler over a Badger store of 200 rows of 20 columns
// of 64 bytes in the family Std, and a context whose session uses its
// keyspace.
func benchStore(b *testing.B) (*Handler, context.Context) {
	fb := newFuzzBackend(b, b.TempDir())
	h := fb.handler
	ctx := WithSession(context.Background(), NewSession(0, nil))
	if err := h.SetKeyspace(ctx, fuzzKeyspace); err != nil {
		b.Fatal(err)
	}
	ts := int64(1_700_000_000_000_000)
	mutations := map[string]map[string][]*cassandra.Mutation{}
	for r := range 200 {
		var ms []*cassandra.Mutation
		for c := range 20 {
			ms = append(ms, &cassandra.Mutation{ColumnOrSupercolumn: &cassandra.ColumnOrSuperColumn{
				Column: &cassandra.Column{Name: fmt.Appendf(nil, "c%05d", c), Value: make([]byte, 64), Timestamp: &ts}}})
		}
		mutations[fmt.Sprintf("p%09d", r)] = map[string][]*cassandra.Mutation{"Std": ms}
	}
	if err := h.BatchMutate(ctx, mutations, cassandra.ConsistencyLevel_ONE); err != nil {
		b.Fatal(err)
	}
	return h, ctx
}

// benchAnswers runs the call name with args through the server's
// processor: on the wire, and through the generated structures (a
// handler that offers no wire answers). Each reply must hold at least
// minReply bytes.
func benchAnswers(b *testing.B, ctx context.Context, h *Handler, name string, args thrift.TStruct, minReply int) {
	encoded := encodedArgs(b, args)
	for _, v := range []struct {
		name   string
		served cassandra.Cassandra
	}{{"wire", h}, {"structures", struct{ cassandra.Cassandra }{h}}} {
		b.Run(v.name, func(b *testing.B) {
			fn := readProcessors(v.served)[name]
			frame := slabprotocol.NewOutFrame()
			out := slabprotocol.NewAppendProtocol(thrift.NewTBinaryProtocolConf(memoryTransport{out: &frame}, &thrift.TConfiguration{}), &frame)
			b.ReportAllocs()
			for b.Loop() {
				in, _ := frameOver(encoded)
				frame.Out = frame.Out[:4]
				if ok, err := fn.Process(ctx, 7, in, out); !ok || err != nil {
					b.Fatal(ok, err)
				}
			}
			if len(frame.Out) < minReply {
				b.Fatalf("reply of %d bytes: not what was asked for", len(frame.Out))
			}
		})
	}
}

// BenchmarkRangeSlicesAnswer answers get_range_slices of 10 rows of 20
// columns of 64 bytes from a Badger store, as cmd/thriftbench's range
// mode asks it, through the server's processor: on the wire, and through
// the generated structures.
func BenchmarkRangeSlicesAnswer(b *testing.B) {
	h, ctx := benchStore(b)
	benchAnswers(b, ctx, h, "get_range_slices", &cassandra.CassandraGetRangeSlicesArgs{
		ColumnParent:     &cassandra.ColumnParent{ColumnFamily: "Std"},
		Predicate:        &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 20}},
		Range:            &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10},
		ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
	}, 10*20*64)
}

// BenchmarkMultigetSliceAnswer answers multiget_slice of 10 rows of 20
// columns of 64 bytes from a Badger store through the server's
// processor: on the wire, and through the generated structures.
func BenchmarkMultigetSliceAnswer(b *testing.B) {
	h, ctx := benchStore(b)
	keys := make([][]byte, 10)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "p%09d", 10*i)
	}
	benchAnswers(b, ctx, h, "multiget_slice", &cassandra.CassandraMultigetSliceArgs{
		Keys:             keys,
		ColumnParent:     &cassandra.ColumnParent{ColumnFamily: "Std"},
		Predicate:        &cassandra.SlicePredicate{SliceRange: &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: 20}},
		ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
	}, 10*20*64)
}

// BenchmarkGetAnswer answers get of one column of 64 bytes from a Badger
// store (from the cell cache after the first call) through the server's
// processor: on the wire, and through the generated structures.
func BenchmarkGetAnswer(b *testing.B) {
	h, ctx := benchStore(b)
	benchAnswers(b, ctx, h, "get", &cassandra.CassandraGetArgs{
		Key:              []byte("p000000042"),
		ColumnPath:       &cassandra.ColumnPath{ColumnFamily: "Std", Column: []byte("c00007")},
		ConsistencyLevel: cassandra.ConsistencyLevel_ONE,
	}, 64)
}
