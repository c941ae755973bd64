package cqlstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/thriftbridge/thriftbridge/store"
)

// ErrUnsupportedCondition is wrapped by ApplyIf's error for a condition
// with operations that a lightweight transaction cannot express: on a
// compact table, or the compact part of a mixed one, a column the
// mutation does not write (see the package documentation).
var ErrUnsupportedCondition = fmt.Errorf("%w: condition", ErrUnsupported)

// ApplyIf implements store.Engine with a lightweight transaction.
func (e *Engine) ApplyIf(ctx context.Context, m *store.RowMutation, cond *store.Condition, current *store.SliceResult) (bool, error) {
	t := m.Table
	if err := cond.Validate(t); err != nil {
		return false, err
	}
	if len(m.Ops) == 0 {
		// A pure check: a SERIAL read is linearizable (it completes any
		// transaction in flight), which is all the check needs.
		if err := e.readCondition(ctx, m, cond, current); err != nil {
			return false, err
		}
		return cond.Holds(t, current.Cells), nil
	}
	if !cond.RowEmpty && len(cond.Columns) == 0 {
		return true, e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{*m}})
	}
	ti := info(t)
	if ti.conv != nil {
		return e.applyIfConverted(ctx, m, cond, current)
	}
	// Writers of one row in this instance take turns: Paxos rounds that
	// contend for a partition retry and may time out, so the engine does
	// not make its own callers contend (other instances still may).
	unlock := e.lockRow(ti.qname, m.Key)
	defer unlock()
	conds := make([]string, len(m.Ops))
	condArgs := make([][]any, len(m.Ops))
	if cond.RowEmpty {
		// A SERIAL read finds the row empty (or not: then that is the
		// answer); the puts then go IF value = null, so that a cell
		// written meanwhile fails the transaction. A cell of the row the
		// mutation does not write, written meanwhile by another instance,
		// goes unseen: a lightweight transaction checks only the CQL rows
		// it writes.
		if err := e.readCondition(ctx, m, cond, current); err != nil {
			return false, err
		}
		if len(current.Cells) > 0 {
			return false, nil
		}
		puts := 0
		for i := range m.Ops {
			if m.Ops[i].Kind == store.OpPut {
				conds[i] = " IF " + ti.value + " = null"
				puts++
			}
		}
		if puts == 0 {
			return true, e.Apply(ctx, &store.Batch{Rows: []store.RowMutation{*m}})
		}
	}
	// Every expected column must be a cell the mutation writes or deletes:
	// its IF clause goes on that statement.
	for _, ec := range cond.Columns {
		found := -1
		for i := range m.Ops {
			op := &m.Ops[i]
			if (op.Kind == store.OpPut || op.Kind == store.OpDeleteCell) && t.Comparator.Compare(op.Name, ec.Name) == 0 {
				found = i
				break
			}
		}
		if found < 0 {
			return false, fmt.Errorf("%w: %w", ErrUnsupportedCondition, &store.CQLRefusedError{Message: fmt.Sprintf(
				"cas on a CQL cluster: expected column %s is not among the updates; a lightweight transaction checks only the cells it writes", t.Comparator.String(ec.Name))})
		}
		clause := " AND "
		if conds[found] == "" {
			clause = " IF "
		}
		if ec.Absent {
			conds[found] += clause + ti.value + " = null"
		} else {
			conds[found] += clause + ti.value + " = ?"
			condArgs[found] = append(condArgs[found], raw(ec.Value))
		}
	}
	var ss []stmt
	for i := range m.Ops {
		s, err := opStatement(ti, m.Key, &m.Ops[i], false, conds[i])
		if err != nil {
			return false, fmt.Errorf("table %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
		s.args = append(s.args, condArgs[i]...)
		ss = append(ss, s)
	}
	applied, err := e.execCAS(ctx, ss)
	if err != nil {
		return false, err
	}
	return e.casOutcome(ctx, m, cond, current, applied)
}

// execCAS runs the statements of a conditional write, one or a logged
// batch of several, as one lightweight transaction.
func (e *Engine) execCAS(ctx context.Context, ss []stmt) (bool, error) {
	var applied bool
	var err error
	serial, commit := e.lwtConsistency(ctx)
	if len(ss) == 1 {
		applied, err = e.session.Query(ss[0].cql, ss[0].args...).Consistency(commit).SerialConsistency(serial).MapScanCASContext(ctx, map[string]any{})
	} else {
		b := e.session.Batch(gocql.LoggedBatch).Consistency(commit).SerialConsistency(serial)
		for _, s := range ss {
			b.Query(s.cql, s.args...)
		}
		var iter *gocql.Iter
		applied, iter, err = b.MapExecCASContext(ctx, map[string]any{})
		if iter != nil {
			if cerr := iter.Close(); err == nil {
				err = cerr
			}
		}
	}
	if err != nil && !errors.Is(err, gocql.ErrNotFound) {
		return false, wrapErr("conditional write", err)
	}
	return applied, nil
}

// casOutcome reports a conditional write's outcome with the row's
// current state: the expected values when it applied, a read of the
// expected columns (SERIAL, so that it sees the transaction that won)
// when it did not.
func (e *Engine) casOutcome(ctx context.Context, m *store.RowMutation, cond *store.Condition, current *store.SliceResult, applied bool) (bool, error) {
	t := m.Table
	if applied {
		for _, ec := range cond.Columns {
			if !ec.Absent {
				current.Cells = append(current.Cells, store.Cell{Name: current.Keep(ec.Name), Value: current.Keep(nonNil(ec.Value))})
			}
		}
		sortByName(t, current.Cells)
		return true, nil
	}
	if err := e.readCondition(ctx, m, cond, current); err != nil {
		return false, err
	}
	return false, nil
}

// readCondition reads what the condition looks at (Condition.Reads) of
// the mutation's row into current, at SERIAL: linearizable, it completes
// any transaction in flight.
func (e *Engine) readCondition(ctx context.Context, m *store.RowMutation, cond *store.Condition, current *store.SliceResult) error {
	reads := cond.Reads()
	_, err := e.slice(ctx, m.Table, m.Key, &reads, current, false, true)
	return err
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func sortByName(t *store.Table, cells []store.Cell) {
	for i := 1; i < len(cells); i++ {
		for j := i; j > 0 && t.Comparator.Compare(cells[j-1].Name, cells[j].Name) > 0; j-- {
			cells[j-1], cells[j] = cells[j], cells[j-1]
		}
	}
}

// rowSeed seeds the hash that picks a row's lock stripe.
var rowSeed = maphash.MakeSeed()

func (e *Engine) lockRow(table string, key []byte) func() {
	var h maphash.Hash
	h.SetSeed(rowSeed)
	h.WriteString(table)
	h.WriteByte(0)
	h.Write(key)
	mu := &e.rowLocks[h.Sum64()%uint64(len(e.rowLocks))]
	mu.Lock()
	return mu.Unlock
}
