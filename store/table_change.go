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
	// PropIndexedValidator is the validator of an indexed column: index
	// entries are keyed by its encoding of the values.
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
// keyed by the comparators' encodings and read back through them, counter
// cells differ from regular ones, and index entries are keyed by the
// indexed columns' validators, so these may change only to a type that
// Cassandra deems compatible (it accepts and orders every existing value
// the same: marshal.IsCompatibleWith) and that encodes every existing value
// to the same bytes. The column type (Standard or Super) and the counter
// type never change. Everything else, the key validator included (row keys
// are laid out by the partitioner alone), may change freely.
//
// It returns nil or an *IncompatibleChangeError.
func CheckTableChange(old, next *Table) error {
	refuse := func(p TableProperty, from, to string) error {
		return &IncompatibleChangeError{Keyspace: old.Def.Keyspace, Table: old.Def.Name, Property: p, Old: from, New: to}
	}
	if old.Def.Super != next.Def.Super {
		return refuse(PropColumnType, columnType(old), columnType(next))
	}
	if old.Counter != next.Counter {
		return refuse(PropCounter, counterKind(old), counterKind(next))
	}
	if !StoredValuesReadable(next.Comparator, old.Comparator) {
		return refuse(PropComparator, old.Comparator.Name(), next.Comparator.Name())
	}
	if old.Def.Super && !StoredValuesReadable(next.SubComparator, old.SubComparator) {
		return refuse(PropSubComparator, old.SubComparator.Name(), next.SubComparator.Name())
	}
	for _, col := range old.IndexedColumns() {
		if !next.IndexedColumn(col) {
			continue // the index goes, with its entries
		}
		from, to := old.ValueValidator(col), next.ValueValidator(col)
		if !StoredValuesReadable(to, from) {
			err := refuse(PropIndexedValidator, from.Name(), to.Name()).(*IncompatibleChangeError)
			err.Column = col
			return err
		}
	}
	return nil
}

// StoredValuesReadable reports whether values stored as keys of type
// previous read back correctly as type next: next is compatible with
// previous in Cassandra's sense, and both encode a value (AppendKey) to the
// same bytes.
func StoredValuesReadable(next, previous marshal.Type) bool {
	return marshal.IsCompatibleWith(next, previous) && sameKeyEncoding(next, previous)
}

// sameKeyEncoding reports whether AppendKey gives the same bytes under
// next as under previous for every value previous accepts.
func sameKeyEncoding(next, previous marshal.Type) bool {
	if marshal.Equal(next, previous) {
		return true
	}
	switch n := next.(type) {
	case marshal.BytesType, marshal.AsciiType, marshal.UTF8Type:
		// All three store the bytes themselves, escaped alike.
		switch previous.(type) {
		case marshal.BytesType, marshal.AsciiType, marshal.UTF8Type:
			return true
		}
	case *marshal.Reversed:
		p, ok := previous.(*marshal.Reversed)
		return ok && sameKeyEncoding(n.Base(), p.Base())
	case *marshal.Composite:
		// A composite key is each component's key in turn: a composite
		// extended with more components encodes the names of the shorter
		// one alike if the shared components do.
		p, ok := previous.(*marshal.Composite)
		if !ok {
			return false
		}
		nc, pc := n.Components(), p.Components()
		if len(nc) < len(pc) {
			return false
		}
		for i := range pc {
			if !sameKeyEncoding(nc[i], pc[i]) {
				return false
			}
		}
		return true
	}
	return false
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
