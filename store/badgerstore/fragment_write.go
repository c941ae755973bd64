package badgerstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// The writer of fragments (fragment.go). A row mutation of a family with
// fragments writes, for each super column it writes into, a whole pack
// when it has the pack without a read (the pack cache holds it, or the
// row mark filter vouches that the row has no pack), and otherwise a
// fragment of the mutation's cells, reading nothing, when
//
//   - the super column's pack is not dissolved: the family's filter of
//     dissolved packs vouches that it never was;
//   - fewer than foldAfter fragments were written into the super column
//     since its last fold (foldCounts);
//   - the mutation's cells fit in a pack: a cell whose key would be cut,
//     or cells past a pack's bounds, make the writer read the pack after
//     all and write it whole (unblind), dissolving it if it must.
//
// The write that reads the pack folds its fragments.

// nsDissolved is the namespace of the marks of dissolved packs: a pack
// of a family with fragments that dissolves has an empty entry under its
// key with nsData replaced, kept for good, and put in the family's filter
// of dissolved packs (key_filter.go) before it commits.
const nsDissolved byte = 0x07

// dissolvedKey is the key of the mark of the dissolved pack under
// packKey.
func dissolvedKey(s *slab, packKey []byte) []byte {
	k := s.copy(packKey)
	k[0] = nsDissolved
	return k
}

// dissolvedKeys are the marks of dissolved packs.
var dissolvedKeys = keyKind{
	name:   "dissolved pack",
	covers: fragmentedTable,
	prefix: func(id uint32) []byte { return binary.BigEndian.AppendUint32([]byte{nsDissolved}, id) },
}

// foldAfter is how many fragments a super column gets before a write
// reads it and folds them instead of writing another.
const foldAfter = 8

// foldCounts counts the fragments written into each super column since
// it was last folded, eight bits a count, in counts that super columns
// share by a hash of their pack keys: a shared count makes folds come
// sooner, never later, but for a fold that resets it. A read that meets
// foldAfter fragments or more raises the count to foldAfter, so that a
// super column whose count an engine restart forgot is folded by its
// next write after a read.
type foldCounts struct {
	seed  maphash.Seed
	words []atomic.Uint32
}

// foldCountWords is the size of the counts: a million of them, in 1 MiB.
const foldCountWords = 1 << 18

func newFoldCounts() *foldCounts {
	return &foldCounts{seed: maphash.MakeSeed(), words: make([]atomic.Uint32, foldCountWords)}
}

// slot is the word and the shift of the count of a pack key.
func (f *foldCounts) slot(packKey []byte) (*atomic.Uint32, uint) {
	h := maphash.Bytes(f.seed, packKey)
	return &f.words[(h>>2)%foldCountWords], uint(h&3) * 8
}

// count returns the count of a pack key.
func (f *foldCounts) count(packKey []byte) uint32 {
	w, shift := f.slot(packKey)
	return w.Load() >> shift & 0xff
}

// update sets the count of a pack key to what next returns for it.
func (f *foldCounts) update(packKey []byte, next func(uint32) uint32) {
	w, shift := f.slot(packKey)
	for {
		old := w.Load()
		n := min(next(old>>shift&0xff), 0xff)
		if w.CompareAndSwap(old, old&^(0xff<<shift)|n<<shift) {
			return
		}
	}
}

func (f *foldCounts) add(packKey []byte) { f.update(packKey, func(n uint32) uint32 { return n + 1 }) }

func (f *foldCounts) reset(packKey []byte) { f.update(packKey, func(uint32) uint32 { return 0 }) }

// due makes the next write into the super column of packKey fold it.
func (f *foldCounts) due(packKey []byte) {
	if f != nil {
		f.update(packKey, func(n uint32) uint32 { return max(n, foldAfter) })
	}
}

// fragmentSeqs hands out the seqs of fragments: unique in the store and
// increasing, across restarts too. Each block of seqs is recorded as used
// (fragmentSeqKey) before one of it is handed out.
type fragmentSeqs struct {
	mu    sync.Mutex
	last  atomic.Uint64 // the last seq handed out
	limit atomic.Uint64 // the seqs up to limit are recorded
}

// fragmentSeqBlock is how many seqs are recorded at a time.
const fragmentSeqBlock = 1 << 20

// fragmentSeqKey holds the limit of the seqs recorded as used.
var fragmentSeqKey = []byte{nsSchema, schemaMeta, 'f', 'r', 'a', 'g'}

// loadFragmentSeqs reads the limit of the seqs used before.
func (e *Engine) loadFragmentSeqs() error {
	err := e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(fragmentSeqKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("corrupt limit %x", v)
			}
			limit := binary.BigEndian.Uint64(v)
			e.fragSeqs.last.Store(limit)
			e.fragSeqs.limit.Store(limit)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("read the sequence of fragments: %w", err)
	}
	return nil
}

// nextFragmentSeq hands out a seq.
func (e *Engine) nextFragmentSeq() (uint64, error) {
	s := &e.fragSeqs
	n := s.last.Add(1)
	if n <= s.limit.Load() {
		return n, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n > s.limit.Load() {
		limit := s.limit.Load() + fragmentSeqBlock
		err := e.update(func(txn *badger.Txn) error {
			return txn.Set(fragmentSeqKey, binary.BigEndian.AppendUint64(nil, limit))
		})
		if err != nil {
			return 0, fmt.Errorf("record the sequence of fragments: %w", err)
		}
		s.limit.Store(limit)
	}
	return n, nil
}

// fragmentable reports whether the writer may write a fragment into the
// super column of packKey, of family t, instead of reading its pack.
func (w *writer) fragmentable(packKey []byte, t *store.Table) bool {
	if !fragmentedTable(t) || len(packKey)+packNameRoom > truncatedLen {
		return false
	}
	if w.e.folds.count(packKey) >= foldAfter {
		return false
	}
	return w.e.dissolvedFilters.probe(t, dissolvedKey(&w.slab, packKey)).absent()
}

// addBlindPack adds to w.packs a pack under key that holds only what the
// row mutation writes, to be written as a fragment, and returns its
// index.
func (w *writer) addBlindPack(key []byte) int {
	w.packs = append(w.packs, openPack{key: key, size: 2 + 3, cells: w.packCells.take(), blind: true})
	return len(w.packs) - 1
}

// unblind reads the pack and the fragments of blind pack p and makes it
// the pack they fold into with p's cells written into it, to be written
// whole. Where the fold dissolves the pack, p's cells are written as
// entries of their own.
func (w *writer) unblind(p *openPack, t *store.Table) error {
	written := p.cells
	val, found, frags, err := w.readPackAndFragments(p.key)
	if err != nil {
		return fmt.Errorf("read super column: %w", err)
	}
	if err := w.loadPack(p, val, found, frags, t); err != nil {
		return err
	}
	if p.dissolved {
		return w.putPackCells(p, written, t)
	}
	if p.cells, err = reconcileCells(w.packCells.take(), p.cells, written, w.now); err != nil {
		return err
	}
	p.dirty = true
	p.size = 2 + 3
	for _, c := range p.cells {
		p.size += packCellSize(c)
	}
	return nil
}

// putPackCells writes cells meant for the pack p as entries of their own
// (p is dissolved), each reconciled with what is stored under its key.
func (w *writer) putPackCells(p *openPack, cells []packCell, t *store.Table) error {
	super, _, err := t.Comparator.DecodeKey(nil, p.key[len(w.rp)+1:len(p.key)-1])
	if err != nil {
		return fmt.Errorf("super column of key %x: %w", p.key, err)
	}
	for _, c := range cells {
		var rec record
		if err := decodeRecord(c.rec, &rec); err != nil {
			return err
		}
		name := rec.rawName
		if rec.flags&flagRawName == 0 {
			if name, _, err = t.SubComparator.DecodeKey(nil, c.enc); err != nil {
				return fmt.Errorf("subcolumn %x: %w", c.enc, err)
			}
		}
		if rec.flags&flagRawSuper != 0 {
			super = rec.rawSuper
		}
		if err := w.putCell(w.rp, t, super, name, &rec, 0); err != nil {
			return err
		}
	}
	return nil
}

// writeFragment writes the cells of blind pack p as a fragment of its
// super column.
func (w *writer) writeFragment(rp []byte, t *store.Table, p *openPack) error {
	seq, err := w.e.nextFragmentSeq()
	if err != nil {
		return err
	}
	val := appendFragment(w.packBuf[:0], p.cells)
	w.packBuf = val[:0]
	if compressedTable(t) {
		w.compBuf = w.compBuf[:0]
		if room := compressRoom(val); cap(w.compBuf) < room {
			w.compBuf = make([]byte, 0, room)
		}
		val = compressPack(w.compBuf, val)
	}
	val = w.slab.copy(val)
	key := fragmentKey(w.slab.scratch(len(p.key)+fragmentSeqLen), p.key, seq)
	// No Badger expiry: a dead cell of a fragment may shadow one of the
	// pack, and goes with the fold.
	if err := w.txn.SetEntry(w.entries.entry(key, val)); err != nil {
		return err
	}
	w.e.folds.add(p.key)
	w.e.fragmentsWritten.Add(1)
	// The pack cache must not answer with the pack alone.
	w.packWrites = append(w.packWrites, packWrite{key: p.key, row: len(rp)})
	if !w.markSeen {
		// Fragments imply their row's mark; writing it again costs less
		// than reading it.
		key := rowMarkKey(&w.slab, rp)
		w.e.markFilters.probe(t, key).note(w.e.markFilters)
		if err := w.set(key, nil); err != nil {
			return err
		}
		w.markSeen = true
	}
	return nil
}

// mortalCells reports whether cells hold a tombstone or a cell that
// expires: their row is marked for collection, which folds them.
func mortalCells(cells []packCell) (bool, error) {
	var rec record
	for _, c := range cells {
		if err := decodeRecord(c.rec, &rec); err != nil {
			return false, err
		}
		if localDeletionTime(&rec) != ^uint32(0) {
			return true, nil
		}
	}
	return false, nil
}
