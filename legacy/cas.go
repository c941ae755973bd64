package legacy

import (
	"context"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/thrift/gen-go/cassandra"
)

// Cas implements cas: on one row, if the expected columns hold (all live
// with equal values; an empty list means the row has no live columns),
// apply the updates, atomically with the check. Otherwise return the
// current values of the expected columns.
func (h *Handler) Cas(ctx context.Context, key []byte, cf string, expected, updates []*cassandra.Column, serialCL, commitCL cassandra.ConsistencyLevel) (*cassandra.CASResult_, error) {
	t, err := h.tableFor(ctx, cf, false, ActionModify, ActionSelect)
	if err != nil {
		return nil, err
	}
	if err := validateKey(t, key); err != nil {
		return nil, err
	}
	if t.Def.Super {
		return nil, ire("CAS does not support supercolumns")
	}
	var ops []store.Op
	for _, c := range updates {
		if c == nil {
			return nil, ire("update columns must not be null")
		}
		if err := validateName(t, nil, c.Name); err != nil {
			return nil, err
		}
		if err := validateColumnData(t, nil, c); err != nil {
			return nil, err
		}
		ops = append(ops, putOp(t, nil, c))
	}
	cond := &store.Condition{RowEmpty: len(expected) == 0}
	for _, c := range expected {
		if c == nil {
			return nil, ire("expected columns must not be null")
		}
		if err := validateName(t, nil, c.Name); err != nil {
			return nil, err
		}
		// An expected column without a value must be absent.
		cond.Columns = append(cond.Columns, store.ExpectedColumn{Name: c.Name, Value: c.Value, Absent: c.Value == nil})
	}
	if serialCL != cassandra.ConsistencyLevel_SERIAL && serialCL != cassandra.ConsistencyLevel_LOCAL_SERIAL {
		return nil, iref("Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL")
	}
	if commitCL == cassandra.ConsistencyLevel_SERIAL || commitCL == cassandra.ConsistencyLevel_LOCAL_SERIAL {
		return nil, iref("Invalid consistency for conditional update commit. It cannot be %s", commitCL)
	}
	if err := knownConsistency(commitCL); err != nil {
		return nil, err
	}
	var current store.SliceResult
	m := &store.RowMutation{Table: t, Key: key, Ops: ops}
	applied, err := h.engine.ApplyIf(ctx, m, cond, &current)
	if err != nil {
		return nil, h.storageError(ctx, "cas", err)
	}
	if applied {
		return &cassandra.CASResult_{Success: true}, nil
	}
	return &cassandra.CASResult_{Success: false, CurrentValues: new(replyBlocks).thriftColumns(current.Cells)}, nil
}
