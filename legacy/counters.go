package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Add implements add: increments (or decrements) a counter.
func (h *Handler) Add(ctx context.Context, key []byte, parent *cassandra.ColumnParent, c *cassandra.CounterColumn, cl cassandra.ConsistencyLevel) error {
	t, err := h.writeTable(ctx, parent.ColumnFamily, true, key)
	if err != nil {
		return err
	}
	if err := validateCounterForWrite(t, cl); err != nil {
		return err
	}
	if err := validateWriteParent(t, parent, nonNil(c.Name)); err != nil {
		return err
	}
	return h.applyRow(ctx, "add", t, key, store.Op{Kind: store.OpCounterAdd, Super: superOf(t, parent.SuperColumn), Name: c.Name, Delta: c.Value})
}

// RemoveCounter implements remove_counter: a counter, a counter super
// column or a counter row, deleted at the server's time.
func (h *Handler) RemoveCounter(ctx context.Context, key []byte, path *cassandra.ColumnPath, cl cassandra.ConsistencyLevel) error {
	t, err := h.writeTable(ctx, path.ColumnFamily, true, key)
	if err != nil {
		return err
	}
	if err := validateColumnPathOrParent(t, path); err != nil {
		return err
	}
	if err := validateCounterForWrite(t, cl); err != nil {
		return err
	}
	return h.applyRow(ctx, "remove_counter", t, key, removalOp(path, h.timestampMicros()))
}
