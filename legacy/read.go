package legacy

import (
	"context"
	"math"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/thriftbridge/thriftbridge/internal/replywire"
	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// sliceQuery turns a validated parent and predicate into an engine query.
func sliceQuery(t *store.Table, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate) *store.SliceQuery {
	q := &store.SliceQuery{}
	if t.Def.Super {
		q.Super = parent.SuperColumn
	}
	if p.ColumnNames != nil {
		q.Names = p.ColumnNames
		return q
	}
	r := p.SliceRange
	q.Start, q.Finish, q.Reversed, q.Count = r.Start, r.Finish, r.Reversed, int(r.Count)
	return q
}

// Get implements get: one column, one super column, or NotFoundException.
func (h *Handler) Get(ctx context.Context, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) (*cassandra.ColumnOrSuperColumn, error) {
	// The query, its name and its result in one allocation, which the
	// answer's structures keep.
	call := new(getCall)
	t, err := h.get(ctx, call, key, path, cl)
	if err != nil {
		return nil, err
	}
	res := &call.res
	if res.Len() == 0 {
		return nil, &cassandra.NotFoundException{}
	}
	if len(res.Cells) == 1 && !t.Counter {
		return oneColumn(&res.Cells[0]), nil
	}
	return new(replyBlocks).thriftify(t, res)[0], nil
}

// getWire is Get answering its result's success field (wire_replies.go).
// Its call comes from a pool, and goes back to it once the engine is
// done with it: after a read that did not fail, as a batch's operations
// do (write.go).
func (h *Handler) getWire(ctx context.Context, dst, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) ([]byte, error) {
	call, _ := h.getCalls.Get().(*getCall)
	if call == nil {
		call = new(getCall)
	}
	t, err := h.get(ctx, call, key, path, cl)
	if err != nil {
		return dst, err
	}
	found := call.res.Len() > 0
	if found {
		dst = appendCellOrSuper(successField(dst, thrift.STRUCT), t, &call.res, 0)
	}
	*call = getCall{}
	h.getCalls.Put(call)
	if !found {
		return dst, &cassandra.NotFoundException{}
	}
	return dst, nil
}

// get validates a get and reads what it names into call, which must be
// zero.
func (h *Handler) get(ctx context.Context, call *getCall, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) (*store.Table, error) {
	t, err := h.tableAccess(ctx, path.ColumnFamily, ActionSelect)
	if err != nil {
		return nil, err
	}
	if err := validateColumnPath(t, path); err != nil {
		return nil, err
	}
	if err := validateForRead(cl); err != nil {
		return nil, err
	}
	if err := validateKey(t, key); err != nil {
		return nil, err
	}
	call.q.Count = 1
	call.res.UseRoom(call.cells[:], call.bytes[:])
	q := &call.q
	switch {
	case t.Def.Super && path.Column == nil:
		call.names[0] = path.SuperColumn
	case t.Def.Super:
		q.Super = path.SuperColumn
		call.names[0] = path.Column
	default:
		call.names[0] = path.Column
	}
	q.Names = call.names[:]
	if err := h.engine.Slice(ctx, t, key, q, &call.res); err != nil {
		return nil, h.storageError(ctx, "get", err)
	}
	return t, nil
}

// getCall is what a get needs besides its answer, and the first room of
// its result: the column found, and its name and value when they fit.
type getCall struct {
	q     store.SliceQuery
	names [1][]byte
	res   store.SliceResult
	cells [1]store.Cell
	bytes [128]byte
}

// GetSlice implements get_slice.
func (h *Handler) GetSlice(ctx context.Context, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]*cassandra.ColumnOrSuperColumn, error) {
	t, q, err := h.prepareKeysSlice(ctx, [][]byte{key}, parent, p, cl)
	if err != nil {
		return nil, err
	}
	return h.readSlice(ctx, t, key, q, new(replyBlocks))
}

// getSliceWire is GetSlice answering its result's success field
// (wire_replies.go).
func (h *Handler) getSliceWire(ctx context.Context, dst, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	t, q, err := h.prepareKeysSlice(ctx, [][]byte{key}, parent, p, cl)
	if err != nil {
		return dst, err
	}
	res := h.takeResult()
	defer h.keepResult(res)
	if err := h.engine.Slice(ctx, t, key, q, res); err != nil {
		return dst, h.storageError(ctx, "get_slice", err)
	}
	return appendCells(successField(dst, thrift.LIST), t, res), nil
}

// prepareKeysSlice validates a slice read of the rows keys: what
// prepareSlice validates, then each key.
func (h *Handler) prepareKeysSlice(ctx context.Context, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (*store.Table, *store.SliceQuery, error) {
	t, q, err := h.prepareSlice(ctx, parent, p, cl)
	if err != nil {
		return nil, nil, err
	}
	for _, k := range keys {
		if err := validateKey(t, k); err != nil {
			return nil, nil, err
		}
	}
	return t, q, nil
}

// prepareSlice validates what a slice read needs besides its keys, in
// Cassandra's order.
func (h *Handler) prepareSlice(ctx context.Context, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (*store.Table, *store.SliceQuery, error) {
	t, err := h.tableAccess(ctx, parent.ColumnFamily, ActionSelect)
	if err != nil {
		return nil, nil, err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return nil, nil, err
	}
	if err := validatePredicate(t, parent, p); err != nil {
		return nil, nil, err
	}
	if err := validateForRead(cl); err != nil {
		return nil, nil, err
	}
	return t, sliceQuery(t, parent, p), nil
}

// readSlice reads what q selects in a row, its structures from blocks.
func (h *Handler) readSlice(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery, blocks *replyBlocks) ([]*cassandra.ColumnOrSuperColumn, error) {
	var res store.SliceResult
	if err := h.engine.Slice(ctx, t, key, q, &res); err != nil {
		return nil, h.storageError(ctx, "get_slice", err)
	}
	return blocks.thriftify(t, &res), nil
}

// multigetSliceWire is MultigetSlice answering its result's success
// field (wire_replies.go): the rows in the order of their first request,
// where the generated writer takes a map's order.
func (h *Handler) multigetSliceWire(ctx context.Context, dst []byte, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	t, q, err := h.prepareKeysSlice(ctx, keys, parent, p, cl)
	if err != nil {
		return dst, err
	}
	field := successField(dst, thrift.MAP)
	out := replywire.MapBegin(field, thrift.STRING, thrift.LIST, 0)
	res := h.takeResult()
	defer h.keepResult(res)
	seen := make(map[string]struct{}, len(keys))
	for _, k := range keys {
		if _, done := seen[string(k)]; done {
			continue
		}
		seen[string(k)] = struct{}{}
		res.Reset()
		if err := h.engine.Slice(ctx, t, k, q, res); err != nil {
			return dst, h.storageError(ctx, "get_slice", err)
		}
		out = appendCells(replywire.Binary(out, k), t, res)
	}
	replywire.SetMapLength(out[len(field):], len(seen))
	return out, nil
}

// MultigetSlice implements multiget_slice: every requested key gets an
// entry, empty when the row has nothing.
func (h *Handler) MultigetSlice(ctx context.Context, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (map[string][]*cassandra.ColumnOrSuperColumn, error) {
	t, q, err := h.prepareKeysSlice(ctx, keys, parent, p, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]*cassandra.ColumnOrSuperColumn, len(keys))
	var blocks replyBlocks
	for _, k := range keys {
		if _, done := out[string(k)]; done {
			continue
		}
		cols, err := h.readSlice(ctx, t, k, q, &blocks)
		if err != nil {
			return nil, err
		}
		out[string(k)] = cols
	}
	return out, nil
}

// GetCount implements get_count. With a range it counts without
// materialising the row; like Cassandra it does not validate the
// consistency level there, and on a Standard family it ignores a super
// column in the parent.
func (h *Handler) GetCount(ctx context.Context, key []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (int32, error) {
	if p.ColumnNames != nil {
		cols, err := h.GetSlice(ctx, key, parent, p, cl)
		return int32(len(cols)), err
	}
	t, err := h.tableAccess(ctx, parent.ColumnFamily, ActionSelect)
	if err != nil {
		return 0, err
	}
	r := p.SliceRange
	if r == nil {
		r = &cassandra.SliceRange{Start: []byte{}, Finish: []byte{}, Count: math.MaxInt32}
	}
	var super []byte
	if t.Def.Super {
		super = parent.SuperColumn
		if err := validateColumnParent(t, parent); err != nil {
			return 0, err
		}
	}
	if err := validateRange(t, super, r); err != nil {
		return 0, err
	}
	if err := validateKey(t, key); err != nil {
		return 0, err
	}
	return h.count(ctx, t, key, &store.SliceQuery{Super: super, Start: r.Start, Finish: r.Finish, Reversed: r.Reversed, Count: int(r.Count)})
}

func (h *Handler) count(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery) (int32, error) {
	n, err := h.engine.Count(ctx, t, key, q)
	if err != nil {
		return 0, h.storageError(ctx, "get_count", err)
	}
	return int32(n), nil
}

// MultigetCount implements multiget_count: the size of each key's slice.
func (h *Handler) MultigetCount(ctx context.Context, keys [][]byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) (map[string]int32, error) {
	t, q, err := h.prepareKeysSlice(ctx, keys, parent, p, cl)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int32, len(keys))
	var blocks replyBlocks
	for _, k := range keys {
		if _, done := out[string(k)]; done {
			continue
		}
		var n int32
		if q.Names != nil {
			cols, err := h.readSlice(ctx, t, k, q, &blocks)
			if err != nil {
				return nil, err
			}
			n = int32(len(cols))
		} else if n, err = h.count(ctx, t, k, q); err != nil {
			return nil, err
		}
		out[string(k)] = n
	}
	return out, nil
}
