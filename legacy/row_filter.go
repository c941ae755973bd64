package legacy

import (
	"context"
	"encoding/hex"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// rowFilter is a validated list of index expressions: a row matches when
// every expression holds for its columns. The engine evaluates it.
type rowFilter struct {
	exprs []store.Expression
	// indexedEQ tells whether an EQ expression names an indexed column.
	indexedEQ bool
}

// exprOps maps Thrift's index operators to the engine's.
var exprOps = map[cassandra.IndexOperator]store.ExprOp{
	cassandra.IndexOperator_EQ:  store.ExprEQ,
	cassandra.IndexOperator_GTE: store.ExprGTE,
	cassandra.IndexOperator_GT:  store.ExprGT,
	cassandra.IndexOperator_LTE: store.ExprLTE,
	cassandra.IndexOperator_LT:  store.ExprLT,
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
		op, ok := exprOps[e.Op]
		if !ok {
			return nil, iref("unknown index operator %d", int64(e.Op))
		}
		f.exprs = append(f.exprs, store.Expression{Column: e.ColumnName, Op: op, Value: e.Value})
		if op == store.ExprEQ && t.IndexedColumn(e.ColumnName) {
			f.indexedEQ = true
		}
	}
	return f, nil
}

// GetIndexedSlices implements get_indexed_slices: the rows from
// start_key on whose columns satisfy every expression, one of which must
// be an EQ on an indexed column.
func (h *Handler) GetIndexedSlices(ctx context.Context, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]*cassandra.KeySlice, error) {
	var rows keySlices
	if err := h.getIndexedSlices(ctx, parent, clause, p, cl, &rows); err != nil {
		return nil, err
	}
	return rows.structures(), nil
}

// getIndexedSlicesWire is GetIndexedSlices answering its result's success
// field (wire_replies.go).
func (h *Handler) getIndexedSlicesWire(ctx context.Context, dst []byte, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel) ([]byte, error) {
	rows := newWireKeySlices(dst)
	if err := h.getIndexedSlices(ctx, parent, clause, p, cl, &rows); err != nil {
		return dst, err
	}
	return rows.field(), nil
}

// getIndexedSlices validates a get_indexed_slices and reads its rows
// into rows.
func (h *Handler) getIndexedSlices(ctx context.Context, parent *cassandra.ColumnParent, clause *cassandra.IndexClause, p *cassandra.SlicePredicate, cl cassandra.ConsistencyLevel, rows *keySlices) error {
	t, err := h.tableFor(ctx, parent.ColumnFamily, false, ActionSelect)
	if err != nil {
		return err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return err
	}
	if err := validatePredicate(t, parent, p); err != nil {
		return err
	}
	if len(clause.Expressions) == 0 {
		return ire("index clause list may not be empty")
	}
	f, err := validateRowFilter(t, clause.Expressions)
	if err != nil {
		return err
	}
	if !f.indexedEQ {
		return ire("No indexed columns present in index clause with operator EQ")
	}
	if err := validateForRead(cl); err != nil {
		return err
	}
	if clause.Count <= 0 {
		return ire("maxRows must be positive")
	}
	rr := &rowRange{scans: []store.ScanQuery{{Start: keyBound(clause.StartKey)}}}
	return h.rangeSlices(ctx, "get_indexed_slices", t, rr, sliceQuery(t, parent, p), f.exprs, int(clause.Count), rows)
}
