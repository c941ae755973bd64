package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Add implements add: increments (or decrements) a counter.
func (h *Handler) Add(ctx context.Context, key []byte, parent *cassandra.ColumnParent, c *cassandra.CounterColumn, cl cassandra.ConsistencyLevel) error {
	t, err := h.tableFor(ctx, parent.ColumnFamily, true)
	if err != nil {
		return err
	}
	if err := validateKey(t, key); err != nil {
		return err
	}
	if err := validateCounterForWrite(t, cl); err != nil {
		return err
	}
	if err := validateColumnParent(t, parent); err != nil {
		return err
	}
	if t.Def.Super && parent.SuperColumn == nil {
		return iref("missing mandatory super column name for super CF %s", parent.ColumnFamily)
	}
	if err := validateName(t, parent.SuperColumn, nonNil(c.Name)); err != nil {
		return err
	}
	op := store.Op{Kind: store.OpCounterAdd, Super: superOf(t, parent.SuperColumn), Name: c.Name, Delta: c.Value}
	return h.apply(ctx, "add", &store.Batch{Rows: []store.RowMutation{{Table: t, Key: key, Ops: []store.Op{op}}}})
}

// RemoveCounter implements remove_counter: a counter, a counter super
// column or a counter row, deleted at the server's time.
func (h *Handler) RemoveCounter(ctx context.Context, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) error {
	t, err := h.tableFor(ctx, path.ColumnFamily, true)
	if err != nil {
		return err
	}
	if err := validateKey(t, key); err != nil {
		return err
	}
	if err := validateColumnPathOrParent(t, path); err != nil {
		return err
	}
	if err := validateCounterForWrite(t, cl); err != nil {
		return err
	}
	op := removalOp(path, h.timestampMicros())
	return h.apply(ctx, "remove_counter", &store.Batch{Rows: []store.RowMutation{{Table: t, Key: key, Ops: []store.Op{op}}}})
}
