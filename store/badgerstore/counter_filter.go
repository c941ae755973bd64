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

// Counters never written. An add reads the counter it adds to. The
// counter cache (counter_cache.go) answers for counters updated lately;
// the first add of each counter finds nothing, after searching every
// memtable's skiplist and a bloom filter of every level. Under
// thriftbench's counter mode (a million counters, a few hundred thousand
// adds) nine adds in ten were such first adds.
//
// So the engine keeps, for each counter family, a filter of the keys that
// may hold a record: a Bloom filter, in memory only. A key is put in
// before any transaction that writes it commits, by its writer under the
// row's lock (counterProbe.note: an add, or a deletion of a counter
// cell), and never taken out. An add whose key the filter does not
// hold takes its counter as absent and reads nothing. A filter vouches
// only once it is complete:
//
//   - a family whose data id is new (created or truncated while the engine
//     is open) or a store without data at open: complete from the start;
//   - a family with data at open: its keys are listed by one scan in the
//     background, which starts after the filter is registered (every write
//     committed after the scan's snapshot added its key itself), and every
//     add reads until it ends.
//
// A filter is registered before its family is in a catalog a writer can
// take (at open, or in schemaChange before the new catalog is
// published), so no write of a counter key can miss it. The filters share
// a memory bound (MemorySizing.CounterFilter); one that would grow past
// it stops vouching and every add to its family reads again.

// counterFilterBitsPerKey and counterFilterProbes: a blocked Bloom
// filter with 12 bits a key and 7 probes into one 512-bit block answers
// about 0.5% of absent keys as present (those adds read, as before); the
// rates of a filter's parts add up.
const (
	counterFilterBitsPerKey = 12
	counterFilterProbes     = 7
	counterFilterBlockWords = 8 // 512 bits: one cache line
	// counterFilterFirstKeys is the capacity of a filter's first part;
	// each further part holds twice as many keys as the one before.
	counterFilterFirstKeys = 8192
)

// counterFilters are the filters of the engine's counter families, by
// data id.
type counterFilters struct {
	seed maphash.Seed
	// byData is replaced whole (under schema changes' lock, or at open);
	// readers load it without a lock.
	byData atomic.Pointer[map[uint32]*counterFilter]
	// bytes is the memory of every filter's parts, bounded by max.
	bytes atomic.Int64
	max   int64
	// skipped counts the adds that read nothing: their filter did not
	// hold their key.
	skipped atomic.Int64
}

// counterFilter is the filter of one family's data id.
type counterFilter struct {
	// known: the filter holds every key of the family; until then every
	// add reads.
	known atomic.Bool
	// full: the filter could not grow within the memory bound, so it no
	// longer holds every key it was given; every add reads.
	full atomic.Bool
	mu   sync.Mutex // serialises growth
	// parts are Bloom filters of growing capacity; keys go into the last.
	parts atomic.Pointer[[]*bloomPart]
}

// bloomPart is one Bloom filter of a counterFilter.
type bloomPart struct {
	words    []atomic.Uint64
	blocks   uint64
	keys     atomic.Int64
	capacity int64
}

// newCounterFilter returns an empty filter, not yet complete.
func newCounterFilter() *counterFilter {
	f := &counterFilter{}
	f.parts.Store(&[]*bloomPart{})
	return f
}

func newCounterFilters(maxBytes int64) *counterFilters {
	f := &counterFilters{seed: maphash.MakeSeed(), max: maxBytes}
	f.byData.Store(&map[uint32]*counterFilter{})
	return f
}

// of returns the filter of a family, or nil: not a counter family, or one
// no longer in the engine's catalog, whose adds read.
func (fs *counterFilters) of(t *store.Table) *counterFilter {
	if fs == nil || !t.Counter {
		return nil
	}
	return (*fs.byData.Load())[dataIDOf(t)]
}

// publish registers a filter for every counter family of cat without one,
// complete if its data id is at least firstNew (data ids are never used
// again, so such a family's data is empty), and forgets the filters of
// data ids cat no longer has. It returns the filters that must be
// completed by a scan. Callers serialise it (schemaMu, or open).
func (fs *counterFilters) publish(cat *store.Catalog, firstNew uint32) map[uint32]*counterFilter {
	old := *fs.byData.Load()
	next := make(map[uint32]*counterFilter, len(old))
	var unscanned map[uint32]*counterFilter
	for _, ks := range cat.Keyspaces {
		for _, t := range ks.Tables {
			if !t.Counter {
				continue
			}
			id := dataIDOf(t)
			if f, ok := old[id]; ok {
				next[id] = f
				continue
			}
			f := newCounterFilter()
			if id >= firstNew {
				f.known.Store(true)
			} else {
				if unscanned == nil {
					unscanned = map[uint32]*counterFilter{}
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

// stats returns the adds that read nothing and the filters' memory; a nil
// set (a read-only engine) has none.
func (fs *counterFilters) stats() (skipped, bytes int64) {
	if fs == nil {
		return 0, 0
	}
	return fs.skipped.Load(), fs.bytes.Load()
}

// hash is the hash of a key, the same for a filter's whole life.
func (fs *counterFilters) hash(key []byte) uint64 { return maphash.Bytes(fs.seed, key) }

// counterProbe is the look-up of a key in its family's counter filter, made
// by its writer under the row's lock.
type counterProbe struct {
	f *counterFilter // nil: no filter, the key may hold a record
	h uint64
	// known: the filter was complete before the look-up began (loaded
	// first: a scan that completes it puts its keys in before).
	known, held bool
}

// probe looks key up in the filter of family t.
func (fs *counterFilters) probe(t *store.Table, key []byte) counterProbe {
	f := fs.of(t)
	if f == nil {
		return counterProbe{}
	}
	p := counterProbe{f: f, h: fs.hash(key), known: f.known.Load()}
	p.held = f.holds(p.h)
	return p
}

// absent reports whether the filter vouches that no record is stored
// under the key. A filter that became full missed a key of another row
// (a key's writers hold its row's lock one after the other, and the one
// that missed it set full before it committed).
func (p counterProbe) absent() bool {
	return p.f != nil && p.known && !p.held && !p.f.full.Load()
}

// note puts the key into the filter if it does not hold it; its writer
// calls it before the transaction that writes the key commits.
func (p counterProbe) note(fs *counterFilters) {
	if p.f != nil && !p.held {
		p.f.insert(fs, p.h)
	}
}

func (f *counterFilter) holds(h uint64) bool {
	for _, p := range *f.parts.Load() {
		if p.holds(h) {
			return true
		}
	}
	return false
}

// add puts the key with hash h into the filter unless it holds it.
func (f *counterFilter) add(fs *counterFilters, h uint64) {
	if !f.holds(h) {
		f.insert(fs, h)
	}
}

// insert puts the key with hash h, which the filter does not hold, into
// its last part, growing the filter if that part is at capacity; one that
// cannot grow within fs's bound is full.
func (f *counterFilter) insert(fs *counterFilters, h uint64) {
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
func (f *counterFilter) grow(fs *counterFilters) []*bloomPart {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.full.Load() {
		return nil
	}
	parts := *f.parts.Load()
	if n := len(parts); n > 0 && parts[n-1].keys.Load() < parts[n-1].capacity {
		return parts
	}
	capacity := int64(counterFilterFirstKeys)
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
func (f *counterFilter) retire(fs *counterFilters) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.full.Store(true)
	fs.bytes.Add(-f.size())
}

// size is the memory of the filter's parts.
func (f *counterFilter) size() int64 {
	var n int64
	for _, p := range *f.parts.Load() {
		n += p.size()
	}
	return n
}

func newBloomPart(capacity int64) *bloomPart {
	blocks := uint64(capacity*counterFilterBitsPerKey+511) / 512
	return &bloomPart{words: make([]atomic.Uint64, blocks*counterFilterBlockWords), blocks: blocks, capacity: capacity}
}

func (p *bloomPart) size() int64 { return int64(len(p.words)) * 8 }

// block is the block of the key with hash h: picked by h's high bits.
func (p *bloomPart) block(h uint64) []atomic.Uint64 {
	hi, _ := bits.Mul64(h, p.blocks)
	return p.words[hi*counterFilterBlockWords : (hi+1)*counterFilterBlockWords]
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
	for range counterFilterProbes {
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
	for range counterFilterProbes {
		bit := r & 511
		b[bit/64].Or(1 << (bit % 64))
		r >>= 9
	}
	p.keys.Add(1)
}

// publishCounterFilters registers a filter for every counter family of
// cat without one (counterFilters.publish), and starts the scan of those
// that may already have keys. Callers serialise it (schemaMu, or open).
func (e *Engine) publishCounterFilters(cat *store.Catalog, firstNew uint32) {
	if e.counterFilters == nil {
		return
	}
	unscanned := e.counterFilters.publish(cat, firstNew)
	if len(unscanned) == 0 {
		return
	}
	e.background(func(ctx context.Context) {
		if err := e.listCounters(ctx, unscanned); err != nil && ctx.Err() == nil {
			e.log.Warn("adds to counters read the counter until the store's counters are listed", "err", err)
		}
	})
}

// listCounters completes filters by putting every key of their families
// into them, each family read in one transaction.
func (e *Engine) listCounters(ctx context.Context, filters map[uint32]*counterFilter) error {
	fs := e.counterFilters
	for id, f := range filters {
		n, began := 0, time.Now()
		err := e.db.View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: appendTablePrefix(nil, id)})
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
			return fmt.Errorf("list the counters of data id %d: %w", id, err)
		}
		if f.full.Load() {
			e.log.Info("a counter family's keys were not all listed (too many for the counter filters' memory, or the family is gone): every add to it reads its counter", "data_id", id, "keys", n)
			continue
		}
		f.known.Store(true)
		e.log.Info("listed a counter family's keys: first adds to its counters read nothing", "data_id", id, "keys", n, "took", time.Since(began).Round(time.Millisecond))
	}
	return nil
}
