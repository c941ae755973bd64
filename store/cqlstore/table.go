package cqlstore

import (
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// tableInfo is what the engine keeps with a family (store.Table.Backend):
// its CQL table and the statements' column lists.
type tableInfo struct {
	qname string
	shape *shapeDoc

	keyCols   []string // partition key columns, quoted
	keyType   marshal.Type
	superCols []clustCol // clustering columns of the super column name
	nameCols  []clustCol // clustering columns of the cell name
	value     string     // the value column, quoted
	counter   bool
	superType marshal.Type // comparator of super column names (nil: Standard)
	nameType  marshal.Type // comparator of cell names
	// conv is set for a family converted to a pivot or static table
	// (shape_*.go); nil for the compact table.
	conv *convertedTable
	// inserts are the INSERTs of a cell, [with timestamp][with TTL]
	// (compact tables); insertArgs bounds their values.
	inserts    [2][2]string
	insertArgs int
	// selected is what a slice selects (clustering columns, the value,
	// its writetime and TTL); reversedOrder the ORDER BY of a reversed
	// slice (compact tables).
	selected      string
	reversedOrder string
}

type clustCol struct {
	name string // quoted
	desc bool
}

func newTableInfo(cks string, t *store.Table, sh *shapeDoc) (*tableInfo, error) {
	if sh.Shape != string(supercol.ShapeCompact) {
		return newConvertedTableInfo(cks, t, sh)
	}
	info := &tableInfo{
		qname:    quote(cks) + "." + quote(t.Def.Name),
		shape:    sh,
		keyType:  t.KeyValidator,
		counter:  t.Counter,
		nameType: t.CellNameType(),
	}
	nSuper := 0
	if t.Def.Super {
		info.superType = t.Comparator
		nSuper = len(componentsOf(t.Comparator))
	}
	nName := len(componentsOf(info.nameType))
	clust := 0
	for _, c := range sh.Columns {
		switch c.Kind {
		case "partition_key":
			info.keyCols = append(info.keyCols, quote(c.Name))
		case "clustering":
			cc := clustCol{name: quote(c.Name), desc: c.Descending}
			if clust < nSuper {
				info.superCols = append(info.superCols, cc)
			} else {
				info.nameCols = append(info.nameCols, cc)
			}
			clust++
		case "regular":
			info.value = quote(c.Name)
		default:
			return nil, fmt.Errorf("cqlstore: table %s: column %s of kind %s in a compact table", info.qname, c.Name, c.Kind)
		}
	}
	if len(info.keyCols) != len(componentsOf(t.KeyValidator)) || len(info.superCols) != nSuper || len(info.nameCols) != nName || info.value == "" {
		return nil, fmt.Errorf("cqlstore: table %s: its columns do not fit the definition of %s.%s", info.qname, t.Def.Keyspace, t.Def.Name)
	}
	info.makeInserts()
	info.makeSelects()
	return info, nil
}

// makeInserts writes the table's INSERT statements once: every write of a
// cell has one of these four texts, only the bound values are its own.
func (ti *tableInfo) makeInserts() {
	cols := append([]string{}, ti.keyCols...)
	for _, c := range ti.superCols {
		cols = append(cols, c.name)
	}
	for _, c := range ti.nameCols {
		cols = append(cols, c.name)
	}
	cols = append(cols, ti.value)
	q := "INSERT INTO " + ti.qname + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	ti.inserts = [2][2]string{
		{q, q + " USING TTL ?"},
		{q + " USING TIMESTAMP ?", q + " USING TIMESTAMP ? AND TTL ?"},
	}
	ti.insertArgs = len(cols) + 2
}

// makeSelects writes once what the reads of the table select and the
// order of a reversed slice: a read then builds only its WHERE clause.
func (ti *tableInfo) makeSelects() {
	var cols, order []string
	for _, c := range append(append([]clustCol{}, ti.superCols...), ti.nameCols...) {
		cols = append(cols, c.name)
		dir := " DESC"
		if c.desc {
			dir = " ASC"
		}
		order = append(order, c.name+dir)
	}
	cols = append(cols, ti.value)
	if !ti.counter {
		cols = append(cols, "writetime("+ti.value+")", "ttl("+ti.value+")")
	}
	ti.selected = strings.Join(cols, ", ")
	ti.reversedOrder = " ORDER BY " + strings.Join(order, ", ")
}

func info(t *store.Table) *tableInfo { return t.Backend.(*tableInfo) }

// split returns the column values of a key or name of type t: b itself,
// or the components of a CompositeType (empty values for missing trailing
// components).
func split(t marshal.Type, b []byte) ([][]byte, error) {
	c, ok := t.(*marshal.Composite)
	if !ok {
		return [][]byte{b}, nil
	}
	out := make([][]byte, 0, len(c.Components()))
	err := eachPart(c, b, func(part []byte) { out = append(out, part) })
	return out, err
}

// appendParts is split appending the column values to args as bound
// values, without a slice of its own.
func appendParts(args []any, t marshal.Type, b []byte) ([]any, error) {
	c, ok := t.(*marshal.Composite)
	if !ok {
		return append(args, raw(b)), nil
	}
	err := eachPart(c, b, func(part []byte) { args = append(args, raw(part)) })
	return args, err
}

// eachPart calls f with each component value of the CompositeType value
// b, an empty one for each missing trailing component.
func eachPart(c *marshal.Composite, b []byte, f func(part []byte)) error {
	n := len(c.Components())
	rest := b
	for i := 0; i < n; i++ {
		if len(rest) == 0 {
			f([]byte{})
			continue
		}
		if len(rest) < 3 {
			return fmt.Errorf("cqlstore: truncated component %d of %x", i, b)
		}
		l := int(rest[0])<<8 | int(rest[1])
		if len(rest) < 2+l+1 {
			return fmt.Errorf("cqlstore: truncated component %d of %x", i, b)
		}
		f(rest[2 : 2+l])
		rest = rest[2+l+1:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("cqlstore: %x has more than %d components", b, n)
	}
	return nil
}

// join is split's inverse: the legacy value of column values.
func join(t marshal.Type, parts [][]byte) []byte {
	if _, ok := t.(*marshal.Composite); !ok {
		return parts[0]
	}
	return composite(nil, parts)
}

// joinName is the legacy name of a cell's or super column's clustering
// values: join's, without the empty trailing components that stand for
// the components a shorter name lacks (CQL has no null clustering value),
// so that a name written with fewer components reads back as written. A
// name written with empty trailing components reads back without them.
func joinName(t marshal.Type, parts [][]byte) []byte {
	if isComposite(t) {
		for len(parts) > 1 && len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1]
		}
	}
	return join(t, parts)
}

// normalName is the name a name is stored and read back as (see
// joinName); a name that does not parse stays as it is.
func normalName(t marshal.Type, name []byte) []byte {
	if !isComposite(t) {
		return name
	}
	parts, err := split(t, name)
	if err != nil {
		return name
	}
	return joinName(t, parts)
}

func isComposite(t marshal.Type) bool {
	_, ok := t.(*marshal.Composite)
	return ok
}

// where builds "WHERE k = ? [AND c = ? ...]" for the key and the leading
// clustering columns, appending the bound values to args.
type where struct {
	sb   strings.Builder
	args []any
}

func (w *where) eq(col string, v []byte) {
	if w.sb.Len() == 0 {
		w.sb.WriteString(" WHERE ")
	} else {
		w.sb.WriteString(" AND ")
	}
	w.sb.WriteString(col)
	w.sb.WriteString(" = ?")
	w.args = append(w.args, raw(v))
}

func (w *where) rel(col, op string, v []byte) {
	w.sb.WriteString(" AND ")
	w.sb.WriteString(col)
	w.sb.WriteString(" " + op + " ?")
	w.args = append(w.args, raw(v))
}

func (w *where) key(ti *tableInfo, key []byte) error {
	parts, err := split(ti.keyType, key)
	if err != nil {
		return err
	}
	// Room for the usual clause (key, names or a range, a limit) at once,
	// not by doubling.
	w.sb.Grow(128)
	if w.args == nil {
		w.args = make([]any, 0, len(ti.keyCols)+4)
	}
	for i, c := range ti.keyCols {
		w.eq(c, parts[i])
	}
	return nil
}

func (w *where) names(cols []clustCol, t marshal.Type, name []byte) error {
	parts, err := split(t, name)
	if err != nil {
		return err
	}
	for i, c := range cols {
		w.eq(c.name, parts[i])
	}
	return nil
}

// compositeRange restricts the clustering columns cols (a CompositeType
// name, one column per component) to the names between start and finish
// (either empty: open), CompositeType slice bounds whose last component's
// end-of-component byte says where the bound falls around the names that
// begin with its components. A name of fewer components is stored with
// empty trailing components, the smallest value of every type, so:
//
//	start, EOC <= 0: (c1..ck) >= (v1..vk)   every name with the prefix
//	start, EOC > 0:  (c1..ck) > (v1..vk)    none of them
//	end, EOC > 0:    (c1..ck) <= (v1..vk)   every name with the prefix
//	end, EOC < 0:    (c1..ck) < (v1..vk)    none of them
//	end, EOC = 0:    (c1..cn) <= (v1..vk, '', ...)  the prefix name itself
//
// Relations compare in clustering order, which is the comparator's, DESC
// components included.
func (w *where) compositeRange(cols []clustCol, start, finish []byte) error {
	rel := func(b []byte, isStart bool) error {
		parts, eoc, err := boundParts(b)
		if err != nil {
			return err
		}
		if len(parts) > len(cols) {
			return fmt.Errorf("cqlstore: bound %x has more than %d components", b, len(cols))
		}
		op := ">="
		switch {
		case isStart && eoc > 0:
			op = ">"
		case !isStart && eoc > 0:
			op = "<="
		case !isStart && eoc < 0:
			op = "<"
		case !isStart:
			op = "<="
			for len(parts) < len(cols) {
				parts = append(parts, []byte{})
			}
		}
		names := make([]string, len(parts))
		marks := make([]string, len(parts))
		for i := range parts {
			names[i], marks[i] = cols[i].name, "?"
			w.args = append(w.args, raw(parts[i]))
		}
		w.sb.WriteString(" AND (" + strings.Join(names, ", ") + ") " + op + " (" + strings.Join(marks, ", ") + ")")
		return nil
	}
	if len(start) > 0 {
		if err := rel(start, true); err != nil {
			return err
		}
	}
	if len(finish) > 0 {
		return rel(finish, false)
	}
	return nil
}

// boundParts reads the components of a CompositeType slice bound and the
// end-of-component byte of its last one, as a signed number.
func boundParts(b []byte) ([][]byte, int8, error) {
	var parts [][]byte
	var eoc int8
	for rest := b; len(rest) > 0; {
		if len(rest) < 3 {
			return nil, 0, fmt.Errorf("cqlstore: truncated bound %x", b)
		}
		l := int(rest[0])<<8 | int(rest[1])
		if len(rest) < 2+l+1 {
			return nil, 0, fmt.Errorf("cqlstore: truncated bound %x", b)
		}
		parts = append(parts, rest[2:2+l])
		eoc = int8(rest[2+l])
		rest = rest[2+l+1:]
	}
	return parts, eoc, nil
}
