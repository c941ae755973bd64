package supercol

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// ErrUnknownColumn is wrapped by Map's error when a cell's name has no
// column in a table without a place for undeclared names (pure static and
// pivot shapes): converting such a family would lose that cell.
var ErrUnknownColumn = errors.New("name has no column in the table")

// ErrInvalidCell is wrapped by Map's error when a cell's key or names are
// not valid values of the family's types.
var ErrInvalidCell = errors.New("invalid cell")

// Mapping places the cells of one legacy family in its CQL table.
type Mapping struct {
	Family *Family
	Table  *Table

	mixed       bool
	key         keyPart // the row key -> partition key columns
	super       keyPart // the super column name -> clustering (compact, pivot)
	name        keyPart // the column name -> clustering (compact, mixed static)
	valueColumn int     // the value column, -1 when the shape has none

	nameType marshal.Type   // the type of the names in byName
	byName   map[string]int // named column bytes -> index in Table.Columns
	named    []namedRef
}

// namedRef is a named column: its legacy name and its index in
// Table.Columns.
type namedRef struct {
	name   []byte
	column int
}

// keyPart says how one legacy value (row key, super column name, column
// name) becomes primary key values: whole, or split into the components of
// a CompositeType.
type keyPart struct {
	what  string
	whole marshal.Type
	split int
}

// Placement is where one legacy cell goes: Key holds the values of the
// first len(Key) primary key columns of Table.Columns (partition key, then
// clustering); Column is the index in Table.Columns of the column that
// receives the cell's value.
type Placement struct {
	Key    [][]byte
	Column int
}

// Mixed reports whether a static-shape table also holds undeclared names
// in (clustering, value) rows.
func (m *Mapping) Mixed() bool { return m.mixed }

// Map places one legacy cell: its row key, its super column name (nil in
// Standard families) and its column name. dst.Key is reused (the values are
// appended to dst.Key[:0]). The values are sub-slices of the arguments;
// each is a valid value of its column's type. A CompositeType name with
// fewer components than the table has columns for fills the missing
// trailing clustering columns with empty values.
func (m *Mapping) Map(key, super, name []byte, dst *Placement) error {
	k, err := m.place(dst.Key[:0], key, super, name, dst)
	dst.Key = k
	if err != nil {
		return m.cellError(key, super, name, err)
	}
	return nil
}

// place appends the primary key values of a cell to k and sets
// dst.Column.
func (m *Mapping) place(k [][]byte, key, super, name []byte, dst *Placement) ([][]byte, error) {
	if len(name) == 0 {
		return k, fmt.Errorf("%w: empty column name", ErrInvalidCell)
	}
	var err error
	if k, err = m.key.appendValues(k, key); err != nil {
		return k, err
	}
	if m.Family.Def.Super {
		if len(super) == 0 {
			return k, fmt.Errorf("%w: a Super family cell needs a super column name", ErrInvalidCell)
		}
		if k, err = m.super.appendValues(k, super); err != nil {
			return k, err
		}
	} else if super != nil {
		return k, fmt.Errorf("%w: a Standard family cell has no super column name", ErrInvalidCell)
	}
	if m.byName != nil {
		col, found, err := m.lookup(name)
		switch {
		case err != nil:
			return k, err
		case found:
			// A static-shape column belongs to the partition (Key is the
			// partition key); a pivot column to the super column's row.
			dst.Column = col
			return k, nil
		case !m.mixed:
			return k, fmt.Errorf("%w: %s %s is not one of the %s columns (%s)", ErrUnknownColumn,
				m.nameWord(), strconv.Quote(m.nameType.String(name)), m.Table.Shape, m.namedList())
		}
	}
	if k, err = m.name.appendValues(k, name); err != nil {
		return k, err
	}
	dst.Column = m.valueColumn
	return k, nil
}

// lookup finds the named column of name: byte for byte, else (for types
// with several encodings of one value) by comparison.
func (m *Mapping) lookup(name []byte) (int, bool, error) {
	if i, ok := m.byName[string(name)]; ok {
		return i, true, nil
	}
	if err := m.nameType.Validate(name); err != nil {
		return 0, false, fmt.Errorf("%w: %s: %w", ErrInvalidCell, m.nameWord(), err)
	}
	for _, n := range m.named {
		if m.nameType.Compare(n.name, name) == 0 {
			return n.column, true, nil
		}
	}
	return 0, false, nil
}

func (m *Mapping) nameWord() string {
	if m.Family.Def.Super {
		return "subcolumn"
	}
	return "column"
}

// namedList names the named columns for error messages.
func (m *Mapping) namedList() string {
	const show = 8
	parts := make([]string, 0, min(len(m.named), show)+1)
	for i, n := range m.named {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(m.named)-show))
			break
		}
		parts = append(parts, m.nameType.String(n.name))
	}
	return strings.Join(parts, ", ")
}

// cellError names the family and the cell in err's text.
func (m *Mapping) cellError(key, super, name []byte, err error) error {
	f := m.Family
	var sb strings.Builder
	sb.WriteString("row key " + render(f.KeyValidator, key))
	if f.Def.Super {
		sb.WriteString(", super column " + render(f.Comparator, super))
	}
	sb.WriteString(", column " + render(nameTypeOf(f), name))
	return fmt.Errorf("family %s.%s: cell (%s): %w", f.Keyspace, f.Def.Name, sb.String(), err)
}

// render shows a value in its type's text form when valid, else in hex.
func render(t marshal.Type, b []byte) string {
	if len(b) > 0 && t.Validate(b) == nil {
		return strconv.Quote(t.String(b))
	}
	return "0x" + hex.EncodeToString(b)
}

// appendValues validates b and appends its column values to dst: b itself,
// or its components for a CompositeType (empty values for missing trailing
// components).
func (p keyPart) appendValues(dst [][]byte, b []byte) ([][]byte, error) {
	if len(b) == 0 {
		return dst, fmt.Errorf("%w: empty %s", ErrInvalidCell, p.what)
	}
	if err := p.whole.Validate(b); err != nil {
		return dst, fmt.Errorf("%w: %s: %w", ErrInvalidCell, p.what, err)
	}
	if p.split == 0 {
		return append(dst, b), nil
	}
	rest := b
	for i := 0; i < p.split; i++ {
		if len(rest) == 0 {
			dst = append(dst, b[len(b):])
			continue
		}
		if len(rest) < 3 {
			return dst, fmt.Errorf("%w: %s: truncated component %d", ErrInvalidCell, p.what, i)
		}
		n := int(rest[0])<<8 | int(rest[1])
		if len(rest) < 2+n+1 {
			return dst, fmt.Errorf("%w: %s: truncated component %d", ErrInvalidCell, p.what, i)
		}
		dst = append(dst, rest[2:2+n:2+n])
		rest = rest[2+n+1:]
	}
	if len(rest) != 0 {
		return dst, fmt.Errorf("%w: %s: more than %d components", ErrInvalidCell, p.what, p.split)
	}
	return dst, nil
}
