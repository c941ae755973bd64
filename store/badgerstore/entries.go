package badgerstore

import "github.com/dgraph-io/badger/v4"

// Badger takes a pointer to each entry a transaction sets and keeps it
// until the transaction commits or is discarded; badger.NewEntry, which
// Txn.Set calls, allocates one for every key, so every cell a writer wrote
// was an allocation of its own (a tenth of the objects allocated under
// standard batches of 20 columns). A writer hands its entries out of
// chunks instead. They live exactly as long as the slab that holds their
// keys and values (slab.go): a writer is released, and its arena reset,
// only once its transaction has committed or failed, when Badger no longer
// reads them.

const (
	// entryChunk is the number of entries of a chunk.
	entryChunk = 64
	// entryChunksKept bounds the chunks a released writer keeps: a group
	// of single-column writes fits in one, a group of standard batches in
	// a few.
	entryChunksKept = 4
)

// entryArena hands out the Badger entries of one transaction.
type entryArena struct {
	chunks [][]badger.Entry // each of entryChunk entries
	used   int              // entries handed out since the last reset
}

// entry returns a new entry of key and val, with every other field zero.
func (a *entryArena) entry(key, val []byte) *badger.Entry {
	i, slot := a.used/entryChunk, a.used%entryChunk
	if i == len(a.chunks) {
		a.chunks = append(a.chunks, make([]badger.Entry, entryChunk))
	}
	e := &a.chunks[i][slot]
	*e = badger.Entry{Key: key, Value: val}
	a.used++
	return e
}

// reset drops the references of the entries handed out, so that the keys
// and values they point to (some of them a request's bytes) can be
// collected, and keeps at most entryChunksKept chunks for the writer's
// next transaction.
func (a *entryArena) reset() {
	for i := 0; i < len(a.chunks) && i*entryChunk < a.used; i++ {
		clear(a.chunks[i])
	}
	if len(a.chunks) > entryChunksKept {
		clear(a.chunks[entryChunksKept:])
		a.chunks = a.chunks[:entryChunksKept]
	}
	a.used = 0
}

// set sets key to val in the writer's transaction.
func (w *writer) set(key, val []byte) error {
	return w.txn.SetEntry(w.entries.entry(key, val))
}
