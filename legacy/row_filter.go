package legacy

import (
	"context"
	"encoding/hex"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// rowFilter is a validated list of index expressions: a row matches when
// every expression holds for its columns.
type rowFilter struct {
	exprs []*cassandra.IndexExpression
	types []marshal.Type // value type of each expression's column
	names [][]byte
	// indexedEQ tells whether an EQ expression names an indexed column.
	indexedEQ bool
}

// validateRowFilter checks index expressions as Cassandra does; nil for an
// empty list.
func validateRowFilter(t *store.Table, exprs []*cassandra.IndexExpression) (*rowFilter, error) {
	if len(exprs) == 0 {
		return nil, nil
	}
	f := &rowFilter{}
	for _, e := range exprs {
		if e == nil {
			return nil, ire("index expression must not be null")
		}
		if err := t.Comparator.Validate(e.ColumnName); err != nil {
			return nil, iref("[%s]=[%s] failed name validation (%s)", hex.EncodeToString(e.ColumnName), hex.EncodeToString(e.Value), err.Error())
		}
		if len(e.Value) > 0xFFFF {
			return nil, ire("Index expression values may not be larger than 64K")
		}
		typ := t.ValueValidator(e.ColumnName)
		if err := typ.Validate(e.Value); err != nil {
			return nil, iref("[%s]=[%s] failed value validation (%s)", hex.EncodeToString(e.ColumnName), hex.EncodeToString(e.Value), err.Error())
		}
		if e.Op < cassandra.IndexOperator_EQ || e.Op > cassandra.IndexOperator_LT {
			return nil, iref("unknown index operator %d", int64(e.Op))
		}
		f.exprs = append(f.exprs, e)
		f.types = append(f.types, typ)
		f.names = append(f.names, e.ColumnName)
		if e.Op == cassandra.IndexOperator_EQ && t.IndexedColumn(e.ColumnName) {
			f.indexedEQ = true
		}
	}
	return f, nil
}

// matches evaluates the filter on a row's cells (those it names).
func (f *rowFilter) matches(t *store.Table, cells []store.Cell) bool {
	for i, e := range f.exprs {
		var value []byte
		found := false
		for j := range cells {
			if t.Comparator.Compare(cells[j].Name, e.ColumnName) == 0 {
				value, found = cells[j].Value, true
				break
			}
		}
		if !found {
			return false
		}
		c := f.types[i].Compare(value, e.Value)
		var ok bool
		switch e.Op {
		case cassandra.IndexOperator_EQ:
			ok = c == 0
		case cassandra.IndexOperator_GT:
			ok = c > 0
		case cassandra.IndexOperator_GTE:
			ok = c >= 0
		case cassandra.IndexOperator_LT:
			ok = c < 0
		case cassandra.IndexOperator_LTE:
			ok = c <= 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// filteredRangeSlices returns up to maxRows rows of the range that match
// the filter, with what q selects in each, in partitioner order. With an
// EQ expression on an indexed column the index proposes the rows;
// otherwise every row of the range is checked. Either way the filter is
// evaluated on the row itself, so stale index entries never leak.
func (h *Handler) filteredRangeSlices(ctx context.Context, t *store.Table, rr *rowRange, q *store.SliceQuery, f *rowFilter, maxRows int) ([]*cassandra.KeySlice, error) {
	out := []*cassandra.KeySlice{}
	var keys, probe, res store.SliceResult
	visit := func(key []byte) (bool, error) {
		probe.Reset()
		if err := h.engine.Slice(ctx, t, key, &store.SliceQuery{Names: f.names}, &probe); err != nil {
			return false, err
		}
		if !f.matches(t, probe.Cells) {
			return true, nil
		}
		res.Clear() // earlier rows' columns still point into res
		if err := h.engine.Slice(ctx, t, key, q, &res); err != nil {
			return false, err
		}
		out = append(out, &cassandra.KeySlice{Key: append([]byte(nil), key...), Columns: thriftify(t, &res)})
		return len(out) < maxRows, nil
	}
	indexed := f.indexedExpression(t)
	for i := range rr.scans {
		scan := rr.scans[i]
		var err error
		if indexed != nil {
			err = h.engine.IndexLookup(ctx, t, indexed.ColumnName, indexed.Value, &scan, visit)
		} else {
			err = h.engine.Scan(ctx, t, &scan, &keys, func(key []byte) (bool, error) { return visit(key) })
		}
		if err != nil {
			return nil, h.storageError(ctx, "indexed read", err)
		}
		if len(out) >= maxRows {
			break
		}
	}
	return out, nil
}

// indexedExpression is the first EQ expression on an indexed column.
func (f *rowFilter) indexedExpression(t *store.Table) *cassandra.IndexExpression {
	for _, e := range f.exprs {
		if e.Op == cassandra.IndexOperator_EQ && t.IndexedColumn(e.ColumnName) {
			return e
		}
	}
	return nil
}

// GetIndexedSlices implements get_indexed_slices: the rows from
// start_key on whose columns satisfy every expression, one of which must
// be an EQ on an indexed column.
func (h *Handler) GetIndexedSlices(ctx context.Context, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	t, err := h.tableFor(ctx, parent.ColumnFamily, false)
	if err != nil {
		return nil, err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return nil, err
	}
	if err := validatePredicate(t, parent, p); err != nil {
		return nil, err
	}
	if len(clause.Expressions) == 0 {
		return nil, ire("index clause list may not be empty")
	}
	f, err := validateRowFilter(t, clause.Expressions)
	if err != nil {
		return nil, err
	}
	if !f.indexedEQ {
		return nil, ire("No indexed columns present in index clause with operator EQ")
	}
	if err := validateForRead(cl); err != nil {
		return nil, err
	}
	if clause.Count <= 0 {
		return nil, ire("maxRows must be positive")
	}
	rr := &rowRange{scans: []store.ScanQuery{{Start: keyBound(clause.StartKey)}}}
	return h.filteredRangeSlices(ctx, t, rr, sliceQuery(t, parent, p), f, int(clause.Count))
}
