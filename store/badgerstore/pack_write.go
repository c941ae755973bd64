package badgerstore

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/dgraph-io/badger/v4"

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
	// blind: the pack was not read; it holds what the row mutation
	// writes, to be written as a fragment (fragment_write.go).
	blind bool
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
		if p.blind {
			if err := w.unblind(p, t); err != nil {
				return err
			}
			if p.dissolved {
				return w.putCell(rp, t, super, name, rec, ttl)
			}
		}
		if err := w.dissolve(p, t); err != nil {
			return err
		}
		return w.putCell(rp, t, super, name, rec, ttl)
	}
	w.prepareCell(t, super, name, rec, ttl, false)
	if err := w.e.noteTimestamp(w.stripe, rec.timestamp); err != nil {
		return err
	}
	i, found := findPackCell(p.cells, enc)
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
		if p.blind {
			if err := w.unblind(p, t); err != nil || p.dissolved {
				return err
			}
			if len(p.cells) <= packMaxCells && p.size <= packMaxBytes {
				return nil
			}
		}
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
	var frags []fragmentRead
	if pre := w.pre.take(key); pre != nil {
		if pre.blind {
			return w.addBlindPack(key), nil
		}
		val, found, frags = pre.val, pre.found, pre.frags
	} else if val, found = w.cachedPack(key); found {
		// Read from the pack cache, which holds no pack that has
		// fragments (fragment.go).
	} else if w.rowWithoutPacks(w.rp, t) {
		// The row has no mark, so no pack (rowmark.go), nor fragments.
	} else if w.fragmentable(key, t) {
		return w.addBlindPack(key), nil
	} else if fragmentedTable(t) {
		var err error
		if val, found, frags, err = w.readPackAndFragments(key); err != nil {
			return 0, fmt.Errorf("read super column: %w", err)
		}
	} else {
		read, ok, err := w.getValue(key)
		if err != nil {
			return 0, fmt.Errorf("read super column: %w", err)
		}
		if found = ok; found {
			val = w.slab.copy(read)
		}
	}
	return w.addOpenPack(key, val, found, frags, t)
}

// addOpenPack adds to w.packs the pack under key as stored (val, if
// found) with its fragments folded in, and returns its index.
func (w *writer) addOpenPack(key, val []byte, found bool, frags []fragmentRead, t *store.Table) (int, error) {
	w.packs = append(w.packs, openPack{key: key})
	i := len(w.packs) - 1
	if err := w.loadPack(&w.packs[i], val, found, frags, t); err != nil {
		return 0, err
	}
	return i, nil
}

// loadPack makes p (of which only the key is kept) the pack as stored
// (val, if found) with its fragments folded in.
func (w *writer) loadPack(p *openPack, val []byte, found bool, frags []fragmentRead, t *store.Table) error {
	key := p.key
	*p = openPack{key: key, size: 2 + 3, cells: w.packCells.take(), found: found}
	if found {
		w.markSeen = true // a stored pack implies its row's mark
		var err error
		body := w.slab.scratch(packBodyLen(val))
		if p.cells, p.dissolved, err = decodePack(val, p.cells, &body); err != nil || isFragment(val) {
			return fmt.Errorf("read super column: key %x: %w", key, errBadPack)
		}
		for _, c := range p.cells {
			p.size += packCellSize(c)
		}
	}
	if len(frags) > 0 {
		if err := w.foldFragments(p, frags, t); err != nil {
			return fmt.Errorf("read super column: key %x: %w", key, err)
		}
	}
	return nil
}

// readPackAndFragments reads the pack under key, of a family whose super
// columns may have fragments, and the fragments beside it, where a
// prefetch of the row reads (rowReader). The values are in the writer's
// slab.
func (w *writer) readPackAndFragments(key []byte) (val []byte, found bool, frags []fragmentRead, err error) {
	it := w.rowReader(w.rp).NewIterator(badger.IteratorOptions{Prefix: key[:len(key)-1]})
	defer it.Close()
	it.Seek(key)
	if it.Valid() && bytes.Equal(it.Item().Key(), key) {
		item := it.Item()
		if val, err = item.ValueCopy(w.slab.scratch(int(item.ValueSize()))); err != nil {
			return nil, false, nil, err
		}
		found = true
		it.Next()
	}
	frags, err = w.readFragments(it, key, nil)
	return val, found, frags, err
}

// foldFragments merges the fragments of the super column of p, in the
// order they were written, into p's cells, and deletes them: p is then
// written back whole (or dissolved, if it grew too large) by the same
// transaction.
func (w *writer) foldFragments(p *openPack, frags []fragmentRead, t *store.Table) error {
	if p.dissolved {
		return errFragmentBesideDissolved
	}
	cells := p.cells
	for _, f := range frags {
		if !isFragment(f.val) {
			return errBadPack
		}
		body := w.slab.scratch(packBodyLen(f.val))
		var err error
		if w.fragCells, _, err = decodePack(f.val, w.fragCells[:0], &body); err != nil {
			return err
		}
		if cells, err = reconcileCells(w.packCells.take(), cells, w.fragCells, w.now); err != nil {
			return err
		}
		if err := w.txn.Delete(f.key); err != nil {
			return err
		}
	}
	clear(w.fragCells)
	w.e.folds.reset(p.key)
	w.markSeen = true // fragments imply their row's mark
	p.cells, p.found, p.dirty = cells, true, true
	p.size = 2 + 3
	for _, c := range cells {
		p.size += packCellSize(c)
	}
	if len(p.cells) > packMaxCells || p.size > packMaxBytes {
		return w.dissolve(p, t)
	}
	return nil
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
	if fragmentedTable(t) {
		// Its writers must read it from now on (fragment_write.go).
		key := dissolvedKey(&w.slab, p.key)
		w.e.dissolvedFilters.probe(t, key).note(w.e.dissolvedFilters)
		return w.set(key, nil)
	}
	return nil
}

// flushPacks writes back the packs the row mutation changed. Subcolumns
// dead for longer than gc_grace_seconds are purged on the way, as Badger's
// expiry purges entries of their own. A pack whose subcolumns all die
// expires with the last of them; one that keeps a tombstone has its row
// marked for collection (gc.go), which purges it in time.
func (w *writer) flushPacks(rp []byte, t *store.Table) error {
	grace := t.GCGrace()
	marked := false
	for i := range w.packs {
		p := &w.packs[i]
		if p.blind {
			if err := w.writeFragment(rp, t, p); err != nil {
				return err
			}
			mortal, err := mortalCells(p.cells)
			if err != nil {
				return fmt.Errorf("write super column: key %x: %w", p.key, err)
			}
			if mortal && !marked {
				if err := w.markForGC(rp); err != nil {
					return err
				}
				marked = true
			}
			continue
		}
		if !p.dirty {
			continue
		}
		kept := p.cells[:0]
		var lastDeath uint32
		mortal, tombstones := true, false
		for _, c := range p.cells {
			var rec record
			if err := decodeRecord(c.rec, &rec); err != nil {
				return fmt.Errorf("write super column: key %x: %w", p.key, err)
			}
			dead := localDeletionTime(&rec)
			if dead != ^uint32(0) && !rec.live(w.now) && int64(dead)+grace <= int64(w.now) {
				continue
			}
			kept = append(kept, c)
			if dead == ^uint32(0) {
				mortal = false
			}
			lastDeath = max(lastDeath, dead)
			tombstones = tombstones || rec.tombstone()
		}
		p.cells = kept
		w.e.packs.invalidate(len(rp), p.key)
		if len(kept) == 0 && !p.dissolved {
			if err := w.txn.Delete(p.key); err != nil {
				return err
			}
			w.packWrites = append(w.packWrites, packWrite{key: p.key, row: len(rp)})
			continue
		}
		if markedTable(t) {
			if err := w.markRow(rp, t); err != nil {
				return err
			}
		}
		val := appendPack(slices.Grow(w.packBuf[:0], packSize(kept)), kept, p.dissolved)
		w.packBuf = val[:0]
		if compressedTable(t) {
			// The buffer keeps its room whether the pack compresses or
			// not.
			w.compBuf = slices.Grow(w.compBuf[:0], compressRoom(val))
			val = compressPack(w.compBuf, val)
		}
		val = w.slab.copy(val)
		entry := w.entries.entry(p.key, val)
		if mortal && len(kept) > 0 {
			entry.ExpiresAt = w.badgerExpiry(lastDeath, grace)
		}
		if err := w.txn.SetEntry(entry); err != nil {
			return err
		}
		w.packWrites = append(w.packWrites, packWrite{key: p.key, val: val, row: len(rp),
			expiresAt: entry.ExpiresAt, known: true, admit: p.found})
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
