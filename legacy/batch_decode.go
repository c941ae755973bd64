package legacy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The generated reader of batch_mutate's arguments allocates every
// Mutation, ColumnOrSuperColumn, Column and SuperColumn on its own, and a
// Column's timestamp and TTL as well (optional fields are pointers): under
// batches of 10 super columns of 10 subcolumns they were an eighth of
// thriftd's allocations, three or four per cell. batchDecoder reads the
// same arguments into the same generated types, handed out by blocks
// (blocks.go) that the structures of one request share. It reads what the generated reader
// reads and refuses what it refuses (FuzzBatchMutateDecoder holds the two
// to the same results); deletions and counter columns, rare in batches
// of many cells, are left to the generated readers.

// maxHint bounds the room made for a map or list before its elements are
// read: the protocol checks a count against the message size limit only
// (16 MiB), so a frame of a few bytes could otherwise have a map of
// millions of entries made for it. Larger ones grow as they are read.
const maxHint = 1024

// batchDecoder reads the arguments of one batch_mutate or
// atomic_batch_mutate call. Its blocks, and the copy of the binary
// fields read from the frame, are the request's until the call is over;
// then batchMutateProcessor may keep the decoder for another call
// (reuse).
type batchDecoder struct {
	// fields is the room of the binary fields read from the frame.
	fields []byte

	mutations block[cassandra.Mutation]
	coscs     block[cassandra.ColumnOrSuperColumn]
	columns   block[cassandra.Column]
	supers    block[cassandra.SuperColumn]
	int64s    block[int64]
	int32s    block[int32]
	// The lists of mutations and of columns, read from the frame.
	mutationRefs block[*cassandra.Mutation]
	columnRefs   block[*cassandra.Column]
}

// readArgs reads the argument struct (mutation_map and consistency_level,
// both required).
func (d *batchDecoder) readArgs(ctx context.Context, in thrift.TProtocol) (map[string]map[string][]*cassandra.Mutation, cassandra.ConsistencyLevel, error) {
	if _, err := in.ReadStructBegin(ctx); err != nil {
		return nil, 0, thrift.PrependError("batch_mutate_args read error: ", err)
	}
	var mutations map[string]map[string][]*cassandra.Mutation
	level := cassandra.ConsistencyLevel(0)
	var hasMap, hasLevel bool
	err := readFields(ctx, in, "batch_mutate_args", func(id int16, typ thrift.TType) (bool, error) {
		switch {
		case id == 1 && typ == thrift.MAP:
			m, err := d.readMutationMap(ctx, in)
			mutations, hasMap = m, err == nil
			return true, err
		case id == 2 && typ == thrift.I32:
			v, err := in.ReadI32(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 2: ", err)
			}
			level, hasLevel = cassandra.ConsistencyLevel(v), true
			return true, nil
		}
		return false, nil
	})
	switch {
	case err != nil:
		return nil, 0, err
	case !hasMap:
		return nil, 0, thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("required field MutationMap is not set"))
	case !hasLevel:
		return nil, 0, thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("required field ConsistencyLevel is not set"))
	}
	return mutations, level, nil
}

// readFields reads a struct's fields up to its stop field and its end:
// field reads the field of that id and type and says so, or says it
// did not (the field is then skipped, as an unknown one).
func readFields(ctx context.Context, in thrift.TProtocol, name string, field func(id int16, typ thrift.TType) (bool, error)) error {
	for {
		_, typ, id, err := in.ReadFieldBegin(ctx)
		if err != nil {
			return thrift.PrependError(fmt.Sprintf("%s field %d read error: ", name, id), err)
		}
		if typ == thrift.STOP {
			break
		}
		read, err := field(id, typ)
		if err != nil {
			return err
		}
		if !read {
			if err := in.Skip(ctx, typ); err != nil {
				return err
			}
		}
		if err := in.ReadFieldEnd(ctx); err != nil {
			return err
		}
	}
	if err := in.ReadStructEnd(ctx); err != nil {
		return thrift.PrependError(name+" read struct end error: ", err)
	}
	return nil
}

// readMutationMap reads map<binary, map<string, list<Mutation>>>. As the
// generated reader, it reads keys and values as those types whatever
// types the map and list headers name.
func (d *batchDecoder) readMutationMap(ctx context.Context, in thrift.TProtocol) (map[string]map[string][]*cassandra.Mutation, error) {
	_, _, rows, err := in.ReadMapBegin(ctx)
	if err != nil {
		return nil, thrift.PrependError("error reading map begin: ", err)
	}
	out := make(map[string]map[string][]*cassandra.Mutation, min(rows, maxHint))
	for range rows {
		key, err := in.ReadString(ctx)
		if err != nil {
			return nil, thrift.PrependError("error reading field 0: ", err)
		}
		_, _, families, err := in.ReadMapBegin(ctx)
		if err != nil {
			return nil, thrift.PrependError("error reading map begin: ", err)
		}
		byFamily := make(map[string][]*cassandra.Mutation, min(families, maxHint))
		for range families {
			family, err := in.ReadString(ctx)
			if err != nil {
				return nil, thrift.PrependError("error reading field 0: ", err)
			}
			_, n, err := in.ReadListBegin(ctx)
			if err != nil {
				return nil, thrift.PrependError("error reading list begin: ", err)
			}
			list, err := d.readMutations(ctx, in, n)
			if err != nil {
				return nil, err
			}
			if err := in.ReadListEnd(ctx); err != nil {
				return nil, thrift.PrependError("error reading list end: ", err)
			}
			byFamily[family] = list
		}
		if err := in.ReadMapEnd(ctx); err != nil {
			return nil, thrift.PrependError("error reading map end: ", err)
		}
		out[key] = byFamily
	}
	if err := in.ReadMapEnd(ctx); err != nil {
		return nil, thrift.PrependError("error reading map end: ", err)
	}
	return out, nil
}

// readMutations reads a list of n Mutation structs.
func (d *batchDecoder) readMutations(ctx context.Context, in thrift.TProtocol, n int) ([]*cassandra.Mutation, error) {
	// The list's mutations are made together, with a column or super
	// column each (what a batch of writes has).
	k := min(n, maxHint)
	muts, coscs := d.mutations.many(k), d.coscs.many(k)
	list := make([]*cassandra.Mutation, 0, k)
	for i := range n {
		var m *cassandra.Mutation
		var slot *cassandra.ColumnOrSuperColumn
		if i < k {
			m, slot = &muts[i], &coscs[i]
		} else {
			m = d.mutations.one()
		}
		if err := d.readMutation(ctx, in, m, slot); err != nil {
			return nil, thrift.PrependError("*cassandra.Mutation error reading struct: ", err)
		}
		list = append(list, m)
	}
	return list, nil
}

// readMutation reads a Mutation; its column or super column goes to slot
// unless slot is nil.
func (d *batchDecoder) readMutation(ctx context.Context, in thrift.TProtocol, m *cassandra.Mutation, slot *cassandra.ColumnOrSuperColumn) error {
	if _, err := in.ReadStructBegin(ctx); err != nil {
		return thrift.PrependError("*cassandra.Mutation read error: ", err)
	}
	return readFields(ctx, in, "*cassandra.Mutation", func(id int16, typ thrift.TType) (bool, error) {
		if typ != thrift.STRUCT {
			return false, nil
		}
		switch id {
		case 1:
			if slot == nil {
				slot = d.coscs.one()
			}
			m.ColumnOrSupercolumn, slot = slot, nil
			if err := d.readCosc(ctx, in, m.ColumnOrSupercolumn); err != nil {
				return true, thrift.PrependError("*cassandra.ColumnOrSuperColumn error reading struct: ", err)
			}
			return true, nil
		case 2:
			m.Deletion = &cassandra.Deletion{}
			if err := m.Deletion.Read(ctx, in); err != nil {
				return true, thrift.PrependError("*cassandra.Deletion error reading struct: ", err)
			}
			return true, nil
		}
		return false, nil
	})
}

func (d *batchDecoder) readCosc(ctx context.Context, in thrift.TProtocol, c *cassandra.ColumnOrSuperColumn) error {
	if _, err := in.ReadStructBegin(ctx); err != nil {
		return thrift.PrependError("*cassandra.ColumnOrSuperColumn read error: ", err)
	}
	return readFields(ctx, in, "*cassandra.ColumnOrSuperColumn", func(id int16, typ thrift.TType) (bool, error) {
		if typ != thrift.STRUCT {
			return false, nil
		}
		var err error
		switch id {
		case 1:
			c.Column = d.columns.one()
			if err = d.readColumn(ctx, in, c.Column, d.int64s.one()); err != nil {
				err = thrift.PrependError("*cassandra.Column error reading struct: ", err)
			}
		case 2:
			c.SuperColumn = d.supers.one()
			if err = d.readSuper(ctx, in, c.SuperColumn); err != nil {
				err = thrift.PrependError("*cassandra.SuperColumn error reading struct: ", err)
			}
		case 3:
			c.CounterColumn = &cassandra.CounterColumn{}
			if err = c.CounterColumn.Read(ctx, in); err != nil {
				err = thrift.PrependError("*cassandra.CounterColumn error reading struct: ", err)
			}
		case 4:
			c.CounterSuperColumn = &cassandra.CounterSuperColumn{}
			if err = c.CounterSuperColumn.Read(ctx, in); err != nil {
				err = thrift.PrependError("*cassandra.CounterSuperColumn error reading struct: ", err)
			}
		default:
			return false, nil
		}
		return true, err
	})
}

func (d *batchDecoder) readSuper(ctx context.Context, in thrift.TProtocol, s *cassandra.SuperColumn) error {
	if _, err := in.ReadStructBegin(ctx); err != nil {
		return thrift.PrependError("*cassandra.SuperColumn read error: ", err)
	}
	var hasName, hasColumns bool
	err := readFields(ctx, in, "*cassandra.SuperColumn", func(id int16, typ thrift.TType) (bool, error) {
		switch {
		case id == 1 && typ == thrift.STRING:
			v, err := in.ReadBinary(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 1: ", err)
			}
			s.Name, hasName = v, true
			return true, nil
		case id == 2 && typ == thrift.LIST:
			_, n, err := in.ReadListBegin(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading list begin: ", err)
			}
			// A super column's columns are made together, with their
			// timestamps.
			k := min(n, maxHint)
			cols, stamps := d.columns.many(k), d.int64s.many(k)
			refs := make([]*cassandra.Column, 0, k)
			for i := range n {
				var c *cassandra.Column
				var stamp *int64
				if i < k {
					c, stamp = &cols[i], &stamps[i]
				} else {
					c, stamp = d.columns.one(), d.int64s.one()
				}
				if err := d.readColumn(ctx, in, c, stamp); err != nil {
					return true, thrift.PrependError("*cassandra.Column error reading struct: ", err)
				}
				refs = append(refs, c)
			}
			s.Columns = refs
			if err := in.ReadListEnd(ctx); err != nil {
				return true, thrift.PrependError("error reading list end: ", err)
			}
			hasColumns = true
			return true, nil
		}
		return false, nil
	})
	switch {
	case err != nil:
		return err
	case !hasName:
		return thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("required field Name is not set"))
	case !hasColumns:
		return thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("required field Columns is not set"))
	}
	return nil
}

// readColumn reads a Column; its timestamp, if it has one, goes to stamp.
func (d *batchDecoder) readColumn(ctx context.Context, in thrift.TProtocol, c *cassandra.Column, stamp *int64) error {
	if _, err := in.ReadStructBegin(ctx); err != nil {
		return thrift.PrependError("*cassandra.Column read error: ", err)
	}
	hasName := false
	err := readFields(ctx, in, "*cassandra.Column", func(id int16, typ thrift.TType) (bool, error) {
		switch {
		case id == 1 && typ == thrift.STRING:
			v, err := in.ReadBinary(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 1: ", err)
			}
			c.Name, hasName = v, true
		case id == 2 && typ == thrift.STRING:
			v, err := in.ReadBinary(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 2: ", err)
			}
			c.Value = v
		case id == 3 && typ == thrift.I64:
			v, err := in.ReadI64(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 3: ", err)
			}
			if c.Timestamp != nil {
				// A second timestamp field: a place of its own, as the
				// generated reader gives it.
				stamp = d.int64s.one()
			}
			*stamp = v
			c.Timestamp = stamp
		case id == 4 && typ == thrift.I32:
			v, err := in.ReadI32(ctx)
			if err != nil {
				return true, thrift.PrependError("error reading field 4: ", err)
			}
			c.TTL = d.int32s.one()
			*c.TTL = v
		default:
			return false, nil
		}
		return true, nil
	})
	if err == nil && !hasName {
		err = thrift.NewTProtocolExceptionWithType(thrift.INVALID_DATA, errors.New("required field Name is not set"))
	}
	return err
}

// keptDecoderBytes bounds the memory of a batchDecoder kept for another
// call: the room of its fields and its largest block of columns.
const keptDecoderBytes = 256 << 10

// reuse readies the decoder for another call, once nothing holds what it
// read, and reports whether it is small enough to keep.
func (d *batchDecoder) reuse() bool {
	if cap(d.fields) > keptDecoderBytes || cap(d.columns.last)*int(unsafe.Sizeof(cassandra.Column{})) > keptDecoderBytes {
		return false
	}
	d.mutations.reuse()
	d.coscs.reuse()
	d.columns.reuse()
	d.supers.reuse()
	d.int64s.reuse()
	d.int32s.reuse()
	d.mutationRefs.reuse()
	d.columnRefs.reuse()
	return true
}

// batchMutateProcessor is the processor function of batch_mutate, or of
// atomic_batch_mutate when atomic is set: the generated one's, with
// batchDecoder reading the arguments. Like the generated functions with
// thrift.ServerConnectivityCheckInterval at 0 (server.go), it starts no
// connectivity check.
//
// Its decoders are kept for reuse in a sync.Pool: under super batches
// (10 super columns of 10 subcolumns of 64 bytes) a call's structures
// and the copy of its binary fields were 15 of the 44 KB a call
// allocated. A decoder goes back only after a call that did not fail: an
// engine that gave up on a call may still hold its bytes.
type batchMutateProcessor struct {
	handler  cassandra.Cassandra
	atomic   bool
	decoders *sync.Pool
}

func newBatchMutateProcessor(h cassandra.Cassandra, atomic bool) batchMutateProcessor {
	return batchMutateProcessor{handler: h, atomic: atomic, decoders: &sync.Pool{}}
}

func (p batchMutateProcessor) name() string {
	if p.atomic {
		return "atomic_batch_mutate"
	}
	return "batch_mutate"
}

// Process implements thrift.TProcessorFunction.
func (p batchMutateProcessor) Process(ctx context.Context, seqID int32, in, out thrift.TProtocol) (bool, thrift.TException) {
	d, _ := p.decoders.Get().(*batchDecoder)
	if d == nil {
		d = new(batchDecoder)
	}
	mutations, level, err := d.readBatchArgs(ctx, in)
	if err != nil {
		_ = in.ReadMessageEnd(ctx)
		_ = writeMessage(ctx, out, p.name(), thrift.EXCEPTION, seqID, thrift.NewTApplicationException(thrift.PROTOCOL_ERROR, err.Error()))
		return false, thrift.WrapTException(err)
	}
	_ = in.ReadMessageEnd(ctx)
	call := p.handler.BatchMutate
	if p.atomic {
		call = p.handler.AtomicBatchMutate
	}
	err = call(ctx, mutations, level)
	if err == nil && d.reuse() {
		p.decoders.Put(d)
	}
	if p.atomic {
		return answer(ctx, out, p.name(), seqID, err, &cassandra.CassandraAtomicBatchMutateResult{},
			func(e declared) structWriter {
				return &cassandra.CassandraAtomicBatchMutateResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			})
	}
	return answer(ctx, out, p.name(), seqID, err, &cassandra.CassandraBatchMutateResult{},
		func(e declared) structWriter {
			return &cassandra.CassandraBatchMutateResult{Ire: e.ire, Ue: e.ue, Te: e.te}
		})
}
