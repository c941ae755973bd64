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
	var rows keySlices
	if err := h.getRangeSlices(ctx, parent, p, r, cl, &rows); err != nil {
		return nil, err
	}
	return rows.structures(), nil
}

// getRangeSlicesWire is GetRangeSlices answering its result's success
// field (wire_replies.go).
func (h *Handler) getRangeSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel) ([]byte, error) {
	rows := newWireKeySlices(dst)
	if err := h.getRangeSlices(ctx, parent, p, r, cl, &rows); err != nil {
		return dst, err
	}
	return rows.field(), nil
}

// getRangeSlices validates a get_range_slices and reads its rows into
// rows.
func (h *Handler) getRangeSlices(ctx context.Context, parent *cassandra.ColumnParent, p *cassandra.SlicePredicate, r *cassandra.KeyRange, cl cassandra.ConsistencyLevel, rows *keySlices) error {
	t, err := h.tableAccess(ctx, parent.ColumnFamily, ActionSelect)
	if err != nil {
		return err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return err
	}
	if err := validatePredicate(t, parent, p); err != nil {
		return err
	}
	rr, err := validateKeyRange(h.engine.Partitioner(), r)
	if err != nil {
		return err
	}
	filter, err := validateRowFilter(t, r.RowFilter)
	if err != nil {
		return err
	}
	if filter != nil && parent.SuperColumn != nil {
		return ire("super columns are not supported for indexing")
	}
	if err := validateForRead(cl); err != nil {
		return err
	}
	var exprs []store.Expression
	if filter != nil {
		exprs = filter.exprs
	}
	return h.rangeSlices(ctx, "get_range_slices", t, rr, sliceQuery(t, parent, p), exprs, int(r.Count), rows)
}

// rangeSlices reads up to maxRows rows of a range into rows, with what q
// selects in each, in partitioner order: one engine scan per part of the
// range. With a filter, only the rows that match it (evaluated by the
// engine, on the row itself, so stale index entries never leak).
func (h *Handler) rangeSlices(ctx context.Context, op string, t *store.Table, rr *rowRange, q *store.SliceQuery, filter []store.Expression, maxRows int, rows *keySlices) error {
	res := h.scanResult(rows)
	defer h.releaseScanResult(rows, res)
	for i := range rr.scans {
		scan := rr.scans[i]
		scan.Slice = *q
		scan.Filter = filter
		scan.Rows = maxRows - rows.len()
		err := h.engine.Scan(ctx, t, &scan, res, func(key []byte) (bool, error) {
			rows.add(key, t, res)
			return rows.len() < maxRows, nil
		})
		if err != nil {
			return h.storageError(ctx, op, err)
		}
		if rows.len() >= maxRows {
			break
		}
	}
	return nil
}

// GetPagedSlice implements get_paged_slice: whole rows from the range,
// the first one from start_column on, until count columns are returned
// (a wide row is cut where the count runs out, for the next page to
// resume).
func (h *Handler) GetPagedSlice(ctx context.Context, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	var rows keySlices
	if err := h.getPagedSlice(ctx, cf, r, startColumn, cl, &rows); err != nil {
		return nil, err
	}
	return rows.structures(), nil
}

// getPagedSliceWire is GetPagedSlice answering its result's success
// field (wire_replies.go).
func (h *Handler) getPagedSliceWire(ctx context.Context, dst []byte, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel) ([]byte, error) {
	rows := newWireKeySlices(dst)
	if err := h.getPagedSlice(ctx, cf, r, startColumn, cl, &rows); err != nil {
		return dst, err
	}
	return rows.field(), nil
}

// getPagedSlice validates a get_paged_slice and reads its page into rows.
func (h *Handler) getPagedSlice(ctx context.Context, cf string, r *cassandra.KeyRange, startColumn []byte, cl cassandra.ConsistencyLevel, rows *keySlices) error {
	t, err := h.tableAccess(ctx, cf, ActionSelect)
	if err != nil {
		return err
	}
	rr, err := validateKeyRange(h.engine.Partitioner(), r)
	if err != nil {
		return err
	}
	if _, err := validateRowFilter(t, r.RowFilter); err != nil {
		return err
	}
	if err := validateForRead(cl); err != nil {
		return err
	}
	if len(r.RowFilter) > 0 {
		return ire("Cross-row paging is not supported along with index clauses")
	}
	if len(startColumn) > 0 {
		if err := validateNames(t, nil, [][]byte{startColumn}); err != nil {
			return err
		}
	}
	// Each scan is one engine call that fills a page of r.Count cells: the
	// first row from start_column on, each row with what is left of the
	// budget, so a wide row is never read whole.
	budget := int(r.Count)
	res := h.scanResult(rows)
	defer h.releaseScanResult(rows, res)
	first := true
	for i := range rr.scans {
		scan := rr.scans[i]
		scan.PageCells = budget
		if first {
			scan.PageStart = startColumn
		}
		err := h.engine.Scan(ctx, t, &scan, res, func(key []byte) (bool, error) {
			first = false
			budget -= res.Len()
			rows.add(key, t, res)
			return true, nil
		})
		if err != nil {
			return h.storageError(ctx, "get_paged_slice", err)
		}
		if budget <= 0 {
			break
		}
	}
	return nil
}
