package store

// OpKind is what one operation of a row mutation does.
type OpKind uint8

const (
	// OpPut writes a cell (Super, Name, Value, Timestamp, TTL).
	OpPut OpKind = iota + 1
	// OpDeleteCell deletes one cell (Super, Name, Timestamp).
	OpDeleteCell
	// OpDeleteSuper deletes a whole super column (Super, Timestamp).
	OpDeleteSuper
	// OpDeleteRow deletes the whole row (Timestamp).
	OpDeleteRow
	// OpDeleteRange deletes the names between Start and Finish inclusive
	// (comparator order, composite end-of-component rules as for slices)
	// at the row level, or among super column names (Timestamp).
	OpDeleteRange
	// OpCounterAdd adds Delta to a counter cell (Super, Name).
	OpCounterAdd
	// OpCounterDelete deletes a counter cell, a counter super column or a
	// counter row (Super and Name optional), at the engine's own timestamp
	// unless Timestamp is set.
	OpCounterDelete
)

// Op is one operation on a row. Which fields matter depends on Kind; byte
// slices are read, never retained after Apply returns.
type Op struct {
	Kind      OpKind
	Super     []byte // super column name (Super families)
	Name      []byte // cell name
	Value     []byte
	Timestamp int64
	// HasTimestamp tells whether Timestamp was given (counter deletions
	// may leave it out).
	HasTimestamp bool
	// TTL in seconds; 0 means the cell never expires.
	TTL   int32
	Delta int64
	// Start and Finish bound an OpDeleteRange (raw names, empty = open).
	Start, Finish []byte
}

// RowMutation is every operation on one row of one family. It is applied
// atomically and in isolation.
type RowMutation struct {
	Table *Table
	Key   []byte
	Ops   []Op
}

// Batch is a set of row mutations. Each row is always atomic; with Atomic
// the whole batch is applied in one transaction (all or nothing, but not
// isolated from readers, on an engine without
// Capabilities.IsolatedBatches).
type Batch struct {
	Rows   []RowMutation
	Atomic bool
}
