package legacy

import (
	"context"
	"encoding/binary"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/replywire"
	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Wire replies. A read's answer used to go from the engine's result to
// the generated structures (thriftify), and from them to the frame
// (replywire). Under get_range_slices of 10 rows of 20 columns, building
// the structures took a tenth of thriftd's CPU, and collecting them more.
// The server's processors of get, get_slice, multiget_slice,
// get_range_slices, get_indexed_slices and get_paged_slice therefore ask the handler for the answer's bytes
// instead (wireAnswerer), appended to the reply's frame right after the
// message's header: the handler appends each row as the engine hands it
// over, the bytes replywire appends for thriftify's structures of it
// (wire_replies_test.go holds the two to each other, byte for byte). A
// read that fails takes its bytes back and is answered as before. The
// exported methods still answer with the structures.

// wireAnswerer answers reads with the success field of their result,
// appended in the binary protocol: the field's header, then its value.
type wireAnswerer interface {
	getWire(ctx context.Context, dst, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) ([]byte, error)
	getSliceWire(ctx context.Context, dst, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error)
	getRangeSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel) ([]byte, error)
	getIndexedSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error)
	getPagedSliceWire(ctx context.Context, dst []byte, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]byte, error)
	multigetSliceWire(ctx context.Context, dst []byte, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error)
}

// A read answered on the wire copies the bytes of its result into the
// reply, so the result, with the arena its bytes are copied into, serves
// the next such read: a range read's arena grew by doubling (4 KiB, 8
// KiB, 16 KiB for 10 rows of 20 columns of 64 bytes) in every call.
// freeResults of them are kept, each with an arena of at most
// keptResultArena bytes, in a free list as operation arrays are
// (write.go).
const (
	freeResults     = 64
	keptResultArena = 64 << 10
)

// takeResult returns an empty result.
func (h *Handler) takeResult() *store.SliceResult {
	select {
	case r := <-h.freeResults:
		return r
	default:
		return new(store.SliceResult)
	}
}

// keepResult keeps res for another read, emptied.
func (h *Handler) keepResult(res *store.SliceResult) {
	if res.ArenaCap() > keptResultArena {
		return
	}
	res.Reset()
	// Cells past the length may still point into arenas it outgrew.
	clear(res.Cells[:cap(res.Cells)])
	select {
	case h.freeResults <- res:
	default:
	}
}

// scanResult is the result a range read into rows fills: one from the
// free list when rows are appended on the wire, which copies them, and a
// new one when they are structures, which keep its bytes.
func (h *Handler) scanResult(rows *keySlices) *store.SliceResult {
	if rows.wire {
		return h.takeResult()
	}
	return new(store.SliceResult)
}

// releaseScanResult is done with what scanResult(rows) returned.
func (h *Handler) releaseScanResult(rows *keySlices, res *store.SliceResult) {
	if rows.wire {
		h.keepResult(res)
	}
}

// successField appends the header of a result's success field (id 0),
// of type typ.
func successField(dst []byte, typ thrift.TType) []byte {
	return replywire.Field(dst, typ, 0)
}

// appendCells appends res as a list<ColumnOrSuperColumn>: what
// replywire.Columns appends for thriftify(t, res).
func appendCells(dst []byte, t *store.Table, res *store.SliceResult) []byte {
	n := res.Len()
	dst = replywire.ListBegin(dst, thrift.STRUCT, n)
	for i := range n {
		dst = appendCellOrSuper(dst, t, res, i)
	}
	return dst
}

// appendCellOrSuper appends the i-th cell of res, or its i-th super
// column when it has them, as a ColumnOrSuperColumn: what
// replywire.ColumnOrSuperColumn appends for thriftify(t, res)[i].
func appendCellOrSuper(dst []byte, t *store.Table, res *store.SliceResult, i int) []byte {
	if len(res.Supers) > 0 {
		sc := &res.Supers[i]
		id := int16(2) // super_column
		if t.Counter {
			id = 4 // counter_super_column
		}
		dst = replywire.Field(dst, thrift.STRUCT, id)
		dst = replywire.Binary(replywire.Field(dst, thrift.STRING, 1), sc.Name)
		dst = appendColumnList(replywire.Field(dst, thrift.LIST, 2), t.Counter, sc.Cells)
		return append(dst, thrift.STOP, thrift.STOP)
	}
	id := int16(1) // column
	if t.Counter {
		id = 3 // counter_column
	}
	dst = appendColumn(replywire.Field(dst, thrift.STRUCT, id), t.Counter, &res.Cells[i])
	return append(dst, thrift.STOP)
}

// appendColumnList appends cells as a list<Column>, or as a
// list<CounterColumn>.
func appendColumnList(dst []byte, counter bool, cells []store.Cell) []byte {
	dst = replywire.ListBegin(dst, thrift.STRUCT, len(cells))
	for i := range cells {
		dst = appendColumn(dst, counter, &cells[i])
	}
	return dst
}

// appendColumn appends c as thriftify makes it: a Column with its
// timestamp, its value when it has one and its TTL when it expires, or a
// CounterColumn.
func appendColumn(dst []byte, counter bool, c *store.Cell) []byte {
	dst = replywire.Binary(replywire.Field(dst, thrift.STRING, 1), c.Name)
	if counter {
		dst = binary.BigEndian.AppendUint64(replywire.Field(dst, thrift.I64, 2), uint64(c.CounterValue))
		return append(dst, thrift.STOP)
	}
	if c.Value != nil {
		dst = replywire.Binary(replywire.Field(dst, thrift.STRING, 2), c.Value)
	}
	dst = binary.BigEndian.AppendUint64(replywire.Field(dst, thrift.I64, 3), uint64(c.Timestamp))
	if c.TTL > 0 {
		dst = binary.BigEndian.AppendUint32(replywire.Field(dst, thrift.I32, 4), uint32(c.TTL))
	}
	return append(dst, thrift.STOP)
}

// wireProcessor is the processor function of a read that answerer
// answers, when it writes its reply to a frame in memory: the answerer
// appends the success field right after the message's header. A read
// that fails is answered as its callProcessor answers it, and so is
// every read when answerer is nil or the reply is not appended.
type wireProcessor[A any, P argsOf[A]] struct {
	callProcessor[A, P]
	answerer wireAnswerer
	wire     func(ctx context.Context, w wireAnswerer, a P, dst []byte) ([]byte, error)
}

func newWireProcessor[A any, P argsOf[A]](p callProcessor[A, P], answerer wireAnswerer, wire func(context.Context, wireAnswerer, P, []byte) ([]byte, error)) wireProcessor[A, P] {
	return wireProcessor[A, P]{callProcessor: p, answerer: answerer, wire: wire}
}

// Process implements thrift.TProcessorFunction.
func (p wireProcessor[A, P]) Process(ctx context.Context, seqID int32, in, out thrift.TProtocol) (bool, thrift.TException) {
	ap, appends := out.(*slabprotocol.AppendProtocol)
	if p.answerer == nil || !appends {
		return p.callProcessor.Process(ctx, seqID, in, out)
	}
	args := p.takeArgs()
	if ok, err := readArgs(ctx, p.name, seqID, args, in, out); !ok {
		return false, err
	}
	f := ap.Frame()
	mark := len(f.Out)
	if err := out.WriteMessageBegin(ctx, p.name, thrift.REPLY, seqID); err != nil {
		return false, thrift.WrapTException(err)
	}
	body, err := p.wire(ctx, p.answerer, args, f.Out)
	if err != nil {
		f.Out = f.Out[:mark]
		return answer(ctx, out, p.name, seqID, err, nil, p.failed)
	}
	p.keepArgs(args)
	f.Out = append(body, thrift.STOP)
	if err := out.WriteMessageEnd(ctx); err != nil {
		return false, thrift.WrapTException(err)
	}
	if err := out.Flush(ctx); err != nil {
		return false, thrift.WrapTException(err)
	}
	return true, nil
}

// keySlices gathers the rows of a range read: as generated structures,
// or, for a wire answer, appended to out as the success field of the
// read's result (newWireKeySlices).
type keySlices struct {
	wire bool
	// out holds the success field from out[start:] on.
	out    []byte
	start  int
	rows   []*cassandra.KeySlice
	n      int
	blocks replyBlocks
}

// newWireKeySlices appends the rows to dst.
func newWireKeySlices(dst []byte) keySlices {
	// The list's length is set once every row is in (field).
	return keySlices{wire: true, out: replywire.ListBegin(successField(dst, thrift.LIST), thrift.STRUCT, 0), start: len(dst)}
}

// add adds a row with the cells of res.
func (k *keySlices) add(key []byte, t *store.Table, res *store.SliceResult) {
	k.n++
	if !k.wire {
		k.rows = append(k.rows, k.blocks.row(key, k.blocks.thriftify(t, res)))
		return
	}
	out := replywire.Binary(replywire.Field(k.out, thrift.STRING, 1), key)
	out = appendCells(replywire.Field(out, thrift.LIST, 2), t, res)
	k.out = append(out, thrift.STOP)
}

// len is the number of rows added.
func (k *keySlices) len() int { return k.n }

// structures returns the rows as generated structures, an empty list
// when there are none.
func (k *keySlices) structures() []*cassandra.KeySlice {
	if k.rows == nil {
		return []*cassandra.KeySlice{}
	}
	return k.rows
}

// field returns dst with the success field appended.
func (k *keySlices) field() []byte {
	replywire.SetListLength(k.out[k.start+3:], k.n)
	return k.out
}

// The level carrier answers with the success fields of the handler it
// wraps, or, from a handler that answers only with structures, with
// theirs appended.

func (l levelCarrier) getWire(ctx context.Context, dst, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.getWire(ctx, dst, key, path, cl)
	}
	v, err := l.Cassandra.Get(ctx, key, path, cl)
	if v == nil {
		return dst, err
	}
	return replywire.ColumnOrSuperColumn(successField(dst, thrift.STRUCT), v), err
}

func (l levelCarrier) getSliceWire(ctx context.Context, dst, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.getSliceWire(ctx, dst, key, parent, p, cl)
	}
	v, err := l.Cassandra.GetSlice(ctx, key, parent, p, cl)
	if v == nil {
		return dst, err
	}
	return replywire.Columns(successField(dst, thrift.LIST), v), err
}

func (l levelCarrier) multigetSliceWire(ctx context.Context, dst []byte, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.multigetSliceWire(ctx, dst, keys, parent, p, cl)
	}
	v, err := l.Cassandra.MultigetSlice(ctx, keys, parent, p, cl)
	if v == nil {
		return dst, err
	}
	return replywire.ColumnsByKey(successField(dst, thrift.MAP), v), err
}

func (l levelCarrier) getRangeSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.getRangeSlicesWire(ctx, dst, parent, p, r, cl)
	}
	rows, err := l.Cassandra.GetRangeSlices(ctx, parent, p, r, cl)
	return appendKeySlices(dst, rows, err)
}

func (l levelCarrier) getIndexedSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.getIndexedSlicesWire(ctx, dst, parent, clause, p, cl)
	}
	rows, err := l.Cassandra.GetIndexedSlices(ctx, parent, clause, p, cl)
	return appendKeySlices(dst, rows, err)
}

func (l levelCarrier) getPagedSliceWire(ctx context.Context, dst []byte, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]byte, error) {
	ctx = withLevel(ctx, cl)
	if w, ok := l.Cassandra.(wireAnswerer); ok {
		return w.getPagedSliceWire(ctx, dst, cf, r, startColumn, cl)
	}
	rows, err := l.Cassandra.GetPagedSlice(ctx, cf, r, startColumn, cl)
	return appendKeySlices(dst, rows, err)
}

// appendKeySlices appends the success field of rows a read answered with
// their structures.
func appendKeySlices(dst []byte, rows []*cassandra.KeySlice, err error) ([]byte, error) {
	if rows == nil {
		return dst, err
	}
	return replywire.KeySlices(successField(dst, thrift.LIST), rows), err
}
