package store

import (
	"context"
	"errors"

	"github.com/thriftbridge/thriftbridge/store/partition"
)

// Engine is a storage backend for thriftd. Every method is safe for
// concurrent use. Tables passed in come from the engine's own Catalog.
type Engine interface {
	// Partitioner is the partitioner the data is laid out by.
	Partitioner() partition.Partitioner

	// Capabilities declares the parts of the contract the engine
	// provides; they do not change while it is open.
	Capabilities() Capabilities

	// Catalog returns the current schema snapshot.
	Catalog() *Catalog

	// CreateKeyspace adds a keyspace with its families (ErrExists if the
	// name is taken, ignoring case).
	CreateKeyspace(ctx context.Context, ks KeyspaceDef, tables []TableDef) error
	// UpdateKeyspace replaces a keyspace's options (not its families).
	UpdateKeyspace(ctx context.Context, ks KeyspaceDef) error
	// DropKeyspace removes a keyspace, its families and their data.
	DropKeyspace(ctx context.Context, name string) error
	// CreateTable adds a family to an existing keyspace.
	CreateTable(ctx context.Context, def TableDef) error
	// UpdateTable replaces a family's definition (its id and data stay).
	// It refuses a change the data already stored depends on (see
	// CheckTableChange) with an *IncompatibleChangeError.
	UpdateTable(ctx context.Context, def TableDef) error
	// DropTable removes a family and its data.
	DropTable(ctx context.Context, keyspace, name string) error
	// Truncate removes every row of a family.
	Truncate(ctx context.Context, keyspace, name string) error

	// Apply writes a batch: each row atomically and in isolation, the
	// whole batch in one transaction when b.Atomic is set. Concurrent
	// writers of one row never make each other fail: a write fails with
	// ErrTimeout only if the engine gave up on it.
	Apply(ctx context.Context, b *Batch) error

	// Slice reads the live cells of one row that q selects, appending them
	// to out.
	Slice(ctx context.Context, t *Table, key []byte, q *SliceQuery, out *SliceResult) error

	// Count counts what Slice would return, without materialising it.
	Count(ctx context.Context, t *Table, key []byte, q *SliceQuery) (int, error)

	// Scan walks the rows of a range in partitioner order. For each row
	// it visits, it clears out, fills it with what q.Slice selects and
	// calls visit with the row key, which is valid during the call only.
	// Bytes in out stay valid until out is Reset. visit returns false to
	// stop. It visits every row that exists: rows with live cells and,
	// with Capabilities.RangeGhosts, rows that hold only tombstones
	// (deleted rows show up empty, as Cassandra's "range ghosts"). With
	// q.Filter it visits only the rows that match; with q.PageCells it
	// stops when the page is full (see ScanQuery).
	Scan(ctx context.Context, t *Table, q *ScanQuery, out *SliceResult, visit func(key []byte) (bool, error)) error

	// ApplyIf applies m if cond holds for m's row (a Standard family's);
	// reading the row, deciding and writing are one serialisable step:
	// no other write of the row comes between them. It reports whether m
	// was applied and leaves in current the cells the condition looked at
	// (what cond.Reads selects: the live expected columns, or the first
	// live cell of the row for RowEmpty). A condition that fails
	// cond.Validate is refused with an error wrapping ErrBadCondition.
	ApplyIf(ctx context.Context, m *RowMutation, cond *Condition, current *SliceResult) (bool, error)

	// Close flushes and closes the store.
	Close() error
}

// ErrBatchTooLarge reports a batch that cannot be applied in one
// transaction.
var ErrBatchTooLarge = errors.New("batch too large to apply atomically")

// ErrTimeout reports an operation the engine gave up on without a fault
// of the request: it kept losing to concurrent work on the same data.
// Like a Cassandra timeout, a write that fails with it may or may not have
// been applied, and the client may retry it. Errors wrapping it carry the
// engine's own text, never the storage library's.
var ErrTimeout = errors.New("storage operation timed out")
