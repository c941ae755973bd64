package badgerstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Key filters: filters of the keys a family may hold, in memory, which
// spare a writer the read of a key that was never written. The engine
// keeps two sets of them, each filter the one of a family's data id:
//
//   - counter keys (counterKeys). An add reads the counter it adds to.
//     The counter cache (counter_cache.go) answers for counters updated
//     lately; the first add of each counter found nothing, after
//     searching every memtable's skiplist and a bloom filter of every
//     level. Under thriftbench's counter mode (a million counters, a few
//     hundred thousand adds) nine adds in ten were such first adds. The
//     writer of a counter cell (an add, or a deletion) puts its key in.
//   - row marks (rowMarkKeys), in families that mark their rows with
//     packs (rowmark.go). A row mutation that writes packs read the row's
//     mark, a point read, to learn whether the row has any pack; the
//     writer of a mark puts its key in.
//
// Each is a Bloom filter. A key is put in before any transaction that
// writes it commits, by its writer under the row's lock (keyProbe.note),
// and never taken out. A writer whose filter does not hold a key takes
// the key as absent and reads nothing. A filter vouches only once it is
// complete:
//
//   - a family whose data id is new (created or truncated while the engine
//     is open) or a store without data at open: complete from the start;
//   - a family with data at open: its keys are listed by one scan in the
//     background, which starts after the filter is registered (every write
//     committed after the scan's snapshot added its key itself), and every
//     writer reads until it ends.
//
// A filter is registered before its family is in a catalog a writer can
// take (at open, or in schemaChange before the new catalog is
// published), so no write of a key it covers can miss it. The filters of
// a set share a memory bound (MemorySizing.CounterFilter,
// MemorySizing.MarkFilter); one that would grow past it stops vouching
// and every writer of its family reads again.

// keyFilterBitsPerKey and keyFilterProbes: a blocked Bloom
// filter with 12 bits a key and 7 probes into one 512-bit block answers
// about 0.5% of absent keys as present (their writers read, as before);
// the rates of a filter's parts add up.
const (
	keyFilterBitsPerKey = 12
	keyFilterProbes     = 7
	keyFilterBlockWords = 8 // 512 bits: one cache line
	// keyFilterFirstKeys is the capacity of a filter's first part;
	// each further part holds twice as many keys as the one before.
	keyFilterFirstKeys = 8192
)

// keyKind is what a set of key filters covers.
type keyKind struct {
	// name names the kind in logs.
	name string
	// covers reports whether a family has a filter of the kind.
	covers func(t *store.Table) bool
	// prefix is the prefix of every key of the kind of a data id, which
	// the listing at open scans.
	prefix func(dataID uint32) []byte
}

// counterKeys are the keys of counter cells: a counter family's data.
var counterKeys = keyKind{
	name:   "counter",
	covers: func(t *store.Table) bool { return t.Counter },
	prefix: func(id uint32) []byte { return appendTablePrefix(nil, id) },
}

// rowMarkKeys are the keys of row marks (rowmark.go).
var rowMarkKeys = keyKind{
	name:   "row mark",
	covers: markedTable,
	prefix: rowMarkPrefix,
}

// keyFilters are the filters of one kind of the engine's families, by
// data id.
type keyFilters struct {
	kind keyKind
	seed maphash.Seed
	// byData is replaced whole (under schema changes' lock, or at open);
	// readers load it without a lock.
	byData atomic.Pointer[map[uint32]*keyFilter]
	// bytes is the memory of every filter's parts, bounded by max.
	bytes atomic.Int64
	max   int64
	// skipped counts the reads the filters spared: their filter did not
	// hold their key.
	skipped atomic.Int64
}

// keyFilter is the filter of one family's data id.
type keyFilter struct {
	// known: the filter holds every key of the family; until then every
	// writer reads.
	known atomic.Bool
	// full: the filter could not grow within the memory bound, so it no
	// longer holds every key it was given; every writer reads.
	full atomic.Bool
	mu   sync.Mutex // serialises growth
	// parts are Bloom filters of growing capacity; keys go into the last.
	parts atomic.Pointer[[]*bloomPart]
}

// bloomPart is one Bloom filter of a keyFilter.
type bloomPart struct {
	words    []atomic.Uint64
	blocks   uint64
	keys     atomic.Int64
	capacity int64
}

// newKeyFilter returns an empty filter, not yet complete.
func newKeyFilter() *keyFilter {
	f := &keyFilter{}
	f.parts.Store(&[]*bloomPart{})
	return f
}

func newKeyFilters(kind keyKind, maxBytes int64) *keyFilters {
	f := &keyFilters{kind: kind, seed: maphash.MakeSeed(), max: maxBytes}
	f.byData.Store(&map[uint32]*keyFilter{})
	return f
}

// of returns the filter of a family, or nil: a family the kind does not
// cover, or one no longer in the engine's catalog, whose writers read.
func (fs *keyFilters) of(t *store.Table) *keyFilter {
	if fs == nil || !fs.kind.covers(t) {
		return nil
	}
	return (*fs.byData.Load())[dataIDOf(t)]
}

// publish registers a filter for every family of cat the kind covers
// without one, complete if its data id is at least firstNew (data ids are
// never used again, so such a family's data is empty), and forgets the
// filters of data ids cat no longer has. It returns the filters that must be
// completed by a scan. Callers serialise it (schemaMu, or open).
func (fs *keyFilters) publish(cat *store.Catalog, firstNew uint32) map[uint32]*keyFilter {
	old := *fs.byData.Load()
	next := make(map[uint32]*keyFilter, len(old))
	var unscanned map[uint32]*keyFilter
	for _, ks := range cat.Keyspaces {
		for _, t := range ks.Tables {
			if !fs.kind.covers(t) {
				continue
			}
			id := dataIDOf(t)
			if f, ok := old[id]; ok {
				next[id] = f
				continue
			}
			f := newKeyFilter()
			if id >= firstNew {
				f.known.Store(true)
			} else {
				if unscanned == nil {
					unscanned = map[uint32]*keyFilter{}
				}
				unscanned[id] = f
			}
			next[id] = f
		}
	}
	for id, f := range old {
		if _, kept := next[id]; !kept {
			f.retire(fs)
		}
	}
	fs.byData.Store(&next)
	return unscanned
}

// stats returns the reads spared and the filters' memory; a nil set (a
// read-only engine) has none.
func (fs *keyFilters) stats() (skipped, bytes int64) {
	if fs == nil {
		return 0, 0
	}
	return fs.skipped.Load(), fs.bytes.Load()
}

// hash is the hash of a key, the same for a filter's whole life.
func (fs *keyFilters) hash(key []byte) uint64 { return maphash.Bytes(fs.seed, key) }

// keyProbe is the look-up of a key in its family's filter, made
// by its writer under the row's lock.
type keyProbe struct {
	f *keyFilter // nil: no filter, the key may hold a record
	h uint64
	// known: the filter was complete before the look-up began (loaded
	// first: a scan that completes it puts its keys in before).
	known, held bool
}

// probe looks key up in the filter of family t.
func (fs *keyFilters) probe(t *store.Table, key []byte) keyProbe {
	f := fs.of(t)
	if f == nil {
		return keyProbe{}
	}
	p := keyProbe{f: f, h: fs.hash(key), known: f.known.Load()}
	p.held = f.holds(p.h)
	return p
}

// absent reports whether the filter vouches that no record is stored
// under the key. A filter that became full missed a key of another row
// (a key's writers hold its row's lock one after the other, and the one
// that missed it set full before it committed).
func (p keyProbe) absent() bool {
	return p.f != nil && p.known && !p.held && !p.f.full.Load()
}

// note puts the key into the filter if it does not hold it; its writer
// calls it before the transaction that writes the key commits.
func (p keyProbe) note(fs *keyFilters) {
	if p.f != nil && !p.held {
		p.f.insert(fs, p.h)
	}
}

func (f *keyFilter) holds(h uint64) bool {
	for _, p := range *f.parts.Load() {
		if p.holds(h) {
			return true
		}
	}
	return false
}

// add puts the key with hash h into the filter unless it holds it.
func (f *keyFilter) add(fs *keyFilters, h uint64) {
	if !f.holds(h) {
		f.insert(fs, h)
	}
}

// insert puts the key with hash h, which the filter does not hold, into
// its last part, growing the filter if that part is at capacity; one that
// cannot grow within fs's bound is full.
func (f *keyFilter) insert(fs *keyFilters, h uint64) {
	if f.full.Load() {
		return
	}
	parts := *f.parts.Load()
	if len(parts) == 0 || parts[len(parts)-1].keys.Load() >= parts[len(parts)-1].capacity {
		if parts = f.grow(fs); parts == nil {
			return
		}
	}
	parts[len(parts)-1].add(h)
}

// grow adds a part twice as large as the last, if none was added since the
// caller looked and the bound allows it; it returns the parts, or nil if
// the filter is full.
func (f *keyFilter) grow(fs *keyFilters) []*bloomPart {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full.Load() {
		return nil
	}
	parts := *f.parts.Load()
	if n := len(parts); n > 0 && parts[n-1].keys.Load() < parts[n-1].capacity {
		return parts
	}
	capacity := int64(keyFilterFirstKeys)
	if n := len(parts); n > 0 {
		capacity = 2 * parts[n-1].capacity
	}
	p := newBloomPart(capacity)
	size := p.size()
	if fs.bytes.Add(size) > fs.max {
		fs.bytes.Add(-size)
		f.full.Store(true)
		return nil
	}
	next := append(append(make([]*bloomPart, 0, len(parts)+1), parts...), p)
	f.parts.Store(&next)
	return next
}

// retire gives back the memory of a filter no longer published; a writer
// that still holds it (with an older catalog) cannot grow it.
func (f *keyFilter) retire(fs *keyFilters) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.full.Store(true)
	fs.bytes.Add(-f.size())
}

// size is the memory of the filter's parts.
func (f *keyFilter) size() int64 {
	var n int64
	for _, p := range *f.parts.Load() {
		n += p.size()
	}
	return n
}

func newBloomPart(capacity int64) *bloomPart {
	blocks := uint64(capacity*keyFilterBitsPerKey+511) / 512
	return &bloomPart{words: make([]atomic.Uint64, blocks*keyFilterBlockWords), blocks: blocks, capacity: capacity}
}

func (p *bloomPart) size() int64 { return int64(len(p.words)) * 8 }

// block is the block of the key with hash h: picked by h's high bits.
func (p *bloomPart) block(h uint64) []atomic.Uint64 {
	hi, _ := bits.Mul64(h, p.blocks)
	return p.words[hi*keyFilterBlockWords : (hi+1)*keyFilterBlockWords]
}

// probeBits mixes h (splitmix64's finaliser) into the bits that pick the
// probes within a block, nine bits each.
func probeBits(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

func (p *bloomPart) holds(h uint64) bool {
	b := p.block(h)
	r := probeBits(h)
	for range keyFilterProbes {
		bit := r & 511
		if b[bit/64].Load()&(1<<(bit%64)) == 0 {
			return false
		}
		r >>= 9
	}
	return true
}

func (p *bloomPart) add(h uint64) {
	b := p.block(h)
	r := probeBits(h)
	for range keyFilterProbes {
		bit := r & 511
		b[bit/64].Or(1 << (bit % 64))
		r >>= 9
	}
	p.keys.Add(1)
}

// publishKeyFilters registers a filter for every family of cat without
// one in each set of filters (keyFilters.publish), and starts the scan of
// those that may already have keys. Callers serialise it (schemaMu, or
// open).
func (e *Engine) publishKeyFilters(cat *store.Catalog, firstNew uint32) {
	for _, fs := range []*keyFilters{e.counterFilters, e.markFilters} {
		if fs == nil {
			continue
		}
		unscanned := fs.publish(cat, firstNew)
		if len(unscanned) == 0 {
			continue
		}
		e.background(func(ctx context.Context) {
			if err := e.listKeys(ctx, fs, unscanned); err != nil && ctx.Err() == nil {
				e.log.Warn("writers read keys until the store's keys are listed", "kind", fs.kind.name, "err", err)
			}
		})
	}
}

// listKeys completes filters of fs by putting every key of their
// families into them, each family read in one transaction.
func (e *Engine) listKeys(ctx context.Context, fs *keyFilters, filters map[uint32]*keyFilter) error {
	for id, f := range filters {
		n, began := 0, time.Now()
		err := e.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: fs.kind.prefix(id)})
			defer it.Close()
			for it.Rewind(); it.Valid() && !f.full.Load(); it.Next() {
				if n++; n%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				f.add(fs, fs.hash(it.Item().Key()))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("list the %s keys of data id %d: %w", fs.kind.name, id, err)
		}
		if f.full.Load() {
			e.log.Info("a family's keys were not all listed (too many for the filters' memory, or the family is gone): its writers read them", "kind", fs.kind.name, "data_id", id, "keys", n)
			continue
		}
		f.known.Store(true)
		e.log.Info("listed a family's keys: writers of keys never written read nothing", "kind", fs.kind.name, "data_id", id, "keys", n, "took", time.Since(began).Round(time.Millisecond))
	}
	return nil
}
