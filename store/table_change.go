package store

import (
	"errors"
	"fmt"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// ErrIncompatibleChange is wrapped by every *IncompatibleChangeError.
var ErrIncompatibleChange = errors.New("incompatible table definition change")

// TableProperty names a property of a family that the data already stored
// depends on.
type TableProperty int

const (
	// PropColumnType is Standard or Super.
	PropColumnType TableProperty = iota + 1
	// PropCounter is whether the family holds counters (its default
	// validator is CounterColumnType).
	PropCounter
	// PropComparator is the comparator (of super column names in a Super
	// family).
	PropComparator
	// PropSubComparator is the subcomparator of a Super family.
	PropSubComparator
	// PropIndexedValidator is the validator of an indexed column: an
	// index finds rows by the values as this type compares them.
	PropIndexedValidator
)

func (p TableProperty) String() string {
	switch p {
	case PropColumnType:
		return "column type"
	case PropCounter:
		return "counter type"
	case PropComparator:
		return "comparator"
	case PropSubComparator:
		return "subcomparator"
	case PropIndexedValidator:
		return "validator of an indexed column"
	}
	return fmt.Sprintf("TableProperty(%d)", int(p))
}

// IncompatibleChangeError reports a family update that an engine refuses
// because the data already stored could no longer be read correctly under
// the new definition (see CheckTableChange).
type IncompatibleChangeError struct {
	Keyspace, Table string
	Property        TableProperty
	// Column is the column of a PropIndexedValidator change.
	Column []byte
	// Old and New are the values of the property: type names, or
	// Standard/Super, or counter/regular.
	Old, New string
}

func (e *IncompatibleChangeError) Error() string {
	col := ""
	if e.Column != nil {
		col = fmt.Sprintf(" (column %x)", e.Column)
	}
	return fmt.Sprintf("table %s.%s: cannot change the %s%s from %s to %s: the data already stored depends on it",
		e.Keyspace, e.Table, e.Property, col, e.Old, e.New)
}

func (e *IncompatibleChangeError) Unwrap() error { return ErrIncompatibleChange }

// CheckTableChange reports whether an engine may replace the family old
// with next while keeping its data, as UpdateTable does. Stored cells are
// ordered by the comparators and read back through them, counter cells
// differ from regular ones, and an index answers by the indexed columns'
// validators, so these may change only to a type that Cassandra deems
// compatible (it accepts and orders every existing value the same:
// marshal.IsCompatibleWith) and, when readable is not nil, that readable
// accepts as well: an engine passes what its own storage needs on top
// (the Badger engine, that the new type encodes every stored value to the
// same key bytes). The column type (Standard or Super) and the counter
// type never change. Everything else, the key validator included (row keys
// are laid out by the partitioner alone), may change freely.
//
// It returns nil or an *IncompatibleChangeError.
func CheckTableChange(old, next *Table, readable func(next, previous marshal.Type) bool) error {
	refuse := func(p TableProperty, from, to string) error {
		return &IncompatibleChangeError{Keyspace: old.Def.Keyspace, Table: old.Def.Name, Property: p, Old: from, New: to}
	}
	ok := func(next, previous marshal.Type) bool {
		return marshal.IsCompatibleWith(next, previous) && (readable == nil || readable(next, previous))
	}
	if old.Def.Super != next.Def.Super {
		return refuse(PropColumnType, columnType(old), columnType(next))
	}
	if old.Counter != next.Counter {
		return refuse(PropCounter, counterKind(old), counterKind(next))
	}
	if !ok(next.Comparator, old.Comparator) {
		return refuse(PropComparator, old.Comparator.Name(), next.Comparator.Name())
	}
	if old.Def.Super && !ok(next.SubComparator, old.SubComparator) {
		return refuse(PropSubComparator, old.SubComparator.Name(), next.SubComparator.Name())
	}
	for _, col := range old.IndexedColumns() {
		if !next.IndexedColumn(col) {
			continue // the index goes, with its entries
		}
		from, to := old.ValueValidator(col), next.ValueValidator(col)
		if !ok(to, from) {
			err := refuse(PropIndexedValidator, from.Name(), to.Name()).(*IncompatibleChangeError)
			err.Column = col
			return err
		}
	}
	return nil
}

func columnType(t *Table) string {
	if t.Def.Super {
		return "Super"
	}
	return "Standard"
}

func counterKind(t *Table) string {
	if t.Counter {
		return "counter"
	}
	return "regular"
}
