package badgerstore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/thriftbridge/thriftbridge/store"
)

// packNameRoom is the room a super column's pack key must leave for
// subcolumn names: a super column whose key leaves less is never packed,
// its subcolumns are entries of their own.
const packNameRoom = 1 << 10

// openPack is a pack read by the row mutation being written, with its
// changes; its slices live in the writer's slab.
type openPack struct {
	key       []byte
	cells     []packCell
	size      int  // encoded size
	found     bool // stored before the row mutation
	dissolved bool
	dirty     bool
	next      int // just after the cell put last: where the next may go
}

// packCell writes a put or cell deletion of a subcolumn of a packed
// family into its super column's pack, unless the super column is not
// packed or the cell cannot join it.
func (w *writer) packCell(rp []byte, t *store.Table, super, name []byte, rec *record, ttl int32) error {
	var p *openPack
	if w.lastPack.super != nil && bytes.Equal(super, w.lastPack.super) {
		p = &w.packs[w.lastPack.index]
	} else {
		pk := superPackKey(&w.slab, rp, t, super)
		if len(pk)+packNameRoom > truncatedLen {
			return w.putCell(rp, t, super, name, rec, ttl)
		}
		i, err := w.openPack(pk, t)
		if err != nil {
			return err
		}
		w.lastPack.super, w.lastPack.index = super, i
		p = &w.packs[i]
	}
	pk := p.key
	if p.dissolved {
		return w.putCell(rp, t, super, name, rec, ttl)
	}
	enc := t.SubComparator.AppendKey(w.slab.scratch(2*len(name)+8), name)
	if !packable(pk, enc) {
		if err := w.dissolve(p, t); err != nil {
			return err
		}
		return w.putCell(rp, t, super, name, rec, ttl)
	}
	w.prepareCell(t, super, name, rec, ttl, false)
	if err := w.e.noteTimestamp(w.stripe, rec.timestamp); err != nil {
		return err
	}
	i, found := findPackCellNear(p.cells, enc, p.next)
	p.next = i + 1
	if found {
		var old record
		if err := decodeRecord(p.cells[i].rec, &old); err != nil {
			return fmt.Errorf("read cell: key %x: %w", pk, err)
		}
		if !wins(rec, &old, w.now) {
			return nil
		}
		w.keepFirstNames(rec, &old)
		p.size -= len(p.cells[i].rec)
		p.cells[i].rec = appendRecord(w.slab.scratch(recordSize(rec)), rec)
		p.size += len(p.cells[i].rec)
	} else {
		c := packCell{enc: enc, rec: appendRecord(w.slab.scratch(recordSize(rec)), rec)}
		p.cells = slices.Insert(p.cells, i, c)
		p.size += packCellSize(c)
	}
	p.dirty = true
	if len(p.cells) > packMaxCells || p.size > packMaxBytes {
		return w.dissolve(p, t)
	}
	return nil
}

// packCellSize bounds the encoded size of one cell of a pack.
func packCellSize(c packCell) int { return 2*3 + len(c.enc) + len(c.rec) }

// packCellArena hands out the cell lists of the packs a row mutation
// opens, each with room for a full pack and the cell that dissolves it, from
// arrays the writer keeps for its later row mutations: a super batch opens
// ten packs of ten cells, and growing each list cell by cell was a sixth of
// thriftd's allocation under super batches. A list that outgrows its room
// (a pack written under other bounds) is moved by append, never into the
// next list.
type packCellArena struct {
	cells []packCell
}

// packListRoom is the capacity of one list: a full pack and one more cell.
const packListRoom = packMaxCells + 1

// take returns an empty list with room for packListRoom cells.
func (a *packCellArena) take() []packCell {
	if cap(a.cells)-len(a.cells) < packListRoom {
		// Lists handed out before keep the old array.
		a.cells = make([]packCell, 0, max(2*cap(a.cells), 4*packListRoom))
	}
	n := len(a.cells)
	a.cells = a.cells[:n+packListRoom]
	return a.cells[n : n : n+packListRoom]
}

// reset makes the arena's room available again; lists handed out before
// must no longer be in use.
func (a *packCellArena) reset() {
	clear(a.cells)
	a.cells = a.cells[:0]
}

// openPack returns the index in w.packs of the pack under key, of the
// row being written in family t, reading it on first use in the row
// mutation.
func (w *writer) openPack(key []byte, t *store.Table) (int, error) {
	for i := len(w.packs) - 1; i >= 0; i-- {
		if bytes.Equal(w.packs[i].key, key) {
			return i, nil
		}
	}
	// The pack's cells alias the value, which must outlive later reads: a
	// prefetched value is in the slab already, one read now is copied.
	var val []byte
	var found bool
	if pre := w.pre.take(key); pre != nil {
		val, found = pre.val, pre.found
	} else if val, found = w.cachedPack(key); found {
		// Read from the pack cache.
	} else if w.rowWithoutPacks(w.rp, t) {
		// The row has no mark, so no pack (rowmark.go).
	} else {
		read, ok, err := w.getValue(key)
		if err != nil {
			return 0, fmt.Errorf("read super column: %w", err)
		}
		if found = ok; found {
			val = w.slab.copy(read)
		}
	}
	p := openPack{key: key, size: 2 + 3, cells: w.packCells.take(), found: found}
	if found {
		w.markSeen = true // a stored pack implies its row's mark
		var err error
		body := w.slab.scratch(packBodyLen(val))
		if p.cells, p.dissolved, err = decodePack(val, p.cells, &body); err != nil {
			return 0, fmt.Errorf("read super column: key %x: %w", key, err)
		}
		for _, c := range p.cells {
			p.size += packCellSize(c)
		}
	}
	w.packs = append(w.packs, p)
	return len(w.packs) - 1, nil
}

// dissolve moves the subcolumns of a pack to entries of their own and
// leaves the pack as the marker that says so. None of those entries
// exists: the super column's subcolumns were all in the pack.
func (w *writer) dissolve(p *openPack, t *store.Table) error {
	for _, c := range p.cells {
		var rec record
		if err := decodeRecord(c.rec, &rec); err != nil {
			return fmt.Errorf("dissolve super column: key %x: %w", p.key, err)
		}
		key := append(w.slab.copyCap(p.key, len(c.enc)), c.enc...)
		if err := w.txn.SetEntry(w.cellEntry(key, c.rec, &rec, t)); err != nil {
			return err
		}
	}
	p.cells, p.dissolved, p.dirty = nil, true, true
	return nil
}

// flushPacks writes back the packs the row mutation changed. Subcolumns
// dead for longer than gc_grace_seconds are purged on the way, as Badger's
// expiry purges entries of their own. A pack whose subcolumns all die
// expires with the last of them; one that keeps a tombstone has its row
// marked for collection (gc.go), which purges it in time.
func (w *writer) flushPacks(rp []byte, t *store.Table) error {
	marked := false
	for i := range w.packs {
		p := &w.packs[i]
		if !p.dirty {
			continue
		}
		var tombstones bool
		var err error
		if p.cells, tombstones, err = w.storePack(rp, t, p.key, p.cells, p.dissolved, p.found, nil); err != nil {
			return err
		}
		if tombstones && !marked {
			if err := w.markForGC(rp); err != nil {
				return err
			}
			marked = true
		}
	}
	w.packs = w.packs[:0]
	w.lastPack.super = nil
	return nil
}

// storePack writes back the pack under key, of the row with prefix rp of
// family t, with cells (found: a pack was stored there before the row
// mutation), and returns the cells it kept and whether they hold a
// tombstone. It purges the cells dead for longer than gc_grace_seconds
// but those keepDead (if not nil) keeps, and deletes a pack left empty
// unless it is a dissolved one's marker.
func (w *writer) storePack(rp []byte, t *store.Table, key []byte, cells []packCell, dissolved, found bool, keepDead func(packCell) bool) ([]packCell, bool, error) {
	grace := t.GCGrace()
	kept := cells[:0]
	var lastDeath uint32
	mortal, tombstones := true, false
	var rec record
	for _, c := range cells {
		if err := decodeRecord(c.rec, &rec); err != nil {
			return nil, false, fmt.Errorf("write super column: key %x: %w", key, err)
		}
		dead := localDeletionTime(&rec)
		if dead != ^uint32(0) && !rec.live(w.now) && int64(dead)+grace <= int64(w.now) && (keepDead == nil || !keepDead(c)) {
			continue
		}
		kept = append(kept, c)
		if dead == ^uint32(0) {
			mortal = false
		}
		lastDeath = max(lastDeath, dead)
		tombstones = tombstones || rec.tombstone()
	}
	w.e.packs.invalidate(len(rp), key)
	if len(kept) == 0 && !dissolved {
		w.packWrites = append(w.packWrites, packWrite{key: key, row: len(rp)})
		return kept, false, w.txn.Delete(key)
	}
	if markedTable(t) {
		if err := w.markRow(rp, t); err != nil {
			return nil, false, err
		}
	}
	val := appendPack(slices.Grow(w.packBuf[:0], packSize(kept)), kept, dissolved)
	w.packBuf = val[:0]
	if compressedTable(t) {
		// The buffer keeps its room whether the pack compresses or not.
		w.compBuf = slices.Grow(w.compBuf[:0], compressRoom(val))
		val = compressPack(w.compBuf, val)
	}
	val = w.slab.copy(val)
	entry := w.entries.entry(key, val)
	if mortal && len(kept) > 0 {
		entry.ExpiresAt = w.badgerExpiry(lastDeath, grace)
	}
	if err := w.txn.SetEntry(entry); err != nil {
		return nil, false, err
	}
	w.packWrites = append(w.packWrites, packWrite{key: key, val: val, row: len(rp),
		expiresAt: entry.ExpiresAt, known: true, admit: found})
	return kept, tombstones, nil
}
