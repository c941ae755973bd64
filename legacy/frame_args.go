package legacy

import (
	"context"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The calls on one column (get, insert, and add to a counter) have
// processor functions of their own, as the reads of many columns have
// (read_replies.go). Their arguments, and get_slice's, are read from the
// frame's bytes when they are what a client writes (batch_frame.go), into
// one allocation with their parts (column parent or path, predicate,
// column, timestamp), where the generated reader makes each on its own
// through the protocol's interface. Anything else is read by the
// generated reader, as before.

// readFromFrame reads a call's arguments from the frame with fromFrame if
// in reads from a frame and fromFrame can, and otherwise through in with
// their generated reader, from a zero value.
func readFromFrame[G any, P interface {
	*G
	Read(context.Context, thrift.TProtocol) error
}](ctx context.Context, in thrift.TProtocol, fromFrame func(*slabprotocol.Frame, int32) bool, generated P) error {
	if p := frameUnder(in); p != nil && fromFrame(p.Frame(), p.MaxSize()) {
		return nil
	}
	*generated = *new(G)
	return generated.Read(ctx, in)
}

// getArgs are get's arguments and the place of their column path.
type getArgs struct {
	cassandra.CassandraGetArgs
	path cassandra.ColumnPath
}

// Read implements the arguments' reading.
func (a *getArgs) Read(ctx context.Context, in thrift.TProtocol) error {
	return readFromFrame(ctx, in, a.readFrame, &a.CassandraGetArgs)
}

// readFrame reads key, column_path and consistency_level, in that order,
// or reports that it cannot and leaves the frame as it was.
func (a *getArgs) readFrame(frame *slabprotocol.Frame, maxSize int32) bool {
	w := newWireReader(frame, maxSize, nil)
	a.Key = w.keyField()
	if w.expect(thrift.STRUCT, 2) {
		w.columnPath(&a.path)
		a.ColumnPath = &a.path
	}
	a.ConsistencyLevel = w.levelField(3)
	w.end()
	return w.done(frame)
}

// getSliceArgs are get_slice's arguments and the places of their parts.
type getSliceArgs struct {
	cassandra.CassandraGetSliceArgs
	parent     cassandra.ColumnParent
	predicate  cassandra.SlicePredicate
	sliceRange cassandra.SliceRange
}

// Read implements the arguments' reading.
func (a *getSliceArgs) Read(ctx context.Context, in thrift.TProtocol) error {
	return readFromFrame(ctx, in, a.readFrame, &a.CassandraGetSliceArgs)
}

// readFrame reads key, column_parent, predicate and consistency_level, in
// that order, or reports that it cannot and leaves the frame as it was.
func (a *getSliceArgs) readFrame(frame *slabprotocol.Frame, maxSize int32) bool {
	w := newWireReader(frame, maxSize, nil)
	a.Key, a.ColumnParent = w.keyAndParent(&a.parent)
	if w.expect(thrift.STRUCT, 3) {
		w.slicePredicate(&a.predicate, &a.sliceRange)
		a.Predicate = &a.predicate
	}
	a.ConsistencyLevel = w.levelField(4)
	w.end()
	return w.done(frame)
}

// insertArgs are insert's arguments and the places of their parts.
type insertArgs struct {
	cassandra.CassandraInsertArgs
	parent cassandra.ColumnParent
	column cassandra.Column
	stamp  int64
	ttls   block[int32]
	// succeeded is the result of a call that succeeded.
	succeeded cassandra.CassandraInsertResult
}

// Read implements the arguments' reading.
func (a *insertArgs) Read(ctx context.Context, in thrift.TProtocol) error {
	return readFromFrame(ctx, in, a.readFrame, &a.CassandraInsertArgs)
}

// readFrame reads key, column_parent, column and consistency_level, in
// that order, or reports that it cannot and leaves the frame as it was.
func (a *insertArgs) readFrame(frame *slabprotocol.Frame, maxSize int32) bool {
	w := newWireReader(frame, maxSize, nil)
	a.Key, a.ColumnParent = w.keyAndParent(&a.parent)
	if w.expect(thrift.STRUCT, 3) {
		a.column = cassandra.Column{}
		w.column(&a.column, &a.stamp, &a.ttls)
		a.Column = &a.column
	}
	a.ConsistencyLevel = w.levelField(4)
	w.end()
	return w.done(frame)
}

// addArgs are add's arguments and the places of their parts.
type addArgs struct {
	cassandra.CassandraAddArgs
	parent cassandra.ColumnParent
	column cassandra.CounterColumn
	// succeeded is the result of a call that succeeded.
	succeeded cassandra.CassandraAddResult
}

// Read implements the arguments' reading.
func (a *addArgs) Read(ctx context.Context, in thrift.TProtocol) error {
	return readFromFrame(ctx, in, a.readFrame, &a.CassandraAddArgs)
}

// readFrame reads key, column_parent, column and consistency_level, in
// that order, or reports that it cannot and leaves the frame as it was.
func (a *addArgs) readFrame(frame *slabprotocol.Frame, maxSize int32) bool {
	w := newWireReader(frame, maxSize, nil)
	a.Key, a.ColumnParent = w.keyAndParent(&a.parent)
	if w.expect(thrift.STRUCT, 3) {
		// A CounterColumn: its name and its value, both required.
		w.expect(thrift.STRING, 1)
		a.column.Name = w.binary()
		w.expect(thrift.I64, 2)
		a.column.Value = w.i64()
		w.end()
		a.Column = &a.column
	}
	a.ConsistencyLevel = w.levelField(4)
	w.end()
	return w.done(frame)
}

// slicePredicate reads a SlicePredicate: its column names, or its slice
// range (into r), whichever it names, in the order of their ids. A slice
// range has its four fields, all required.
func (w *wireReader) slicePredicate(p *cassandra.SlicePredicate, r *cassandra.SliceRange) {
	*p = cassandra.SlicePredicate{}
	last := int16(0)
	for !w.bad {
		typ, id := w.field()
		switch {
		case typ == thrift.STOP:
			return
		case typ == thrift.LIST && id == 1 && last < 1:
			n := w.listSize()
			if w.bad {
				return
			}
			p.ColumnNames = make([][]byte, 0, min(n, maxHint))
			for i := 0; i < n && !w.bad; i++ {
				p.ColumnNames = append(p.ColumnNames, w.binary())
			}
		case typ == thrift.STRUCT && id == 2 && last < 2:
			*r = cassandra.SliceRange{}
			w.expect(thrift.STRING, 1)
			r.Start = w.binary()
			w.expect(thrift.STRING, 2)
			r.Finish = w.binary()
			w.expect(thrift.BOOL, 3)
			r.Reversed = w.boolean()
			w.expect(thrift.I32, 4)
			r.Count = w.i32()
			w.end()
			p.SliceRange = r
		default:
			w.bad = true
		}
		last = id
	}
}

// keyAndParent reads fields 1 and 2 of insert's, add's and get_slice's
// arguments: the key, and the column parent into parent.
func (w *wireReader) keyAndParent(parent *cassandra.ColumnParent) ([]byte, *cassandra.ColumnParent) {
	key := w.keyField()
	if !w.expect(thrift.STRUCT, 2) {
		return key, nil
	}
	w.columnParent(parent)
	return key, parent
}

// keyField reads field 1, a binary key.
func (w *wireReader) keyField() []byte {
	if !w.expect(thrift.STRING, 1) {
		return nil
	}
	return w.binary()
}

// levelField reads field id, the consistency level.
func (w *wireReader) levelField(id int16) cassandra.ConsistencyLevel {
	if !w.expect(thrift.I32, id) {
		return 0
	}
	return cassandra.ConsistencyLevel(w.i32())
}

// columnParent reads a ColumnParent: its column family, and its super
// column if it names one.
func (w *wireReader) columnParent(p *cassandra.ColumnParent) {
	*p = cassandra.ColumnParent{}
	if !w.expect(thrift.STRING, 3) {
		return
	}
	p.ColumnFamily = w.str()
	switch typ, id := w.field(); {
	case typ == thrift.STOP:
	case typ == thrift.STRING && id == 4:
		p.SuperColumn = w.binary()
		w.end()
	default:
		w.bad = true
	}
}

// columnPath reads a ColumnPath: its column family, and its super column
// and column where it names them.
func (w *wireReader) columnPath(p *cassandra.ColumnPath) {
	*p = cassandra.ColumnPath{}
	if !w.expect(thrift.STRING, 3) {
		return
	}
	p.ColumnFamily = w.str()
	last := int16(3)
	for !w.bad {
		typ, id := w.field()
		switch {
		case typ == thrift.STOP:
			return
		case typ == thrift.STRING && id == 4 && last < 4:
			p.SuperColumn = w.binary()
		case typ == thrift.STRING && id == 5 && last < 5:
			p.Column = w.binary()
		default:
			w.bad = true
		}
		last = id
	}
}

// writeProcessors are the processor functions of the writes of one
// column, serving h.
func writeProcessors(h cassandra.Cassandra) map[string]thrift.TProcessorFunction {
	return map[string]thrift.TProcessorFunction{
		"insert": newCallProcessor("insert",
			func(ctx context.Context, a *insertArgs) (structWriter, error) {
				return &a.succeeded, h.Insert(ctx, a.Key, a.ColumnParent, a.Column, a.ConsistencyLevel)
			},
			func(e declared) structWriter {
				return &cassandra.CassandraInsertResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
		"add": newCallProcessor("add",
			func(ctx context.Context, a *addArgs) (structWriter, error) {
				return &a.succeeded, h.Add(ctx, a.Key, a.ColumnParent, a.Column, a.ConsistencyLevel)
			},
			func(e declared) structWriter {
				return &cassandra.CassandraAddResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
	}
}
