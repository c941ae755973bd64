package badgerstore

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// Row images. A get_slice walks Badger's iterator over its row, and the
// iterator's seek and steps were 38% of thriftd's CPU under slices of 20
// columns. The cell cache (cell_cache.go) also keeps images of small rows
// of standard families: the cells a read of the whole row found live, in
// the comparator's order, with their records as stored. A read of names,
// of a range or of several ranges of a row that has an image is answered
// from it, without a snapshot and without reading the row's header.
//
// Only a slice that walked the whole row puts its image: one without
// bounds, of a count the row's live cells did not exceed, whose walk
// stayed within maxRowImage bytes of keys and records. Once it has its
// count, its walk goes on over dead cells to the next live one, or to
// the row's end, to tell; it walks no more than that, and never past
// maxRowImage bytes, beyond what it walked without images.
//
// An image holds the cells live when it was taken: those the row's
// deletion and its range tombstones do not shadow, and whose own deletion
// or expiry had not come. A cell written with a TTL keeps its expiry, and
// a read from the image skips the cells expired since; a cell dead when
// the image was taken stays dead, as the clock only moves on. Its stamp,
// as a cell's, is the version of its row's slot the reader saw before it
// opened its snapshot, and it answers only a read whose ticket has the
// same even version.
//
// An image that answers a read is what Badger held when the read took its
// ticket: the version was the same when the image was put, so no write of
// the row began in between (and every write that ended before commits
// before it raises the version the second time). Unlike a cell from the
// cache, an image answers its read alone, with nothing from a snapshot to
// agree with, so the read needs no second look at the version: a write
// that began after its ticket is one the read may precede.

// maxRowImage bounds the keys and records a slice walks to take its
// row's image: about a hundred cells of 64-byte values.
const maxRowImage = 16 << 10

// kindImage follows a row prefix in the cell cache's key of the row's
// image. Badger never stores it: the kinds of keys stored are below it.
const kindImage byte = 0xff

// imageKey appends the cache key of the image of the row with prefix rp.
func imageKey(dst, rp []byte) []byte {
	return append(append(dst, rp...), kindImage)
}

// rowImage is the image of a row: the number of its cells (uint32), the
// offset of each cell from the image's start (uint32 each, in order),
// then the cells, each its key after the row's cell prefix and its record,
// each of them preceded by its length (uvarint).
type rowImage []byte

func (m rowImage) count() int { return int(binary.BigEndian.Uint32(m)) }

// cell returns the key (after the row's cell prefix) and the record of
// cell i.
func (m rowImage) cell(i int) (enc, rec []byte) {
	b := m[binary.BigEndian.Uint32(m[4+4*i:]):]
	n, k := binary.Uvarint(b)
	enc, b = b[k:k+int(n)], b[k+int(n):]
	n, k = binary.Uvarint(b)
	return enc, b[k : k+int(n)]
}

// search returns the first cell whose key is at or after enc.
func (m rowImage) search(enc []byte) int {
	return sort.Search(m.count(), func(i int) bool {
		e, _ := m.cell(i)
		return bytes.Compare(e, enc) >= 0
	})
}

// imageBuilder gathers the cells of an image in the order of a walk.
type imageBuilder struct {
	offsets []uint32 // of each cell in body
	body    []byte
}

func (b *imageBuilder) add(enc, rec []byte) {
	b.offsets = append(b.offsets, uint32(len(b.body)))
	b.body = binary.AppendUvarint(b.body, uint64(len(enc)))
	b.body = append(b.body, enc...)
	b.body = binary.AppendUvarint(b.body, uint64(len(rec)))
	b.body = append(b.body, rec...)
}

// image returns the image of the cells added, which a walk backwards
// added in reverse order.
func (b *imageBuilder) image(reversed bool) rowImage {
	n := len(b.offsets)
	head := 4 + 4*n
	img := make([]byte, head, head+len(b.body))
	binary.BigEndian.PutUint32(img, uint32(n))
	for i, off := range b.offsets {
		at := i
		if reversed {
			at = n - 1 - i
		}
		binary.BigEndian.PutUint32(img[4+4*at:], uint32(head)+off)
	}
	return append(img, b.body...)
}

// takesImage reports whether a slice of q walks its row from one end
// without a bound, so that it may take the row's image.
func takesImage(t *store.Table, q *store.SliceQuery) bool {
	return q.Names == nil && len(q.Ranges) == 0 && len(q.Start) == 0 && len(q.Finish) == 0 &&
		q.Count > 0 && q.Super == nil && cacheableCells(t) && !packedTable(t)
}

// sliceTakingImage is slice of a query takesImage accepts, which puts
// the row's image in the cell cache when its walk took in the whole row.
func (r *reader) sliceTakingImage(q *store.SliceQuery, out *store.SliceResult) error {
	out.Cells = slices.Grow(out.Cells, cellsHint(q))
	prefix := append(append(r.cellPrefix[:0], r.rp...), kindCells)
	r.cellPrefix = prefix
	r.upper = appendPrefixEnd(r.upper[:0], prefix)
	c := r.cursor(prefix, prefix, r.upper, nil, q.Reversed)
	defer c.close()
	var b imageBuilder
	walked := 0
	whole := true     // b holds every live cell walked
	answering := true // the walk has not yet given q its count
	for {
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		walked += len(c.key) + len(c.raw)
		if walked > maxRowImage {
			if !answering {
				return nil
			}
			whole = false
		}
		if r.dead(c.key, &c.rec, r.rowDel) {
			continue
		}
		if !answering {
			return nil // the row has more live cells than q counts
		}
		enc := c.key[len(prefix):]
		if whole {
			b.add(enc, c.raw)
		}
		name, err := r.cellName(enc, r.t.Comparator, &c.rec)
		if err != nil {
			return err
		}
		out.Cells = append(out.Cells, keepCell(out, name, &c.rec))
		answering = len(out.Cells) < q.Count
	}
	if whole {
		r.images.putImage(&r.ticket, r.t.Backend.(*tableState), r.rp, b.image(q.Reversed))
	}
	return nil
}

// putImage keeps img, the image of the row with prefix rp of family st
// that a read with ticket t took in its snapshot, if nothing changed since
// the ticket.
func (c *cellCache) putImage(t *cellTicket, st *tableState, rp []byte, img rowImage) {
	if c == nil || !t.ok {
		return
	}
	var kb [80]byte
	key := imageKey(kb[:0], rp)
	c.entries.putStamped(0, key, img, 0, t.version, true, func() bool { return c.current(t) })
	st.noteImaged()
}

// noteImaged records that the cell cache may hold an image or a mark of
// one of the family's rows, so that its reads look for them.
func (st *tableState) noteImaged() {
	if !st.imaged.Load() {
		st.imaged.Store(true)
	}
}

// sliceFromImage appends what q selects in the row with prefix rp to out
// from the row's image, if the cell cache holds one for the ticket, and
// reports whether it did; if not, it returns the row's mark, if the
// cache holds one for the ticket.
func (e *Engine) sliceFromImage(t *store.Table, rp []byte, ticket *cellTicket, q *store.SliceQuery, out *store.SliceResult) (bool, imageMark, error) {
	c := e.cells
	if c == nil || !ticket.ok || !t.Backend.(*tableState).imaged.Load() {
		return false, noMark, nil
	}
	var kb [80]byte
	key := imageKey(kb[:0], rp)
	a := imageAnswer{t: t, q: q, out: out, now: e.nowSeconds()}
	mark := noMark
	hit := c.entries.readStamped(0, key, time.Now().Unix(), ticket.version, true, func(img []byte) bool {
		switch {
		case len(img) == 0:
			mark = markReadOnce
			return false
		case len(img) < imageMinLen:
			mark = markTooWide
			return false
		}
		a.err = a.answer(rowImage(img), rp)
		return true
	})
	if hit && q.Names != nil {
		t.Backend.(*tableState).namesImages.answer(ticket.slot)
	}
	return hit, mark, a.err
}

// Reads of names take images too. A read of named cells of a row with no
// image reads them point by point, which costs less than a walk of the
// row. So a read of names leaves a mark, an entry under the image's key
// stamped as images are, and a second read of names of the row, while no
// write of the row's slot began, walks the row and takes its image, which
// answers it and every read of the row after it: a row read twice is
// likely read again, and a row read once costs one mark. A row wider than
// an image gets a mark that says so, and its reads go on point by point
// until a write of its slot. Under thriftbench's insert and get modes (5
// s each after a 3 s warm-up, 20 cells in each of 10,000 preloaded rows),
// the gets that read Badger went from 186,175 of 532,721 to two reads for
// each row, a point read and a walk, and thriftd made 12% more gets.

// A walk pays only if its image answers reads after it. When gets spread
// over a store far larger than the cache, rows are seldom read a third
// time, and a walk costs more than the point reads it spares (an
// iterator seeks in every table that spans the row, where a point read
// skips most of them on their bloom filters): under gets of 200,000
// preloaded rows, each read about once, marks and walks made gets about
// 10% slower. So each family counts, over windows of
// imageWindowReads reads of names, the images those reads took and the
// reads the images answered; after a window in which they took
// imageJudgedTakes images or more and the images answered fewer reads
// than that, its reads of names leave no marks and take no images for
// imageOffWindows windows, then try again.
const (
	imageWindowReads = 1 << 15
	imageJudgedTakes = 64
	imageOffWindows  = 7
	// imageCountSample: reads of names are counted in one row slot of
	// imageCountSample, by weight, so that most reads write no counter
	// the family's other readers share.
	imageCountSample = 8
)

// imagePayoff is a family's count of what images do for its reads of
// names, over the current window. Its figures are approximate, which is
// all the choice needs.
type imagePayoff struct {
	reads    atomic.Int64 // reads of names (sampled)
	taken    atomic.Int64 // images they took
	answered atomic.Int64 // reads of names images answered (sampled)
	off      atomic.Int32 // windows left in which reads of names take no images
}

// pays counts a read of names of a row in slot that no image answered,
// and reports whether it should leave a mark or take an image.
func (p *imagePayoff) pays(slot rowSlot) bool {
	if slot%imageCountSample == 0 {
		if n := p.reads.Add(imageCountSample); n >= imageWindowReads && p.reads.CompareAndSwap(n, 0) {
			p.judge()
		}
	}
	return p.off.Load() == 0
}

// judge closes a window.
func (p *imagePayoff) judge() {
	taken, answered := p.taken.Swap(0), p.answered.Swap(0)
	switch off := p.off.Load(); {
	case off > 0:
		p.off.Store(off - 1)
	case taken >= imageJudgedTakes && answered < taken:
		p.off.Store(imageOffWindows)
	}
}

// answer counts a read of names of a row in slot that an image answered.
func (p *imagePayoff) answer(slot rowSlot) {
	if slot%imageCountSample == 0 {
		p.answered.Add(imageCountSample)
		if n := p.reads.Add(imageCountSample); n >= imageWindowReads && p.reads.CompareAndSwap(n, 0) {
			p.judge()
		}
	}
}

// imageMark is what the cell cache holds under a row's image key in
// place of an image: marks are shorter than any image (imageMinLen).
type imageMark uint8

const (
	noMark       imageMark = iota // neither an image nor a mark
	markReadOnce                  // a read of names found no image: an empty entry
	markTooWide                   // a walk found the row wider than maxRowImage: one byte
)

// imageMinLen is the length of the smallest image, that of a row without
// live cells: its count of cells.
const imageMinLen = 4

// putMark keeps mark under the image key of the row with prefix rp, for
// a read with ticket t, if nothing changed since the ticket.
func (c *cellCache) putMark(t *cellTicket, st *tableState, rp []byte, mark imageMark) {
	if c == nil || !t.ok || mark == noMark {
		return
	}
	var kb [80]byte
	var room [1]byte
	key := imageKey(kb[:0], rp)
	c.entries.putStamped(0, key, room[:mark-1], 0, t.version, true, func() bool { return c.current(t) })
	st.noteImaged()
}

// takeImage walks the reader's whole row and puts its image in the cell
// cache, for the reader's ticket, and returns it; or, if the row's keys
// and records go past maxRowImage, marks the row too wide and returns
// false.
func (r *reader) takeImage(c *cellCache) (rowImage, bool, error) {
	prefix := append(append(r.cellPrefix[:0], r.rp...), kindCells)
	r.cellPrefix = prefix
	r.upper = appendPrefixEnd(r.upper[:0], prefix)
	cur := r.cursor(prefix, prefix, r.upper, nil, false)
	defer cur.close()
	var b imageBuilder
	walked := 0
	for {
		ok, err := cur.next()
		if err != nil {
			return nil, false, err
		}
		if !ok {
			break
		}
		if walked += len(cur.key) + len(cur.raw); walked > maxRowImage {
			c.putMark(&r.ticket, r.t.Backend.(*tableState), r.rp, markTooWide)
			return nil, false, nil
		}
		if !r.dead(cur.key, &cur.rec, r.rowDel) {
			b.add(cur.key[len(prefix):], cur.raw)
		}
	}
	img := b.image(false)
	st := r.t.Backend.(*tableState)
	c.putImage(&r.ticket, st, r.rp, img)
	st.namesImages.taken.Add(1)
	return img, true, nil
}

// namesTakeImage reports whether a read of q, of names of a row in slot,
// in t may take the row's image, or leave a mark.
func namesTakeImage(t *store.Table, q *store.SliceQuery, slot rowSlot) bool {
	return q.Names != nil && q.Super == nil && cacheableCells(t) && !packedTable(t) &&
		t.Backend.(*tableState).namesImages.pays(slot)
}

// imageAnswer answers a query from a row's image.
type imageAnswer struct {
	t    *store.Table
	q    *store.SliceQuery
	out  *store.SliceResult
	now  uint32
	rec  record
	name []byte
	err  error
}

// answer appends what the query selects in img, the image of the row with
// prefix rp, to the answer's result.
func (a *imageAnswer) answer(img rowImage, rp []byte) error {
	q := a.q
	if q.Names == nil && q.Count <= 0 {
		return nil
	}
	a.out.Cells = slices.Grow(a.out.Cells, cellsHint(q))
	a.reserve(img)
	var pb [80]byte
	prefix := append(append(pb[:0], rp...), kindCells)
	cmp := a.t.Comparator
	if q.Names != nil {
		var kb [96]byte
		var one [1][]byte
		for _, k := range sortedNameKeys(one[:0], kb[:0], prefix, cmp, q.Names) {
			enc := k[len(prefix):]
			i := img.search(enc)
			if i == img.count() {
				continue
			}
			if e, rec := img.cell(i); bytes.Equal(e, enc) {
				if _, err := a.visit(e, rec); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if len(q.Ranges) > 0 {
		for _, kr := range mergedRanges(prefix, cmp, q) {
			more, err := a.walk(img, prefix, kr.lower, kr.upper)
			if err != nil || !more {
				return err
			}
		}
		return nil
	}
	var lb, ub [80]byte
	lower, upper := appendRangeKeys(lb[:0], ub[:0], prefix, cmp, q)
	_, err := a.walk(img, prefix, lower, upper)
	return err
}

// reserve makes room in the result for the names and values of the cells
// the query may take: their share of the image's cells, whose records
// hold at least their values, and their keys their names.
func (a *imageAnswer) reserve(img rowImage) {
	n := img.count()
	if n == 0 {
		return
	}
	want := min(a.q.Count, n)
	if a.q.Names != nil {
		want = min(len(a.q.Names), n)
	}
	a.out.Reserve((len(img) - 4 - 4*n) * want / n)
}

// walk visits the image's cells with logical keys in [lower, upper), in
// the query's direction; it reports false when the query's count is met.
func (a *imageAnswer) walk(img rowImage, prefix, lower, upper []byte) (bool, error) {
	if bytes.Compare(lower, upper) >= 0 {
		return true, nil
	}
	// Both bounds are logical keys of the row's cells, but for an upper
	// bound past all of them (prefixEnd), which bounds nothing here.
	lo := lower[len(prefix):]
	hi, open := upper[len(prefix):], !bytes.HasPrefix(upper, prefix)
	n := img.count()
	if !a.q.Reversed {
		for i := img.search(lo); i < n; i++ {
			enc, rec := img.cell(i)
			if !open && bytes.Compare(enc, hi) >= 0 {
				break
			}
			if more, err := a.visit(enc, rec); err != nil || !more {
				return false, err
			}
		}
		return true, nil
	}
	end := n
	if !open {
		end = img.search(hi)
	}
	for i := end - 1; i >= 0; i-- {
		enc, rec := img.cell(i)
		if bytes.Compare(enc, lo) < 0 {
			break
		}
		if more, err := a.visit(enc, rec); err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// visit appends the cell with key enc and record raw to the result if it
// is still live, and reports whether the query wants more.
func (a *imageAnswer) visit(enc, raw []byte) (bool, error) {
	rec := &a.rec
	if err := decodeRecord(raw, rec); err != nil {
		return false, err
	}
	if !rec.live(a.now) {
		return true, nil
	}
	name := rec.rawName
	if rec.flags&flagRawName == 0 {
		var err error
		if a.name, _, err = a.t.Comparator.DecodeKey(a.name[:0], enc); err != nil {
			return false, err
		}
		name = a.name
	}
	a.out.Cells = append(a.out.Cells, keepCell(a.out, name, rec))
	return a.q.Names != nil || len(a.out.Cells) < a.q.Count, nil
}
