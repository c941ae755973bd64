package badgerstore

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
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

// nsRowMarks is the namespace of row marks.
const nsRowMarks byte = 0x06

// rowMarkKey is the key of the mark of the row with prefix rp.
func rowMarkKey(s *slab, rp []byte) []byte {
	k := s.copy(rp)
	k[0] = nsRowMarks
	return k
}

// rowMarked reports whether the row with prefix rp has its mark, read
// where a prefetch of the row reads (rowReader).
func (w *writer) rowMarked(rp []byte) (bool, error) {
	_, err := w.rowReader(rp).Get(rowMarkKey(&w.slab, rp))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read row mark: %w", err)
	}
	return true, nil
}

// markRow writes the mark of the row with prefix rp, which is writing a
// pack, unless the row mutation has seen it or a pack that implies it.
func (w *writer) markRow(rp []byte) error {
	if w.markSeen {
		return nil
	}
	w.markSeen = true
	return w.set(rowMarkKey(&w.slab, rp), nil)
}
