package badgerstore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Row packs (docs/ROW-PACKS.md). A write into a stored row of a packed
// family read the row's packs with one iterator, which seeks in every
// memtable and table whose key range spans the row: a quarter of
// thriftd's CPU under super batches into stored rows. A point read of one
// key asks each table's bloom filter first, and Badger's cost is per
// entry. So a row of a family laid out with row packs is kept, while it
// is small, in one entry under its cell prefix:
//
//	row 0x02                     the row pack: every cell of the row
//
// a pack (pack.go) whose cells are the row's super column headers and
// subcolumns, each under its logical key after the row's cell prefix
// (enc(super) 0x00, enc(super) 0x01 enc(name)). No other key under the
// row's cell prefix exists while the row is packed whole: a column name
// is never empty, so the prefix is no cell's key. The row's header and
// range tombstones keep their own keys.
//
// A row pack holds at most rowPackMaxCells cells and rowPackMaxBytes
// bytes, none of whose keys would have to be cut. A write past that
// dissolves the row: its cells move to the layout of packed families
// (headers, a pack per super column), and the row pack stays as a
// dissolved marker that sends every later writer and reader there, for
// good.
//
// A writer reads the row pack with a point read (or from the pack cache,
// or not at all when the row mark filter vouches the row is new), and
// writes it back whole. Readers expand it like a pack; a read of named
// subcolumns, or of a super column's deletion, looks in it first.
// Whether a family has row packs is fixed when its data id is made.

const (
	// A row pack holds a super batch of 10 × 10 subcolumns; a write of
	// one cell rewrites it whole, so it stays small.
	rowPackMaxCells = 128
	rowPackMaxBytes = 16 << 10

	// keptRowPackBuffers bounds the buffers a pooled reader keeps for
	// the row packs it reads: room for a row pack and its body.
	keptRowPackBuffers = 2*rowPackMaxBytes + 4<<10
)

// rowPackedTable reports whether a family keeps its small rows in row
// packs.
func rowPackedTable(t *store.Table) bool {
	return t.Backend.(*tableState).rowPacked
}

// rowPackKey is the key of the row pack of the row with prefix rp.
func rowPackKey(s *slab, rp []byte) []byte {
	return append(s.copyCap(rp, 1), kindCells)
}

// rowPackState is the row pack of the row being written.
type rowPackState struct {
	active bool // the row is packed whole (or new): its cells go here
	key    []byte
	cells  []packCell
	size   int
	found  bool // stored before the row mutation
	dirty  bool
	next   int // just after the cell put last: where the next may go
}

// openRowPack reads the row pack of the row with prefix rp of the
// row-packed family t, and makes it the row mutation's if the row is
// packed whole or new.
func (w *writer) openRowPack(rp []byte, t *store.Table) error {
	w.rowPack = rowPackState{key: rowPackKey(&w.slab, rp), cells: w.rowPack.cells[:0], size: 2 + 3}
	key := w.rowPack.key
	val, found := w.cachedPack(key)
	cached := found
	if !found && !w.rowWithoutPacks(rp, t) {
		item, err := w.rowReader(rp).Get(key)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return fmt.Errorf("read row: %w", err)
		default:
			if val, err = item.ValueCopy(w.slab.scratch(int(item.ValueSize()))); err != nil {
				return fmt.Errorf("read row: %w", err)
			}
			found = true
		}
	}
	w.rowPack.found = found
	if found {
		w.markSeen = true // a row pack implies its row's mark
		body := w.slab.scratch(packBodyLen(val))
		cells, dissolved, err := decodePack(val, w.rowPack.cells, &body)
		if err != nil {
			return fmt.Errorf("read row: key %x: %w", key, err)
		}
		if dissolved {
			if !cached {
				// The marker stays for good: the pack cache spares the
				// next writers of the row its read.
				w.packWrites = append(w.packWrites, packWrite{key: key, val: val, row: len(rp), known: true, admit: true})
			}
			return nil
		}
		w.rowPack.cells = cells
		for _, c := range cells {
			w.rowPack.size += packCellSize(c)
		}
	}
	w.rowPack.active = true
	return nil
}

// rowPackOp applies op to the row pack, and reports false for an op it
// leaves to the layout of packed families: a row deletion or a range
// tombstone, or any op once the row dissolved (which op may make it).
func (w *writer) rowPackOp(rp []byte, t *store.Table, op *store.Op) (bool, error) {
	switch op.Kind {
	case store.OpPut, store.OpDeleteCell, store.OpDeleteSuper:
	default:
		return false, nil
	}
	enc := t.Comparator.AppendKey(w.slab.scratch(2*(len(op.Super)+len(op.Name))+16), op.Super)
	var rec record
	if op.Kind == store.OpDeleteSuper {
		enc = append(enc, superHeader)
		rec = record{flags: flagTombstone, timestamp: op.Timestamp, deletedAt: w.now}
		if !t.Comparator.Lossless() {
			rec.flags |= flagRawSuper
			rec.rawSuper = t.Comparator.Normalize(op.Super)
		}
	} else {
		enc = t.SubComparator.AppendKey(append(enc, superCells), op.Name)
		rec = record{timestamp: op.Timestamp, value: op.Value}
		ttl := op.TTL
		if op.Kind == store.OpDeleteCell {
			rec = record{flags: flagTombstone, timestamp: op.Timestamp, deletedAt: w.now}
			ttl = 0
		}
		w.prepareCell(t, op.Super, op.Name, &rec, ttl, false)
		if err := w.e.noteTimestamp(w.stripe, rec.timestamp); err != nil {
			return false, err
		}
	}
	if len(rp)+1+len(enc) > truncatedLen {
		// A key that would be cut cannot be in a pack.
		return false, w.dissolveRow(rp, t)
	}
	p := &w.rowPack
	i, found := findPackCellNear(p.cells, enc, p.next)
	p.next = i + 1
	if found {
		var old record
		if err := decodeRecord(p.cells[i].rec, &old); err != nil {
			return false, fmt.Errorf("read cell: key %x: %w", p.key, err)
		}
		if op.Kind == store.OpDeleteSuper {
			// A super column's deletion is kept unless a later one is
			// recorded, with the first bytes of its name.
			if old.tombstone() && old.timestamp >= rec.timestamp {
				return true, w.markForGC(rp)
			}
			if old.flags&flagRawSuper != 0 {
				rec.flags |= flagRawSuper
				rec.rawSuper = w.slab.copy(old.rawSuper)
			}
		} else {
			if !wins(&rec, &old, w.now) {
				return true, nil
			}
			w.keepFirstNames(&rec, &old)
		}
		p.size -= len(p.cells[i].rec)
		p.cells[i].rec = appendRecord(w.slab.scratch(recordSize(&rec)), &rec)
		p.size += len(p.cells[i].rec)
	} else {
		c := packCell{enc: enc, rec: appendRecord(w.slab.scratch(recordSize(&rec)), &rec)}
		p.cells = slices.Insert(p.cells, i, c)
		p.size += packCellSize(c)
	}
	p.dirty = true
	if op.Kind == store.OpDeleteSuper {
		if err := w.markForGC(rp); err != nil {
			return false, err
		}
	}
	if len(p.cells) > rowPackMaxCells || p.size > rowPackMaxBytes {
		return true, w.dissolveRow(rp, t)
	}
	return true, nil
}

// dissolveRow moves the cells of the row pack to the layout of packed
// families (headers, and a pack per super column, written when the row
// mutation ends) and leaves the row pack as the marker that says so.
// None of those keys exists: the row's cells were all in its pack.
func (w *writer) dissolveRow(rp []byte, t *store.Table) error {
	p := &w.rowPack
	cells := p.cells
	p.active = false
	for _, c := range cells {
		key := append(w.slab.copyCap(p.key, len(c.enc)), c.enc...)
		var rec record
		if err := decodeRecord(c.rec, &rec); err != nil {
			return fmt.Errorf("dissolve row: key %x: %w", key, err)
		}
		encSuper, rest, err := splitEncodedSuper(t, c.enc)
		if err != nil {
			return fmt.Errorf("dissolve row: key %x: %w", key, err)
		}
		if rest[0] == superHeader {
			if err := w.set(key, c.rec); err != nil { // no expiry, as putDeletion
				return err
			}
			continue
		}
		pk := key[:len(p.key)+len(encSuper)+1]
		if len(pk)+packNameRoom > truncatedLen {
			if err := w.txn.SetEntry(w.cellEntry(key, c.rec, &rec, t)); err != nil {
				return err
			}
			continue
		}
		i := len(w.packs) - 1
		if i < 0 || !bytes.Equal(w.packs[i].key, pk) {
			w.packs = append(w.packs, openPack{key: pk, size: 2 + 3, cells: w.packCells.take()})
			i++
		}
		q := &w.packs[i]
		cell := packCell{enc: rest[1:], rec: c.rec}
		q.cells = append(q.cells, cell)
		q.size += packCellSize(cell)
		q.dirty = true
	}
	for i := range w.packs {
		q := &w.packs[i]
		if !q.dissolved && (len(q.cells) > packMaxCells || q.size > packMaxBytes) {
			if err := w.dissolve(q, t); err != nil {
				return err
			}
		}
	}
	p.cells = nil
	w.lastPack.super = nil
	marker := appendPack(w.slab.scratch(8), nil, true)
	w.packWrites = append(w.packWrites, packWrite{key: p.key, row: len(rp)})
	if err := w.markRow(rp, t); err != nil {
		return err
	}
	return w.set(p.key, marker)
}

// splitEncodedSuper splits the part of a key after a row's cell prefix
// into its encoded super column name and what follows it (a marker byte
// and, for a subcolumn, its encoded name).
func splitEncodedSuper(t *store.Table, k []byte) (encSuper, rest []byte, err error) {
	_, rest, err = t.Comparator.DecodeKey(nil, k)
	if err != nil || len(rest) == 0 {
		return nil, nil, fmt.Errorf("corrupt super column key %x: %v", k, err)
	}
	return k[:len(k)-len(rest)], rest, nil
}

// flushRowPack writes back the row pack the row mutation changed.
// Subcolumns dead for longer than gc_grace_seconds are purged on the way;
// super column deletions are kept for collection (gc.go), which purges
// what they shadow with them.
func (w *writer) flushRowPack(rp []byte, t *store.Table) error {
	p := &w.rowPack
	if !p.active || !p.dirty {
		return nil
	}
	var tombstones bool
	var err error
	isHeader := func(c packCell) bool { return isHeaderSuffix(t, c.enc) }
	if p.cells, tombstones, err = w.storePack(rp, t, p.key, p.cells, false, p.found, isHeader); err != nil || !tombstones {
		return err
	}
	return w.markForGC(rp)
}

// isHeaderSuffix reports whether the part of a key after a row's cell
// prefix is a super column's header: its encoded name and superHeader.
func isHeaderSuffix(t *store.Table, k []byte) bool {
	_, rest, err := splitEncodedSuper(t, k)
	return err == nil && len(rest) == 1 && rest[0] == superHeader
}

// wholeRowPack returns the cells of the reader's row when its family has
// row packs and the row is packed whole (true; no cells for a row with
// none), reading its row pack once. A read of one row (Slice) takes it
// from the cell cache when the cache holds it for the reader's ticket,
// and puts there what it read from Badger (cell_cache.go): the decoding
// stays, the point read goes.
func (r *reader) wholeRowPack() ([]packCell, bool, error) {
	if !rowPackedTable(r.t) {
		return nil, false, nil
	}
	if r.rowPackRead {
		return r.rowPackCells, r.rowPackWhole, nil
	}
	r.rowPackRead, r.rowPackWhole, r.rowPackCells = true, true, r.rowPackCells[:0]
	key := r.rowFloor()
	// The reader's buffers serve one row after another (and the next
	// reads, in the pool): what a read answers is copied out.
	cached := r.rowPacks != nil && r.rowPacks.read(&r.ticket, key, func(v []byte) {
		r.rowPackVal = append(r.rowPackVal[:0], v...)
	})
	if !cached {
		item, err := r.txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("read row: %w", err)
		}
		if r.rowPackVal, err = item.ValueCopy(r.rowPackVal[:0]); err != nil {
			return nil, false, fmt.Errorf("read row: %w", err)
		}
		if r.rowPacks != nil {
			r.rowPacks.put(&r.ticket, key, r.rowPackVal, item.ExpiresAt())
		}
	}
	cells, dissolved, err := decodePack(r.rowPackVal, r.rowPackCells, &r.rowPackBody)
	if err != nil {
		return nil, false, fmt.Errorf("read row: key %x: %w", key, err)
	}
	r.rowPackCells, r.rowPackWhole = cells, !dissolved
	return r.rowPackCells, r.rowPackWhole, nil
}

// rowPackCell returns the record of the cell under the logical key k in
// the reader's row, packed whole.
func (r *reader) rowPackCell(cells []packCell, k []byte) ([]byte, bool) {
	if len(k) <= len(r.rp)+1 {
		return nil, false
	}
	i, ok := findPackCell(cells, k[len(r.rp)+1:])
	if !ok {
		return nil, false
	}
	return cells[i].rec, true
}

// rowPack collects inside the row pack under key: the super column
// deletions that are old, or shadowed by an old row or range deletion,
// with the subcolumns they shadow, and the subcolumns dead for longer
// than gc_grace_seconds, as the walk of a row's entries and pack
// collects them (the pack and the deletions go together here, in one
// write).
func (w *gcWalk) rowPack(txn *badger.Txn, key, val []byte) error {
	cells, dissolved, err := decodePack(val, nil, nil)
	if err != nil {
		return fmt.Errorf("key %x: %w", key, err)
	}
	if dissolved {
		return nil // the row's cells are entries of their own, walked next
	}
	s := packSurvivors{kept: cells[:0], mortal: true}
	var rec record
	var encSuper []byte
	superDel := int64(noDeletion)
	for _, c := range cells {
		if err := decodeRecord(c.rec, &rec); err != nil {
			return fmt.Errorf("key %x: %w", key, err)
		}
		sk, err := w.r.splitSuperKey(c.enc)
		if err != nil {
			return err
		}
		if !bytes.Equal(sk.encSuper, encSuper) {
			encSuper, superDel = sk.encSuper, int64(noDeletion)
		}
		del := max(w.rowDel, coveredBy(w.ranges, c.enc, rec.timestamp))
		if !sk.header {
			w.collect(&s, c, &rec, max(del, superDel))
			continue
		}
		if rec.timestamp > del && !w.old(rec.deletedAt) {
			w.pending = true // a deletion not old enough yet
			s.kept = append(s.kept, c)
			s.lastDeath = max(s.lastDeath, rec.deletedAt)
			continue
		}
		superDel = max(superDel, rec.timestamp)
		w.packedHeaders++
	}
	if len(s.kept) == len(cells) {
		return nil
	}
	return w.rewritePack(txn, key, &s, false)
}
