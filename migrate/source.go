package migrate

import (
	"context"

	"github.com/thriftbridge/thriftbridge/supercol"
)

// Cell is one legacy cell as a Source reads it.
type Cell struct {
	// Super is the super column name; nil in a Standard family.
	Super []byte
	Name  []byte
	Value []byte
	// Timestamp is the client timestamp (writetime), in microseconds.
	Timestamp int64
	// TTL is the cell's original TTL in seconds; 0 when it does not expire.
	TTL int32
	// ExpiresAt is the Unix time in seconds at which the cell expires; 0
	// when it does not expire. Sources that only know TTL and writetime
	// (a Thrift server) estimate it from them.
	ExpiresAt int64
	// Counter marks a counter cell; its value is CounterValue.
	Counter      bool
	CounterValue int64
}

// RowChunk is a run of consecutive cells of one row, in comparator order. A
// wide row arrives as several chunks with the same Key; Last marks the
// row's final chunk. A row without live cells arrives as one empty chunk
// with Last set (sinks write nothing for it).
type RowChunk struct {
	Key   []byte
	Cells []Cell
	Last  bool
}

// Position is where a scan resumes: after the row whose key is AfterKey, in
// the source's row order. The zero Position is the start of the family.
type Position struct {
	AfterKey []byte `json:"after_key,omitempty"`
	Started  bool   `json:"started,omitempty"`
}

// Source reads a legacy keyspace.
type Source interface {
	// Keyspace describes the keyspace being read.
	Keyspace(ctx context.Context) (supercol.KeyspaceDef, error)
	// Scan streams the rows of family after from, in the source's row
	// order (token order for live sources), calling visit for every chunk.
	// Chunks and their bytes are valid only during the call. Memory stays
	// bounded whatever the size of a row. A visit error stops the scan and
	// is returned.
	Scan(ctx context.Context, family string, from Position, visit func(RowChunk) error) error
	// Close releases the source.
	Close() error
}
