package supercol

import (
	"strings"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// Shape is the layout of the CQL3 table a family becomes.
type Shape string

const (
	// ShapeCompact is Cassandra's own view of a legacy family (what DROP
	// COMPACT STORAGE leaves): one CQL row per legacy cell, the column
	// name (and super column name) as clustering columns, and one value
	// column.
	ShapeCompact Shape = "compact"
	// ShapePivot turns each super column into one CQL row whose subcolumns
	// are typed regular columns.
	ShapePivot Shape = "pivot"
	// ShapeStatic turns each declared column of a Standard family into a
	// typed column; undeclared names, when present, go to a compact part
	// of the same table (the "mixed" form).
	ShapeStatic Shape = "static"
)

// ParseShape reads a shape name as given on a command line (compact,
// pivot, static or mixed; case and surrounding blanks ignored).
func ParseShape(s string) (Shape, bool) {
	switch sh := Shape(strings.ToLower(strings.TrimSpace(s))); sh {
	case ShapeCompact, ShapePivot, ShapeStatic, ShapeMixed:
		return sh, true
	}
	return "", false
}

// ColumnKind is the role of a column in the CQL3 table.
type ColumnKind int

const (
	PartitionKey ColumnKind = iota
	Clustering
	Static
	Regular
)

func (k ColumnKind) String() string {
	switch k {
	case PartitionKey:
		return "partition_key"
	case Clustering:
		return "clustering"
	case Static:
		return "static"
	case Regular:
		return "regular"
	}
	return "unknown"
}

// TableColumn is one column of the CQL table. Name is the identifier
// unquoted.
type TableColumn struct {
	Name string
	// Type is the column's type; for a clustering column taken from a
	// ReversedType(T) it is T, with Descending set.
	Type       marshal.Type
	Kind       ColumnKind
	Descending bool
}

// Index is a secondary index on one column (unquoted names; an empty Name
// lets the server choose one).
type Index struct {
	Name, Column string
}

// Table is the CQL table a family becomes.
type Table struct {
	Keyspace, Name string
	Shape          Shape
	// Reason explains why this shape was chosen.
	Reason string
	// Columns lists the partition key columns, then the clustering columns,
	// then the static and regular columns, in table order.
	Columns []TableColumn
	Counter bool
	Indexes []Index
	// Warnings list what the conversion cannot carry over exactly, e.g. a
	// type without a CQL equivalent kept as a custom type.
	Warnings []string
}

// QualifiedName is the keyspace-qualified table name, quoted as needed.
func (t *Table) QualifiedName() string {
	return QuoteIdent(t.Keyspace) + "." + QuoteIdent(t.Name)
}

// PrimaryKeyLen is the number of partition key and clustering columns.
func (t *Table) PrimaryKeyLen() int {
	n := 0
	for _, c := range t.Columns {
		if c.Kind == PartitionKey || c.Kind == Clustering {
			n++
		}
	}
	return n
}

// PartitionKeyLen is the number of partition key columns.
func (t *Table) PartitionKeyLen() int {
	n := 0
	for _, c := range t.Columns {
		if c.Kind == PartitionKey {
			n++
		}
	}
	return n
}

// ColumnIndex returns the position in Columns of the column with the given
// unquoted name, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// CreateTableCQL is the CREATE TABLE IF NOT EXISTS statement of the table,
// on one line and without a terminating semicolon. Clustering order is
// stated only when a clustering column is descending.
func (t *Table) CreateTableCQL() string {
	var sb strings.Builder
	sb.WriteString("CREATE TABLE IF NOT EXISTS ")
	sb.WriteString(t.QualifiedName())
	sb.WriteString(" (")
	var partition, clustering []string
	for _, c := range t.Columns {
		sb.WriteString(QuoteIdent(c.Name))
		sb.WriteByte(' ')
		sb.WriteString(c.Type.CQLType())
		switch c.Kind {
		case Static:
			sb.WriteString(" static")
		case PartitionKey:
			partition = append(partition, QuoteIdent(c.Name))
		case Clustering:
			clustering = append(clustering, QuoteIdent(c.Name))
		}
		sb.WriteString(", ")
	}
	sb.WriteString("PRIMARY KEY (")
	if len(partition) == 1 {
		sb.WriteString(partition[0])
	} else {
		sb.WriteString("(" + strings.Join(partition, ", ") + ")")
	}
	for _, c := range clustering {
		sb.WriteString(", " + c)
	}
	sb.WriteString("))")
	if order := t.clusteringOrder(); order != "" {
		sb.WriteString(" WITH CLUSTERING ORDER BY (" + order + ")")
	}
	return sb.String()
}

// clusteringOrder lists every clustering column with its direction, or is
// empty when all are ascending.
func (t *Table) clusteringOrder() string {
	var parts []string
	anyDesc := false
	for _, c := range t.Columns {
		if c.Kind != Clustering {
			continue
		}
		dir := " ASC"
		if c.Descending {
			dir = " DESC"
			anyDesc = true
		}
		parts = append(parts, QuoteIdent(c.Name)+dir)
	}
	if !anyDesc {
		return ""
	}
	return strings.Join(parts, ", ")
}

// CreateIndexCQL returns one CREATE INDEX IF NOT EXISTS statement per
// index, each on one line without a terminating semicolon.
func (t *Table) CreateIndexCQL() []string {
	out := make([]string, 0, len(t.Indexes))
	for _, ix := range t.Indexes {
		name := ""
		if ix.Name != "" {
			name = QuoteIdent(ix.Name) + " "
		}
		out = append(out, "CREATE INDEX IF NOT EXISTS "+name+"ON "+t.QualifiedName()+" ("+QuoteIdent(ix.Column)+")")
	}
	return out
}
