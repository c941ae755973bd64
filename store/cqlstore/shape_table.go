package cqlstore

import (
	"fmt"
	"sort"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// convertedTable is what the engine keeps of a family converted to a pivot
// or static (pure or mixed) table: the mapping supercol gives its cells,
// rebuilt from the stored shape, and the named columns in the comparator's
// order of their legacy names.
type convertedTable struct {
	mapping *supercol.Mapping
	shape   supercol.Shape
	mixed   bool
	// named are the columns that hold one legacy name each, in the
	// comparator's (subcomparator's) order of the names.
	named []namedCol
	// byColumn finds a named column by its index in the mapping's table.
	byColumn map[int]int
	nameType marshal.Type // type of the names the named columns hold
}

// namedCol is one CQL column that holds one legacy name.
type namedCol struct {
	legacy []byte
	col    string // quoted
	static bool
	index  int // in mapping.Table.Columns
}

// legacyFamily is the supercol family of a legacy definition, as convert
// reads it from a source.
func legacyFamily(cqlKS string, def *store.TableDef) (*supercol.Family, error) {
	fd := supercol.FamilyDef{
		Name:             def.Name,
		Super:            def.Super,
		KeyValidator:     def.KeyValidator,
		Comparator:       def.Comparator,
		SubComparator:    def.SubComparator,
		DefaultValidator: def.DefaultValidator,
		KeyAlias:         string(def.KeyAlias),
		ValueAlias:       string(def.ValueAlias),
	}
	for _, a := range def.ColumnAliases {
		fd.ColumnAliases = append(fd.ColumnAliases, string(a))
	}
	if len(def.Columns) > 0 {
		t, err := store.NewTable(*def)
		if err != nil {
			return nil, err
		}
		nt := t.CellNameType()
		for _, c := range def.Columns {
			fd.Columns = append(fd.Columns, supercol.ColumnDef{Name: nt.String(c.Name), Validator: c.Validator})
		}
	}
	f, err := supercol.NewFamily(cqlKS, fd)
	if err != nil {
		return nil, fmt.Errorf("cqlstore: %w", err)
	}
	return f, nil
}

// rebuildMapping plans the table of a stored shape again, with a sample
// made of the legacy names its named columns hold (the names a conversion
// saw), and checks that the plan gives exactly the stored columns.
func rebuildMapping(cqlKS string, def *store.TableDef, sh *shapeDoc) (*supercol.Mapping, error) {
	m, err := planShape(cqlKS, def, sh)
	if err != nil {
		return nil, err
	}
	got := shapeOf(m)
	if len(got.Columns) != len(sh.Columns) {
		return nil, fmt.Errorf("cqlstore: family %s.%s: its %s table has %d columns; its definition gives %d", cqlKS, def.Name, sh.Shape, len(sh.Columns), len(got.Columns))
	}
	for i, c := range sh.Columns {
		g := got.Columns[i]
		if c.Name != g.Name || c.CQLType != g.CQLType || c.Kind != g.Kind || c.Descending != g.Descending || string(c.Legacy) != string(g.Legacy) {
			return nil, fmt.Errorf("cqlstore: family %s.%s: column %s of its %s table (%s %s) is not what its definition gives (%s %s %s)", cqlKS, def.Name, c.Name, sh.Shape, c.CQLType, c.Kind, g.Name, g.CQLType, g.Kind)
		}
	}
	return m, nil
}

// planShape plans the table of def in the shape of sh, with a sample made
// of the legacy names its named columns hold.
func planShape(cqlKS string, def *store.TableDef, sh *shapeDoc) (*supercol.Mapping, error) {
	f, err := legacyFamily(cqlKS, def)
	if err != nil {
		return nil, err
	}
	opts := supercol.Options{Shape: supercol.Shape(sh.Shape)}
	if sh.Shape == string(supercol.ShapeStatic) && sh.Mixed {
		opts.Shape = supercol.ShapeMixed
	}
	if !sh.Mixed {
		s := supercol.NewSample(f)
		for _, c := range sh.Columns {
			if c.Legacy != nil {
				s.Add([]byte{0}, c.Legacy)
			}
		}
		opts.Sample = s
	}
	m, err := supercol.Plan(f, opts)
	if err != nil {
		return nil, fmt.Errorf("cqlstore: family %s.%s: its %s table: %w", cqlKS, def.Name, sh.Shape, err)
	}
	return m, nil
}

// newConvertedTableInfo is newTableInfo for a pivot or static table.
func newConvertedTableInfo(cks string, t *store.Table, sh *shapeDoc) (*tableInfo, error) {
	m, err := rebuildMapping(cks, &t.Def, sh)
	if err != nil {
		return nil, err
	}
	info := &tableInfo{
		qname:    quote(cks) + "." + quote(t.Def.Name),
		shape:    sh,
		keyType:  t.KeyValidator,
		counter:  t.Counter,
		nameType: t.CellNameType(),
	}
	ct := &convertedTable{mapping: m, shape: m.Table.Shape, mixed: m.Mixed(), byColumn: map[int]int{}, nameType: t.CellNameType()}
	if t.Def.Super {
		info.superType = t.Comparator
	}
	for _, c := range m.Table.Columns {
		switch c.Kind {
		case supercol.PartitionKey:
			info.keyCols = append(info.keyCols, quote(c.Name))
		case supercol.Clustering:
			cc := clustCol{name: quote(c.Name), desc: c.Descending}
			if t.Def.Super {
				info.superCols = append(info.superCols, cc)
			} else {
				info.nameCols = append(info.nameCols, cc)
			}
		}
	}
	if vc := m.ValueColumn(); vc >= 0 {
		info.value = quote(m.Table.Columns[vc].Name)
	}
	for _, n := range m.NamedColumns() {
		c := m.Table.Columns[n.Column]
		ct.named = append(ct.named, namedCol{legacy: n.Name, col: quote(c.Name), static: c.Kind == supercol.Static, index: n.Column})
	}
	sort.SliceStable(ct.named, func(i, j int) bool { return ct.nameType.Compare(ct.named[i].legacy, ct.named[j].legacy) < 0 })
	for i, n := range ct.named {
		ct.byColumn[n.index] = i
	}
	info.conv = ct
	// The cells the shape keeps in its compact part (mixed) are written
	// as in a compact table.
	info.makeInserts()
	return info, nil
}
