package cqlstore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// convertedStatements turns one row mutation of a pivot or static table
// into statements. A cell whose name has a CQL column of its own is
// written to that column (UPDATE ... SET col = ?, on the partition for a
// static column, on the super column's row in a pivot table); any other
// name goes to the compact part of a mixed table as in a compact table,
// and is refused where the table has none. Deletions of rows, super
// columns and ranges of super column names are the compact table's.
func convertedStatements(m *store.RowMutation) ([]stmt, error) {
	ti := info(m.Table)
	out := make([]stmt, 0, len(m.Ops))
	for i := range m.Ops {
		ss, err := convertedOp(ti, m.Key, &m.Ops[i])
		if err != nil {
			return nil, fmt.Errorf("table %s.%s: %w", m.Table.Def.Keyspace, m.Table.Def.Name, err)
		}
		out = append(out, ss...)
	}
	return out, nil
}

func convertedOp(ti *tableInfo, key []byte, op *store.Op) ([]stmt, error) {
	ct := ti.conv
	compact := func() ([]stmt, error) {
		s, err := opStatement(ti, key, op, true, "")
		if err != nil {
			return nil, err
		}
		return []stmt{s}, nil
	}
	switch op.Kind {
	case store.OpPut, store.OpDeleteCell, store.OpCounterAdd, store.OpCounterDelete:
		if op.Kind == store.OpCounterDelete && len(op.Name) == 0 {
			return compact()
		}
		if ti.superType != nil && len(op.Super) == 0 {
			return nil, errors.New("a Super family cell needs a super column name")
		}
		var pl supercol.Placement
		err := ct.mapping.Map(key, op.Super, op.Name, &pl)
		switch {
		case errors.Is(err, supercol.ErrUnknownColumn):
			if op.Kind == store.OpDeleteCell || op.Kind == store.OpCounterDelete {
				return nil, nil // no such cell can exist
			}
			return nil, &store.CQLRefusedError{Message: fmt.Sprintf("%v: the %s table the family was converted to has no column for it", err, ct.mapping.Table.Shape)}
		case err != nil:
			return nil, &store.CQLRefusedError{Message: err.Error()}
		}
		i, named := ct.byColumn[pl.Column]
		if !named {
			return compact() // the compact part of a mixed table
		}
		return []stmt{namedStatement(ti, &ct.named[i], pl.Key, op, true)}, nil
	case store.OpDeleteRange:
		if ti.superType != nil || (len(op.Start) == 0 && len(op.Finish) == 0) {
			return compact()
		}
		b := makeBounds(ti.nameType, op.Start, op.Finish, false)
		var cols []string
		for _, n := range ct.named {
			if b.holds(ti.nameType.AppendKey(nil, n.legacy)) {
				cols = append(cols, n.col)
			}
		}
		var out []stmt
		if len(cols) > 0 {
			var w where
			if err := w.key(ti, key); err != nil {
				return nil, err
			}
			u, args := usingTimestamp(ti, op.Timestamp)
			out = append(out, stmt{"DELETE " + strings.Join(cols, ", ") + " FROM " + ti.qname + u + w.sb.String(), append(args, w.args...)})
		}
		if ti.value != "" {
			s, err := compact()
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return compact()
}

// namedStatement writes or deletes one named column; pk holds the values
// of the primary key columns that address it (the partition key, and the
// super column name in a pivot table). withTS: at the operation's
// timestamp; a statement of a lightweight transaction has none.
func namedStatement(ti *tableInfo, n *namedCol, pk [][]byte, op *store.Op, withTS bool) stmt {
	var w where
	cols := append(append([]string{}, ti.keyCols...), superColNames(ti)...)
	for i, v := range pk {
		w.eq(cols[i], v)
	}
	var u string
	var args []any
	if withTS {
		u, args = usingTimestamp(ti, op.Timestamp)
	}
	switch op.Kind {
	case store.OpPut:
		if op.TTL > 0 {
			if u == "" {
				u = " USING TTL ?"
			} else {
				u += " AND TTL ?"
			}
			args = append(args, op.TTL)
		}
		return stmt{"UPDATE " + ti.qname + u + " SET " + n.col + " = ?" + w.sb.String(), append(append(args, raw(op.Value)), w.args...)}
	case store.OpCounterAdd:
		return stmt{"UPDATE " + ti.qname + " SET " + n.col + " = " + n.col + " + ?" + w.sb.String(), append([]any{op.Delta}, w.args...)}
	default: // OpDeleteCell, OpCounterDelete
		return stmt{"DELETE " + n.col + " FROM " + ti.qname + u + w.sb.String(), append(args, w.args...)}
	}
}

func superColNames(ti *tableInfo) []string {
	out := make([]string, len(ti.superCols))
	for i, c := range ti.superCols {
		out[i] = c.name
	}
	return out
}

// usingTimestamp is the USING TIMESTAMP clause of a write and its bound
// value (none in counter tables, whose statements CQL refuses a
// timestamp); a bind marker, so that the driver prepares each statement
// text once.
func usingTimestamp(ti *tableInfo, ts int64) (string, []any) {
	if ti.counter {
		return "", nil
	}
	return " USING TIMESTAMP ?", []any{ts}
}
