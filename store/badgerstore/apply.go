package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

const (
	// Non-atomic batches are packed into transactions of at most this
	// many operations, and half the largest transaction in bytes; a row
	// never spans two transactions.
	packOps = 10000
	// maxAttempts bounds the retries of a transaction that lost a
	// write-write conflict. Data writes hold their rows' locks, so they
	// do not lose any; the bound is a safety net.
	maxAttempts = 64
)

// Apply implements store.Engine.
func (e *Engine) Apply(ctx context.Context, b *store.Batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for i := range b.Rows {
		if err := checkTable(b.Rows[i].Table); err != nil {
			return err
		}
	}
	if err := e.disk.check(); err != nil {
		return err
	}
	if e.deferrable(b) {
		return e.applyDeferred(ctx, b.Rows)
	}
	if b.Atomic {
		err := e.applyWithRetry(ctx, b.Rows)
		if errors.Is(err, badger.ErrTxnTooBig) {
			return store.ErrBatchTooLarge
		}
		return err
	}
	rows := b.Rows
	for len(rows) > 0 {
		n := packRows(rows, e.memory.MaxTransaction()/2)
		if err := e.applyWithRetry(ctx, rows[:n]); err != nil {
			if errors.Is(err, badger.ErrTxnTooBig) {
				return store.ErrBatchTooLarge
			}
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// packRows returns how many leading rows fit in one transaction (at least
// one).
func packRows(rows []store.RowMutation, packBytes int64) int {
	ops, size := 0, int64(0)
	for i := range rows {
		rowOps, rowSize := rowsCost(rows[i : i+1])
		if i > 0 && (ops+rowOps > packOps || size+rowSize > packBytes) {
			return i
		}
		ops += rowOps
		size += rowSize
	}
	return len(rows)
}

// conflictsLost counts the write transactions, of every engine in the
// process, that lost a conflict and were retried (tests check that writers
// holding row locks lose none).
var conflictsLost atomic.Int64

// applyWithRetry applies rows in one transaction, which it may share with
// concurrent writers (group_commit.go), holding their row locks so that
// no other writer of those rows can make it conflict.
func (e *Engine) applyWithRetry(ctx context.Context, rows []store.RowMutation) error {
	unlock, err := e.lockRowsSettled(ctx, rows)
	if err != nil {
		return err
	}
	defer unlock()
	return e.commitRows(ctx, rows)
}

// retryWrites runs a write transaction until it stops losing conflicts
// and stops meeting the short write pause of a background data drop. A
// transaction that keeps losing conflicts ends in store.ErrTimeout, whose
// text is the engine's own, never Badger's.
func retryWrites(ctx context.Context, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		if !errors.Is(err, badger.ErrConflict) && !errors.Is(err, badger.ErrBlockedWrites) {
			return err
		}
		if errors.Is(err, badger.ErrConflict) {
			conflictsLost.Add(1)
		}
		if errors.Is(err, badger.ErrConflict) && n >= maxAttempts {
			return fmt.Errorf("%w: gave up after %d attempts that lost to concurrent writers", store.ErrTimeout, n)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if errors.Is(err, badger.ErrBlockedWrites) {
			time.Sleep(time.Millisecond * time.Duration(min(n, 20)))
		} else if n > 4 {
			time.Sleep(time.Duration(n) * 50 * time.Microsecond)
		}
	}
}

func (e *Engine) applyOnce(rows []store.RowMutation) error {
	txn := e.db.NewTransaction(true)
	defer txn.Discard()
	w := e.newWriter(txn)
	defer e.releaseWriter(w)
	for i := range rows {
		if err := w.row(&rows[i]); err != nil {
			return err
		}
	}
	if err := e.commit(txn); err != nil {
		return err
	}
	w.publish()
	return nil
}

// Writers are kept for reuse in a free list, not a sync.Pool: the
// collector empties a sync.Pool, and under a write load it runs every few
// milliseconds, so every transaction grew a new slab (a tenth of the
// bytes allocated under super column batches). freeWriters bounds the
// list; Engine.keepSlab bounds the slabs its writers keep.
const freeWriters = 64

// newWriter returns a writer for txn, with a reused slab.
func (e *Engine) newWriter(txn *badger.Txn) *writer {
	var w *writer
	select {
	case w = <-e.writers:
		e.unkeepSlab(w.slabKept)
		w.slabKept = 0
	default:
		w = &writer{e: e}
	}
	w.setClock(e.now().UnixMicro(), time.Now().Unix())
	w.txn = txn
	return w
}

// setClock sets the writer's engine clock (Unix microseconds) and wall
// clock (Unix seconds) to the instant its writes take effect: when its
// transaction began, or when a deferred write was acknowledged.
func (w *writer) setClock(nowMicro, realNow int64) {
	sec := nowMicro / 1e6
	if nowMicro%1e6 < 0 {
		sec--
	}
	w.now, w.nowMicro, w.realNow = uint32(sec), nowMicro, realNow
}

// releaseWriter returns a writer to the pool once its transaction has
// committed or been discarded.
func (e *Engine) releaseWriter(w *writer) {
	w.txn, w.shadows = nil, nil
	if w.snapshot != nil {
		w.snapshot.Discard()
		w.snapshot = nil
	}
	clear(w.rowsWritten)
	w.rowsWritten = w.rowsWritten[:0]
	w.pre.reset()
	w.pending = 0
	clear(w.counters)
	w.counters = w.counters[:0]
	clear(w.packWrites)
	w.packWrites = w.packWrites[:0]
	clear(w.packs)
	w.packs = w.packs[:0]
	w.lastPack.super = nil
	w.packCells.reset()
	clear(w.rowPack.cells)
	w.rowPack = rowPackState{cells: w.rowPack.cells[:0]}
	if cap(w.packBuf) > packBufKeep || cap(w.compBuf) > packBufKeep {
		w.packBuf, w.compBuf = nil, nil
	}
	w.entries.reset()
	w.slabKept = e.keepSlab(&w.slab)
	w.old = record{}
	select {
	case e.writers <- w:
	default:
		e.unkeepSlab(w.slabKept)
	}
}

// writer applies row mutations inside one transaction.
type writer struct {
	e        *Engine
	txn      *badger.Txn
	now      uint32 // engine clock, Unix seconds
	nowMicro int64  // engine clock, Unix microseconds (counter timestamps)
	realNow  int64  // wall clock, for Badger's own expiry
	slab     slab
	// slabKept is what Engine.keepSlab counted for the slab while the
	// writer is in the free list.
	slabKept int64
	rp       []byte // row prefix of the row being written
	stripe   uint16 // its row lock stripe, held
	// above: the row's cells whose timestamps are above it win without a
	// read, if each name is written once in the row mutation (unique);
	// both are set when the row mutation starts (timestamps.go).
	above  int64
	unique bool
	order  []int // scratch of repeatedNames
	old    record
	oldBuf []byte
	// shadows caches the deletions of the row being written, for counter
	// updates, which must not add to a deleted value.
	shadows *rowShadows
	// pre holds the prefetched cells of the row being written.
	pre cellPrefetch
	// markSeen: the row being written has its mark, stored or written
	// by this transaction; markLikely: its family's filter holds the
	// row, whose mark was not read (rowmark.go).
	markSeen, markLikely bool
	// pending counts the operations already written in the transaction,
	// rowsWritten the prefixes of its rows (up to maxRowsTracked).
	pending     int
	rowsWritten [][]byte
	// snapshot is the read-only transaction of prefetches (rowReader).
	snapshot *badger.Txn
	// packs are the packs the row mutation being written has read
	// (pack.go), written back when it ends.
	packs     []openPack
	packCells packCellArena
	// lastPack is the pack the row mutation's last cell went to: the
	// cells of one super column come one after the other, and find it
	// without making its key again.
	lastPack struct {
		super []byte
		index int
	}
	// packBuf and compBuf encode and compress a pack before it is copied
	// into the slab, which then holds only the bytes written.
	packBuf, compBuf []byte
	// entries are the Badger entries of the transaction (entries.go).
	entries entryArena
	// counters are the writes of counter cells, for the counter cache
	// once the transaction commits (counter_cache.go).
	counters []counterWrite
	// packWrites are the writes of packs, for the pack cache once the
	// transaction commits (pack_cache.go).
	packWrites []packWrite
	// rowPack is the row pack of the row being written (rowpack.go).
	rowPack rowPackState
}

func (w *writer) row(m *store.RowMutation) error {
	t := m.Table
	rp, cut := w.e.rowPrefix(w.rp[:0], t, m.Key)
	w.rp = rp
	w.stripe = w.e.rowLocks.stripe(rp)
	w.above = max(w.e.blindFloor(), w.e.rowLocks.stripes[w.stripe].maxTimestamp)
	w.unique = !t.Counter && !w.repeatedNames(m.Ops)
	w.shadows = nil
	w.markSeen, w.markLikely = false, false
	if cut {
		key := m.Key
		err := w.updateRowHeader(rp, func(h *record) bool {
			if h.flags&flagRawKey != 0 {
				return false
			}
			h.flags |= flagRawKey
			h.rawName = key
			return true
		})
		if err != nil {
			return err
		}
	}
	w.rowPack.active = false
	if rowPackedTable(t) {
		if err := w.openRowPack(rp, t); err != nil {
			return err
		}
	}
	if w.rowPack.active {
		w.pre.reset() // the row pack is all there is to read
	} else if err := w.prefetchCells(rp, m); err != nil {
		return fmt.Errorf("read row: %w", err)
	}
	defer func() {
		w.pending += len(m.Ops)
		if len(w.rowsWritten) < maxRowsTracked {
			w.rowsWritten = append(w.rowsWritten, w.slab.copy(rp))
		}
	}()
	w.packs = w.packs[:0]
	w.packCells.reset()
	w.lastPack.super = nil
	for i := range m.Ops {
		op := &m.Ops[i]
		var err error
		switch op.Kind {
		case store.OpDeleteSuper, store.OpDeleteRow, store.OpDeleteRange:
			// Deletions are under the bound too: a counter above it has
			// none to look for (counterLive).
			if err := w.e.noteTimestamp(w.stripe, op.Timestamp); err != nil {
				return err
			}
		}
		if w.rowPack.active {
			handled, err := w.rowPackOp(rp, t, op)
			if err != nil {
				return err
			}
			if handled {
				continue
			}
		}
		switch op.Kind {
		case store.OpPut:
			err = w.writeCell(rp, t, op.Super, op.Name, &record{
				timestamp: op.Timestamp,
				value:     op.Value,
			}, op.TTL)
		case store.OpDeleteCell:
			err = w.writeCell(rp, t, op.Super, op.Name, &record{
				flags:     flagTombstone,
				timestamp: op.Timestamp,
				deletedAt: w.now,
			}, 0)
		case store.OpDeleteSuper:
			if err = w.putDeletion(superHeaderKey(&w.slab, rp, t, op.Super), t, op.Super, op.Timestamp); err == nil {
				err = w.markForGC(rp)
			}
		case store.OpDeleteRow:
			ts, now := op.Timestamp, w.now
			err = w.updateRowHeader(rp, func(h *record) bool {
				if h.tombstone() && h.timestamp >= ts {
					return false
				}
				h.flags |= flagTombstone
				h.timestamp, h.deletedAt = ts, now
				return true
			})
			if err == nil {
				err = w.markForGC(rp)
			}
		case store.OpDeleteRange:
			err = w.putRangeTombstone(rp, t, op)
		case store.OpCounterAdd:
			err = w.addCounter(rp, t, op)
		default:
			err = fmt.Errorf("operation kind %d is not supported by this engine", op.Kind)
		}
		if err != nil {
			return err
		}
		if op.Kind != store.OpPut && op.Kind != store.OpCounterAdd {
			w.shadows = nil // deletions change what shadows counters
		}
	}
	if err := w.flushRowPack(rp, t); err != nil {
		return err
	}
	return w.flushPacks(rp, t)
}

// writeCell writes a put or a cell deletion: into its super column's pack
// in a packed family, else as an entry of its own.
func (w *writer) writeCell(rp []byte, t *store.Table, super, name []byte, rec *record, ttl int32) error {
	if super != nil && packedTable(t) {
		return w.packCell(rp, t, super, name, rec, ttl)
	}
	return w.putCell(rp, t, super, name, rec, ttl)
}

// updateRowHeader reads the row header (or starts from an empty one),
// lets change edit it, and writes it back if change reports a change.
// Row headers carry row deletions, long row keys and the range tombstone
// flag; they get no Badger expiry.
func (w *writer) updateRowHeader(rp []byte, change func(h *record) bool) error {
	hk := append(w.slab.copyCap(rp, 1), kindRowHeader)
	h := record{timestamp: math.MinInt64}
	found, err := w.get(hk)
	if err != nil {
		return fmt.Errorf("read row header: %w", err)
	}
	if found {
		h = w.old
		h.rawName = w.slab.copy(h.rawName)
		h.rawSuper, h.value = nil, nil
	}
	if !change(&h) {
		return nil
	}
	if err := w.noteHeader(rp); err != nil {
		return err
	}
	return w.set(hk, appendRecord(w.slab.scratch(recordSize(&h)), &h))
}

// flagRanges marks the row as having range tombstones.
func (w *writer) flagRanges(rp []byte) error {
	return w.updateRowHeader(rp, func(h *record) bool {
		if h.flags&flagHasRanges != 0 {
			return false
		}
		h.flags |= flagHasRanges
		return true
	})
}

// putCell writes a live cell or a cell tombstone if it wins over the cell
// already stored under the same key.
func (w *writer) putCell(rp []byte, t *store.Table, super, name []byte, rec *record, ttl int32) error {
	key := cellKey(&w.slab, rp, t, super, name)
	key, cut := finishKey(key)
	w.prepareCell(t, super, name, rec, ttl, cut)
	indexed := super == nil && t.HasIndexes() && t.IndexedColumn(name)
	// A cell above every timestamp its key ever had wins without a read
	// (timestamps.go), unless the old record is needed anyway.
	blind := w.unique && !indexed && rec.flags&(flagRawName|flagRawSuper) == 0 && rec.timestamp > w.above
	if err := w.e.noteTimestamp(w.stripe, rec.timestamp); err != nil {
		return err
	}
	found := false
	if blind {
		// A later write of the name in this transaction must reconcile
		// with this one, not with the prefetched stored cell.
		w.pre.take(key)
		w.e.unreadWrites.Add(1)
	} else {
		var err error
		if found, err = w.get(key); err != nil {
			return fmt.Errorf("read cell: %w", err)
		}
	}
	if found {
		if !wins(rec, &w.old, w.now) {
			return nil
		}
		w.keepFirstNames(rec, &w.old)
	}
	val := appendRecord(w.slab.scratch(recordSize(rec)), rec)
	entry := w.cellEntry(key, val, rec, t)
	if indexed {
		var old *record
		if found {
			old = &w.old
		}
		if err := w.updateIndex(rp, t, name, old, rec, entry.ExpiresAt); err != nil {
			return err
		}
	}
	if t.Counter {
		w.e.counterFilters.probe(t, key).note(w.e.counterFilters)
		w.counterWritten(key, rec, 0, found)
	}
	return w.txn.SetEntry(entry)
}

// prepareCell sets the flags and fields of a cell record that depend on
// its family, its names and its TTL.
func (w *writer) prepareCell(t *store.Table, super, name []byte, rec *record, ttl int32, cut bool) {
	nameType := t.CellNameType()
	if cut {
		rec.flags |= flagCutKey
	}
	if cut || !nameType.Lossless() {
		rec.flags |= flagRawName
		rec.rawName = nameType.Normalize(name)
	}
	if super != nil && (cut || !t.Comparator.Lossless()) {
		rec.flags |= flagRawSuper
		rec.rawSuper = t.Comparator.Normalize(super)
	}
	if ttl > 0 {
		rec.flags |= flagExpiring
		rec.ttl = uint32(ttl)
		rec.expiresAt = w.now + uint32(ttl)
	}
}

// keepFirstNames makes a winning record keep the raw names of the cell it
// replaces: names that compare equal share one cell, and the first name
// written keeps its bytes.
func (w *writer) keepFirstNames(rec, old *record) {
	if rec.flags&flagRawName != 0 && old.flags&flagRawName != 0 {
		rec.rawName = w.slab.copy(old.rawName)
	}
	if rec.flags&flagRawSuper != 0 && old.flags&flagRawSuper != 0 {
		rec.rawSuper = w.slab.copy(old.rawSuper)
	}
}

// cellEntry is the Badger entry of a cell: a dead one expires
// gc_grace_seconds after its death.
func (w *writer) cellEntry(key, val []byte, rec *record, t *store.Table) *badger.Entry {
	entry := w.entries.entry(key, val)
	if dead := localDeletionTime(rec); dead != ^uint32(0) {
		entry.ExpiresAt = w.badgerExpiry(dead, t.GCGrace())
	}
	return entry
}

// repeatedNames reports whether a put or cell deletion of ops names a
// cell that another one names too: the second must reconcile with the
// first. Names are compared as bytes, which is equality for the
// comparators whose writes may skip their read (those that keep names
// byte for byte).
func (w *writer) repeatedNames(ops []store.Op) bool {
	w.order = w.order[:0]
	for i := range ops {
		if k := ops[i].Kind; k == store.OpPut || k == store.OpDeleteCell {
			w.order = append(w.order, i)
		}
	}
	cmp := func(a, b int) int {
		if c := bytes.Compare(ops[a].Super, ops[b].Super); c != 0 {
			return c
		}
		return bytes.Compare(ops[a].Name, ops[b].Name)
	}
	if len(w.order) <= 8 {
		for i, a := range w.order {
			for _, b := range w.order[i+1:] {
				if cmp(a, b) == 0 {
					return true
				}
			}
		}
		return false
	}
	// Clients mostly send a row's cells in order: names in strictly
	// increasing order repeat none, which one pass shows.
	increasing := true
	for i := 1; i < len(w.order) && increasing; i++ {
		increasing = cmp(w.order[i-1], w.order[i]) < 0
	}
	if increasing {
		return false
	}
	slices.SortFunc(w.order, cmp)
	for i := 1; i < len(w.order); i++ {
		if cmp(w.order[i-1], w.order[i]) == 0 {
			return true
		}
	}
	return false
}

// get reads the record under key into w.old (a private copy, valid until
// the next get, or the prefetched copy, valid until the transaction ends)
// and reports whether it exists.
func (w *writer) get(key []byte) (bool, error) {
	val, found, err := w.getValue(key)
	if !found || err != nil {
		return false, err
	}
	return true, decodeRecord(val, &w.old)
}

// getValue reads the value under key: the prefetched copy, valid until
// the transaction ends, or a private copy, valid until the next read.
func (w *writer) getValue(key []byte) ([]byte, bool, error) {
	if p := w.pre.take(key); p != nil {
		return p.val, p.found, nil
	}
	item, err := w.txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if w.oldBuf, err = item.ValueCopy(w.oldBuf[:0]); err != nil {
		return nil, false, err
	}
	return w.oldBuf, true, nil
}

// putDeletion records a super column deletion at ts, unless a later one
// is already recorded. Such tombstones are kept until the data they shadow
// is purged, so they get no Badger expiry.
func (w *writer) putDeletion(key []byte, t *store.Table, super []byte, ts int64) error {
	key, cut := finishKey(key)
	rec := record{flags: flagTombstone, timestamp: ts, deletedAt: w.now}
	if cut {
		rec.flags |= flagCutKey
	}
	if super != nil && (cut || !t.Comparator.Lossless()) {
		rec.flags |= flagRawSuper
		rec.rawSuper = t.Comparator.Normalize(super)
	}
	found, err := w.get(key)
	if err != nil {
		return fmt.Errorf("read deletion: %w", err)
	}
	if found {
		if w.old.tombstone() && w.old.timestamp >= ts {
			return nil
		}
		rec.flags |= w.old.flags & flagCutKey
		// Keep the first-written bytes of the super column name.
		if w.old.flags&flagRawSuper != 0 {
			rec.flags |= flagRawSuper
			rec.rawSuper = w.slab.copy(w.old.rawSuper)
		}
	}
	return w.set(key, appendRecord(w.slab.scratch(recordSize(&rec)), &rec))
}

// badgerExpiry is the Badger expiry (wall-clock Unix seconds) of a dead
// cell: gc_grace_seconds after it died on the engine's clock.
func (w *writer) badgerExpiry(dead uint32, gcGrace int64) uint64 {
	return badgerExpiry(w.realNow, w.now, dead, gcGrace)
}

// badgerExpiry converts a death on the engine's clock (now) into Badger's
// wall-clock expiry (realNow is the wall clock at the same instant).
func badgerExpiry(realNow int64, now, dead uint32, gcGrace int64) uint64 {
	at := realNow + (int64(dead) - int64(now)) + gcGrace
	if at < 1 {
		at = 1
	}
	return uint64(at)
}

func recordSize(r *record) int {
	return 32 + len(r.rawSuper) + len(r.rawName) + len(r.value)
}

// cellKey builds the logical key of a cell (before any cut).
func cellKey(s *slab, rp []byte, t *store.Table, super, name []byte) []byte {
	n := len(rp) + 8 + 2*len(super) + 2*len(name)
	k := append(s.scratch(n), rp...)
	k = append(k, kindCells)
	if t.Def.Super {
		k = t.Comparator.AppendKey(k, super)
		k = append(k, superCells)
		return t.SubComparator.AppendKey(k, name)
	}
	return t.Comparator.AppendKey(k, name)
}

// superPackKey builds the key of a super column's pack: its subcolumn
// prefix (pack.go).
func superPackKey(s *slab, rp []byte, t *store.Table, super []byte) []byte {
	k := append(s.scratch(len(rp)+8+2*len(super)), rp...)
	k = append(k, kindCells)
	k = t.Comparator.AppendKey(k, super)
	return append(k, superCells)
}

// superHeaderKey builds the logical key of a super column's header.
func superHeaderKey(s *slab, rp []byte, t *store.Table, super []byte) []byte {
	k := append(s.scratch(len(rp)+8+2*len(super)), rp...)
	k = append(k, kindCells)
	k = t.Comparator.AppendKey(k, super)
	return append(k, superHeader)
}
