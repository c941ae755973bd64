package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Garbage collection. Cell tombstones and expired cells carry a Badger
// expiry of gc_grace_seconds after their death, so Badger drops them by
// itself. Row, super column and range tombstones cannot simply expire:
// the cells they shadow must go first, or those would come back. Writing
// one also writes a marker 0x05|dataID|row; CollectGarbage visits the
// marked rows only, deletes what their tombstones shadow once the
// tombstones are older than gc_grace_seconds, then the tombstones and the
// marker. Every deletion is re-checked inside a transaction, so a newer
// write that lands meanwhile is never lost.

const nsGC byte = 0x05

// gcBatch bounds the deletions of one collection transaction.
const gcBatch = 1000

// GCStats reports what a collection removed.
type GCStats struct {
	Rows       int // marked rows visited
	Cells      int // shadowed cells deleted
	Tombstones int // row, super column and range tombstones deleted
}

func gcMarkerKey(rp []byte) []byte {
	return append([]byte{nsGC}, rp[1:]...)
}

// markForGC records that the row holds a tombstone to collect later.
func (w *writer) markForGC(rp []byte) error {
	return w.set(append(w.slab.scratch(len(rp)), gcMarkerKey(rp)...), nil)
}

// collectInBackground is one pass of the periodic collection.
func (e *Engine) collectInBackground(ctx context.Context) {
	stats, err := e.CollectGarbage(ctx)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		e.log.Error("garbage collection failed", "err", err)
	case stats.Cells+stats.Tombstones > 0:
		e.log.Info("garbage collected", "rows", stats.Rows, "cells", stats.Cells, "tombstones", stats.Tombstones)
	}
}

// CollectGarbage purges, in every marked row, the tombstones older than
// their family's gc_grace_seconds and the cells they shadow, then runs
// Badger's value log collection.
func (e *Engine) CollectGarbage(ctx context.Context) (GCStats, error) {
	var stats GCStats
	if err := e.settleAll(ctx); err != nil {
		return stats, err
	}
	tables := map[uint32]*store.Table{}
	for _, ks := range e.Catalog().Keyspaces {
		for _, t := range ks.Tables {
			tables[dataIDOf(t)] = t
		}
	}
	var markers [][]byte
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsGC}})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			markers = append(markers, it.Item().KeyCopy(nil))
		}
		return nil
	})
	if err != nil {
		return stats, fmt.Errorf("list rows to collect: %w", err)
	}
	for _, m := range markers {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		rp := append([]byte{nsData}, m[1:]...)
		t := tables[rowDataID(rp)]
		done := true
		if t != nil {
			stats.Rows++
			if done, err = e.collectRow(ctx, t, rp, &stats); err != nil {
				return stats, err
			}
		}
		if done {
			if err := retryWrites(ctx, func() error {
				return e.update(func(txn *badger.Txn) error { return txn.Delete(m) })
			}); err != nil {
				return stats, fmt.Errorf("drop collection marker: %w", err)
			}
		}
	}
	for e.db.RunValueLogGC(0.5) == nil {
		if ctx.Err() != nil {
			break
		}
	}
	return stats, nil
}

func rowDataID(rp []byte) uint32 {
	return uint32(rp[1])<<24 | uint32(rp[2])<<16 | uint32(rp[3])<<8 | uint32(rp[4])
}

// collectRow purges one row; it reports whether nothing is left to
// collect there later (the marker can go).
func (e *Engine) collectRow(ctx context.Context, t *store.Table, rp []byte, stats *GCStats) (bool, error) {
	now := e.nowSeconds()
	grace := t.GCGrace()
	old := func(deletedAt uint32) bool { return int64(deletedAt)+grace <= int64(now) }

	var rowDel int64 = noDeletion
	var ranges []rangeTombstone
	pending := false
	err := e.db.View(func(txn *badger.Txn) error {
		h, found, err := readHeader(txn, append(append([]byte{}, rp...), kindRowHeader))
		if err != nil || !found {
			return err
		}
		if h.tombstone() {
			if old(h.deletedAt) {
				rowDel = h.timestamp
			} else {
				pending = true
			}
		}
		if h.flags&flagHasRanges != 0 {
			all, err := loadRangeTombstones(txn, rp)
			if err != nil {
				return err
			}
			for _, rt := range all {
				if old(rt.deletedAt) {
					ranges = append(ranges, rt)
				} else {
					pending = true
				}
			}
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("collect row: %w", err)
	}

	// Walk the cells, deleting what an old tombstone shadows, in
	// transactions of gcBatch keys that re-check each key. Old super
	// column tombstones are dropped only at the end, after what they
	// shadow.
	w := &gcWalk{r: &reader{t: t, now: now, rp: rp}, rowDel: rowDel, ranges: ranges, old: old, superDel: noDeletion}
	if t.Counter {
		w.counters = e.counters
	}
	if packedTable(t) {
		w.packs = e.packs
	}
	start := append(append([]byte{}, rp...), kindCells)
	end := prefixEnd(start)
	for start != nil {
		saved := *w
		var next []byte
		unlock := e.rowLocks.lockRow(rp)
		err := retryWrites(ctx, func() error {
			*w = saved
			w.superEnc = append([]byte(nil), saved.superEnc...)
			w.headers = append([][]byte(nil), saved.headers...)
			txn := e.db.NewTransaction(true)
			defer txn.Discard()
			var err error
			if next, err = w.batch(txn, start, end); err != nil {
				return err
			}
			return e.commit(txn)
		})
		unlock()
		if err != nil {
			return false, fmt.Errorf("collect row: %w", err)
		}
		start = next
	}
	stats.Cells += w.deleted
	pending = pending || w.pending
	superHeaders := w.headers

	// The shadowed cells are gone: drop the old tombstones themselves.
	unlock := e.rowLocks.lockRow(rp)
	defer unlock()
	err = retryWrites(ctx, func() error {
		return e.update(func(txn *badger.Txn) error {
			for _, k := range superHeaders {
				if err := txn.Delete(k); err != nil {
					return err
				}
			}
			for _, rt := range ranges {
				if err := txn.Delete(rangeTombstoneKey(nil, rp, &rt)); err != nil {
					return err
				}
				stats.Tombstones++
			}
			hk := append(append([]byte{}, rp...), kindRowHeader)
			h, found, err := readHeader(txn, hk)
			if err != nil || !found {
				return err
			}
			if h.tombstone() && old(h.deletedAt) && h.timestamp <= rowDel {
				h.flags &^= flagTombstone
				h.timestamp, h.deletedAt = math.MinInt64, 0
				stats.Tombstones++
			}
			if h.flags&flagHasRanges != 0 {
				remaining, err := loadRangeTombstonesExcept(txn, rp, ranges)
				if err != nil {
					return err
				}
				if !remaining {
					h.flags &^= flagHasRanges
				}
			}
			if h.flags&(flagTombstone|flagHasRanges|flagRawKey) == 0 {
				return txn.Delete(hk)
			}
			return txn.Set(hk, appendRecord(nil, &h))
		})
	})
	if err != nil {
		return false, fmt.Errorf("collect row: %w", err)
	}
	stats.Tombstones += len(superHeaders) + w.packedHeaders
	return !pending, nil
}

// coveredBy returns the timestamp of an old range tombstone that covers
// the cell key suffix k at ts, or noDeletion.
func coveredBy(ranges []rangeTombstone, k []byte, ts int64) int64 {
	for i := range ranges {
		if ranges[i].covers(k, ts) {
			return ranges[i].ts
		}
	}
	return noDeletion
}

// loadRangeTombstonesExcept reports whether the row keeps range
// tombstones other than the ones being dropped.
func loadRangeTombstonesExcept(txn *badger.Txn, rp []byte, dropped []rangeTombstone) (bool, error) {
	all, err := loadRangeTombstones(txn, rp)
	if err != nil {
		return false, err
	}
	for _, rt := range all {
		gone := false
		for _, d := range dropped {
			if d.ts == rt.ts && bytes.Equal(d.lower, rt.lower) && bytes.Equal(d.upper, rt.upper) {
				gone = true
				break
			}
		}
		if !gone {
			return true, nil
		}
	}
	return false, nil
}

// gcWalk is the state of a collection walk over one row's cells.
type gcWalk struct {
	r       *reader
	rowDel  int64 // an old row deletion (noDeletion if none)
	ranges  []rangeTombstone
	old     func(deletedAt uint32) bool
	deleted int
	pending bool // a tombstone is not old enough yet

	// The super column being walked, and the deletion that covers it.
	superEnc []byte
	superDel int64
	// headers are the keys of the super column headers to drop last.
	headers [][]byte
	// marker is the key of a dissolved pack of the super column being
	// walked, met in this batch; markerNeeded, that an entry of that super
	// column stays.
	marker       []byte
	markerNeeded bool
	// counters is the engine's counter cache, in a counter family: a
	// purged counter must not be read from it again.
	counters *counterCache
	// packs is the engine's pack cache, in a packed family: a pack
	// rewritten or deleted must not be read from it again.
	packs *recentCache
	// packedHeaders counts the super column deletions purged from row
	// packs.
	packedHeaders int
}

// batch deletes, inside txn, up to gcBatch cells from start on that old
// tombstones shadow, and returns where the next batch starts (nil at the
// end of the row).
func (w *gcWalk) batch(txn *badger.Txn, start, end []byte) ([]byte, error) {
	t, rp := w.r.t, w.r.rp
	it := txn.NewIterator(badger.IteratorOptions{Prefix: rp})
	defer it.Close()
	n := 0
	// A dissolved pack's marker goes with the last of its super column's
	// entries, when the same transaction sees them all.
	w.marker, w.markerNeeded = nil, false
	for it.Seek(start); it.Valid(); it.Next() {
		k := it.Item().Key()
		if bytes.Compare(k, end) >= 0 {
			break
		}
		if n == gcBatch {
			return it.Item().KeyCopy(nil), nil
		}
		val, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		if isPack(val) {
			collect := w.pack
			if len(k) == len(rp)+1 {
				collect = w.rowPack // rowpack.go
			}
			if err := collect(txn, it.Item().KeyCopy(nil), val); err != nil {
				return nil, err
			}
			n++
			continue
		}
		var rec record
		if err := decodeRecord(val, &rec); err != nil {
			return nil, err
		}
		logical := k
		if rec.flags&flagCutKey != 0 {
			logical = w.r.rebuild(nil, &rec)
		}
		suffix := logical[len(rp)+1:]
		del := max(w.rowDel, coveredBy(w.ranges, suffix, rec.timestamp))
		if t.Def.Super {
			sk, err := w.r.splitSuperKey(suffix)
			if err != nil {
				return nil, err
			}
			if !bytes.Equal(sk.encSuper, w.superEnc) {
				if err := w.dropUnneededMarker(txn); err != nil {
					return nil, err
				}
				w.superEnc, w.superDel = append(w.superEnc[:0], sk.encSuper...), noDeletion
			}
			if sk.header {
				switch {
				case rec.timestamp <= del:
					// Shadowed by the row's or a range's deletion.
				case w.old(rec.deletedAt):
				default:
					w.pending = true
					continue
				}
				w.headers = append(w.headers, it.Item().KeyCopy(nil))
				w.superDel = max(w.superDel, rec.timestamp)
				continue
			}
			del = max(del, w.superDel)
		}
		if rec.timestamp > del {
			w.markerNeeded = true
			continue
		}
		key := it.Item().KeyCopy(nil)
		w.counters.invalidate(key)
		if err := txn.Delete(key); err != nil {
			return nil, err
		}
		n++
		w.deleted++
		if t.HasIndexes() && !t.Def.Super && rec.live(w.r.now) {
			// The index entry of a purged cell goes with it.
			name, _, err := t.Comparator.DecodeKey(nil, suffix)
			if err == nil && t.IndexedColumn(name) {
				if err := txn.Delete(indexEntryKey(nil, t, name, rec.value, rp)); err != nil {
					return nil, err
				}
			}
		}
	}
	return nil, w.dropUnneededMarker(txn)
}

// dropUnneededMarker deletes the marker of the dissolved pack the batch
// met, if none of its super column's entries is left after it.
func (w *gcWalk) dropUnneededMarker(txn *badger.Txn) error {
	marker, needed := w.marker, w.markerNeeded
	w.marker, w.markerNeeded = nil, false
	if marker == nil || needed {
		return nil
	}
	w.packs.invalidate(len(w.r.rp), marker)
	return txn.Delete(marker)
}

// pack collects inside the pack under key (pack.go): the subcolumns old
// tombstones shadow, and those dead for longer than gc_grace_seconds,
// which entries of their own would have lost to Badger's expiry.
func (w *gcWalk) pack(txn *badger.Txn, key, val []byte) error {
	rp := w.r.rp
	cells, dissolved, err := decodePack(val, nil, nil)
	if err != nil {
		return fmt.Errorf("key %x: %w", key, err)
	}
	suffix := key[len(rp)+1:]
	sk, err := w.r.splitSuperKey(suffix)
	if err != nil {
		return err
	}
	if !bytes.Equal(sk.encSuper, w.superEnc) {
		if err := w.dropUnneededMarker(txn); err != nil {
			return err
		}
		w.superEnc, w.superDel = append(w.superEnc[:0], sk.encSuper...), noDeletion
	}
	if dissolved {
		w.marker, w.markerNeeded = key, false
		return nil
	}
	var rec record
	var cellSuffix []byte
	s := packSurvivors{kept: cells[:0], mortal: true}
	for _, c := range cells {
		if err := decodeRecord(c.rec, &rec); err != nil {
			return fmt.Errorf("key %x: %w", key, err)
		}
		cellSuffix = append(append(cellSuffix[:0], suffix...), c.enc...)
		w.collect(&s, c, &rec, max(w.rowDel, w.superDel, coveredBy(w.ranges, cellSuffix, rec.timestamp)))
	}
	if len(s.kept) == len(cells) {
		return nil
	}
	return w.rewritePack(txn, key, &s, dissolved)
}

// packSurvivors are the cells of a pack that collection keeps, and when
// the last of them dies (mortal: each does).
type packSurvivors struct {
	kept      []packCell
	lastDeath uint32
	mortal    bool
}

// collect keeps the cell c of a pack, whose record is rec, unless a
// deletion at del shadows it or it died longer than gc_grace_seconds
// ago; it counts the cells it drops.
func (w *gcWalk) collect(s *packSurvivors, c packCell, rec *record, del int64) {
	dead := localDeletionTime(rec)
	if rec.timestamp <= del || (dead != ^uint32(0) && !rec.live(w.r.now) && w.old(dead)) {
		w.deleted++
		return
	}
	if rec.tombstone() {
		w.pending = true
	}
	s.mortal = s.mortal && dead != ^uint32(0)
	s.lastDeath = max(s.lastDeath, dead)
	s.kept = append(s.kept, c)
}

// rewritePack writes the cells that collection kept of the pack under
// key back, or deletes it if none is left and it is no dissolved pack's
// marker.
func (w *gcWalk) rewritePack(txn *badger.Txn, key []byte, s *packSurvivors, dissolved bool) error {
	w.packs.invalidate(len(w.r.rp), key)
	if len(s.kept) == 0 && !dissolved {
		return txn.Delete(key)
	}
	packed := appendPack(nil, s.kept, dissolved)
	if compressedTable(w.r.t) {
		packed = compressPack(nil, packed)
	}
	entry := badger.NewEntry(key, packed)
	if s.mortal && len(s.kept) > 0 {
		entry.ExpiresAt = badgerExpiry(time.Now().Unix(), w.r.now, s.lastDeath, w.r.t.GCGrace())
	}
	return txn.SetEntry(entry)
}
