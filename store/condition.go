package store

import (
	"bytes"
	"errors"
	"fmt"
)

// Condition is what a conditional write (Engine.ApplyIf) requires of the
// current state of its row. It is a value, not code, so that every backend
// can act on it: one that reads and writes in one transaction evaluates it
// with Reads and Holds, and one over a CQL cluster turns it into the IF
// clauses of a lightweight transaction (RowEmpty into IF NOT EXISTS, each
// expected column into a condition on that cell).
//
// Conditions apply to the cells of a Standard family. Every part must
// hold: the zero Condition always holds.
type Condition struct {
	// RowEmpty requires the row to have no live cell: Thrift's cas with an
	// empty expected list. It excludes Columns, as CQL's IF NOT EXISTS
	// excludes other conditions.
	RowEmpty bool
	// Columns lists cells the row must hold, or must not.
	Columns []ExpectedColumn
}

// ExpectedColumn is one cell a Condition expects.
type ExpectedColumn struct {
	// Name is the cell's name. Names that the comparator deems equal name
	// the same cell.
	Name []byte
	// Value is the value the live cell must hold, compared byte for byte
	// (not by the column's validator), as Cassandra's cas compares them.
	Value []byte
	// Absent requires instead that the cell has no live value (it was
	// never written, or it was deleted or expired); Value is then ignored.
	Absent bool
}

// ErrBadCondition reports a Condition an engine cannot evaluate: see
// Condition.Validate.
var ErrBadCondition = errors.New("invalid condition")

// Validate reports whether c is a condition an engine evaluates on t:
// t is a Standard family and RowEmpty comes without Columns.
func (c *Condition) Validate(t *Table) error {
	switch {
	case t.Def.Super:
		return fmt.Errorf("%w: conditions apply to Standard families only", ErrBadCondition)
	case c.RowEmpty && len(c.Columns) > 0:
		return fmt.Errorf("%w: a condition on an empty row takes no expected columns", ErrBadCondition)
	}
	return nil
}

// Reads is the slice of the row the condition looks at: the expected
// columns, or, for RowEmpty, the first live cell of the row (one is enough
// to refuse). ApplyIf reports what it selects as the row's current state.
func (c *Condition) Reads() SliceQuery {
	if c.RowEmpty {
		return SliceQuery{Count: 1}
	}
	if len(c.Columns) == 0 {
		return SliceQuery{}
	}
	names := make([][]byte, len(c.Columns))
	for i := range c.Columns {
		names[i] = c.Columns[i].Name
	}
	return SliceQuery{Names: names}
}

// Holds evaluates the condition on the live cells of its row that Reads
// selected.
func (c *Condition) Holds(t *Table, current []Cell) bool {
	if c.RowEmpty && len(current) > 0 {
		return false
	}
	for i := range c.Columns {
		e := &c.Columns[i]
		cell := FindCell(t, current, e.Name)
		if e.Absent {
			if cell != nil {
				return false
			}
			continue
		}
		if cell == nil || !bytes.Equal(cell.Value, e.Value) {
			return false
		}
	}
	return true
}

// FindCell returns the cell of cells whose name the comparator deems equal
// to name (cells at the top level of a Standard family), or nil.
func FindCell(t *Table, cells []Cell, name []byte) *Cell {
	for i := range cells {
		if t.Comparator.Compare(cells[i].Name, name) == 0 {
			return &cells[i]
		}
	}
	return nil
}
