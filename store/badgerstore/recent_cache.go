package badgerstore

import (
	"encoding/binary"
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

// cacheShardMin is the smallest share of a cache a shard may have.
const cacheShardMin = 16 << 10

// cacheLargestShare bounds an entry to this fraction of its shard: a
// larger one is not cached, since making room for it would drop many
// entries, or start the shard again empty every time it is put.
const cacheLargestShare = 8

// recentCache maps keys to the values stored under them; a nil cache
// holds nothing. Its user may group keys (a row's): the keys of a group
// share a shard, so that they are kept and dropped together, and a write
// that needs them all finds them all more often than each alone. It
// holds no pointers for the garbage collector to follow: each shard
// keeps its entries in one byte arena, each entry's header beside its key
// and value, and an index of slots from the keys' hashes to the entries.
//
// A read of a large cache costs what it waits for memory, not what it
// computes: a map from hashes to a slice of entries made it wait for the
// map's control word, its slot, the entry and the key. A slot holds the
// hash and the entry's place, four to a cache line, and the entry's
// header, key and value lie together: two waits.
type recentCache struct {
	// wholeGroups: a full shard starts again empty rather than replace
	// an entry, so that the groups it keeps are whole (see put).
	wholeGroups bool
	seed        maphash.Seed
	shards      [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.Mutex
	// slots is the index: open addressing with linear probing over a
	// power of two of slots, at most seven eighths of them used, so a
	// probe always ends at an empty slot.
	slots  []cacheSlot
	count  int    // entries held
	arena  []byte // entries, each its header, key and value room
	max    int64  // bound of cacheMemory(len(slots), cap(arena))
	hits   int64
	misses int64
	// rowHits and rowMisses count the cell cache's reads of row images
	// (row_image.go), apart from its reads of cells.
	rowHits   int64
	rowMisses int64
}

// cacheSlot is one place of a shard's index: a key's hash (0: empty;
// hashes are never 0, see hashOf) and where its entry is in the arena.
type cacheSlot struct {
	hash uint64
	at   uint32
}

// cacheSlotSize is the memory of a slot.
const cacheSlotSize = int64(unsafe.Sizeof(cacheSlot{}))

// cacheEntry is an entry's header in the arena, which its key and then
// the room of its value follow: their lengths, the value's Badger expiry
// (Unix seconds, 0: none) and the stamp it was put with (the cell cache's
// row version; 0 in the others); an invalid entry keeps its place for the
// publication that follows.
type cacheEntry struct {
	keyLen, valLen, valRoom uint32
	valid                   bool
	expiresAt               uint64
	stamp                   uint64
}

// The header's layout in the arena, little-endian.
const (
	entryKeyLen    = 0
	entryValLen    = 4
	entryValRoom   = 8
	entryValid     = 12
	entryExpiresAt = 16
	entryStamp     = 24
	entryHeader    = 32
)

// entry reads the header of the entry at at.
func (s *cacheShard) entry(at uint32) cacheEntry {
	h := s.arena[at : at+entryHeader : at+entryHeader]
	return cacheEntry{
		keyLen:    binary.LittleEndian.Uint32(h[entryKeyLen:]),
		valLen:    binary.LittleEndian.Uint32(h[entryValLen:]),
		valRoom:   binary.LittleEndian.Uint32(h[entryValRoom:]),
		valid:     h[entryValid] != 0,
		expiresAt: binary.LittleEndian.Uint64(h[entryExpiresAt:]),
		stamp:     binary.LittleEndian.Uint64(h[entryStamp:]),
	}
}

// setEntry writes the header of the entry at at.
func (s *cacheShard) setEntry(at uint32, e cacheEntry) {
	h := s.arena[at : at+entryHeader : at+entryHeader]
	binary.LittleEndian.PutUint32(h[entryKeyLen:], e.keyLen)
	binary.LittleEndian.PutUint32(h[entryValLen:], e.valLen)
	binary.LittleEndian.PutUint32(h[entryValRoom:], e.valRoom)
	h[entryValid] = 0
	if e.valid {
		h[entryValid] = 1
	}
	binary.LittleEndian.PutUint64(h[entryExpiresAt:], e.expiresAt)
	binary.LittleEndian.PutUint64(h[entryStamp:], e.stamp)
}

// key is the key of the entry at at, whose header is e.
func (s *cacheShard) key(at uint32, e *cacheEntry) []byte {
	k := at + entryHeader
	return s.arena[k : k+e.keyLen]
}

// value is the room of the value of the entry at at, whose header is e.
func (s *cacheShard) value(at uint32, e *cacheEntry) []byte {
	v := at + entryHeader + e.keyLen
	return s.arena[v : v+e.valRoom]
}

// entrySize is the arena an entry with a key of keyLen bytes and a value
// room of room bytes takes, its header included.
func entrySize(keyLen, room int) int { return entryHeader + keyLen + room }

// newWholeGroupCache returns a cache of at most maxBytes, or nil, whose
// full shards start again empty instead of replacing an entry: for a user
// that needs a group's keys all at once, a group that lost one key to a
// replacement is as good as gone, and replacements picked at random left
// most groups in part.
func newWholeGroupCache(maxBytes int64) *recentCache {
	c := newRecentCache(maxBytes)
	if c != nil {
		c.wholeGroups = true
	}
	return c
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
		c.shards[i].max = perShard
	}
	return c
}

// hashOf is the hash of key in c's index, never 0 (an empty slot's).
func (c *recentCache) hashOf(key []byte) uint64 {
	return max(maphash.Bytes(c.seed, key), 1)
}

// find returns the shard of key, locked, its hash, the slot of its entry
// (or of the empty slot its probe ended at, -1 in a shard without
// slots), and whether the slot holds key's entry, whose header it returns.
// A key whose hash another key in the shard has is not cached: find
// reports the other key's slot, not holding key. The key's group is its
// first group bytes (all of it when group is 0).
func (c *recentCache) find(group int, key []byte) (s *cacheShard, h uint64, slot int, e cacheEntry, ok bool) {
	h = c.hashOf(key)
	sh := h
	if group > 0 && group < len(key) {
		sh = c.hashOf(key[:group])
	}
	s = &c.shards[sh%cacheShards]
	s.mu.Lock()
	slot = s.probe(h)
	if slot < 0 || s.slots[slot].hash == 0 {
		return s, h, slot, e, false
	}
	at := s.slots[slot].at
	e = s.entry(at)
	return s, h, slot, e, string(s.key(at, &e)) == string(key)
}

// probe returns the slot holding hash h, or the empty slot where the
// search for it ended; -1 if the shard has no slots.
func (s *cacheShard) probe(h uint64) int {
	if len(s.slots) == 0 {
		return -1
	}
	mask := len(s.slots) - 1
	for i := s.home(h); ; i = (i + 1) & mask {
		if sl := s.slots[i].hash; sl == h || sl == 0 {
			return i
		}
	}
}

// home is the slot where the probe for hash h starts. It takes the
// hash's high bits: the low ones pick the shard.
func (s *cacheShard) home(h uint64) int { return int(h>>32) & (len(s.slots) - 1) }

// read calls use with the value stored under key (of the group of its
// first group bytes, see find), if the cache knows it and Badger would
// still return it at now (Unix seconds of the wall clock, Badger's), and
// reports whether it did. The value is only valid during the call, which
// holds the shard's lock.
func (c *recentCache) read(group int, key []byte, now int64, use func(val []byte)) bool {
	return c.readStamped(group, key, now, 0, false, func(val []byte) bool {
		use(val)
		return true
	})
}

// readStamped is read of an entry put with stamp only; row tells the
// cell cache's reads of row images, which are counted apart. use reports
// whether the value answered the read: one that did not (a row's mark,
// row_image.go) counts as a miss, and readStamped returns false.
func (c *recentCache) readStamped(group int, key []byte, now int64, stamp uint64, row bool, use func(val []byte) bool) bool {
	if c == nil {
		return false
	}
	s, _, slot, e, ok := c.find(group, key)
	defer s.mu.Unlock()
	hits, misses := &s.hits, &s.misses
	if row {
		hits, misses = &s.rowHits, &s.rowMisses
	}
	if !ok || !e.valid || e.stamp != stamp || (e.expiresAt != 0 && e.expiresAt <= uint64(now)) {
		*misses++
		return false
	}
	if !use(s.value(s.slots[slot].at, &e)[:e.valLen]) {
		*misses++
		return false
	}
	*hits++
	return true
}

// invalidate marks the entry of key, if any, as unknown: its record is
// being written.
func (c *recentCache) invalidate(group int, key []byte) {
	if c == nil {
		return
	}
	s, _, slot, e, ok := c.find(group, key)
	defer s.mu.Unlock()
	if ok {
		e.valid = false
		s.setEntry(s.slots[slot].at, e)
	}
}

// put records the value committed under key (of group, see find), with
// its Badger expiry. A key without an entry gets one only if admit: a
// user caches keys from their second write on, so that a stream of keys
// each written once does not churn the cache. A full shard gives the key
// the place of an entry its hash picks, if that entry's room holds it
// (replace), and starts again empty otherwise, or always in a cache of
// whole groups.
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
	s, h, slot, e, ok := c.find(group, key)
	defer s.mu.Unlock()
	if still != nil && !still() {
		return
	}
	if ok && len(val) <= int(e.valRoom) {
		at := s.slots[slot].at
		e.valLen = uint32(copy(s.value(at, &e), val))
		e.expiresAt, e.stamp, e.valid = expiresAt, stamp, true
		s.setEntry(at, e)
		return
	}
	if ok {
		// The value outgrew its entry's room: the entry moves to new
		// room, and its old room is left unused until the shard starts
		// again.
		s.remove(slot)
	} else if taken := slot >= 0 && s.slots[slot].hash != 0; !admit || taken {
		return
	}
	// Room for the value to grow by an eighth in place.
	room := len(val) + len(val)/8
	n := entrySize(len(key), room)
	if int64(n) > s.max/cacheLargestShare {
		return // it would push many entries out, or the whole shard
	}
	if !s.fits(n) && !s.grow(n) {
		if !c.wholeGroups && s.replace(h, key, val, expiresAt, stamp) {
			return
		}
		s.empty()
		if !s.fits(n) && !s.grow(n) {
			return
		}
	}
	at := uint32(len(s.arena))
	s.arena = s.arena[:int(at)+n]
	s.setEntry(at, cacheEntry{keyLen: uint32(len(key)), valLen: uint32(len(val)), valRoom: uint32(n - entryHeader - len(key)),
		expiresAt: expiresAt, stamp: stamp, valid: true})
	copy(s.arena[at+entryHeader:], key)
	copy(s.arena[int(at)+entryHeader+len(key):], val)
	s.insert(h, at)
}

// insert gives hash h, which no slot holds, the entry at at.
func (s *cacheShard) insert(h uint64, at uint32) {
	s.slots[s.probe(h)] = cacheSlot{hash: h, at: at}
	s.count++
}

// remove empties slot i, moving back the slots after it that their
// probes would no longer reach (deletion in linear probing, without
// markers of deleted slots).
func (s *cacheShard) remove(i int) {
	mask := len(s.slots) - 1
	for j := (i + 1) & mask; s.slots[j].hash != 0; j = (j + 1) & mask {
		home := s.home(s.slots[j].hash)
		// The slot at j may move to i unless its home lies cyclically in
		// (i, j]: its probe starts after i.
		if (j-home)&mask >= (j-i)&mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = cacheSlot{}
	s.count--
}

// empty drops every entry, keeping the shard's memory.
func (s *cacheShard) empty() {
	clear(s.slots)
	s.count = 0
	s.arena = s.arena[:0]
}

// replace puts key, of hash h, and val in the place of the entry the hash
// picks in a full shard, if that entry's room holds them, and reports
// whether it did. Picking by hash is picking at random: under reads spread
// evenly over more keys than it holds, a full shard keeps as many of them
// as it can hold, where starting again empty kept half as many on
// average, and it keeps a hot key whichever keys come and go around it.
func (s *cacheShard) replace(h uint64, key, val []byte, expiresAt, stamp uint64) bool {
	if s.count == 0 {
		return false
	}
	mask := len(s.slots) - 1
	// The first used slot from the one the hash picks (there is one).
	i := s.home(h)
	for s.slots[i].hash == 0 {
		i = (i + 1) & mask
	}
	at := s.slots[i].at
	v := s.entry(at)
	if int(v.keyLen+v.valRoom) < len(key)+len(val) {
		return false
	}
	s.remove(i)
	room := v.keyLen + v.valRoom - uint32(len(key))
	s.setEntry(at, cacheEntry{keyLen: uint32(len(key)), valLen: uint32(len(val)), valRoom: room,
		expiresAt: expiresAt, stamp: stamp, valid: true})
	copy(s.arena[at+entryHeader:], key)
	copy(s.arena[at+entryHeader+uint32(len(key)):], val)
	s.insert(h, at)
	return true
}

// cacheMemory is the memory of a shard with this many slots and this
// arena.
func cacheMemory(slots, arena int) int64 {
	return int64(slots)*cacheSlotSize + int64(arena)
}

// slotsHold is how many entries an index of this many slots may hold.
func slotsHold(slots int) int { return slots / 8 * 7 }

// fits reports whether an entry of n bytes (entrySize) fits in the
// shard's index and arena as they are.
func (s *cacheShard) fits(n int) bool {
	return s.count < slotsHold(len(s.slots)) && len(s.arena)+n <= cap(s.arena)
}

// grow makes room in the shard's index and arena for an entry of n bytes
// (entrySize), and reports whether it could. It sizes both for twice the
// entries held, at their mean size, or for as many as the shard's bound
// allows. Neither ever shrinks: a full shard starts again empty in the
// memory it has.
func (s *cacheShard) grow(n int) bool {
	mean := (len(s.arena) + n) / (s.count + 1)
	want := max(2*(s.count+1), 64)
	slots := max(len(s.slots), 64)
	for slotsHold(slots) < want {
		slots *= 2
	}
	// Fewer slots, down to the ones there are, while the arena the shard
	// needs does not fit beside them, or while half as many would still
	// hold more entries than there are and the entries these hold would
	// not fit at their mean size.
	need := max(cap(s.arena), len(s.arena)+n)
	for slots > len(s.slots) && (cacheMemory(slots, need) > s.max ||
		(slotsHold(slots/2) > s.count && cacheMemory(slots, slotsHold(slots)*mean) > s.max)) {
		slots /= 2
	}
	arena := min(max(need, slotsHold(slots)*mean), int(s.max-cacheMemory(slots, 0)))
	if slotsHold(slots) <= s.count || arena < len(s.arena)+n {
		return false
	}
	if arena > cap(s.arena) {
		s.arena = append(make([]byte, 0, arena), s.arena...)
	}
	if slots != len(s.slots) {
		old := s.slots
		s.slots, s.count = make([]cacheSlot, slots), 0
		for _, sl := range old {
			if sl.hash != 0 {
				s.insert(sl.hash, sl.at)
			}
		}
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
		st.entries += int64(s.count)
		st.bytes += cacheMemory(len(s.slots), cap(s.arena))
		st.hits += s.hits
		st.misses += s.misses
		st.rowHits += s.rowHits
		st.rowMisses += s.rowMisses
		s.mu.Unlock()
	}
	return st
}
