package store

import "github.com/thriftbridge/thriftbridge/store/partition"

// SliceQuery selects cells of one row: either by Names or by a range.
//
// In a Super family without Super set, names and ranges apply to super
// column names and each selected super column comes back whole. With Super
// set, they apply to the subcolumns of that one super column.
type SliceQuery struct {
	Super []byte
	// Names, when not nil, selects exactly these names (results come back
	// in comparator order, each at most once).
	Names [][]byte
	// Start and Finish bound the range in traversal order (empty: open).
	Start, Finish []byte
	// Ranges, when not empty, replaces Start and Finish with several
	// ranges (each in traversal order); overlapping ranges select each
	// cell once.
	Ranges   []NameRange
	Reversed bool
	// Count caps the number of cells (or super columns) returned.
	Count int
}

// NameRange is a range of names in traversal order (empty: open).
type NameRange struct {
	Start, Finish []byte
}

// Cell is one live cell as a read returns it.
type Cell struct {
	Name      []byte
	Value     []byte
	Timestamp int64
	// TTL is the TTL the cell was written with (0: none); the TTL left
	// at the read on an engine without Capabilities.OriginalTTL.
	TTL int32
	// ExpiresAt is when an expiring cell expires (Unix seconds; 0: never).
	ExpiresAt uint32
	// CounterValue is the value of a counter cell.
	CounterValue int64
}

// SuperColumn is one live super column with its live subcolumns.
type SuperColumn struct {
	Name  []byte
	Cells []Cell
}

// SliceResult receives the result of a slice. Reuse one across calls with
// Reset to save allocations; byte slices in it stay valid until then.
type SliceResult struct {
	Cells  []Cell
	Supers []SuperColumn
	// arena backs every byte slice of the result.
	arena []byte
}

// UseRoom gives an empty result the first room of its cells and of the
// bytes it keeps: memory its caller allocated with it (a get's call holds
// both), so that a small read allocates neither. Past that room the
// result grows as it does without it.
func (r *SliceResult) UseRoom(cells []Cell, arena []byte) {
	r.Cells, r.arena = cells[:0], arena[:0]
}

// Reset empties the result for reuse.
func (r *SliceResult) Reset() {
	for i := range r.Supers {
		r.Supers[i].Cells = nil
	}
	r.Cells = r.Cells[:0]
	r.Supers = r.Supers[:0]
	r.arena = r.arena[:0]
}

// Len is the number of cells (or super columns at super level) returned.
func (r *SliceResult) Len() int {
	return len(r.Cells) + len(r.Supers)
}

// Arena sizes of a SliceResult: the first holds the name and value of a
// single-column read (a room smaller than it, given by UseRoom, is
// followed by one of this size); from the second on, arenas double from
// arenaGrowth.
const (
	arenaFirst  = 512
	arenaGrowth = 4096
)

// Keep copies b into the result's arena and returns the copy. Earlier
// copies stay valid when the arena grows: a full arena is replaced, not
// reallocated in place.
func (r *SliceResult) Keep(b []byte) []byte {
	if b == nil {
		return nil
	}
	if cap(r.arena)-len(r.arena) < len(b) {
		size := arenaFirst
		if cap(r.arena) >= arenaFirst {
			size = max(2*cap(r.arena), arenaGrowth)
		}
		r.arena = make([]byte, 0, max(size, len(b)))
	}
	start := len(r.arena)
	r.arena = append(r.arena, b...)
	return r.arena[start:len(r.arena):len(r.arena)]
}

// Reserve makes room in the arena for n bytes of copies at once, for a
// reader that knows about how much it will keep: the arena is replaced
// by one of that size rather than grown by doubling. Earlier copies stay
// valid.
func (r *SliceResult) Reserve(n int) {
	if cap(r.arena)-len(r.arena) < n {
		r.arena = make([]byte, 0, n)
	}
}

// ArenaCap is the capacity of the arena that the result's copies are in:
// what a result kept for reuse holds on to.
func (r *SliceResult) ArenaCap() int { return cap(r.arena) }

// Clear empties the cells of the result but keeps the bytes already handed
// out valid (the arena is not rewound), for readers that keep the bytes of
// earlier rows while reading the next.
func (r *SliceResult) Clear() {
	for i := range r.Supers {
		r.Supers[i].Cells = nil
	}
	r.Cells = r.Cells[:0]
	r.Supers = r.Supers[:0]
}

// BoundKind says what a RowBound is.
type BoundKind uint8

const (
	// BoundOpen is an unbounded end: the first or the last row.
	BoundOpen BoundKind = iota
	// BoundKey is a row key; it includes that row at either end.
	BoundKey
	// BoundToken is a token: at the start it excludes the rows of that
	// token, at the end it includes them (Cassandra's maxKeyBound).
	BoundToken
)

// RowBound is one end of a range of rows in partitioner order.
type RowBound struct {
	Kind  BoundKind
	Key   []byte
	Token partition.Token
}

// ScanQuery selects the rows from Start to End (never wrapping around the
// ring: callers split a wrapping range in two) and, in each row, what
// Slice selects.
type ScanQuery struct {
	Start, End RowBound
	Slice      SliceQuery

	// Filter, when not empty, keeps only the rows whose own live cells
	// satisfy every expression (see MatchFilter): the others, range
	// ghosts included, are not visited. Filtering is the engine's work,
	// so a filtered page costs one call; an engine with KEYS indexes finds
	// the rows of an EQ expression on an indexed column through the index
	// (IndexedExpression), and still checks every expression on the row
	// itself, so stale index entries never leak.
	Filter []Expression

	// PageCells, when positive, is a budget of cells for the whole scan
	// (in the units of Slice.Count: cells, or whole super columns): each
	// row's slice takes at most what is left of it, in place of
	// Slice.Count, and the scan ends once it is spent. A wide row is cut
	// where the budget runs out, for the next page to resume in it.
	PageCells int
	// PageStart, with PageCells, replaces Slice.Start in the first row
	// visited: the page resumes inside that row.
	PageStart []byte

	// Rows, when positive, is the most rows the visitor will take: a
	// hint, so that an engine reading ahead does not read much more than
	// that. The visitor's answer still ends the scan.
	Rows int
}
