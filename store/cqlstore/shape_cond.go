package cqlstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/supercol"
)

// applyIfConverted is ApplyIf on a family converted to a static table
// (conditions apply to Standard families only, so never to a pivot
// table). A named column is a column of the partition's one CQL row (a
// pure static table) or a static column (a mixed one), so a condition on
// it goes on any statement of the transaction: unlike on a compact table,
// an expected named column need not be among the updates. An expected
// name of the compact part of a mixed table must be, as on a compact
// table. A name a pure static table has no column for names no cell:
// expected absent it holds, expected with a value it fails.
func (e *Engine) applyIfConverted(ctx context.Context, m *store.RowMutation, cond *store.Condition, current *store.SliceResult) (bool, error) {
	t := m.Table
	ti := info(t)
	ct := ti.conv
	// named finds the named column of a cell name: ok false for a name of
	// the compact part, errUnknown for a name no column holds.
	errUnknown := errors.New("no column")
	named := func(name []byte) (*namedCol, [][]byte, bool, error) {
		var pl supercol.Placement
		err := ct.mapping.Map(m.Key, nil, name, &pl)
		switch {
		case errors.Is(err, supercol.ErrUnknownColumn):
			return nil, nil, false, errUnknown
		case err != nil:
			return nil, nil, false, &store.CQLRefusedError{Message: err.Error()}
		}
		i, ok := ct.byColumn[pl.Column]
		if !ok {
			return nil, nil, false, nil
		}
		return &ct.named[i], pl.Key, true, nil
	}

	unlock := e.lockRow(ti.qname, m.Key)
	defer unlock()
	if cond.RowEmpty {
		// As on a compact table: a SERIAL read finds the row empty, then
		// the transaction requires every cell it could hold to be null
		// (the named columns) or every cell it writes (the compact part).
		if err := e.readCondition(ctx, m, cond, current); err != nil {
			return false, err
		}
		if len(current.Cells) > 0 {
			return false, nil
		}
	}

	// The statements, and for each the conditions only it can carry
	// (the compact part's value on the row it writes).
	type planned struct {
		s        stmt
		op       *store.Op // nil: a named column's statement
		cond     []string
		condArgs []any
	}
	var ps []planned
	for i := range m.Ops {
		op := &m.Ops[i]
		if op.Kind != store.OpPut && op.Kind != store.OpDeleteCell {
			return false, &store.CQLRefusedError{Message: fmt.Sprintf("column family %s: a conditional write puts and deletes columns only", t.Def.Name)}
		}
		n, pk, ok, err := named(op.Name)
		switch {
		case errors.Is(err, errUnknown):
			if op.Kind == store.OpDeleteCell {
				continue // no such cell can exist
			}
			return false, &store.CQLRefusedError{Message: fmt.Sprintf("column %s is not one of the columns of the %s table column family %s was converted to: the table has no column for it",
				t.Comparator.String(op.Name), ct.mapping.Table.Shape, t.Def.Name)}
		case err != nil:
			return false, err
		case ok:
			ps = append(ps, planned{s: namedStatement(ti, n, pk, op, false)})
		default:
			ps = append(ps, planned{op: op})
		}
	}
	// Conditions on named columns go on the first statement.
	var rowCond []string
	var rowArgs []any
	for _, ec := range cond.Columns {
		n, _, ok, err := named(ec.Name)
		switch {
		case errors.Is(err, errUnknown):
			if ec.Absent {
				continue
			}
			// A value is expected of a cell that cannot exist.
			return e.casOutcome(ctx, m, cond, current, false)
		case err != nil:
			return false, err
		case ok:
			if ec.Absent {
				rowCond = append(rowCond, n.col+" = null")
			} else {
				rowCond = append(rowCond, n.col+" = ?")
				rowArgs = append(rowArgs, raw(ec.Value))
			}
			continue
		}
		found := -1
		for i := range ps {
			if op := ps[i].op; op != nil && t.Comparator.Compare(op.Name, ec.Name) == 0 {
				found = i
				break
			}
		}
		if found < 0 {
			return false, fmt.Errorf("%w: %w", ErrUnsupportedCondition, &store.CQLRefusedError{Message: fmt.Sprintf(
				"cas on a CQL cluster: expected column %s is not among the updates; a lightweight transaction checks only the rows it writes", t.Comparator.String(ec.Name))})
		}
		if ec.Absent {
			ps[found].cond = append(ps[found].cond, ti.value+" = null")
		} else {
			ps[found].cond = append(ps[found].cond, ti.value+" = ?")
			ps[found].condArgs = append(ps[found].condArgs, raw(ec.Value))
		}
	}
	if cond.RowEmpty {
		for _, n := range ct.named {
			rowCond = append(rowCond, n.col+" = null")
		}
		for i := range ps {
			if op := ps[i].op; op != nil && op.Kind == store.OpPut {
				ps[i].cond = append(ps[i].cond, ti.value+" = null")
			}
		}
	}
	if len(ps) == 0 {
		// Nothing to write: the condition is checked alone.
		if err := e.readCondition(ctx, m, cond, current); err != nil {
			return false, err
		}
		return cond.Holds(t, current.Cells), nil
	}
	ps[0].cond = append(rowCond, ps[0].cond...)
	ps[0].condArgs = append(rowArgs, ps[0].condArgs...)
	ss := make([]stmt, len(ps))
	for i := range ps {
		p := &ps[i]
		ifs := ""
		if len(p.cond) > 0 {
			ifs = " IF " + strings.Join(p.cond, " AND ")
		}
		if p.op == nil {
			ss[i] = stmt{p.s.cql + ifs, append(p.s.args, p.condArgs...)}
			continue
		}
		s, err := opStatement(ti, m.Key, p.op, false, ifs)
		if err != nil {
			return false, fmt.Errorf("table %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
		ss[i] = stmt{s.cql, append(s.args, p.condArgs...)}
	}
	applied, err := e.execCAS(ctx, ss)
	if err != nil {
		return false, err
	}
	return e.casOutcome(ctx, m, cond, current, applied)
}
