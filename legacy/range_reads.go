package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// GetRangeSlices implements get_range_slices: rows in the partitioner's
// order, rows without matching columns (deleted ones too) as empty key
// slices, as Cassandra returns them.
func (h *Handler) GetRangeSlices(ctx context.Context, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	t, err := h.table(ctx, parent.ColumnFamily)
	if err != nil {
		return nil, err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return nil, err
	}
	if err := validatePredicate(t, parent, p); err != nil {
		return nil, err
	}
	rr, err := validateKeyRange(h.engine.Partitioner(), r)
	if err != nil {
		return nil, err
	}
	filter, err := validateRowFilter(t, r.RowFilter)
	if err != nil {
		return nil, err
	}
	if filter != nil && parent.SuperColumn != nil {
		return nil, ire("super columns are not supported for indexing")
	}
	if err := validateForRead(cl); err != nil {
		return nil, err
	}
	q := sliceQuery(t, parent, p)
	if filter != nil {
		return h.filteredRangeSlices(ctx, t, rr, q, filter, int(r.Count))
	}
	return h.rangeSlices(ctx, t, rr, q, int(r.Count))
}

// rangeSlices reads up to maxRows rows of a range.
func (h *Handler) rangeSlices(ctx context.Context, t *store.Table, rr *rowRange, q *store.SliceQuery, maxRows int) ([]*cassandra.KeySlice, error) {
	var out []*cassandra.KeySlice
	var res store.SliceResult
	for i := range rr.scans {
		scan := rr.scans[i]
		scan.Slice = *q
		err := h.engine.Scan(ctx, t, &scan, &res, func(key []byte) (bool, error) {
			out = append(out, &cassandra.KeySlice{Key: append([]byte(nil), key...), Columns: thriftify(t, &res)})
			return len(out) < maxRows, nil
		})
		if err != nil {
			return nil, h.storageError(ctx, "get_range_slices", err)
		}
		if len(out) >= maxRows {
			break
		}
	}
	if out == nil {
		out = []*cassandra.KeySlice{}
	}
	return out, nil
}

// GetPagedSlice implements get_paged_slice: whole rows from the range,
// the first one from start_column on, until count columns are returned
// (a wide row is cut where the count runs out, for the next page to
// resume).
func (h *Handler) GetPagedSlice(ctx context.Context, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	t, err := h.table(ctx, cf)
	if err != nil {
		return nil, err
	}
	rr, err := validateKeyRange(h.engine.Partitioner(), r)
	if err != nil {
		return nil, err
	}
	if _, err := validateRowFilter(t, r.RowFilter); err != nil {
		return nil, err
	}
	if err := validateForRead(cl); err != nil {
		return nil, err
	}
	if len(r.RowFilter) > 0 {
		return nil, ire("Cross-row paging is not supported along with index clauses")
	}
	if len(startColumn) > 0 {
		if err := validateNames(t, nil, [][]byte{startColumn}); err != nil {
			return nil, err
		}
	}
	budget := int(r.Count)
	var out []*cassandra.KeySlice
	var keys, res store.SliceResult
	first := true
	for i := range rr.scans {
		// The scan only enumerates rows; each row is then read with what
		// is left of the budget, so a wide row is never read whole.
		scan := rr.scans[i]
		err := h.engine.Scan(ctx, t, &scan, &keys, func(key []byte) (bool, error) {
			q := &store.SliceQuery{Count: budget}
			if first {
				q.Start = startColumn
				first = false
			}
			// Clear, not Reset: earlier rows' columns still point into res.
			res.Clear()
			if err := h.engine.Slice(ctx, t, key, q, &res); err != nil {
				return false, err
			}
			cols := thriftify(t, &res)
			budget -= len(cols)
			out = append(out, &cassandra.KeySlice{Key: append([]byte(nil), key...), Columns: cols})
			return budget > 0, nil
		})
		if err != nil {
			return nil, h.storageError(ctx, "get_paged_slice", err)
		}
		if budget <= 0 {
			break
		}
	}
	if out == nil {
		out = []*cassandra.KeySlice{}
	}
	return out, nil
}
