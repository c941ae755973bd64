package supercol

import (
	"fmt"

	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// FamilyDef describes a legacy column family with type names as Thrift's
// CfDef carries them (short or fully qualified marshal class names). It is
// the JSON form of --schema files and fixtures.
type FamilyDef struct {
	Name             string      `json:"name"`
	Super            bool        `json:"super,omitempty"`
	KeyValidator     string      `json:"key_validation_class,omitempty"`
	Comparator       string      `json:"comparator_type,omitempty"`
	SubComparator    string      `json:"subcomparator_type,omitempty"`
	DefaultValidator string      `json:"default_validation_class,omitempty"`
	Columns          []ColumnDef `json:"column_metadata,omitempty"`
	KeyAlias         string      `json:"key_alias,omitempty"`
	// KeyAliases names the partition key columns in order, one per
	// component of a CompositeType key (Cassandra 1.2's key_aliases, the
	// partition key of a table created through CQL); KeyAlias, when set,
	// names the first.
	KeyAliases    []string `json:"key_aliases,omitempty"`
	ColumnAliases []string `json:"column_aliases,omitempty"`
	ValueAlias    string   `json:"value_alias,omitempty"`
	// DefaultTTL is default_time_to_live in seconds (0: none).
	DefaultTTL int32 `json:"default_time_to_live,omitempty"`
}

// ColumnDef is one declared column (column_metadata). Name is the column
// name as text in the comparator's string form (marshal.Type.FromString).
// Under CompositeType and DynamicCompositeType comparators, declared names are
// not used for mapping.
type ColumnDef struct {
	Name      string `json:"name"`
	Validator string `json:"validation_class"`
	// IndexName is set when the column has a KEYS index.
	IndexName string `json:"index_name,omitempty"`
}

// KeyspaceDef is a legacy keyspace: its name and families.
type KeyspaceDef struct {
	Name     string      `json:"name"`
	Families []FamilyDef `json:"families"`
}

// Family is a parsed FamilyDef.
type Family struct {
	Keyspace string
	Def      FamilyDef

	KeyValidator     marshal.Type
	Comparator       marshal.Type
	SubComparator    marshal.Type // nil unless Super
	DefaultValidator marshal.Type
	Columns          []Column
}

// Column is a parsed declared column.
type Column struct {
	Name      []byte // in comparator (Standard) or subcomparator (Super) bytes
	Validator marshal.Type
	IndexName string
}

// Counter reports whether the family holds counters.
func (f *Family) Counter() bool { return marshal.IsCounter(f.DefaultValidator) }

// NewFamily parses def; missing types default as in Cassandra (BytesType).
func NewFamily(keyspace string, def FamilyDef) (*Family, error) {
	f := &Family{Keyspace: keyspace, Def: def}
	parse := func(what, name string) (marshal.Type, error) {
		if name == "" {
			name = "BytesType"
		}
		t, err := marshal.Parse(name)
		if err != nil {
			return nil, fmt.Errorf("family %s.%s: %s %q: %w", keyspace, def.Name, what, name, err)
		}
		return t, nil
	}
	var err error
	if f.KeyValidator, err = parse("key_validation_class", def.KeyValidator); err != nil {
		return nil, err
	}
	if f.Comparator, err = parse("comparator_type", def.Comparator); err != nil {
		return nil, err
	}
	if f.DefaultValidator, err = parse("default_validation_class", def.DefaultValidator); err != nil {
		return nil, err
	}
	nameType := f.Comparator
	if def.Super {
		if f.SubComparator, err = parse("subcomparator_type", def.SubComparator); err != nil {
			return nil, err
		}
		nameType = f.SubComparator
	}
	for _, c := range def.Columns {
		v, err := parse("validation_class of column "+c.Name, c.Validator)
		if err != nil {
			return nil, err
		}
		name, err := nameType.FromString(c.Name)
		if err != nil {
			return nil, fmt.Errorf("family %s.%s: column name %q is not a %s: %w", keyspace, def.Name, c.Name, nameType.Name(), err)
		}
		f.Columns = append(f.Columns, Column{Name: name, Validator: v, IndexName: c.IndexName})
	}
	return f, nil
}
