package badgerstore

import (
	"hash/maphash"
	"sync"
	"unsafe"
)

// The counter cache. An add reads the counter it adds to, and under
// thriftbench's counter mode that point read (a search of every memtable's
// skiplist, a bloom filter and a block of every level's table) was a fifth
// of thriftd's CPU. As Cassandra does (counter_cache_size_in_mb), the
// engine keeps the value and timestamp of counters it updated lately,
// from their second update on, and an add to one of them reads nothing
// from Badger.
//
// An entry that is valid equals the record Badger holds under its key:
//
//   - only a writer whose transaction committed publishes entries
//     (writer.publishCounters), replaying its writes of counter cells in
//     order, so the last write of a key decides: a plain counter record
//     (no raw names, no cut key) is published, any other write leaves the
//     key unknown. It does so while it still holds the rows' locks;
//   - every other write of a counter cell's key invalidates the key's
//     entry first, under the row's lock: an add (before its transaction
//     commits: one that fails publishes nothing), a cell deletion
//     (writer.putCell) and garbage collection (gcWalk.batch);
//   - counter cells get no Badger expiry, and dropped families' data ids
//     are never used again.
//
// Row, super column and range deletions write no cell key: an add checks
// them whatever the source of the record it adds to (counterLive).

// counterShards is the number of independently locked parts of the cache.
const counterShards = 32

// counterIndexCost bounds the memory of a shard's index per entry the
// shard can hold: a map of uint64 to int32 takes 17 bytes a slot, and may
// have just doubled its slots, of which it fills at most seven eighths.
const counterIndexCost = 40

// counterShardMin is the smallest share of the cache a shard may have.
const counterShardMin = 16 << 10

// counterCache maps counter cell keys to their stored value; a nil cache
// holds nothing. It holds no pointers for the garbage collector to follow:
// each shard keeps its keys in one byte arena, its entries in one slice,
// and an index from the keys' hashes to the entries.
type counterCache struct {
	seed   maphash.Seed
	shards [counterShards]counterShard
}

type counterShard struct {
	mu      sync.Mutex
	index   map[uint64]int32 // key hash → entries
	entries []counterEntry
	keys    []byte
	max     int64 // bound of counterMemory(cap(entries), cap(keys))
	hits    int64
	misses  int64
}

// counterEntry is a counter's stored value and timestamp, and where its key
// sits in its shard's arena; an invalid entry keeps its place for the
// publication that follows.
type counterEntry struct {
	keyAt, keyLen    uint32
	value, timestamp int64
	valid            bool
}

// newCounterCache returns a cache of at most maxBytes, or nil (no cache) for
// a budget too small to share among its shards.
func newCounterCache(maxBytes int64) *counterCache {
	perShard := maxBytes / counterShards
	if perShard < counterShardMin {
		return nil
	}
	c := &counterCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].index = map[uint64]int32{}
		c.shards[i].max = perShard
	}
	return c
}

// find returns the shard of key, locked, its hash, and its entry (nil if
// the shard holds none for key; also nil for a key whose hash another key
// in the shard has: such a key is not cached).
func (c *counterCache) find(key []byte) (*counterShard, uint64, *counterEntry) {
	h := maphash.Bytes(c.seed, key)
	s := &c.shards[h%counterShards]
	s.mu.Lock()
	i, ok := s.index[h]
	if !ok {
		return s, h, nil
	}
	e := &s.entries[i]
	if string(s.keys[e.keyAt:e.keyAt+e.keyLen]) != string(key) {
		return s, h, nil
	}
	return s, h, e
}

// get returns the counter stored under key, if the cache knows it.
func (c *counterCache) get(key []byte) (value, timestamp int64, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	s, _, e := c.find(key)
	defer s.mu.Unlock()
	if e == nil || !e.valid {
		s.misses++
		return 0, 0, false
	}
	s.hits++
	return e.value, e.timestamp, true
}

// invalidate marks the entry of key, if any, as unknown: its record is
// being written.
func (c *counterCache) invalidate(key []byte) {
	if c == nil {
		return
	}
	s, _, e := c.find(key)
	defer s.mu.Unlock()
	if e != nil {
		e.valid = false
	}
}

// put records the counter committed under key. A counter without an
// entry gets one only if admit: counters are cached from their second
// update on, so that a stream of counters each updated once does not
// churn the cache. A full shard starts again empty.
func (c *counterCache) put(key []byte, value, timestamp int64, admit bool) {
	if c == nil {
		return
	}
	s, h, e := c.find(key)
	defer s.mu.Unlock()
	if e != nil {
		e.value, e.timestamp, e.valid = value, timestamp, true
		return
	}
	if _, taken := s.index[h]; !admit || taken {
		return
	}
	if !s.fits(len(key)) && !s.grow(len(key)) {
		clear(s.index)
		s.entries, s.keys = s.entries[:0], s.keys[:0]
		if !s.fits(len(key)) {
			return // a key longer than the shard's whole arena
		}
	}
	s.index[h] = int32(len(s.entries))
	s.entries = append(s.entries, counterEntry{keyAt: uint32(len(s.keys)), keyLen: uint32(len(key)),
		value: value, timestamp: timestamp, valid: true})
	s.keys = append(s.keys, key...)
}

// counterMemory is the memory of a shard whose slices have these
// capacities, its index included.
func counterMemory(entries, keys int) int64 {
	return int64(entries)*(int64(unsafe.Sizeof(counterEntry{}))+counterIndexCost) + int64(keys)
}

// fits reports whether an entry with a key of n bytes fits in the shard's
// slices as they are.
func (s *counterShard) fits(n int) bool {
	return len(s.entries) < cap(s.entries) && len(s.keys)+n <= cap(s.keys)
}

// grow makes room in the shard's slices for an entry with a key of n
// bytes, doubling the full one, or less when doubling would pass the
// shard's bound, and reports whether it could. The slices never shrink: a
// full shard starts again empty in the memory it has.
func (s *counterShard) grow(n int) bool {
	perEntry := counterMemory(1, 0)
	entries, keys := cap(s.entries), cap(s.keys)
	if len(s.keys)+n > keys {
		room := s.max - counterMemory(entries, 0)
		keys = int(min(int64(max(2*keys, 8<<10)), room))
		if keys < len(s.keys)+n {
			return false
		}
	}
	if len(s.entries) == entries {
		room := (s.max - counterMemory(0, keys)) / perEntry
		entries = int(min(int64(max(2*entries, 256)), room))
		if entries <= len(s.entries) {
			return false
		}
	}
	if entries != cap(s.entries) {
		s.entries = append(make([]counterEntry, 0, entries), s.entries...)
	}
	if keys != cap(s.keys) {
		s.keys = append(make([]byte, 0, keys), s.keys...)
	}
	return true
}

// counterCacheStats is what the cache holds (bytes: the memory of its
// shards) and how it answered.
type counterCacheStats struct {
	entries, bytes, hits, misses int64
}

func (c *counterCache) stats() counterCacheStats {
	var st counterCacheStats
	if c == nil {
		return st
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.entries += int64(len(s.entries))
		st.bytes += counterMemory(cap(s.entries), cap(s.keys))
		st.hits += s.hits
		st.misses += s.misses
		s.mu.Unlock()
	}
	return st
}
