package legacy

import (
	"context"
	"errors"
	"sync"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/replywire"
	"github.com/thriftbridge/thriftbridge/internal/slabprotocol"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// The reads that answer many columns (get_slice, multiget_slice,
// get_range_slices, get_paged_slice, get_indexed_slices) have processor
// functions of their own: the generated ones', with the reply's columns
// appended to the frame by replywire, where the generated writers make
// about twenty calls through the protocol's interface for each column
// (22 µs for a reply of 10 rows of 20 columns, against 4.4 µs).
// read_replies_test.go holds their replies to the generated processor's,
// byte for byte. All but get skip the structures too when the handler
// can (wire_replies.go). Like the generated functions with
// thrift.ServerConnectivityCheckInterval at 0 (server.go), and like
// batch_mutate's, they start no connectivity check.

// structWriter is what a reply's body is: a generated result, an
// exception, or a success appended.
type structWriter interface {
	Write(context.Context, thrift.TProtocol) error
}

// appendedSuccess is a result whose success field (id 0) holds the one
// of one, columns, byKey and rows that is set, appended by replywire;
// generated, the same result from the generated type, is written instead
// to a protocol that does not append to a frame.
type appendedSuccess struct {
	one       *cassandra.ColumnOrSuperColumn
	columns   []*cassandra.ColumnOrSuperColumn
	byKey     map[string][]*cassandra.ColumnOrSuperColumn
	rows      []*cassandra.KeySlice
	generated structWriter
}

// getReply is get's answer of a column, appended, and the generated
// result it stands for, in one allocation.
type getReply struct {
	appended  appendedSuccess
	generated cassandra.CassandraGetResult
}

func (s *appendedSuccess) Write(ctx context.Context, p thrift.TProtocol) error {
	ap, ok := p.(*slabprotocol.AppendProtocol)
	if !ok {
		return s.generated.Write(ctx, p)
	}
	f := ap.Frame()
	switch {
	case s.one != nil:
		f.Out = replywire.ColumnOrSuperColumn(append(f.Out, thrift.STRUCT, 0, 0), s.one)
	case s.columns != nil:
		f.Out = replywire.Columns(append(f.Out, thrift.LIST, 0, 0), s.columns)
	case s.byKey != nil:
		f.Out = replywire.ColumnsByKey(append(f.Out, thrift.MAP, 0, 0), s.byKey)
	case s.rows != nil:
		f.Out = replywire.KeySlices(append(f.Out, thrift.LIST, 0, 0), s.rows)
	}
	f.Out = append(f.Out, thrift.STOP)
	return nil
}

// readArgs reads a call's arguments as the generated processors do: a
// request that does not read is answered with a protocol error, and the
// connection is closed (false).
func readArgs(ctx context.Context, name string, seqID int32, args interface {
	Read(context.Context, thrift.TProtocol) error
}, in, out thrift.TProtocol) (bool, thrift.TException) {
	err := args.Read(ctx, in)
	_ = in.ReadMessageEnd(ctx)
	if err != nil {
		_ = writeMessage(ctx, out, name, thrift.EXCEPTION, seqID, thrift.NewTApplicationException(thrift.PROTOCOL_ERROR, err.Error()))
		return false, thrift.WrapTException(err)
	}
	return true, nil
}

// declared holds the one exception a call's result carries, of those the
// IDL declares for it.
type declared struct {
	ire *cassandra.InvalidRequestException
	nfe *cassandra.NotFoundException // declared by get alone
	ue  *cassandra.UnavailableException
	te  *cassandra.TimedOutException
}

// answer writes the reply of a call that returned err, as the generated
// processors do: an exception the IDL declares goes into the result that
// failed makes, another error is an internal error, and without an error
// the reply is success.
func answer(ctx context.Context, out thrift.TProtocol, name string, seqID int32, err error,
	success structWriter, failed func(declared) structWriter,
) (bool, thrift.TException) {
	body := success
	switch v := err.(type) {
	case nil:
	case *cassandra.InvalidRequestException:
		body = failed(declared{ire: v})
	case *cassandra.UnavailableException:
		body = failed(declared{ue: v})
	case *cassandra.TimedOutException:
		body = failed(declared{te: v})
	default:
		// A NotFoundException is declared where the result has room
		// for it; elsewhere it is an internal error, as any other.
		if nfe, ok := v.(*cassandra.NotFoundException); ok {
			if r, ok := failed(declared{nfe: nfe}).(interface{ IsSetNfe() bool }); ok && r.IsSetNfe() {
				body = r.(structWriter)
				break
			}
		}
		if errors.Is(err, thrift.ErrAbandonRequest) {
			return false, thrift.WrapTException(err)
		}
		x := thrift.NewTApplicationException(thrift.INTERNAL_ERROR, "Internal error processing "+name+": "+err.Error())
		if werr := writeMessage(ctx, out, name, thrift.EXCEPTION, seqID, x); werr != nil {
			return false, werr
		}
		return true, thrift.WrapTException(err)
	}
	if werr := writeMessage(ctx, out, name, thrift.REPLY, seqID, body); werr != nil {
		return false, werr
	}
	return true, thrift.WrapTException(err)
}

// columnsReply is the success of a read answering a list of columns; a
// nil list is no success, as the generated result has it.
func columnsReply(cs []*cassandra.ColumnOrSuperColumn, generated structWriter) structWriter {
	if cs == nil {
		return generated
	}
	return &appendedSuccess{columns: cs, generated: generated}
}

// keySlicesReply is the success of a read answering a list of rows.
func keySlicesReply(ks []*cassandra.KeySlice, generated structWriter) structWriter {
	if ks == nil {
		return generated
	}
	return &appendedSuccess{rows: ks, generated: generated}
}

// argsOf is a pointer to an arguments struct: a generated one, or one
// that reads itself from the frame (write_frame.go).
type argsOf[A any] interface {
	*A
	Read(context.Context, thrift.TProtocol) error
}

// callProcessor is the processor function of the call name: call makes
// the call with the arguments read and returns its success and error,
// and failed makes the result that carries an exception.
type callProcessor[A any, P argsOf[A]] struct {
	name   string
	call   func(context.Context, P) (structWriter, error)
	failed func(declared) structWriter
	// free keeps argument structs for reuse (takeArgs).
	free *sync.Pool
}

func newCallProcessor[A any, P argsOf[A]](name string, call func(context.Context, P) (structWriter, error), failed func(declared) structWriter) callProcessor[A, P] {
	return callProcessor[A, P]{name: name, call: call, failed: failed, free: &sync.Pool{}}
}

// takeArgs returns zeroed arguments. They come from a sync.Pool: a call's
// arguments with the places of their parts are one allocation of up to
// a few hundred bytes, a quarter of what a single-column insert allocated
// in thriftd's own code. The collector empties the pool now and then,
// which costs one allocation a connection after it.
func (p callProcessor[A, P]) takeArgs() P {
	if a, ok := p.free.Get().(P); ok {
		return a
	}
	return P(new(A))
}

// keepArgs keeps the arguments of a call that is over for another,
// zeroed, so that the pool holds on to no request's bytes. Only a call
// that did not fail gives its arguments back: a handler that gave up on
// a call (a timeout) may have left work that still holds them.
func (p callProcessor[A, P]) keepArgs(a P) {
	*a = *new(A)
	p.free.Put(a)
}

// Process implements thrift.TProcessorFunction.
func (p callProcessor[A, P]) Process(ctx context.Context, seqID int32, in, out thrift.TProtocol) (bool, thrift.TException) {
	args := p.takeArgs()
	if ok, err := readArgs(ctx, p.name, seqID, args, in, out); !ok {
		return false, err
	}
	success, err := p.call(ctx, args)
	ok, exc := answer(ctx, out, p.name, seqID, err, success, p.failed)
	if err == nil {
		p.keepArgs(args)
	}
	return ok, exc
}

// readProcessors are the processor functions of the reads of many
// columns, serving h.
func readProcessors(h cassandra.Cassandra) map[string]thrift.TProcessorFunction {
	wire, _ := h.(wireAnswerer)
	return map[string]thrift.TProcessorFunction{
		"get": newWireProcessor(newCallProcessor("get",
			func(ctx context.Context, a *getArgs) (structWriter, error) {
				v, err := h.Get(ctx, a.Key, a.ColumnPath, a.ConsistencyLevel)
				if v == nil {
					return &cassandra.CassandraGetResult{}, err
				}
				r := &getReply{}
				r.generated.Success = v
				r.appended = appendedSuccess{one: v, generated: &r.generated}
				return &r.appended, err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraGetResult{Ire: e.ire, Nfe: e.nfe, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *getArgs, dst []byte) ([]byte, error) {
				return w.getWire(ctx, dst, a.Key, a.ColumnPath, a.ConsistencyLevel)
			}),
		"get_slice": newWireProcessor(newCallProcessor("get_slice",
			func(ctx context.Context, a *getSliceArgs) (structWriter, error) {
				v, err := h.GetSlice(ctx, a.Key, a.ColumnParent, a.Predicate, a.ConsistencyLevel)
				return columnsReply(v, &cassandra.CassandraGetSliceResult{Success: v}), err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraGetSliceResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *getSliceArgs, dst []byte) ([]byte, error) {
				return w.getSliceWire(ctx, dst, a.Key, a.ColumnParent, a.Predicate, a.ConsistencyLevel)
			}),
		"multiget_slice": newWireProcessor(newCallProcessor("multiget_slice",
			func(ctx context.Context, a *cassandra.CassandraMultigetSliceArgs) (structWriter, error) {
				v, err := h.MultigetSlice(ctx, a.Keys, a.ColumnParent, a.Predicate, a.ConsistencyLevel)
				generated := &cassandra.CassandraMultigetSliceResult{Success: v}
				if v == nil {
					return generated, err
				}
				return &appendedSuccess{byKey: v, generated: generated}, err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraMultigetSliceResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *cassandra.CassandraMultigetSliceArgs, dst []byte) ([]byte, error) {
				return w.multigetSliceWire(ctx, dst, a.Keys, a.ColumnParent, a.Predicate, a.ConsistencyLevel)
			}),
		"get_range_slices": newWireProcessor(newCallProcessor("get_range_slices",
			func(ctx context.Context, a *cassandra.CassandraGetRangeSlicesArgs) (structWriter, error) {
				v, err := h.GetRangeSlices(ctx, a.ColumnParent, a.Predicate, a.Range, a.ConsistencyLevel)
				return keySlicesReply(v, &cassandra.CassandraGetRangeSlicesResult{Success: v}), err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraGetRangeSlicesResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *cassandra.CassandraGetRangeSlicesArgs, dst []byte) ([]byte, error) {
				return w.getRangeSlicesWire(ctx, dst, a.ColumnParent, a.Predicate, a.Range, a.ConsistencyLevel)
			}),
		"get_paged_slice": newWireProcessor(newCallProcessor("get_paged_slice",
			func(ctx context.Context, a *cassandra.CassandraGetPagedSliceArgs) (structWriter, error) {
				v, err := h.GetPagedSlice(ctx, a.ColumnFamily, a.Range, a.StartColumn, a.ConsistencyLevel)
				return keySlicesReply(v, &cassandra.CassandraGetPagedSliceResult{Success: v}), err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraGetPagedSliceResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *cassandra.CassandraGetPagedSliceArgs, dst []byte) ([]byte, error) {
				return w.getPagedSliceWire(ctx, dst, a.ColumnFamily, a.Range, a.StartColumn, a.ConsistencyLevel)
			}),
		"get_indexed_slices": newWireProcessor(newCallProcessor("get_indexed_slices",
			func(ctx context.Context, a *cassandra.CassandraGetIndexedSlicesArgs) (structWriter, error) {
				v, err := h.GetIndexedSlices(ctx, a.ColumnParent, a.IndexClause, a.ColumnPredicate, a.ConsistencyLevel)
				return keySlicesReply(v, &cassandra.CassandraGetIndexedSlicesResult{Success: v}), err
			},
			func(e declared) structWriter {
				return &cassandra.CassandraGetIndexedSlicesResult{Ire: e.ire, Ue: e.ue, Te: e.te}
			}),
			wire, func(ctx context.Context, w wireAnswerer, a *cassandra.CassandraGetIndexedSlicesArgs, dst []byte) ([]byte, error) {
				return w.getIndexedSlicesWire(ctx, dst, a.ColumnParent, a.IndexClause, a.ColumnPredicate, a.ConsistencyLevel)
			}),
	}
}
