package badgerstore

import (
	"bytes"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Every cell write reads the cell it may overwrite (reconciliation). One
// point read per cell costs a look-up in every memtable and a bloom filter
// check in every table of every level, with Badger's allocations; a row
// mutation of many cells (a batch_mutate of 20 columns, of 10 super
// columns × 10 subcolumns) paid it 20 or 100 times for cells that sit
// next to each other. A prefetch reads the stored cells of such a row with
// one iterator walking the row in key order, and the writer takes each
// cell's old record from it.
//
// An entry answers one read only: the writer's first read of a key
// consumes it, and every later read of that key (after the writer may have
// written it) goes to the transaction, which sees its own writes. Every
// write of a cell key is preceded by a read of it (putCell, addCounter),
// so a prefetched record is never stale. In a packed family the keys read
// are the packs' (openPack reads each once in a row mutation, before its
// flush writes it); the entries a dissolving pack writes are never
// prefetched.

const (
	// prefetchMinCells is the number of cell writes in one row from which
	// a prefetch is cheaper than point reads.
	prefetchMinCells = 4
	// prefetchMaxPending bounds the writes already pending in the
	// transaction: a Badger iterator of a write transaction sorts them
	// all, so the rows of a large packed batch read point by point.
	prefetchMaxPending = 2048
	// prefetchSteps is how many keys the iterator steps over before it
	// seeks instead: a seek costs a few steps.
	prefetchSteps = 8
)

// maxRowsTracked bounds the rows a writer remembers having written in its
// transaction; past it, every prefetch reads through the transaction.
const maxRowsTracked = 64

// rowReader is the transaction a prefetch of the row with prefix rp reads
// through. A Badger iterator of a write transaction sorts every write
// pending in it when it opens, so in a transaction shared by a group of
// writers (group_commit.go), or holding the rows of a batch, each row's
// prefetch sorted the rows written before it, which was 4% of thriftd's
// CPU under super column batches. A row not written yet in the
// transaction is read through a read-only transaction opened after its
// lock was taken instead: it sees every write of the row committed, and
// no other writer commits one while the lock is held (rowlock.go). Those
// reads need no conflict check for the same reason.
func (w *writer) rowReader(rp []byte) *badger.Txn {
	if w.pending == 0 {
		return w.txn // nothing pending to sort
	}
	if len(w.rowsWritten) >= maxRowsTracked {
		return w.txn
	}
	for _, done := range w.rowsWritten {
		if bytes.Equal(done, rp) {
			return w.txn
		}
	}
	if w.snapshot == nil {
		w.snapshot = w.e.db.NewTransaction(false)
	}
	return w.snapshot
}

// prefetched is the stored record of one cell key, or its absence.
type prefetched struct {
	key   []byte
	val   []byte // the encoded record when found
	found bool
	used  bool
	pack  bool // the key of a pack
}

// cellPrefetch holds the prefetched cells of the row being written,
// sorted by key.
type cellPrefetch struct {
	entries []prefetched
}

func (p *cellPrefetch) reset() {
	clear(p.entries)
	p.entries = p.entries[:0]
}

// take returns the unused entry of key, marking it used, or nil.
func (p *cellPrefetch) take(key []byte) *prefetched {
	if len(p.entries) == 0 {
		return nil
	}
	i, ok := slices.BinarySearchFunc(p.entries, key, func(e prefetched, k []byte) int { return bytes.Compare(e.key, k) })
	if !ok || p.entries[i].used {
		return nil
	}
	p.entries[i].used = true
	return &p.entries[i]
}

// prefetchCells reads the stored records of the cells that the puts and
// cell deletions of m will reconcile with, when there are enough of them.
func (w *writer) prefetchCells(rp []byte, m *store.RowMutation) error {
	w.pre.reset()
	t := m.Table
	marked := markedTable(t)
	if w.pending > prefetchMaxPending && !marked {
		return nil
	}
	// Writes above every stored timestamp read nothing (timestamps.go),
	// but a write into a pack reads the pack (pack.go).
	packed := packedTable(t)
	reads := func(op *store.Op) bool {
		if op.Kind != store.OpPut && op.Kind != store.OpDeleteCell {
			return false
		}
		return (packed && op.Super != nil) || !w.unique || op.Timestamp <= w.above
	}
	n := 0
	for i := range m.Ops {
		if reads(&m.Ops[i]) {
			n++
		}
	}
	if n < prefetchMinCells {
		return nil
	}
	// The cells of one super column come one after the other in a
	// mutation: in a packed family they read one pack, whose key is made
	// once for them all.
	var lastSuper []byte
	for i := range m.Ops {
		op := &m.Ops[i]
		if !reads(op) {
			continue
		}
		var key []byte
		pack := packed && op.Super != nil
		if pack {
			if lastSuper != nil && bytes.Equal(op.Super, lastSuper) {
				continue
			}
			lastSuper = op.Super
			key = superPackKey(&w.slab, rp, t, op.Super)
		} else {
			key = cellKey(&w.slab, rp, t, op.Super, op.Name)
		}
		if mayTie(key) {
			continue // cut keys are read point by point
		}
		w.pre.entries = append(w.pre.entries, prefetched{key: key, pack: pack})
	}
	if len(w.pre.entries) == 0 {
		return nil
	}
	// A name written twice has one entry: the second read must see the
	// first write.
	slices.SortFunc(w.pre.entries, func(a, b prefetched) int { return bytes.Compare(a.key, b.key) })
	w.pre.entries = slices.CompactFunc(w.pre.entries, func(a, b prefetched) bool { return bytes.Equal(a.key, b.key) })
	// The packs the pack cache knows are stored: nor they nor the row's
	// mark need a read.
	cached := 0
	if packed {
		cached = w.prefetchCachedPacks()
	}
	if cached == len(w.pre.entries) {
		w.markSeen = true
		return nil
	}
	if marked {
		mark := markStored // a pack the cache knows implies the mark
		if cached == 0 {
			var err error
			if mark, err = w.rowMark(rp, t); err != nil {
				return err
			}
		}
		if mark == markAbsent {
			// The row has no pack: its packs' entries answer absent. A
			// key of any other kind is read as before.
			w.pre.entries = slices.DeleteFunc(w.pre.entries, func(e prefetched) bool { return !e.pack })
			w.e.unmarkedRows.Add(1)
			return nil
		}
		// A mark the filter only holds is proven by a pack found
		// (openPack).
		w.markSeen, w.markLikely = mark == markStored, mark == markLikely
		if w.pending > prefetchMaxPending {
			// What the cache did not answer is read point by point.
			w.pre.entries = slices.DeleteFunc(w.pre.entries, func(e prefetched) bool { return !e.found })
			return nil
		}
	}
	entries := w.pre.entries

	prefix := append(w.slab.copyCap(rp, 1), kindCells)
	it := w.rowReader(rp).NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	it.Seek(entries[0].key)
	for i := range entries {
		e := &entries[i]
		if e.found {
			continue // from the pack cache
		}
		for steps := 0; it.Valid() && bytes.Compare(it.Item().Key(), e.key) < 0; steps++ {
			if steps == prefetchSteps {
				it.Seek(e.key)
				break
			}
			it.Next()
		}
		if !it.Valid() {
			break
		}
		item := it.Item()
		if !bytes.Equal(item.Key(), e.key) {
			continue
		}
		val, err := item.ValueCopy(w.slab.scratch(int(item.ValueSize())))
		if err != nil {
			return err
		}
		e.val, e.found = val, true
	}
	return nil
}

// prefetchCachedPacks answers the prefetch's entries of packs that the
// pack cache knows, and returns how many it answered. It gives up at the
// first pack the cache lacks unless one was found before it: a row's
// packs are kept and dropped together (one group of the cache), so a row
// whose first pack is missing is read from Badger whole, and looking up
// its other packs, each a wait for memory, would spare that read nothing.
func (w *writer) prefetchCachedPacks() int {
	n := 0
	for i := range w.pre.entries {
		e := &w.pre.entries[i]
		if !e.pack {
			continue
		}
		val, ok := w.cachedPack(e.key)
		if !ok {
			if n == 0 {
				return 0
			}
			continue
		}
		e.val, e.found = val, true
		n++
	}
	return n
}
