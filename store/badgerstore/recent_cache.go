package badgerstore

import (
	"hash/maphash"
	"sync"
	"unsafe"
)

// A cache of records the engine wrote lately, by key, which spares a
// write the read of the record it changes: the counter cache (an add
// reads its counter, counter_cache.go) and the pack cache (a write into
// a super column reads its pack, pack_cache.go) are two of them.
//
// An entry that is valid equals the record Badger holds under its key,
// which each user of a cache keeps true:
//
//   - only a writer whose transaction committed publishes entries,
//     replaying its writes of the cached kind of key in order, so the
//     last write of a key decides. It does so while it still holds the
//     rows' locks (writer.publish);
//   - every write of such a key invalidates the key's entry first, under
//     the row's lock: a writer's, whose transaction may still fail (one
//     that fails publishes nothing), and garbage collection's;
//   - an entry keeps the Badger expiry of its record, and answers nothing
//     once Badger would no longer return the record;
//   - dropped families' data ids are never used again.
//
// The cell cache (cell_cache.go) is filled by readers instead, and keeps
// its entries right with stamps, not with writers' publications: an
// entry answers only a read that gives the stamp it was put with.

// cacheShards is the number of independently locked parts of a cache.
const cacheShards = 32

// cacheIndexCost bounds the memory of a shard's index per entry the shard
// can hold: a map of uint64 to int32 takes 17 bytes a slot, and may have
// just doubled its slots, of which it fills at most seven eighths.
const cacheIndexCost = 40

// cacheShardMin is the smallest share of a cache a shard may have.
const cacheShardMin = 16 << 10

// recentCache maps keys to the values stored under them; a nil cache
// holds nothing. Its user may group keys (a row's): the keys of a group
// share a shard, so that they are kept and dropped together, and a write
// that needs them all finds them all more often than each alone. It
// holds no pointers for the garbage collector to follow: each shard
// keeps its keys and values in one byte arena, its entries in one slice,
// and an index from the keys' hashes to the entries.
type recentCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu      sync.Mutex
	index   map[uint64]int32 // key hash → entries
	entries []cacheEntry
	arena   []byte // each entry's key, then the room of its value
	max     int64  // bound of cacheMemory(cap(entries), cap(arena))
	hits    int64
	misses  int64
	// rowHits and rowMisses count the cell cache's reads of row images
	// (row_image.go), apart from its reads of cells.
	rowHits   int64
	rowMisses int64
}

// cacheEntry is where a key and its value sit in its shard's arena, with
// the value's Badger expiry (Unix seconds, 0: none) and the stamp it was
// put with (the cell cache's row version; 0 in the others); an invalid
// entry keeps its place for the publication that follows.
type cacheEntry struct {
	at, keyLen, valLen, valRoom uint32
	expiresAt                   uint64
	stamp                       uint64
	valid                       bool
}

// newRecentCache returns a cache of at most maxBytes, or nil (no cache) for
// a budget too small to share among its shards.
func newRecentCache(maxBytes int64) *recentCache {
	perShard := maxBytes / cacheShards
	if perShard < cacheShardMin {
		return nil
	}
	c := &recentCache{seed: maphash.MakeSeed()}
	for i := range c.shards {
		c.shards[i].index = map[uint64]int32{}
		c.shards[i].max = perShard
	}
	return c
}

// find returns the shard of key, locked, its hash, and its entry (nil if
// the shard holds none for key; also nil for a key whose hash another key
// in the shard has: such a key is not cached). The key's group is its
// first group bytes (all of it when group is 0).
func (c *recentCache) find(group int, key []byte) (*cacheShard, uint64, *cacheEntry) {
	h := maphash.Bytes(c.seed, key)
	sh := h
	if group > 0 && group < len(key) {
		sh = maphash.Bytes(c.seed, key[:group])
	}
	s := &c.shards[sh%cacheShards]
	s.mu.Lock()
	i, ok := s.index[h]
	if !ok {
		return s, h, nil
	}
	e := &s.entries[i]
	if string(s.arena[e.at:e.at+e.keyLen]) != string(key) {
		return s, h, nil
	}
	return s, h, e
}

// read calls use with the value stored under key (of the group of its
// first group bytes, see find), if the cache knows it and Badger would
// still return it at now (Unix seconds of the wall clock, Badger's), and
// reports whether it did. The value is only valid during the call, which
// holds the shard's lock.
func (c *recentCache) read(group int, key []byte, now int64, use func(val []byte)) bool {
	return c.readStamped(group, key, now, 0, false, use)
}

// readStamped is read of an entry put with stamp only; row tells the
// cell cache's reads of row images, which are counted apart.
func (c *recentCache) readStamped(group int, key []byte, now int64, stamp uint64, row bool, use func(val []byte)) bool {
	if c == nil {
		return false
	}
	s, _, e := c.find(group, key)
	defer s.mu.Unlock()
	hits, misses := &s.hits, &s.misses
	if row {
		hits, misses = &s.rowHits, &s.rowMisses
	}
	if e == nil || !e.valid || e.stamp != stamp || (e.expiresAt != 0 && e.expiresAt <= uint64(now)) {
		*misses++
		return false
	}
	*hits++
	at := e.at + e.keyLen
	use(s.arena[at : at+e.valLen])
	return true
}

// invalidate marks the entry of key, if any, as unknown: its record is
// being written.
func (c *recentCache) invalidate(group int, key []byte) {
	if c == nil {
		return
	}
	s, _, e := c.find(group, key)
	defer s.mu.Unlock()
	if e != nil {
		e.valid = false
	}
}

// put records the value committed under key (of group, see find), with
// its Badger expiry. A key without an entry gets one only if admit: a
// user caches keys from their second write on, so that a stream of keys
// each written once does not churn the cache. A full shard gives the key
// the place of an entry its hash picks, if that entry's room holds it
// (replace), and starts again empty otherwise.
func (c *recentCache) put(group int, key, val []byte, expiresAt uint64, admit bool) {
	c.putStamped(group, key, val, expiresAt, 0, admit, nil)
}

// putStamped is put with a stamp, which a read must give to find the
// entry, and a condition (nil: none) checked under the shard's lock:
// nothing is put unless it holds.
func (c *recentCache) putStamped(group int, key, val []byte, expiresAt, stamp uint64, admit bool, still func() bool) {
	if c == nil {
		return
	}
	s, h, e := c.find(group, key)
	defer s.mu.Unlock()
	if still != nil && !still() {
		return
	}
	if e != nil && len(val) <= int(e.valRoom) {
		at := e.at + e.keyLen
		e.valLen = uint32(copy(s.arena[at:at+e.valRoom], val))
		e.expiresAt, e.stamp, e.valid = expiresAt, stamp, true
		return
	}
	// An entry whose value outgrew its room moves to new room.
	moving := e != nil
	if _, taken := s.index[h]; !moving && (!admit || taken) {
		return
	}
	// Room for the value to grow by an eighth in place.
	room := len(val) + len(val)/8
	n := len(key) + room
	if !s.fits(n) && !s.grow(n) {
		if s.replace(c.seed, h, key, val, expiresAt, stamp) {
			return
		}
		clear(s.index)
		s.entries, s.arena = s.entries[:0], s.arena[:0]
		moving = false
		if !s.fits(n) {
			return // longer than the shard's whole arena
		}
	}
	at := uint32(len(s.arena))
	s.arena = append(append(s.arena, key...), val...)
	s.arena = s.arena[:len(s.arena)+room-len(val)]
	entry := cacheEntry{at: at, keyLen: uint32(len(key)), valLen: uint32(len(val)), valRoom: uint32(room),
		expiresAt: expiresAt, stamp: stamp, valid: true}
	if moving {
		s.entries[s.index[h]] = entry // grow may have moved the entries
		return
	}
	s.index[h] = int32(len(s.entries))
	s.entries = append(s.entries, entry)
}

// replace puts key, of hash h, and val in the place of the entry the hash
// picks in a full shard, if that entry's room holds them, and reports
// whether it did. Picking by hash is picking at random: under reads spread
// evenly over more keys than it holds, a full shard keeps as many of them
// as it can hold, where starting again empty kept half as many on
// average, and it keeps a hot key whichever keys come and go around it.
func (s *cacheShard) replace(seed maphash.Seed, h uint64, key, val []byte, expiresAt, stamp uint64) bool {
	if len(s.entries) == 0 {
		return false
	}
	i := int32(h % uint64(len(s.entries)))
	v := &s.entries[i]
	if int(v.keyLen+v.valRoom) < len(key)+len(val) {
		return false
	}
	if vh := maphash.Bytes(seed, s.arena[v.at:v.at+v.keyLen]); s.index[vh] == i {
		delete(s.index, vh)
	}
	room := v.keyLen + v.valRoom - uint32(len(key))
	copy(s.arena[v.at:], key)
	copy(s.arena[v.at+uint32(len(key)):], val)
	*v = cacheEntry{at: v.at, keyLen: uint32(len(key)), valLen: uint32(len(val)), valRoom: room,
		expiresAt: expiresAt, stamp: stamp, valid: true}
	s.index[h] = i
	return true
}

// cacheMemory is the memory of a shard whose slices have these
// capacities, its index included.
func cacheMemory(entries, arena int) int64 {
	return int64(entries)*(int64(unsafe.Sizeof(cacheEntry{}))+cacheIndexCost) + int64(arena)
}

// fits reports whether an entry of n bytes (key and value room) fits in
// the shard's slices as they are.
func (s *cacheShard) fits(n int) bool {
	return len(s.entries) < cap(s.entries) && len(s.arena)+n <= cap(s.arena)
}

// grow makes room in the shard's slices for an entry of n bytes (key and
// value room), and reports whether it could. It sizes both for twice the
// entries held, at their mean size, or for as many as the shard's bound
// allows. The slices never shrink: a full shard starts again empty in the
// memory it has.
func (s *cacheShard) grow(n int) bool {
	perEntry := cacheMemory(1, 0)
	mean := (len(s.arena) + n) / (len(s.entries) + 1)
	want := max(2*(len(s.entries)+1), 64)
	if cacheMemory(want, want*mean) > s.max {
		want = int(s.max / (perEntry + int64(mean)))
	}
	entries, arena := max(want, cap(s.entries)), max(want*mean, cap(s.arena))
	if cacheMemory(entries, arena) > s.max {
		// One of the slices is larger than its share: the other gets
		// what is left.
		if entries > want {
			arena = int(s.max - cacheMemory(entries, 0))
		} else {
			entries = int((s.max - int64(arena)) / perEntry)
		}
	}
	if entries <= len(s.entries) || arena < len(s.arena)+n {
		return false
	}
	if entries != cap(s.entries) {
		s.entries = append(make([]cacheEntry, 0, entries), s.entries...)
	}
	if arena != cap(s.arena) {
		s.arena = append(make([]byte, 0, arena), s.arena...)
	}
	return true
}

// cacheStats is what a cache holds (bytes: the memory of its shards) and
// how it answered.
type cacheStats struct {
	entries, bytes, hits, misses int64
	rowHits, rowMisses           int64
}

func (c *recentCache) stats() cacheStats {
	var st cacheStats
	if c == nil {
		return st
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		st.entries += int64(len(s.entries))
		st.bytes += cacheMemory(cap(s.entries), cap(s.arena))
		st.hits += s.hits
		st.misses += s.misses
		st.rowHits += s.rowHits
		st.rowMisses += s.rowMisses
		s.mu.Unlock()
	}
	return st
}
