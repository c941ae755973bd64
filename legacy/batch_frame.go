package legacy

import (
	"context"
	"encoding/binary"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Batches read from the frame's bytes. Reading a super batch through the
// protocol's interface (batchDecoder.readArgs) makes some fifteen calls
// through it for each column, and a closure call for each field: 8.5% of
// thriftd's CPU under super batches. A request the server reads is whole
// in its frame (slabprotocol.FrameProtocol), so readFrame reads the
// arguments from the frame's bytes directly, into the same structures,
// which the lists of a request take from shared blocks (block.run):
// BenchmarkBatchDecode reads a batch of 10 super columns of 10
// subcolumns in 24-27 µs through the protocol, 18-19 µs from the frame,
// with 25 allocations instead of 42.
//
// It reads only what clients write: the fields of each struct in the
// order of their ids, with the types the IDL gives them, and columns and
// super columns for mutations. On anything else (a deletion, a counter,
// an unknown or repeated field, a size the protocol refuses, a frame that
// ends early) it gives up, leaving the frame as it found it, and the
// arguments are read through the protocol as before, which reads,
// refuses or skips them as the generated reader does. So readFrame never
// decides what is an error, and where it reads a request it gives what
// the generated reader gives (FuzzBatchMutateDecoder holds it to that).

// readBatchArgs reads batch_mutate's arguments: from the frame when in
// reads from one and readFrame can, through in otherwise.
func (d *batchDecoder) readBatchArgs(ctx context.Context, in thrift.TProtocol) (map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel, error) {
	if p := frameUnder(in); p != nil {
		if mutations, level, ok := d.readFrame(p.Frame(), p.MaxSize()); ok {
			return mutations, level, nil
		}
	}
	return d.readArgs(ctx, in)
}

// frameUnder is the frame protocol that in reads with, or nil if in reads
// otherwise.
func frameUnder(in thrift.TProtocol) *slabprotocol.FrameProtocol {
	if m, ok := in.(*messageRecorder); ok {
		in = m.TProtocol
	}
	p, _ := in.(*slabprotocol.FrameProtocol)
	return p
}

// readFrame reads the arguments from frame's unread bytes and moves past
// them, or reports that it cannot and leaves the frame as it was. Sizes
// over maxSize are refused by the protocol, so readFrame leaves them to
// it.
func (d *batchDecoder) readFrame(frame *slabprotocol.Frame, maxSize int32) (map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel, bool) {
	w := newWireReader(frame, maxSize, d.fields)
	d.fields = w.fields
	var mutations map[string]map[string][]*cassandra.Mutation
	level := cassandra.ConsistencyLevel(0)
	var hasMap, hasLevel bool
	for !w.bad {
		typ, id := w.field()
		switch {
		case typ == thrift.STOP:
			if !hasMap || !hasLevel || !w.done(frame) {
				return nil, 0, false
			}
			return mutations, level, true
		case id == 1 && typ == thrift.MAP && !hasMap:
			mutations, hasMap = d.frameMutationMap(&w), true
		case id == 2 && typ == thrift.I32 && !hasLevel:
			level, hasLevel = cassandra.ConsistencyLevel(w.i32()), true
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// frameMutationMap reads map<binary, map<string, list<Mutation>>>,
// whatever types the headers name (as the generated reader).
func (d *batchDecoder) frameMutationMap(w *wireReader) map[string]map[string][]*cassandra.Mutation {
	rows := w.mapSize()
	out := make(map[string]map[string][]*cassandra.Mutation, min(rows, maxHint))
	for range rows {
		key := w.str()
		families := w.mapSize()
		if w.bad {
			return nil
		}
		byFamily := make(map[string][]*cassandra.Mutation, min(families, maxHint))
		for range families {
			family := w.str()
			n := w.listSize()
			if w.bad {
				return nil
			}
			byFamily[family] = d.frameMutations(w, n)
		}
		out[key] = byFamily
	}
	return out
}

// frameMutations reads a list of n Mutation structs, each a column or a
// super column, made together as readMutations makes them.
func (d *batchDecoder) frameMutations(w *wireReader, n int) []*cassandra.Mutation {
	k := min(n, maxHint)
	muts, coscs := d.mutations.run(k), d.coscs.run(k)
	list := d.mutationRefs.run(k)[:0]
	for i := 0; i < n && !w.bad; i++ {
		var m *cassandra.Mutation
		var c *cassandra.ColumnOrSuperColumn
		if i < k {
			m, c = &muts[i], &coscs[i]
		} else {
			m, c = d.mutations.one(), d.coscs.one()
		}
		switch typ, id := w.field(); {
		case typ == thrift.STOP:
			// A mutation of neither: the handler refuses it.
		case typ == thrift.STRUCT && id == 1:
			m.ColumnOrSupercolumn = c
			d.frameCosc(w, c)
			w.end()
		default:
			w.bad = true
		}
		list = append(list, m)
	}
	return list
}

// frameCosc reads a ColumnOrSuperColumn of a column or a super column.
func (d *batchDecoder) frameCosc(w *wireReader, c *cassandra.ColumnOrSuperColumn) {
	switch typ, id := w.field(); {
	case typ == thrift.STOP:
	case typ == thrift.STRUCT && id == 1:
		c.Column = &d.columns.run(1)[0]
		w.column(c.Column, &d.int64s.run(1)[0], &d.int32s)
		w.end()
	case typ == thrift.STRUCT && id == 2:
		c.SuperColumn = d.supers.one()
		d.frameSuper(w, c.SuperColumn)
		w.end()
	default:
		w.bad = true
	}
}

// frameSuper reads a SuperColumn: its name, then its columns, made
// together with their timestamps.
func (d *batchDecoder) frameSuper(w *wireReader, s *cassandra.SuperColumn) {
	if !w.expect(thrift.STRING, 1) {
		return
	}
	s.Name = w.binary()
	if !w.expect(thrift.LIST, 2) {
		return
	}
	n := w.listSize()
	if w.bad {
		return
	}
	k := min(n, maxHint)
	cols, stamps := d.columns.run(k), d.int64s.run(k)
	s.Columns = d.columnRefs.run(k)[:0]
	for i := 0; i < n && !w.bad; i++ {
		if i < k {
			w.column(&cols[i], &stamps[i], &d.int32s)
			s.Columns = append(s.Columns, &cols[i])
		} else {
			c := d.columns.one()
			w.column(c, d.int64s.one(), &d.int32s)
			s.Columns = append(s.Columns, c)
		}
	}
	w.end()
}

// wireReader reads values of the binary protocol from a buffer. A read
// the buffer cannot satisfy, or a size the protocol would refuse, sets
// bad and gives a zero value; once bad, every read gives zero values.
type wireReader struct {
	buf    []byte
	pos    int
	max    int32  // the largest size the protocol accepts
	fields []byte // the binary fields read, copied
	bad    bool
}

// newWireReader reads frame's unread bytes; sizes over maxSize are
// refused, as the protocol refuses them. The binary fields it reads are
// copied together into room if it can hold all of the frame's unread
// bytes, else into one allocation of their own: the frame's buffer is
// the next request's.
func newWireReader(frame *slabprotocol.Frame, maxSize int32, room []byte) wireReader {
	buf := frame.Buf[frame.Pos:]
	if cap(room) < len(buf) {
		room = make([]byte, 0, len(buf))
	}
	return wireReader{buf: buf, max: maxSize, fields: room[:0]}
}

// done moves frame past what was read and reports true, unless a read
// failed: then it leaves frame as it was and reports false.
func (w *wireReader) done(frame *slabprotocol.Frame) bool {
	if w.bad {
		return false
	}
	frame.Pos += w.pos
	return true
}

// column reads a Column: its name, and then its value, timestamp (into
// stamp) and TTL (from ttls) where it has them.
func (w *wireReader) column(c *cassandra.Column, stamp *int64, ttls *block[int32]) {
	last := int16(0)
	for !w.bad {
		typ, id := w.field()
		if typ == thrift.STOP {
			break
		}
		if id <= last {
			w.bad = true // a field out of order or repeated
			return
		}
		last = id
		switch {
		case id == 1 && typ == thrift.STRING:
			c.Name = w.binary()
		case id == 2 && typ == thrift.STRING:
			c.Value = w.binary()
		case id == 3 && typ == thrift.I64:
			*stamp = w.i64()
			c.Timestamp = stamp
		case id == 4 && typ == thrift.I32:
			c.TTL = &ttls.run(1)[0]
			*c.TTL = w.i32()
		default:
			w.bad = true
		}
	}
	if last < 1 || c.Name == nil {
		w.bad = true // no name, which is required
	}
}

// take returns the next n bytes, or nil (and sets bad) if there are fewer.
func (w *wireReader) take(n int) []byte {
	if w.bad || len(w.buf)-w.pos < n {
		w.bad = true
		return nil
	}
	b := w.buf[w.pos : w.pos+n]
	w.pos += n
	return b
}

// field reads a field header: its type, and its id unless it is STOP.
func (w *wireReader) field() (thrift.TType, int16) {
	b := w.take(1)
	if b == nil || b[0] == thrift.STOP {
		return thrift.STOP, 0
	}
	id := w.take(2)
	if id == nil {
		return thrift.STOP, 0
	}
	return thrift.TType(b[0]), int16(binary.BigEndian.Uint16(id))
}

// expect reads a field header and reports whether it is field id of type
// typ; if it is not, bad is set.
func (w *wireReader) expect(typ thrift.TType, id int16) bool {
	if got, gotID := w.field(); got != typ || gotID != id {
		w.bad = true
	}
	return !w.bad
}

// end reads the stop field that ends a struct read whole.
func (w *wireReader) end() {
	if b := w.take(1); b != nil && b[0] != thrift.STOP {
		w.bad = true
	}
}

// boolean reads a bool: 1 is true, any other byte false (as the library
// reads it).
func (w *wireReader) boolean() bool {
	b := w.take(1)
	return b != nil && b[0] == 1
}

func (w *wireReader) i32() int32 {
	if b := w.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (w *wireReader) i64() int64 {
	if b := w.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// size checks a container's or a field's size: one the protocol accepts,
// and no more than the bytes left (every element takes one at least).
func (w *wireReader) size(n int32) int {
	if n < 0 || n > w.max || int(n) > len(w.buf)-w.pos {
		w.bad = true
		return 0
	}
	return int(n)
}

// mapSize reads a map header (the types are not checked, as the
// generated reader does not) and returns its size.
func (w *wireReader) mapSize() int {
	if b := w.take(6); b != nil {
		return w.size(int32(binary.BigEndian.Uint32(b[2:])))
	}
	return 0
}

// listSize reads a list header (the element type is not checked) and
// returns its size.
func (w *wireReader) listSize() int {
	if b := w.take(5); b != nil {
		return w.size(int32(binary.BigEndian.Uint32(b[1:])))
	}
	return 0
}

// bytes reads a binary field in place.
func (w *wireReader) bytes() []byte {
	return w.take(w.size(w.i32()))
}

// binary reads a binary field as a copy of its own, its capacity cut at
// its length; an empty field is empty, not nil (as FrameProtocol reads
// it).
func (w *wireReader) binary() []byte {
	b := w.bytes()
	if w.bad {
		return nil
	}
	start := len(w.fields)
	w.fields = append(w.fields, b...)
	return w.fields[start:len(w.fields):len(w.fields)]
}

func (w *wireReader) str() string {
	return string(w.bytes())
}
