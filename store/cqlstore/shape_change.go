package cqlstore

import (
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
)

// convertedChange is what system_update_column_family may do to a family
// converted to a pivot or static table: change its options (the table
// stays as it is), and declare new columns of a table without a compact
// part (a pure static or a pivot table), which the table gains as typed
// columns: no cell of such a name can exist yet, since the table refused
// them. It returns the shape to record and the columns to add; any other
// change of the table's columns (a removed or retyped declared column, a
// new one in a mixed table, whose compact part may hold cells of that
// name) is refused with a *store.CQLRefusedError.
func convertedChange(cks string, def *store.TableDef, have *shapeDoc) (*shapeDoc, []columnDoc, error) {
	if _, err := rebuildMapping(cks, def, have); err == nil {
		return have, nil, nil
	}
	refuse := func(why string) (*shapeDoc, []columnDoc, error) {
		return nil, nil, &store.CQLRefusedError{Message: fmt.Sprintf("column family %s was converted to a %s table: %s; system_update_column_family may change its options and declare new columns of a table without a compact part",
			def.Name, shapeName(have), why)}
	}
	// The new definition planned as the table was: the same shape, the
	// names it holds as the sample.
	next := *have
	next.Columns = nil
	for _, c := range have.Columns {
		if c.Legacy != nil {
			next.Columns = append(next.Columns, c)
		}
	}
	m, err := planShape(cks, def, &next)
	if err != nil {
		return refuse(err.Error())
	}
	want := shapeOf(m)
	if want.Mixed != have.Mixed || want.Shape != have.Shape {
		return refuse("the new definition leaves out a column the table holds")
	}
	old := map[string]columnDoc{}
	for _, c := range have.Columns {
		old[c.Name] = c
	}
	var add []columnDoc
	for _, c := range want.Columns {
		o, ok := old[c.Name]
		switch {
		case ok && o.CQLType == c.CQLType && o.Kind == c.Kind && o.Descending == c.Descending && string(o.Legacy) == string(c.Legacy):
			delete(old, c.Name)
		case ok:
			return refuse(fmt.Sprintf("its column %s would become %s %s (CQL cannot change a column)", c.Name, c.CQLType, c.Kind))
		case c.Legacy == nil || c.Kind != "regular" || have.Mixed:
			return refuse(fmt.Sprintf("a new column %s would be %s in a table whose cells of that name may exist elsewhere", c.Name, c.Kind))
		default:
			add = append(add, c)
		}
	}
	if len(old) > 0 {
		var names []string
		for n := range old {
			names = append(names, n)
		}
		return refuse("the new definition leaves out its columns " + strings.Join(names, ", "))
	}
	return want, add, nil
}

// shapeName names a stored shape for messages.
func shapeName(sh *shapeDoc) string {
	if sh.Mixed {
		return "mixed static"
	}
	return sh.Shape
}
