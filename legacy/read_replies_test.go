package legacy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// cannedReads answers the reads of many columns with what it is given.
type cannedReads struct {
	cassandra.Cassandra
	columns []*cassandra.ColumnOrSuperColumn
	byKey   map[string][]*cassandra.ColumnOrSuperColumn
	rows    []*cassandra.KeySlice
	err     error
}

func (c cannedReads) GetSlice(context.Context, []byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	return c.columns, c.err
}

func (c cannedReads) MultigetSlice(context.Context, [][]byte, *cassandra.ColumnParent, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) (map[string][]*cassandra.ColumnOrSuperColumn, error) {
	return c.byKey, c.err
}

func (c cannedReads) GetRangeSlices(context.Context, *cassandra.ColumnParent, *cassandra.SlicePredicate, *cassandra.KeyRange, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return c.rows, c.err
}

func (c cannedReads) GetPagedSlice(context.Context, string, *cassandra.KeyRange, []byte, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return c.rows, c.err
}

func (c cannedReads) GetIndexedSlices(context.Context, *cassandra.ColumnParent, *cassandra.IndexClause, *cassandra.SlicePredicate, cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	return c.rows, c.err
}

func (c cannedReads) BatchMutate(context.Context, map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel) error {
	return c.err
}

func (c cannedReads) AtomicBatchMutate(context.Context, map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel) error {
	return c.err
}

func (c cannedReads) Get(context.Context, []byte, *cassandra.ColumnPath, cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	if len(c.columns) == 0 {
		return nil, c.err
	}
	return c.columns[len(c.columns)-1], c.err
}

func (c cannedReads) Insert(context.Context, []byte, *cassandra.ColumnParent, *cassandra.Column, cassandra.ConsistencyLevel) error {
	return c.err
}

func (c cannedReads) Add(context.Context, []byte, *cassandra.ColumnParent, *cassandra.CounterColumn, cassandra.ConsistencyLevel) error {
	return c.err
}

// memoryTransport reads a request from in and keeps what is written in
// out; flushing does nothing.
type memoryTransport struct {
	in  *bytes.Reader
	out *slabprotocol.OutFrame
}

func (m memoryTransport) Read(p []byte) (int, error)  { return m.in.Read(p) }
func (m memoryTransport) Write(p []byte) (int, error) { return m.out.Write(p) }
func (m memoryTransport) Close() error                { return nil }
func (m memoryTransport) Flush(context.Context) error { return nil }
func (m memoryTransport) IsOpen() bool                { return true }
func (m memoryTransport) Open() error                 { return nil }
func (m memoryTransport) RemainingBytes() uint64      { return uint64(m.in.Len()) }

// process runs fn on the request args (its arguments struct, after the
// message header) and returns the reply it writes, with its return
// values; appending, it reads from the frame (slabprotocol.FrameProtocol)
// and writes with slabprotocol.AppendProtocol as the server does, else it
// reads and writes with the library's binary protocol.
func process(t *testing.T, fn thrift.TProcessorFunction, args []byte, appending bool) ([]byte, bool, thrift.TException) {
	t.Helper()
	return processIn(context.Background(), t, fn, args, appending)
}

// processIn is process with the call's context.
func processIn(ctx context.Context, t *testing.T, fn thrift.TProcessorFunction, args []byte, appending bool) ([]byte, bool, thrift.TException) {
	t.Helper()
	frame := slabprotocol.NewOutFrame()
	tr := memoryTransport{in: bytes.NewReader(args), out: &frame}
	var p thrift.TProtocol = thrift.NewTBinaryProtocolConf(tr, &thrift.TConfiguration{})
	var in thrift.TProtocol = p
	if appending {
		p = slabprotocol.NewAppendProtocol(p, &frame)
		in, _ = frameOver(args)
	}
	ok, err := fn.Process(ctx, 7, in, p)
	return frame.Out[4:], ok, err
}

// encodedArgs is an arguments struct as a client writes it.
func encodedArgs(t testing.TB, args thrift.TStruct) []byte {
	t.Helper()
	frame := slabprotocol.NewOutFrame()
	p := thrift.NewTBinaryProtocolConf(memoryTransport{in: bytes.NewReader(nil), out: &frame}, &thrift.TConfiguration{})
	if err := args.Write(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return frame.Out[4:]
}

func TestProcessorsAnswerAsGenerated(t *testing.T) {
	ts, ttl := int64(1700000000000000), int32(60)
	col := func(name string, ttl *int32) *cassandra.Column {
		return &cassandra.Column{Name: []byte(name), Value: []byte("v-" + name), Timestamp: &ts, TTL: ttl}
	}
	standard := []*cassandra.ColumnOrSuperColumn{{Column: col("a", nil)}, {Column: col("b", &ttl)}, {Column: &cassandra.Column{Name: []byte("c")}}}
	super := []*cassandra.ColumnOrSuperColumn{{SuperColumn: &cassandra.SuperColumn{Name: []byte("s"), Columns: []*cassandra.Column{col("x", nil), col("y", &ttl)}}}}
	counters := []*cassandra.ColumnOrSuperColumn{{CounterColumn: &cassandra.CounterColumn{Name: []byte("n"), Value: -3}},
		{CounterSuperColumn: &cassandra.CounterSuperColumn{Name: []byte("cs"), Columns: []*cassandra.CounterColumn{{Name: []byte("m"), Value: 9}}}}}
	rows := []*cassandra.KeySlice{{Key: []byte("k1"), Columns: standard}, {Key: []byte("k2"), Columns: []*cassandra.ColumnOrSuperColumn{}}, {Key: []byte("k3"), Columns: super}}

	outcomes := []struct {
		name string
		read cannedReads
	}{
		{"standard", cannedReads{columns: standard, byKey: map[string][]*cassandra.ColumnOrSuperColumn{"k": standard}, rows: rows}},
		{"super", cannedReads{columns: super, byKey: map[string][]*cassandra.ColumnOrSuperColumn{"k": super}, rows: rows[2:]}},
		{"counters", cannedReads{columns: counters, byKey: map[string][]*cassandra.ColumnOrSuperColumn{"": counters}, rows: []*cassandra.KeySlice{{Key: []byte("c"), Columns: counters}}}},
		{"empty", cannedReads{columns: []*cassandra.ColumnOrSuperColumn{}, byKey: map[string][]*cassandra.ColumnOrSuperColumn{}, rows: []*cassandra.KeySlice{}}},
		{"nil", cannedReads{}},
		{"invalid request", cannedReads{err: &cassandra.InvalidRequestException{Why: "no such column family"}}},
		{"not found", cannedReads{err: cassandra.NewNotFoundException()}},
		{"unavailable", cannedReads{err: cassandra.NewUnavailableException()}},
		{"timed out", cannedReads{err: cassandra.NewTimedOutException()}},
		{"internal", cannedReads{err: errors.New("disk on fire")}},
		{"abandoned", cannedReads{err: fmt.Errorf("client gone: %w", thrift.ErrAbandonRequest)}},
	}
	cl := cassandra.ConsistencyLevel_ONE
	parent := &cassandra.ColumnParent{ColumnFamily: "cf"}
	pred := &cassandra.SlicePredicate{ColumnNames: [][]byte{[]byte("a")}}
	krange := &cassandra.KeyRange{StartKey: []byte{}, EndKey: []byte{}, Count: 10}
	calls := []struct {
		name string
		args thrift.TStruct
		ours func(cassandra.Cassandra) thrift.TProcessorFunction
	}{
		{"get", &cassandra.CassandraGetArgs{Key: []byte("k"), ColumnPath: &cassandra.ColumnPath{ColumnFamily: "cf", Column: []byte("a")}, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["get"] }},
		{"get_slice", &cassandra.CassandraGetSliceArgs{Key: []byte("k"), ColumnParent: parent, Predicate: pred, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["get_slice"] }},
		{"multiget_slice", &cassandra.CassandraMultigetSliceArgs{Keys: [][]byte{[]byte("k")}, ColumnParent: parent, Predicate: pred, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["multiget_slice"] }},
		{"get_range_slices", &cassandra.CassandraGetRangeSlicesArgs{ColumnParent: parent, Predicate: pred, Range: krange, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["get_range_slices"] }},
		{"get_paged_slice", &cassandra.CassandraGetPagedSliceArgs{ColumnFamily: "cf", Range: krange, StartColumn: []byte{}, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["get_paged_slice"] }},
		{"get_indexed_slices", &cassandra.CassandraGetIndexedSlicesArgs{ColumnParent: parent,
			IndexClause:     &cassandra.IndexClause{Expressions: []*cassandra.IndexExpression{}, StartKey: []byte{}, Count: 10},
			ColumnPredicate: pred, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return readProcessors(h)["get_indexed_slices"] }},
		{"insert", &cassandra.CassandraInsertArgs{Key: []byte("k"), ColumnParent: parent, Column: col("c", &ttl), ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return writeProcessors(h)["insert"] }},
		{"add", &cassandra.CassandraAddArgs{Key: []byte("k"), ColumnParent: parent, Column: &cassandra.CounterColumn{Name: []byte("n"), Value: 3}, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return writeProcessors(h)["add"] }},
		{"batch_mutate", &cassandra.CassandraBatchMutateArgs{MutationMap: map[string]map[string][]*cassandra.Mutation{}, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction { return newBatchMutateProcessor(h, false) }},
		{"atomic_batch_mutate", &cassandra.CassandraAtomicBatchMutateArgs{MutationMap: map[string]map[string][]*cassandra.Mutation{}, ConsistencyLevel: cl},
			func(h cassandra.Cassandra) thrift.TProcessorFunction {
				return newBatchMutateProcessor(h, true)
			}},
	}
	for _, call := range calls {
		args := encodedArgs(t, call.args)
		for _, o := range outcomes {
			generated := cassandra.NewCassandraProcessor(o.read).ProcessorMap()[call.name]
			want, wantOK, wantErr := process(t, generated, args, false)
			// Through the level carrier, the reads answered on the wire
			// append the handler's structures (wire_replies.go).
			for _, served := range []cassandra.Cassandra{o.read, withConsistencyLevels(o.read)} {
				for _, appending := range []bool{true, false} {
					got, ok, err := process(t, call.ours(served), args, appending)
					where := fmt.Sprintf("%s, %s, appending %v, %T", call.name, o.name, appending, served)
					if !bytes.Equal(got, want) {
						t.Errorf("%s: reply\n got  %x\n want %x", where, got, want)
					}
					if ok != wantOK || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
						t.Errorf("%s: returned %v, %v; the generated processor %v, %v", where, ok, err, wantOK, wantErr)
					}
				}
			}
		}
		// A request whose arguments do not read is refused alike (the
		// batch decoder words its reasons its own way;
		// FuzzBatchMutateDecoder holds it to the same refusals).
		if _, batch := call.args.(interface {
			GetMutationMap() map[string]map[string][]*cassandra.Mutation
		}); batch {
			continue
		}
		for _, cut := range []int{0, len(args) / 2} {
			bad := append(append([]byte{}, args[:cut]...), 0xee)
			want, wantOK, wantErr := process(t, cassandra.NewCassandraProcessor(outcomes[0].read).ProcessorMap()[call.name], bad, false)
			got, ok, err := process(t, call.ours(outcomes[0].read), bad, false)
			if !bytes.Equal(got, want) || ok != wantOK || (err == nil) != (wantErr == nil) {
				t.Errorf("%s, arguments cut at %d: reply %x, %v, %v; generated %x, %v, %v", call.name, cut, got, ok, err, want, wantOK, wantErr)
			}
			// Read from the frame, they are refused alike too. (The words
			// may differ: where a field's id is cut, the library's reader
			// names whatever its buffer last held.)
			if _, ok, err := process(t, call.ours(outcomes[0].read), bad, true); ok != wantOK || (err == nil) != (wantErr == nil) {
				t.Errorf("%s, arguments cut at %d, from the frame: %v, %v; generated %v, %v", call.name, cut, ok, err, wantOK, wantErr)
			}
		}
	}
}
