package supercol

// NamedColumn is a legacy column name that has a CQL column of its own in
// a pivot or static table: Name in the bytes of the family's comparator
// (subcomparator in Super families), Column its index in Table.Columns.
type NamedColumn struct {
	Name   []byte
	Column int
}

// NamedColumns lists the named columns of the table in table order; a
// compact table has none.
func (m *Mapping) NamedColumns() []NamedColumn {
	out := make([]NamedColumn, len(m.named))
	for i, n := range m.named {
		out[i] = NamedColumn{Name: n.name, Column: n.column}
	}
	return out
}

// ValueColumn is the index in Table.Columns of the value column that holds
// the cells of undeclared names (compact and mixed static tables), or -1.
func (m *Mapping) ValueColumn() int { return m.valueColumn }
