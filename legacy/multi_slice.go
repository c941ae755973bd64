package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// GetMultiSlice implements get_multi_slice: several column ranges of one
// row in one call; overlapping ranges return each column once, and count
// caps the whole answer.
func (h *Handler) GetMultiSlice(ctx context.Context, req *cassandra.MultiSliceRequest) ([]*cassandra.ColumnOrSuperColumn, error) {
	parent := req.ColumnParent
	if parent == nil {
		return nil, ire("column_parent is required")
	}
	t, err := h.tableAccess(ctx, parent.ColumnFamily, ActionSelect)
	if err != nil {
		return nil, err
	}
	if t.Def.Super {
		return nil, ire("get_multi_slice does not support super columns")
	}
	if err := validateColumnParent(t, parent); err != nil {
		return nil, err
	}
	if err := validateForRead(req.ConsistencyLevel); err != nil {
		return nil, err
	}
	if req.Count < 0 {
		return nil, ire("get_multi_slice requires non-negative count")
	}
	q := &store.SliceQuery{Reversed: req.Reversed, Count: int(req.Count)}
	for i, s := range req.ColumnSlices {
		if s == nil {
			return nil, iref("column slice at index %d is null", i)
		}
		start, finish := nonNil(s.Start), nonNil(s.Finish)
		for _, b := range [][]byte{start, finish} {
			if len(b) > maxNameLength {
				return nil, iref("column slice bound length cannot be larger than %d", maxNameLength)
			}
			if err := t.Comparator.Validate(b); err != nil {
				return nil, ire(err.Error())
			}
		}
		if len(start) > 0 && len(finish) > 0 {
			c := t.Comparator.Compare(start, finish)
			if !req.Reversed && c > 0 {
				return nil, iref("Column slice at index %d had start greater than finish", i)
			}
			if req.Reversed && c < 0 {
				return nil, iref("Reversed column slice at index %d had start less than finish", i)
			}
		}
		q.Ranges = append(q.Ranges, store.NameRange{Start: start, Finish: finish})
	}
	if err := validateKey(t, req.Key); err != nil {
		return nil, err
	}
	if len(q.Ranges) == 0 {
		return []*cassandra.ColumnOrSuperColumn{}, nil
	}
	return h.readSlice(ctx, t, req.Key, q, new(replyBlocks))
}
