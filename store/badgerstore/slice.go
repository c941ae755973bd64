package badgerstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// noDeletion is a deletion timestamp that shadows nothing.
const noDeletion = math.MinInt64

// reader reads one row inside a read-only transaction.
type reader struct {
	txn    *badger.Txn
	t      *store.Table
	now    uint32
	rp     []byte // row prefix
	rowDel int64  // the row's deletion timestamp
	ranges []rangeTombstone
	buf    []byte // scratch for keys
	name   []byte // scratch for decoded names

	// rowPackRead: the row pack of a row-packed family was read
	// (rowpack.go); rowPackWhole: the row is packed whole, its cells
	// rowPackCells, which alias rowPackVal or rowPackBody. rowFloorRoom
	// holds the row pack's key (rowFloor).
	rowPackRead, rowPackWhole bool
	rowPackCells              []packCell
	rowPackVal, rowPackBody   []byte
	rowFloorRoom              []byte

	// val and rec hold the record of the named cell being read
	// (namedCells), reused from one name to the next.
	val []byte
	rec record
	// rpBuf holds the row prefix of most rows, so that a read does not
	// allocate it.
	rpBuf [64]byte
	// fwd, when set, is an iterator forward cursors reuse instead of
	// opening their own (a scan's).
	fwd *seekIter
	// headers, when set, tells the rows that have no header (headers.go);
	// nil: every row is looked up.
	headers *headerFilter
	// cells and ticket, when the ticket is set, let a read of one named
	// cell use the cell cache (cell_cache.go); images and ticket let a
	// slice of the whole row put the row's image there (row_image.go).
	cells  *cellCache
	images *cellCache
	ticket cellTicket
	// rowPacks, when set with the ticket, lets wholeRowPack take the
	// row pack from the cell cache, and put there the one it read from
	// Badger (rowpack.go).
	rowPacks *cellCache
	// cellPrefix, lower and upper hold the keys of a walk of a row's
	// cells (sliceRowCells, sliceCells), and cur the cursor of a forward
	// walk on fwd, with its buffers (curBusy while a walk has it): the
	// rows of a scan reuse them where each row allocated its own, about
	// six allocations a row.
	cellPrefix, lower, upper []byte
	cur                      cursor
	curBusy                  bool
	// prefixRoom, nameRoom, keyRoom and oneKey are the first room of
	// cellPrefix, of name, and of the sorted key of a read of one named
	// cell (namedCells): a get allocates none of them.
	prefixRoom [80]byte
	nameRoom   [64]byte
	keyRoom    [96]byte
	oneKey     [1][]byte
}

func (e *Engine) newReader(txn *badger.Txn, t *store.Table, key []byte) (*reader, error) {
	return e.newReaderOf(txn, t, nil, key)
}

// newReaderOf is newReader of a row whose prefix the caller made
// already (rp; nil: the reader makes it from key).
func (e *Engine) newReaderOf(txn *badger.Txn, t *store.Table, rp, key []byte) (*reader, error) {
	r := e.takeReader()
	if rp != nil {
		r.rp = append(r.rpBuf[:0], rp...)
	}
	return r, e.openReader(r, txn, t, key)
}

// openReader readies r for a read of the row key of t in txn, whose
// prefix is r.rp if set (else openReader makes it), and reads the row's
// deletions.
func (e *Engine) openReader(r *reader, txn *badger.Txn, t *store.Table, key []byte) error {
	r.txn, r.t, r.now, r.headers = txn, t, e.nowSeconds(), &e.headers
	r.cellPrefix, r.name = r.prefixRoom[:0], r.nameRoom[:0]
	if r.rp == nil {
		r.rp, _ = e.rowPrefix(r.rpBuf[:0], t, key)
	}
	return r.loadRow()
}

// Readers of one row's reads are kept for reuse in a sync.Pool: with
// the rooms that spare a get its allocations, a reader is over a
// kilobyte, half of what a single-column get allocated, and its value
// and key buffers were another allocation or two. keptReaderBuffer bounds
// the buffers a kept reader holds on to.
const keptReaderBuffer = 4 << 10

// takeReader returns a zero reader, but for the buffers of a reader
// given back.
func (e *Engine) takeReader() *reader {
	if r, ok := e.readers.Get().(*reader); ok {
		return r
	}
	return new(reader)
}

// releaseReader gives back a reader that is done. Only reads that walk
// their cells with cursors of their own (no fwd) give theirs back: each
// such cursor is closed when its walk ends, and nothing a read answered
// points into its reader (keepCell copies).
func (e *Engine) releaseReader(r *reader) {
	val, buf, floor := r.val[:0], r.buf[:0], r.rowFloorRoom[:0]
	packVal, packBody, packCells := r.rowPackVal[:0], r.rowPackBody[:0], r.rowPackCells[:0]
	clear(packCells[:cap(packCells)])
	*r = reader{rowFloorRoom: floor}
	if cap(packVal)+cap(packBody) <= keptRowPackBuffers {
		r.rowPackVal, r.rowPackBody, r.rowPackCells = packVal, packBody, packCells
	}
	if cap(val) <= keptReaderBuffer {
		r.val = val
	}
	if cap(buf) <= keptReaderBuffer {
		r.buf = buf
	}
	e.readers.Put(r)
}

// loadRow reads the row's deletions: its header and range tombstones.
// It starts each row's read (a scan's reader reads row after row).
func (r *reader) loadRow() error {
	r.rowDel, r.ranges = noDeletion, nil
	r.rowPackRead, r.rowPackWhole, r.rowPackCells = false, false, r.rowPackCells[:0]
	if !r.headers.mayHave(r.rp) {
		return nil // headers.go
	}
	h, found, err := readHeader(r.txn, append(r.scratch(r.rp), kindRowHeader))
	if err != nil || !found {
		return err
	}
	if h.tombstone() {
		r.rowDel = h.timestamp
	}
	if h.flags&flagHasRanges != 0 {
		r.ranges, err = loadRangeTombstones(r.txn, r.rp)
	}
	return err
}

// dead reports whether the cell under the logical key is deleted or
// expired, or shadowed by a deletion at del (the row's or its super
// column's) or by a range tombstone.
func (r *reader) dead(key []byte, rec *record, del int64) bool {
	if !rec.live(r.now) || rec.timestamp <= del {
		return true
	}
	if len(r.ranges) == 0 {
		return false
	}
	suffix := key[len(r.rp)+1:]
	for i := range r.ranges {
		if r.ranges[i].covers(suffix, rec.timestamp) {
			return true
		}
	}
	return false
}

func (r *reader) scratch(prefix []byte) []byte {
	r.buf = append(r.buf[:0], prefix...)
	return r.buf
}

// deletionAt returns the deletion timestamp recorded under a header key.
func (r *reader) deletionAt(key []byte) (int64, error) {
	cells, whole, err := r.wholeRowPack()
	if err != nil {
		return 0, err
	}
	if !whole {
		return headerDeletion(r.txn, key)
	}
	val, ok := r.rowPackCell(cells, key)
	if !ok {
		return noDeletion, nil
	}
	var h record
	if err := decodeRecord(val, &h); err != nil {
		return 0, fmt.Errorf("read header: %w", err)
	}
	if !h.tombstone() {
		return noDeletion, nil
	}
	return h.timestamp, nil
}

// rebuild rebuilds the logical key of a cut key from its record.
func (r *reader) rebuild(dst []byte, rec *record) []byte {
	k := append(dst, r.rp...)
	k = append(k, kindCells)
	if !r.t.Def.Super {
		return r.t.Comparator.AppendKey(k, rec.rawName)
	}
	k = r.t.Comparator.AppendKey(k, rec.rawSuper)
	if rec.flags&flagRawName == 0 {
		return append(k, superHeader)
	}
	k = append(k, superCells)
	return r.t.SubComparator.AppendKey(k, rec.rawName)
}

// cellVisitor receives live cells; name and rec are valid only during the
// call. Returning false stops the walk.
type cellVisitor func(name []byte, rec *record) bool

// Slice implements store.Engine.
func (e *Engine) Slice(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery, out *store.SliceResult) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTable(t); err != nil {
		return err
	}
	if err := e.settleRow(ctx, t, key); err != nil {
		return err
	}
	// A read of a standard row takes its cell cache ticket before its
	// snapshot (cell_cache.go), and is answered from the row's image
	// when the cache has one (row_image.go). A read of a row-packed row
	// takes one too, for its row pack (rowpack.go).
	r := e.takeReader()
	defer e.releaseReader(r)
	mark := noMark
	switch {
	case e.cells != nil && q.Super == nil && cacheableCells(t):
		r.rp, _ = e.rowPrefix(r.rpBuf[:0], t, key)
		r.ticket = e.cells.ticket(r.rp)
		done, m, err := e.sliceFromImage(t, r.rp, &r.ticket, q, out)
		if done {
			return err
		}
		mark = m
	case e.cells != nil && rowPackedTable(t):
		r.rp, _ = e.rowPrefix(r.rpBuf[:0], t, key)
		r.ticket = e.cells.ticket(r.rp)
		r.rowPacks = e.cells
	}
	snap := e.acquireRead()
	defer e.releaseRead(snap)
	if err := e.openReader(r, snap.txn, t, key); err != nil {
		return err
	}
	if r.ticket.ok && namesTakeImage(t, q, r.ticket.slot) {
		// The second read of names of a row takes its image, the first
		// leaves a mark (row_image.go).
		switch mark {
		case noMark:
			e.cells.putMark(&r.ticket, t.Backend.(*tableState), r.rp, markReadOnce)
		case markReadOnce:
			img, whole, err := r.takeImage(e.cells)
			if err != nil {
				return err
			}
			if whole {
				a := imageAnswer{t: t, q: q, out: out, now: e.nowSeconds()}
				return a.answer(img, r.rp)
			}
		}
	}
	switch {
	case len(q.Names) == 1 && cacheableCells(t):
		r.cells = e.cells
	case r.ticket.ok && takesImage(t, q):
		r.images = e.cells
		return r.sliceTakingImage(q, out)
	}
	return r.slice(q, out)
}

// slice appends what q selects in the reader's row to out.
func (r *reader) slice(q *store.SliceQuery, out *store.SliceResult) error {
	if r.t.Def.Super && q.Super == nil {
		return r.sliceSupers(q, out)
	}
	out.Cells = slices.Grow(out.Cells, cellsHint(q))
	return r.sliceRowCells(q, func(name []byte, rec *record) bool {
		out.Cells = append(out.Cells, keepCell(out, name, rec))
		return q.Names != nil || len(out.Cells) < q.Count
	})
}

// cellsHintMax bounds the room a slice makes for its cells before it
// knows how many the row has.
const cellsHintMax = 32

// cellsHint is the room a slice of q makes for its cells at once, rather
// than growing them by doubling (six allocations for 20 cells): every
// named cell, or the count up to cellsHintMax.
func cellsHint(q *store.SliceQuery) int {
	if q.Names != nil {
		return len(q.Names)
	}
	return min(max(q.Count, 0), cellsHintMax)
}

// cursor opens a cursor over [lower, upper) under prefix, on the reader's
// shared forward iterator when it has one.
// floor is the key of a pack that may hold subcolumns of the range (nil
// if none may).
func (r *reader) cursor(prefix, lower, upper, floor []byte, reverse bool) *cursor {
	if r.fwd != nil && !reverse {
		if !r.curBusy {
			r.curBusy = true
			if r.cur.rebuild == nil {
				r.cur.rebuild = r.rebuild
			}
			r.cur.resetOn(r.fwd, lower, upper, floor, r.rowFloor(), &r.curBusy)
			return &r.cur
		}
		return newCursorOn(r.fwd, lower, upper, floor, r.rowFloor(), r.rebuild)
	}
	return newCursor(r.txn, prefix, lower, upper, floor, r.rowFloor(), reverse, r.rebuild)
}

// rowFloor is the key of the row pack the reader's row may have, which
// holds the cells of any range of it (nil in a family without).
func (r *reader) rowFloor() []byte {
	if !rowPackedTable(r.t) {
		return nil
	}
	r.rowFloorRoom = append(append(r.rowFloorRoom[:0], r.rp...), kindCells)
	return r.rowFloorRoom
}

// Count implements store.Engine.
func (e *Engine) Count(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := checkTable(t); err != nil {
		return 0, err
	}
	if err := e.settleRow(ctx, t, key); err != nil {
		return 0, err
	}
	snap := e.acquireRead()
	defer e.releaseRead(snap)
	r, err := e.newReader(snap.txn, t, key)
	if err != nil {
		return 0, err
	}
	n := 0
	if t.Def.Super && q.Super == nil {
		err = r.countSupers(q, &n)
		return n, err
	}
	// The number of live cells in a range does not depend on the
	// direction, so counts always walk forward.
	fq := *q
	if fq.Reversed {
		fq.Start, fq.Finish, fq.Reversed = q.Finish, q.Start, false
	}
	err = r.sliceRowCells(&fq, func([]byte, *record) bool {
		n++
		return fq.Names != nil || n < fq.Count
	})
	return n, err
}

func keepCell(out *store.SliceResult, name []byte, rec *record) store.Cell {
	c := store.Cell{
		Name:      out.Keep(name),
		Timestamp: rec.timestamp,
		TTL:       int32(rec.ttl),
		ExpiresAt: rec.expiresAt,
	}
	if rec.counter() {
		c.CounterValue = rec.counterValue()
	} else {
		c.Value = out.Keep(rec.value)
		if c.Value == nil {
			c.Value = []byte{}
		}
	}
	return c
}

// sliceRowCells walks the cells a query selects at cell level: the cells of
// a Standard row, or the subcolumns of one super column.
func (r *reader) sliceRowCells(q *store.SliceQuery, visit cellVisitor) error {
	if q.Names == nil && q.Count <= 0 {
		return nil
	}
	if !r.t.Def.Super {
		r.cellPrefix = append(append(r.cellPrefix[:0], r.rp...), kindCells)
		return r.sliceCells(r.cellPrefix, r.t.Comparator, q, r.rowDel, visit)
	}
	del, err := r.superDeletion(q.Super)
	if err != nil {
		return err
	}
	return r.sliceCells(r.subcolumnPrefix(q.Super), r.t.SubComparator, q, del, visit)
}

// superDeletion is the deletion timestamp that applies inside a super
// column: the later of the row's and the super column's own.
func (r *reader) superDeletion(super []byte) (int64, error) {
	k := append(r.scratch(r.rp), kindCells)
	k = r.t.Comparator.AppendKey(k, super)
	k = append(k, superHeader)
	del, err := r.deletionAt(k)
	r.buf = k
	if err != nil {
		return 0, err
	}
	return max(del, r.rowDel), nil
}

func (r *reader) subcolumnPrefix(super []byte) []byte {
	k := append(append([]byte{}, r.rp...), kindCells)
	k = r.t.Comparator.AppendKey(k, super)
	return append(k, superCells)
}

// sliceCells walks the cells under prefix that q selects, skipping cells
// shadowed by a deletion at del or later.
func (r *reader) sliceCells(prefix []byte, nameType marshal.Type, q *store.SliceQuery, del int64, visit cellVisitor) error {
	if q.Names != nil {
		return r.namedCells(prefix, nameType, q.Names, del, visit)
	}
	if len(q.Ranges) > 0 {
		for _, kr := range mergedRanges(prefix, nameType, q) {
			more, err := r.walkCells(prefix, nameType, kr.lower, kr.upper, q.Reversed, del, visit)
			if err != nil || !more {
				return err
			}
		}
		return nil
	}
	r.lower, r.upper = appendRangeKeys(r.lower[:0], r.upper[:0], prefix, nameType, q)
	_, err := r.walkCells(prefix, nameType, r.lower, r.upper, q.Reversed, del, visit)
	return err
}

// walkCells visits the live cells with logical keys in [lower, upper);
// it reports false when visit stopped the walk.
func (r *reader) walkCells(prefix []byte, nameType marshal.Type, lower, upper []byte, reversed bool, del int64, visit cellVisitor) (bool, error) {
	if bytes.Compare(lower, upper) >= 0 {
		return true, nil
	}
	// In a packed family, prefix is a super column's subcolumn prefix: the
	// key of its pack.
	var floor []byte
	if packedTable(r.t) {
		floor = prefix
	}
	c := r.cursor(prefix, lower, upper, floor, reversed)
	defer c.close()
	for {
		ok, err := c.next()
		if err != nil || !ok {
			return true, err
		}
		if r.dead(c.key, &c.rec, del) {
			continue
		}
		name, err := r.cellName(c.key[len(prefix):], nameType, &c.rec)
		if err != nil {
			return false, err
		}
		if !visit(name, &c.rec) {
			return false, nil
		}
	}
}

// keyRange is a range of logical keys [lower, upper).
type keyRange struct{ lower, upper []byte }

// mergedRanges turns the ranges of a multi-range query into disjoint key
// ranges in traversal order.
func mergedRanges(prefix []byte, nameType marshal.Type, q *store.SliceQuery) []keyRange {
	var krs []keyRange
	for _, nr := range q.Ranges {
		lower, upper := rangeKeys(prefix, nameType, &store.SliceQuery{Start: nr.Start, Finish: nr.Finish, Reversed: q.Reversed})
		if bytes.Compare(lower, upper) < 0 {
			krs = append(krs, keyRange{lower, upper})
		}
	}
	slices.SortFunc(krs, func(a, b keyRange) int { return bytes.Compare(a.lower, b.lower) })
	merged := krs[:0]
	for _, kr := range krs {
		if n := len(merged); n > 0 && bytes.Compare(kr.lower, merged[n-1].upper) <= 0 {
			if bytes.Compare(kr.upper, merged[n-1].upper) > 0 {
				merged[n-1].upper = kr.upper
			}
			continue
		}
		merged = append(merged, kr)
	}
	if q.Reversed {
		slices.Reverse(merged)
	}
	return merged
}

// rangeKeys turns a range query into logical keys [lower, upper) under
// prefix.
func rangeKeys(prefix []byte, nameType marshal.Type, q *store.SliceQuery) (lower, upper []byte) {
	return appendRangeKeys(nil, nil, prefix, nameType, q)
}

// appendRangeKeys is rangeKeys appending lower and upper to the slices
// given.
func appendRangeKeys(lower, upper, prefix []byte, nameType marshal.Type, q *store.SliceQuery) ([]byte, []byte) {
	lo, hi := q.Start, q.Finish
	if q.Reversed {
		lo, hi = hi, lo
	}
	lower = append(lower, prefix...)
	if len(lo) > 0 {
		lower = nameType.AppendLowerBound(lower, lo)
	}
	if len(hi) > 0 {
		upper = nameType.AppendUpperBound(append(upper, prefix...), hi)
	} else {
		upper = appendPrefixEnd(upper, prefix)
	}
	return lower, upper
}

// prefixEnd is the smallest key after every key starting with prefix
// (prefixes here never end in 0xff).
func prefixEnd(prefix []byte) []byte { return appendPrefixEnd(nil, prefix) }

// appendPrefixEnd appends prefixEnd(prefix) to dst.
func appendPrefixEnd(dst, prefix []byte) []byte {
	dst = append(dst, prefix...)
	dst[len(dst)-1]++
	return dst
}

// cellName returns the raw name of a cell: from its record when the key
// cannot give it back, else decoded from the key.
func (r *reader) cellName(encoded []byte, nameType marshal.Type, rec *record) ([]byte, error) {
	if rec.flags&flagRawName != 0 {
		return rec.rawName, nil
	}
	name, _, err := nameType.DecodeKey(r.name[:0], encoded)
	if err != nil {
		return nil, fmt.Errorf("decode column name %x: %w", encoded, err)
	}
	r.name = name
	return name, nil
}

// namedCells reads the named cells, in comparator order, each once.
func (r *reader) namedCells(prefix []byte, nameType marshal.Type, names [][]byte, del int64, visit cellVisitor) error {
	keys := sortedNameKeys(r.oneKey[:0], r.keyRoom[:0], prefix, nameType, names)
	if packedTable(r.t) {
		// prefix is the key of the super column's pack.
		if done, err := r.namedPackedCells(prefix, keys, nameType, del, visit); done || err != nil {
			return err
		}
	}
	for _, k := range keys {
		phys := k
		if len(k) > maxKey {
			phys, _ = finishKey(append([]byte{}, k...)) // cut in place
		}
		val, found, err := r.readCell(phys)
		if err != nil {
			return err
		}
		if !found {
			continue
		}
		rec := &r.rec
		if err := decodeRecord(val, rec); err != nil {
			return err
		}
		if r.dead(k, rec, del) {
			continue
		}
		name, err := r.cellName(k[len(prefix):], nameType, rec)
		if err != nil {
			return err
		}
		if !visit(name, rec) {
			return nil
		}
	}
	return nil
}

// readCell reads the record stored under the physical key of a cell into
// r.val, from the cell cache when the reader has a ticket and the cache
// holds it, else from Badger (putting it in the cache). A visitor keeps
// nothing of a record past its call, so r.val serves every cell.
func (r *reader) readCell(phys []byte) (val []byte, found bool, err error) {
	if r.cells != nil && r.ticket.ok {
		hit := r.cells.read(&r.ticket, phys, func(v []byte) { r.val = append(r.val[:0], v...) })
		if hit {
			return r.val, true, nil
		}
	}
	item, err := r.txn.Get(phys)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read column: %w", err)
	}
	val, err = item.ValueCopy(r.val[:0])
	if err != nil {
		return nil, false, fmt.Errorf("read column: %w", err)
	}
	r.val = val
	if r.cells != nil && r.ticket.ok {
		r.cells.put(&r.ticket, phys, val, item.ExpiresAt())
	}
	return val, true, nil
}

// sortedNameKeys encodes names under prefix, sorted, without duplicates,
// into keys and buf when they have room (both may be nil). The keys share
// one buffer: a key that outgrows it moves the next ones to a larger one,
// and keeps the bytes it was written into.
func sortedNameKeys(keys [][]byte, buf []byte, prefix []byte, nameType marshal.Type, names [][]byte) [][]byte {
	keys = slices.Grow(keys[:0], len(names))
	size := 0
	for _, n := range names {
		size += len(prefix) + len(n) + nameKeySlack
	}
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	buf = buf[:0]
	for _, n := range names {
		start := len(buf)
		buf = nameType.AppendKey(append(buf, prefix...), n)
		keys = append(keys, buf[start:len(buf):len(buf)])
	}
	slices.SortFunc(keys, bytes.Compare)
	return slices.CompactFunc(keys, bytes.Equal)
}

// nameKeySlack is the room sortedNameKeys makes for the encoding of a name
// beyond its bytes: a terminator, or a composite's lengths.
const nameKeySlack = 8

// namedPackedCells reads named subcolumns from the row pack of a row
// packed whole, else from the pack under prefix; it reports false when
// there is no pack with subcolumns there (the super column is empty, or
// its subcolumns are entries of their own).
func (r *reader) namedPackedCells(prefix []byte, keys [][]byte, nameType marshal.Type, del int64, visit cellVisitor) (bool, error) {
	if cells, whole, err := r.wholeRowPack(); err != nil || whole {
		if err != nil {
			return true, err
		}
		// A row pack's cells are keyed after the row's cell prefix.
		return true, r.visitNamedPackCells(cells, len(r.rp)+1, prefix, keys, nameType, del, visit)
	}
	item, err := r.txn.Get(prefix)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read super column: %w", err)
	}
	val, err := item.ValueCopy(nil)
	if err != nil {
		return false, fmt.Errorf("read super column: %w", err)
	}
	if !isPack(val) {
		return false, nil
	}
	cells, dissolved, err := decodePack(val, nil, nil)
	if err != nil {
		return false, fmt.Errorf("key %x: %w", prefix, err)
	}
	if dissolved {
		return false, nil
	}
	return true, r.visitNamedPackCells(cells, len(prefix), prefix, keys, nameType, del, visit)
}

// visitNamedPackCells visits the live cells that keys (under prefix, a
// super column's pack key) name among cells, a pack's cells or a row
// pack's, keyed by what follows the first skip bytes of a key.
func (r *reader) visitNamedPackCells(cells []packCell, skip int, prefix []byte, keys [][]byte, nameType marshal.Type, del int64, visit cellVisitor) error {
	var rec record
	for _, k := range keys {
		i, ok := findPackCell(cells, k[skip:])
		if !ok {
			continue
		}
		if err := decodeRecord(cells[i].rec, &rec); err != nil {
			return fmt.Errorf("key %x: %w", k, err)
		}
		if r.dead(k, &rec, del) {
			continue
		}
		name, err := r.cellName(k[len(prefix):], nameType, &rec)
		if err != nil {
			return err
		}
		if !visit(name, &rec) {
			return nil
		}
	}
	return nil
}
