package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Row marks. A write into a pack reads the pack first (pack.go), and a row
// mutation that writes many packs reads them with one iterator over the
// row (prefetch.go). When the row has no pack yet, as in a super batch
// into a new row, that iterator still seeks in every memtable and in
// every table whose key range spans the row, loading and decompressing a
// block of each, to find nothing. Badger's bloom filters answer for one
// whole key without a block, not for a row. Skipping that read took 10 to
// 23% off thriftd's CPU per batch under super batches into new rows
// (docs/PERFORMANCE-LOG.md, "Row marks").
//
// So each row of a family laid out with row marks that has a pack also
// has a mark, an empty entry under the row's prefix in namespace
// nsRowMarks instead of nsData:
//
//	0x06 data-id row-key-part
//
// A writer that writes a pack it did not find writes the row's mark in
// the same transaction, unless it has seen the mark or another pack of
// the row in the row mutation (a pack implies the mark). A row mutation
// that would read at least prefetchMinCells packs reads the mark first, a
// point read the bloom filters answer, and when the mark is absent takes
// every pack of the row as absent without reading it. Only pack keys are
// vouched for: a super column too long to be packed, and the subcolumns
// of a dissolved pack, are read as before.
//
// Marks are not removed with the packs: a row whose packs were collected
// or expired keeps its mark, which costs that row the read it would have
// cost without marks. They go with the family's data id (drop.go).
// Whether a family has marks is fixed when its data id is made, as
// packing is: packed families stored before marks existed have none, and
// their writers read every pack.

// Each marked family also has a filter of the rows that may have a mark
// (key_filter.go), which the writer of a mark puts the row in. A row the
// filter does not hold has no pack, and its writers read neither the mark
// nor the packs; a row it holds very likely has its mark, whose read is
// skipped too: its packs are read, and one found implies the mark (if
// none is, the mark is read before one is written again). Until
// the filter is complete (a family with data at open, while its marks are
// listed) or once it is full, a row it does not hold has its mark read.

// nsRowMarks is the namespace of row marks.
const nsRowMarks byte = 0x06

// rowMarkKey is the key of the mark of the row with prefix rp.
func rowMarkKey(s *slab, rp []byte) []byte {
	k := s.copy(rp)
	k[0] = nsRowMarks
	return k
}

// rowMarkPrefix is the prefix of the marks of a family's data id.
func rowMarkPrefix(dataID uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{nsRowMarks}, dataID)
}

// markState is what a writer learns of a row's mark before reading the
// row's packs.
type markState int

const (
	// markAbsent: the row has no mark, so no pack.
	markAbsent markState = iota
	// markStored: the mark was read; the row has it.
	markStored
	// markLikely: the family's filter holds the row; the mark was not
	// read, and only a pack found proves it.
	markLikely
)

// rowMark tells whether the row with prefix rp of the marked family t
// has its mark: from the family's filter if it knows, else read where a
// prefetch of the row reads (rowReader).
func (w *writer) rowMark(rp []byte, t *store.Table) (markState, error) {
	key := rowMarkKey(&w.slab, rp)
	probe := w.e.markFilters.probe(t, key)
	switch {
	case probe.absent():
		w.e.markFilters.skipped.Add(1)
		return markAbsent, nil
	case probe.held:
		return markLikely, nil
	}
	_, err := w.rowReader(rp).Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return markAbsent, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read row mark: %w", err)
	}
	return markStored, nil
}

// rowWithoutPacks reports whether the filter of the marked family t
// vouches that the row with prefix rp has no mark, so no pack.
func (w *writer) rowWithoutPacks(rp []byte, t *store.Table) bool {
	if !markedTable(t) || !w.e.markFilters.probe(t, rowMarkKey(&w.slab, rp)).absent() {
		return false
	}
	w.e.markFilters.skipped.Add(1)
	return true
}

// markRow writes the mark of the row with prefix rp of the marked family
// t, which is writing a pack, unless the row mutation has seen it or a
// pack that implies it, and puts the row into the family's filter first.
// A row the filter held whose packs written now are all new (a batch into
// new super columns of an existing row) has its mark read instead, as
// before the filter, rather than written again.
func (w *writer) markRow(rp []byte, t *store.Table) error {
	if w.markSeen {
		return nil
	}
	w.markSeen = true
	key := rowMarkKey(&w.slab, rp)
	if w.markLikely {
		_, err := w.rowReader(rp).Get(key)
		if err == nil {
			return nil
		}
		if !errors.Is(err, badger.ErrKeyNotFound) {
			return fmt.Errorf("read row mark: %w", err)
		}
	}
	w.e.markFilters.probe(t, key).note(w.e.markFilters)
	return w.set(key, nil)
}
