package store

// ExprOp is the comparison of an Expression.
type ExprOp uint8

const (
	// ExprEQ holds when the column's value equals the expression's.
	ExprEQ ExprOp = iota + 1
	// ExprGT holds when it is greater.
	ExprGT
	// ExprGTE holds when it is greater or equal.
	ExprGTE
	// ExprLT holds when it is less.
	ExprLT
	// ExprLTE holds when it is less or equal.
	ExprLTE
)

// Expression is a condition on one column of a row (Thrift's
// IndexExpression): the row's live cell of that name (at the top level of
// a Standard family) compared with Value by the column's validator
// (Table.ValueValidator). A row without a live cell of that name fails it.
type Expression struct {
	Column []byte
	Op     ExprOp
	Value  []byte
}

// FilterColumns returns the names a filter reads: the slice of a row that
// MatchFilter needs.
func FilterColumns(filter []Expression) [][]byte {
	names := make([][]byte, len(filter))
	for i := range filter {
		names[i] = filter[i].Column
	}
	return names
}

// MatchFilter reports whether every expression of filter holds for the
// live cells of a row (those FilterColumns names, or more). In a Super
// family, whose rows hold no cells at the top level, no row matches.
func MatchFilter(t *Table, filter []Expression, cells []Cell) bool {
	for i := range filter {
		e := &filter[i]
		c := FindCell(t, cells, e.Column)
		if c == nil {
			return false
		}
		cmp := t.ValueValidator(e.Column).Compare(c.Value, e.Value)
		var ok bool
		switch e.Op {
		case ExprEQ:
			ok = cmp == 0
		case ExprGT:
			ok = cmp > 0
		case ExprGTE:
			ok = cmp >= 0
		case ExprLT:
			ok = cmp < 0
		case ExprLTE:
			ok = cmp <= 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// IndexedExpression returns the first EQ expression of filter on an
// indexed column of t, or nil: the one an engine with KEYS indexes looks
// rows up by.
func IndexedExpression(t *Table, filter []Expression) *Expression {
	for i := range filter {
		if filter[i].Op == ExprEQ && t.IndexedColumn(filter[i].Column) {
			return &filter[i]
		}
	}
	return nil
}
