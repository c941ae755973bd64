package legacy

import (
	"bytes"
	"context"
	"sort"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// putOp is the engine operation for one column; a column without a TTL
// gets the family's default_time_to_live.
func putOp(t *store.Table, super []byte, c *cassandra.Column) store.Op {
	ttl := t.DefaultTTL()
	if c.TTL != nil && *c.TTL > 0 {
		ttl = *c.TTL
	}
	return store.Op{
		Kind:         store.OpPut,
		Super:        super,
		Name:         c.Name,
		Value:        c.Value,
		Timestamp:    *c.Timestamp,
		HasTimestamp: true,
		TTL:          ttl,
	}
}

// Insert implements insert.
func (h *Handler) Insert(ctx context.Context, key []byte, parent *cassandra.ColumnParent, c *cassandra.Column, cl cassandra.ConsistencyLevel) error {
	t, err := h.writeTable(ctx, parent.ColumnFamily, false, key)
	if err != nil {
		return err
	}
	if err := validateWriteParent(t, parent, c.Name); err != nil {
		return err
	}
	if err := validateColumnData(t, parent.SuperColumn, c); err != nil {
		return err
	}
	if err := validateForWrite(cl); err != nil {
		return err
	}
	return h.applyRow(ctx, "insert", t, key, putOp(t, superOf(t, parent.SuperColumn), c))
}

// writeTable resolves the family of a single-row write, of a counter or
// not, and checks the row key: how insert, remove, add and remove_counter
// begin, in Cassandra's order.
func (h *Handler) writeTable(ctx context.Context, cf string, counter bool, key []byte) (*store.Table, error) {
	t, err := h.tableFor(ctx, cf, counter, ActionModify)
	if err != nil {
		return nil, err
	}
	if err := validateKey(t, key); err != nil {
		return nil, err
	}
	return t, nil
}

// validateWriteParent checks where a single column named name is written
// (insert, add): the parent, which must give a super column in a Super
// family, and the name.
func validateWriteParent(t *store.Table, parent *cassandra.ColumnParent, name []byte) error {
	if err := validateColumnParent(t, parent); err != nil {
		return err
	}
	if t.Def.Super && parent.SuperColumn == nil {
		return iref("missing mandatory super column name for super CF %s", parent.ColumnFamily)
	}
	return validateName(t, parent.SuperColumn, name)
}

// superOf drops a super column name given for a Standard family.
func superOf(t *store.Table, super []byte) []byte {
	if t.Def.Super {
		return super
	}
	return nil
}

func (h *Handler) apply(ctx context.Context, op string, b *store.Batch) error {
	return h.storageError(ctx, op, h.engine.Apply(ctx, b))
}

// rowWrite is the batch of a single-column write, allocated at once.
type rowWrite struct {
	batch store.Batch
	rows  [1]store.RowMutation
	ops   [1]store.Op
}

// applyRow applies one operation to the row key of t. Its batch comes
// from a sync.Pool (the struct is a few hundred bytes a call), and goes
// back to it, cleared, once the engine is done with it: after a write
// that did not fail, as with batch_mutate's operations.
func (h *Handler) applyRow(ctx context.Context, op string, t *store.Table, key []byte, o store.Op) error {
	w, _ := h.rowWrites.Get().(*rowWrite)
	if w == nil {
		w = new(rowWrite)
	}
	w.ops[0] = o
	w.rows[0] = store.RowMutation{Table: t, Key: key, Ops: w.ops[:]}
	w.batch.Rows = w.rows[:]
	if err := h.apply(ctx, op, &w.batch); err != nil {
		return err
	}
	*w = rowWrite{}
	h.rowWrites.Put(w)
	return nil
}

// Remove implements remove: a column, a super column or a whole row.
func (h *Handler) Remove(ctx context.Context, key []byte, path *cassandra.ColumnPath, ts int64, cl cassandra.ConsistencyLevel) error {
	t, err := h.writeTable(ctx, path.ColumnFamily, false, key)
	if err != nil {
		return err
	}
	if err := validateColumnPathOrParent(t, path); err != nil {
		return err
	}
	if err := validateForWrite(cl); err != nil {
		return err
	}
	return h.applyRow(ctx, "remove", t, key, removalOp(path, ts))
}

// removalOp is the deletion a (validated) removal path names.
func removalOp(path *cassandra.ColumnPath, ts int64) store.Op {
	op := store.Op{Timestamp: ts, HasTimestamp: true, Super: path.SuperColumn, Name: path.Column}
	switch {
	case path.SuperColumn == nil && path.Column == nil:
		op.Kind = store.OpDeleteRow
	case path.Column == nil:
		op.Kind = store.OpDeleteSuper
	default:
		op.Kind = store.OpDeleteCell
	}
	return op
}

// BatchMutate implements batch_mutate: every row is applied atomically.
func (h *Handler) BatchMutate(ctx context.Context, mutations map[string]map[string][]*cassandra.Mutation, cl cassandra.ConsistencyLevel) error {
	return h.batchMutate(ctx, "batch_mutate", mutations, cl, false)
}

// AtomicBatchMutate implements atomic_batch_mutate: all rows or none.
func (h *Handler) AtomicBatchMutate(ctx context.Context, mutations map[string]map[string][]*cassandra.Mutation, cl cassandra.ConsistencyLevel) error {
	return h.batchMutate(ctx, "atomic_batch_mutate", mutations, cl, true)
}

// batchMutate validates the whole batch before writing anything, so a
// rejected batch writes nothing.
func (h *Handler) batchMutate(ctx context.Context, op string, mutations map[string]map[string][]*cassandra.Mutation, cl cassandra.ConsistencyLevel, atomic bool) error {
	ks, err := sessionKeyspace(ctx)
	if err != nil {
		return err
	}
	now := h.timestampMicros()
	b := &store.Batch{Atomic: atomic}
	counters := false
	// The operations of every row share one array, sized beforehand: a
	// batch of many cells is one allocation, not a slice grown by
	// copying for each row.
	all := h.takeOps(countMutationOps(mutations))
	for _, key := range sortedKeys(mutations) {
		byTable := mutations[key]
		for _, cf := range sortedKeys(byTable) {
			t, err := h.tableIn(ks, cf)
			if err != nil {
				return err
			}
			if err := h.authorize(ctx, ks, cf, ActionModify); err != nil {
				return err
			}
			rowKey := []byte(key)
			if err := validateKey(t, rowKey); err != nil {
				return err
			}
			if t.Counter {
				if err := validateCounterForWrite(t, cl); err != nil {
					return err
				}
				counters = true
			}
			start := len(all)
			for _, m := range byTable[cf] {
				if m == nil {
					return ire("mutation must have one and only one of column_or_supercolumn or deletion")
				}
				if err := validateMutation(t, m); err != nil {
					return err
				}
				if all, err = appendMutationOps(all, t, m, now); err != nil {
					return err
				}
			}
			if len(all) > start {
				b.Rows = append(b.Rows, store.RowMutation{Table: t, Key: rowKey, Ops: all[start:len(all):len(all)]})
			}
		}
	}
	if atomic && counters {
		return ire("Counter mutations are not allowed in atomic batches")
	}
	if err := validateForWrite(cl); err != nil {
		return err
	}
	if len(b.Rows) == 0 {
		return nil
	}
	if err := h.apply(ctx, op, b); err != nil {
		return err
	}
	// The engine is done with the operations (an engine that gave up on a
	// call may still hold them: those are not reused).
	h.keepOps(all)
	return nil
}

// Operation arrays of batch_mutate are kept for reuse in a free list, not
// a sync.Pool, which the collector empties every few milliseconds under a
// write load: freeOpArrays of them, of at most keptOpArray operations.
const (
	freeOpArrays = 64
	keptOpArray  = 256
)

// takeOps returns an empty array of room for n operations.
func (h *Handler) takeOps(n int) []store.Op {
	select {
	case ops := <-h.freeOps:
		if cap(ops) >= n {
			return ops
		}
	default:
	}
	return make([]store.Op, 0, n)
}

// keepOps keeps an array of operations for another call, cleared, so
// that it holds on to no request's bytes.
func (h *Handler) keepOps(ops []store.Op) {
	if cap(ops) > keptOpArray {
		return
	}
	clear(ops)
	select {
	case h.freeOps <- ops[:0]:
	default:
	}
}

// countMutationOps returns how many engine operations the mutations of a
// batch_mutate make (appendMutationOps), for an unvalidated request: a
// bound for the allocation, not a promise.
func countMutationOps(mutations map[string]map[string][]*cassandra.Mutation) int {
	n := 0
	for _, byTable := range mutations {
		for _, ms := range byTable {
			for _, m := range ms {
				switch {
				case m == nil:
				case m.ColumnOrSupercolumn != nil && m.ColumnOrSupercolumn.SuperColumn != nil:
					n += len(m.ColumnOrSupercolumn.SuperColumn.Columns)
				case m.ColumnOrSupercolumn != nil && m.ColumnOrSupercolumn.CounterSuperColumn != nil:
					n += len(m.ColumnOrSupercolumn.CounterSuperColumn.Columns)
				case m.Deletion != nil && m.Deletion.Predicate != nil && m.Deletion.Predicate.ColumnNames != nil:
					n += len(m.Deletion.Predicate.ColumnNames)
				default:
					n++
				}
			}
		}
	}
	return n
}

// appendMutationOps appends the engine operations of one validated
// Mutation. now is the server timestamp counter deletions use.
func appendMutationOps(ops []store.Op, t *store.Table, m *cassandra.Mutation, now int64) ([]store.Op, error) {
	if c := m.ColumnOrSupercolumn; c != nil {
		switch {
		case c.Column != nil:
			return append(ops, putOp(t, nil, c.Column)), nil
		case c.SuperColumn != nil:
			for _, col := range c.SuperColumn.Columns {
				ops = append(ops, putOp(t, c.SuperColumn.Name, col))
			}
			return ops, nil
		case c.CounterColumn != nil:
			return append(ops, store.Op{Kind: store.OpCounterAdd, Name: c.CounterColumn.Name, Delta: c.CounterColumn.Value}), nil
		default:
			for _, col := range c.CounterSuperColumn.Columns {
				ops = append(ops, store.Op{Kind: store.OpCounterAdd, Super: c.CounterSuperColumn.Name, Name: col.Name, Delta: col.Value})
			}
			return ops, nil
		}
	}
	d := m.Deletion
	ts := now
	if !t.Counter {
		ts = *d.Timestamp
	}
	del := store.Op{Timestamp: ts, HasTimestamp: true}
	switch {
	case d.Predicate != nil && d.Predicate.ColumnNames != nil:
		for _, name := range d.Predicate.ColumnNames {
			op := del
			switch {
			case t.Def.Super && d.SuperColumn == nil:
				op.Kind, op.Super = store.OpDeleteSuper, name
			default:
				op.Kind, op.Super, op.Name = store.OpDeleteCell, d.SuperColumn, name
			}
			ops = append(ops, op)
		}
	case d.Predicate != nil && d.Predicate.SliceRange != nil:
		if d.SuperColumn != nil {
			return nil, ire("Cannot delete a range of subcolumns in a super column")
		}
		op := del
		op.Kind, op.Start, op.Finish = store.OpDeleteRange, d.Predicate.SliceRange.Start, d.Predicate.SliceRange.Finish
		ops = append(ops, op)
	case d.SuperColumn != nil:
		op := del
		op.Kind, op.Super = store.OpDeleteSuper, d.SuperColumn
		ops = append(ops, op)
	default:
		op := del
		op.Kind = store.OpDeleteRow
		ops = append(ops, op)
	}
	return ops, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare([]byte(keys[i]), []byte(keys[j])) < 0 })
	return keys
}

// Truncate implements truncate: every row of the family goes at once.
func (h *Handler) Truncate(ctx context.Context, cf string) error {
	t, err := h.tableAccess(ctx, cf, ActionModify)
	if err != nil {
		return err
	}
	if err := h.engine.Truncate(ctx, t.Def.Keyspace, t.Def.Name); err != nil {
		return h.storageError(ctx, "truncate", err)
	}
	return nil
}
