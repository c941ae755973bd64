package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// rowShadows are the deletions of one row, read inside a write
// transaction: what a counter update must not add to.
type rowShadows struct {
	rowDel int64
	ranges []rangeTombstone
}

// loadShadows reads the row header and range tombstones of the row being
// written (once per row).
func (w *writer) loadShadows(rp []byte) (*rowShadows, error) {
	if w.shadows != nil {
		return w.shadows, nil
	}
	sh := &rowShadows{rowDel: noDeletion}
	h, found, err := readHeader(w.txn, append(append([]byte{}, rp...), kindRowHeader))
	if err != nil {
		return nil, err
	}
	if found && h.tombstone() {
		sh.rowDel = h.timestamp
	}
	if found && h.flags&flagHasRanges != 0 {
		if sh.ranges, err = loadRangeTombstones(w.txn, rp); err != nil {
			return nil, err
		}
	}
	w.shadows = sh
	return sh, nil
}

// addCounter adds op.Delta to a counter cell. A counter shadowed by a
// deletion starts again from zero, as a new counter.
func (w *writer) addCounter(rp []byte, t *store.Table, op *store.Op) error {
	logical := cellKey(&w.slab, rp, t, op.Super, op.Name)
	key, cut := logical, false
	if len(logical) > maxKey {
		key, cut = finishKey(append([]byte(nil), logical...))
	}
	ts := w.nowMicro
	rec := record{flags: flagCounter, timestamp: ts}
	if cut {
		rec.flags |= flagCutKey
	}
	if cut || !t.CellNameType().Lossless() {
		rec.flags |= flagRawName
		rec.rawName = t.CellNameType().Normalize(op.Name)
	}
	if op.Super != nil && (cut || !t.Comparator.Lossless()) {
		rec.flags |= flagRawSuper
		rec.rawSuper = t.Comparator.Normalize(op.Super)
	}
	value := op.Delta
	probe := w.e.counterFilters.probe(t, key)
	found, err := w.readCounter(key, probe.absent())
	if err != nil {
		return fmt.Errorf("read counter: %w", err)
	}
	if found {
		if w.old.tombstone() && w.old.timestamp >= ts {
			return nil // deleted later than this update: it is lost, as in Cassandra
		}
		if w.old.counter() && !w.old.tombstone() {
			live, err := w.counterLive(rp, t, op.Super, logical[len(rp)+1:], &w.old)
			if err != nil {
				return err
			}
			if live {
				value += w.old.counterValue()
				rec.timestamp = max(ts, w.old.timestamp)
			}
		}
		if w.old.flags&flagRawName != 0 && rec.flags&flagRawName != 0 {
			rec.rawName = w.slab.copy(w.old.rawName)
		}
	}
	rec.value = binary.BigEndian.AppendUint64(w.slab.scratch(8), uint64(value))
	probe.note(w.e.counterFilters)
	w.counterWritten(key, &rec, value, found)
	return w.set(key, appendRecord(w.slab.scratch(recordSize(&rec)), &rec))
}

// counterWrite is a write of a counter cell's key, for the counter cache
// once the writer's transaction commits: a plain counter record (known),
// or anything else (a deletion, a counter with raw names). admit: the
// write replaced a record, so the counter gets an entry if it has none.
type counterWrite struct {
	key              []byte // in the writer's slab
	value, timestamp int64
	known, admit     bool
}

// counterWritten invalidates the cache's entry of a counter cell's key
// being written, and notes the write for publishCounters; rec is the
// record written, value its counter value if it is a counter, replaced
// whether the key held a record before. The writer has put the key into
// its family's counter filter (key_filter.go).
func (w *writer) counterWritten(key []byte, rec *record, value int64, replaced bool) {
	w.e.counters.invalidate(key)
	cw := counterWrite{key: key}
	if rec.flags == flagCounter {
		cw.value, cw.timestamp, cw.known, cw.admit = value, rec.timestamp, true, replaced
	}
	w.counters = append(w.counters, cw)
}

// readCounter reads the counter cell under key into w.old, as get does:
// it finds nothing without a read when absent (the family's counter
// filter vouches that the key holds no record, key_filter.go), and reads
// the counter cache when it knows the counter. The filter comes before
// the cache, which answers nothing for an absent key: a counter is put in
// the filter before its first write commits, and the cache holds only
// what Badger holds. A prefetched record comes first: it is consumed by
// the first read of its key in any case (prefetch.go).
func (w *writer) readCounter(key []byte, absent bool) (bool, error) {
	if p := w.pre.take(key); p != nil {
		if !p.found {
			return false, nil
		}
		return true, decodeRecord(p.val, &w.old)
	}
	if absent {
		w.e.counterFilters.skipped.Add(1)
		return false, nil
	}
	if value, ts, ok := w.e.counters.get(key); ok {
		w.oldBuf = binary.BigEndian.AppendUint64(w.oldBuf[:0], uint64(value))
		w.old = record{flags: flagCounter, timestamp: ts, value: w.oldBuf}
		return true, nil
	}
	return w.get(key)
}

// publishCounters tells the counter cache the counters the writer's
// transaction committed, replaying its writes of counter cells in order so
// that the last write of a key decides; the writer still holds their
// rows' locks (publish).
func (w *writer) publishCounters() {
	for _, c := range w.counters {
		if c.known {
			w.e.counters.put(c.key, c.value, c.timestamp, c.admit)
		} else {
			w.e.counters.invalidate(c.key)
		}
	}
}

// counterLive reports whether a stored counter cell survives the row's,
// its super column's and the range deletions.
func (w *writer) counterLive(rp []byte, t *store.Table, super, suffix []byte, old *record) (bool, error) {
	// A counter written after every deletion the row's stripe has seen,
	// and after every one stored before the engine opened, is not
	// shadowed (timestamps.go): no header to read.
	if old.timestamp > max(w.e.blindFloor(), w.e.rowLocks.stripes[w.stripe].maxTimestamp) {
		return true, nil
	}
	sh, err := w.loadShadows(rp)
	if err != nil {
		return false, err
	}
	del := sh.rowDel
	if super != nil {
		superDel, err := headerDeletion(w.txn, superHeaderKey(&w.slab, rp, t, super))
		if err != nil {
			return false, err
		}
		del = max(del, superDel)
	}
	if old.timestamp <= del {
		return false, nil
	}
	for i := range sh.ranges {
		if sh.ranges[i].covers(suffix, old.timestamp) {
			return false, nil
		}
	}
	return true, nil
}

// readHeader reads a header record (row or super column).
func readHeader(txn *badger.Txn, key []byte) (record, bool, error) {
	key, _ = finishKey(key)
	var h record
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return h, false, nil
	}
	if err != nil {
		return h, false, fmt.Errorf("read header: %w", err)
	}
	err = item.Value(func(v []byte) error {
		if err := decodeRecord(v, &h); err != nil {
			return err
		}
		h.rawName = append([]byte(nil), h.rawName...)
		h.rawSuper = append([]byte(nil), h.rawSuper...)
		h.value = nil
		return nil
	})
	return h, err == nil, err
}

// headerDeletion is the deletion timestamp a header records (noDeletion
// if none).
func headerDeletion(txn *badger.Txn, key []byte) (int64, error) {
	h, found, err := readHeader(txn, key)
	if err != nil || !found || !h.tombstone() {
		return noDeletion, err
	}
	return h.timestamp, nil
}

// loadRangeTombstones reads every range tombstone of a row.
func loadRangeTombstones(txn *badger.Txn, rp []byte) ([]rangeTombstone, error) {
	prefix := append(append([]byte{}, rp...), kindRanges)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	var out []rangeTombstone
	for it.Rewind(); it.Valid(); it.Next() {
		val, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, fmt.Errorf("read range tombstone: %w", err)
		}
		rt, err := decodeRangeTombstone(val)
		if err != nil {
			return nil, fmt.Errorf("range tombstone %x: %w", it.Item().Key(), err)
		}
		out = append(out, rt)
	}
	return out, nil
}
