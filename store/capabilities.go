package store

// Capabilities are the parts of the Engine contract a backend may lack; a
// backend declares them (Engine.Capabilities) and callers and tests branch
// on them, never on the backend's type. Each names what a client sees of
// the difference.
type Capabilities struct {
	// OriginalTTL: Cell.TTL is the TTL the cell was written with, as
	// Thrift reads report it. Without it, Cell.TTL is the TTL left at the
	// read (CQL's TTL()), and Cell.ExpiresAt is still exact.
	OriginalTTL bool
	// RangeGhosts: Scan visits a row that holds only tombstones (a
	// deleted row, until its tombstones are purged) with an empty slice,
	// as Cassandra's range ghosts. Without it, such rows are not visited.
	RangeGhosts bool
	// OrderedPartitioners: the engine lays rows out by
	// ByteOrderedPartitioner and OrderPreservingPartitioner too, not only
	// by the hashing ones (Murmur3Partitioner, RandomPartitioner).
	OrderedPartitioners bool
	// IndexedScans: Scan finds the rows of an EQ filter on an indexed
	// column through a KEYS index. Without it, a filtered scan reads every
	// row of its range: the same rows, at a cost that grows with the range.
	IndexedScans bool
	// CounterRestart: a counter added to after its deletion starts again
	// from zero. Without it, as on a Cassandra cluster, adds to a deleted
	// counter may be lost until the deletion is purged.
	CounterRestart bool
	// IsolatedBatches: a Batch with Atomic set is applied in one isolated
	// transaction or refused with ErrBatchTooLarge. Without it, an atomic
	// batch is applied all or nothing in the end (a logged batch), but a
	// reader may see part of it meanwhile.
	IsolatedBatches bool
	// FreeConditions: ApplyIf writes m at its own timestamps under any
	// valid Condition. Without it, as over a CQL cluster's lightweight
	// transactions (CQL forbids USING TIMESTAMP with IF, and an IF clause
	// checks only the CQL row its statement writes): an applied
	// conditional write takes the transaction's timestamp, as Cassandra's
	// own Thrift cas did; a condition whose m has operations may expect
	// only cells m puts or deletes, and not RowEmpty, and others are
	// refused with an error. A condition without operations (a pure check)
	// is always evaluated.
	FreeConditions bool
	// RetypeNames: UpdateTable accepts a comparator or subcomparator
	// change to a compatible type (see CheckTableChange). Without it, as
	// over CQL tables whose clustering columns can neither change type
	// (Cassandra 4.0 dropped ALTER ... TYPE) nor be added, every change of
	// the names' types is refused with an *IncompatibleChangeError.
	RetypeNames bool
}
