package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Pack fragments (docs/PACK-FRAGMENTS.md). A write into a super column of
// a packed family reads the super column's pack to keep the subcolumns it
// does not name. A fragment is written instead of that read: a pack of
// some of the super column's cells, under a third marker after the super
// column's name,
//
//	row 0x02 enc(super) 0x00                 its header (a deletion), if any
//	row 0x02 enc(super) 0x01                 its pack
//	row 0x02 enc(super) 0x01 enc(name)       a subcolumn of a dissolved pack
//	row 0x02 enc(super) 0x02 seq             a fragment (seq: 8 bytes)
//
// Every comparator's encoding is prefix-free, so no key of another super
// column starts with row 0x02 enc(super), and a super column's fragments
// sort after its pack and before the next super column. A fragment's
// value is a pack's (flags, cells, compression) with packFragment set.
// A fragment's seq is unique in its super column, and fragments are
// written in the order of their seqs, after the pack they lie beside.
//
// Every reader merges the fragments of a super column into its pack's
// cells, one fragment after the other in the order they were written,
// by the writer's rules (reconcileCells), before it applies deletions
// and expiry: the cursor, a read of named subcolumns, and a write that
// reads the pack, which folds them (writes the merged pack and deletes
// the fragments, in one transaction). Collection folds a row's
// fragments before it walks the row, and purges nothing from a pack
// that has fragments beside it.
//
// A super column whose pack is dissolved never has fragments: the
// writer of a fragment knows the pack is not dissolved, and the write
// that dissolves a pack reads it, so folds its fragments first. Readers
// refuse fragments beside a dissolved pack as corrupt.
//
// Fragments get no Badger expiry: a tombstone in one may shadow a cell of
// the pack, which would come back if the fragment expired alone. Their
// dead cells go with the fold that merges them into the pack.
//
// Whether a family may have fragments is fixed when its data id is made,
// as packs are (schema.go).

const (
	// superFragments follows a super column's name in its fragments'
	// keys.
	superFragments byte = 0x02
	// fragmentSeqLen is the length of a fragment's seq.
	fragmentSeqLen = 8
)

// isFragment reports whether a stored value is a fragment.
func isFragment(val []byte) bool {
	return len(val) > 1 && val[0] == packMarker && val[1]&packFragment != 0
}

// fragmentKey appends to dst the key of the fragment seq of the super
// column whose pack key is packKey.
func fragmentKey(dst, packKey []byte, seq uint64) []byte {
	dst = append(dst, packKey[:len(packKey)-1]...)
	dst = append(dst, superFragments)
	return binary.BigEndian.AppendUint64(dst, seq)
}

// fragmentsEnd appends to dst the smallest key after every fragment of
// the super column whose pack key is packKey.
func fragmentsEnd(dst, packKey []byte) []byte {
	dst = append(dst, packKey[:len(packKey)-1]...)
	return append(dst, superFragments+1)
}

// isFragmentKeyOf reports whether key is the key of a fragment of the
// super column whose pack key is packKey.
func isFragmentKeyOf(key, packKey []byte) bool {
	n := len(packKey)
	return len(key) == n+fragmentSeqLen && key[n-1] == superFragments &&
		bytes.Equal(key[:n-1], packKey[:n-1])
}

// fragmentPackKey appends to dst the pack key of the super column of the
// fragment under key; false if key cannot be a fragment's.
func fragmentPackKey(dst, key []byte) ([]byte, bool) {
	n := len(key) - fragmentSeqLen
	if n < 2 || key[n-1] != superFragments {
		return dst, false
	}
	dst = append(dst, key[:n-1]...)
	return append(dst, superCells), true
}

// appendFragment encodes cells sorted by encoded name as a fragment.
func appendFragment(dst []byte, cells []packCell) []byte {
	start := len(dst)
	dst = appendPack(dst, cells, false)
	dst[start+1] |= packFragment
	return dst
}

// reconcileCells appends to dst the cells of base and of later, both
// sorted by encoded name, one per name: where both hold a name, the cell
// that wins by the writer's rules (wins, at now), keeping the raw names
// of base's cell (keepFirstNames), as a write of later's cells into
// base's pack would have left it. dst must not overlap base or later.
func reconcileCells(dst, base, later []packCell, now uint32) ([]packCell, error) {
	i, j := 0, 0
	for i < len(base) || j < len(later) {
		c := 0
		switch {
		case i == len(base):
			c = 1
		case j == len(later):
			c = -1
		default:
			c = bytes.Compare(base[i].enc, later[j].enc)
		}
		switch {
		case c < 0:
			dst = append(dst, base[i])
			i++
		case c > 0:
			dst = append(dst, later[j])
			j++
		default:
			cell, err := reconcileCell(base[i], later[j], now)
			if err != nil {
				return dst, err
			}
			dst = append(dst, cell)
			i++
			j++
		}
	}
	return dst, nil
}

// reconcileCell returns the cell that a write of later leaves where old
// is stored.
func reconcileCell(old, later packCell, now uint32) (packCell, error) {
	var o, n record
	if err := decodeRecord(old.rec, &o); err != nil {
		return old, fmt.Errorf("subcolumn %x: %w", old.enc, err)
	}
	if err := decodeRecord(later.rec, &n); err != nil {
		return old, fmt.Errorf("subcolumn %x: %w", later.enc, err)
	}
	if !wins(&n, &o, now) {
		return old, nil
	}
	renamed := false
	if n.flags&flagRawName != 0 && o.flags&flagRawName != 0 && !bytes.Equal(n.rawName, o.rawName) {
		n.rawName, renamed = o.rawName, true
	}
	if n.flags&flagRawSuper != 0 && o.flags&flagRawSuper != 0 && !bytes.Equal(n.rawSuper, o.rawSuper) {
		n.rawSuper, renamed = o.rawSuper, true
	}
	if renamed {
		later.rec = appendRecord(make([]byte, 0, recordSize(&n)), &n)
	}
	return later, nil
}

// fragmentMerger merges fragments into a pack's cells; its buffers serve
// one merge after another.
type fragmentMerger struct {
	cells  []packCell // the merged cells so far
	spare  []packCell // the list the next merge writes
	frag   []packCell // the cells of the fragment being merged
	bodies [][]byte   // the decompressed bodies, one per fragment
}

// merge returns base with the fragments vals (in the order they were
// written) merged in. The cells returned alias base, vals and the
// merger's buffers, and stay valid until the merger's next merge.
func (m *fragmentMerger) merge(base []packCell, vals [][]byte, now uint32) ([]packCell, error) {
	m.cells = append(m.cells[:0], base...)
	for len(m.bodies) < len(vals) {
		m.bodies = append(m.bodies, nil)
	}
	for i, v := range vals {
		if !isFragment(v) {
			return nil, errBadPack
		}
		var err error
		if m.frag, _, err = decodePack(v, m.frag[:0], &m.bodies[i]); err != nil {
			return nil, err
		}
		if m.spare, err = reconcileCells(m.spare[:0], m.cells, m.frag, now); err != nil {
			return nil, err
		}
		m.cells, m.spare = m.spare, m.cells
	}
	return m.cells, nil
}

// foldRow folds the fragments of every super column of the row with
// prefix rp of family t into its pack, in one transaction under the
// row's lock.
func (e *Engine) foldRow(ctx context.Context, t *store.Table, rp []byte) error {
	var packKeys [][]byte
	cells := append(append([]byte{}, rp...), kindCells)
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: cells})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			pk, ok := fragmentPackKey(nil, it.Item().Key())
			if !ok || (len(packKeys) > 0 && bytes.Equal(pk, packKeys[len(packKeys)-1])) {
				continue
			}
			frag := false
			_ = it.Item().Value(func(v []byte) error {
				frag = isFragment(v)
				return nil
			})
			if frag {
				packKeys = append(packKeys, pk)
			}
		}
		return nil
	})
	if err != nil || len(packKeys) == 0 {
		return err
	}
	unlock := e.rowLocks.lockRow(rp)
	defer unlock()
	return retryWrites(ctx, func() error {
		txn := e.db.NewTransaction(true)
		defer txn.Discard()
		w := e.newWriter(txn)
		defer e.releaseWriter(w)
		w.rp = append(w.rp[:0], rp...)
		w.stripe = e.rowLocks.stripe(rp)
		w.packs = w.packs[:0]
		w.packCells.reset()
		for _, pk := range packKeys {
			val, found, frags, err := w.readPackAndFragments(w.slab.copy(pk))
			if err != nil {
				return err
			}
			if len(frags) == 0 {
				continue // folded by a writer since
			}
			if _, err := w.addOpenPack(w.slab.copy(pk), val, found, frags, t); err != nil {
				return err
			}
		}
		if err := w.flushPacks(rp, t); err != nil {
			return err
		}
		if err := e.commit(txn); err != nil {
			return err
		}
		w.publish()
		return nil
	})
}
