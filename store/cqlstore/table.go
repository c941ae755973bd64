package cqlstore

import (
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
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
}

type clustCol struct {
	name string // quoted
	desc bool
}

func newTableInfo(cks string, t *store.Table, sh *shapeDoc) (*tableInfo, error) {
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
	return info, nil
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
	n := len(c.Components())
	out := make([][]byte, 0, n)
	rest := b
	for i := 0; i < n; i++ {
		if len(rest) == 0 {
			out = append(out, []byte{})
			continue
		}
		if len(rest) < 3 {
			return nil, fmt.Errorf("cqlstore: truncated component %d of %x", i, b)
		}
		l := int(rest[0])<<8 | int(rest[1])
		if len(rest) < 2+l+1 {
			return nil, fmt.Errorf("cqlstore: truncated component %d of %x", i, b)
		}
		out = append(out, rest[2:2+l])
		rest = rest[2+l+1:]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("cqlstore: %x has more than %d components", b, n)
	}
	return out, nil
}

// join is split's inverse: the legacy value of column values.
func join(t marshal.Type, parts [][]byte) []byte {
	if _, ok := t.(*marshal.Composite); !ok {
		return parts[0]
	}
	return composite(nil, parts)
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
