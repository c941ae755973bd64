package badgerstore

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"testing"
)

// cached returns the value the cache holds under key, or nil.
func cached(c *recentCache, key []byte, now int64) []byte {
	var got []byte
	if !c.read(0, key, now, func(v []byte) { got = append([]byte{}, v...) }) {
		return nil
	}
	return got
}

// TestRecentCacheStaysWithinItsBound: a cache full of values of many sizes,
// rewritten larger and smaller, evicts to stay under its size and answers
// for the keys it keeps with their last value.
func TestRecentCacheStaysWithinItsBound(t *testing.T) {
	const size = 1 << 20
	c := newRecentCache(size)
	value := func(i, round int) []byte { return bytes.Repeat([]byte{byte(i)}, 1+(i*7+round*13)%300) }
	const keys = 20000
	for round := 0; round < 3; round++ {
		for i := 0; i < keys; i++ {
			c.put(0, fmt.Appendf(nil, "key-%06d", i), value(i, round), 0, true)
		}
	}
	st := c.stats()
	if st.bytes > size || st.bytes < size/2 || st.entries == 0 {
		t.Fatalf("cache of %d bytes holds %+v (want more than half its size used, never more than it)", size, st)
	}
	found := 0
	for i := 0; i < keys; i++ {
		if got := cached(c, fmt.Appendf(nil, "key-%06d", i), 0); got != nil {
			found++
			if !bytes.Equal(got, value(i, 2)) {
				t.Fatalf("key %d: %d bytes, want its last value of %d", i, len(got), len(value(i, 2)))
			}
		}
	}
	if found == 0 || int64(found) > st.entries {
		t.Fatalf("%d keys answered, %d entries", found, st.entries)
	}
	key := []byte("fresh")
	c.put(0, key, []byte("one"), 0, true)
	c.put(0, key, []byte("a longer value, which moves"), 0, false)
	if got := cached(c, key, 0); string(got) != "a longer value, which moves" {
		t.Fatalf("the value put last: %q", got)
	}
	c.invalidate(0, key)
	if cached(c, key, 0) != nil {
		t.Fatal("an invalidated key was answered")
	}
	if c.read(0, []byte("never put"), 0, func([]byte) { t.Fatal("called") }) {
		t.Fatal("a key never put was answered")
	}
	if newRecentCache(1024) != nil {
		t.Fatal("a cache too small to share among its shards was made")
	}
}

// TestRecentCacheAdmission: a key gets an entry only when admitted, and
// keeps it once it has one.
func TestRecentCacheAdmission(t *testing.T) {
	c := newRecentCache(1 << 20)
	key := []byte("k")
	c.put(0, key, []byte("v1"), 0, false)
	if cached(c, key, 0) != nil {
		t.Fatal("a key not admitted was cached")
	}
	c.put(0, key, []byte("v2"), 0, true)
	c.put(0, key, []byte("v3"), 0, false)
	if got := cached(c, key, 0); string(got) != "v3" {
		t.Fatalf("got %q, want v3", got)
	}
}

// TestRecentCacheExpiry: an entry answers until its Badger expiry, as
// Badger does (expired at expiresAt <= now).
func TestRecentCacheExpiry(t *testing.T) {
	c := newRecentCache(1 << 20)
	key := []byte("k")
	c.put(0, key, []byte("v"), 100, true)
	if cached(c, key, 99) == nil {
		t.Fatal("answered nothing before its expiry")
	}
	if cached(c, key, 100) != nil || cached(c, key, 101) != nil {
		t.Fatal("answered at or after its expiry")
	}
	c.put(0, key, []byte("w"), 0, true)
	if got := cached(c, key, 1<<40); string(got) != "w" {
		t.Fatalf("a value without expiry: %q", got)
	}
}

// TestRecentCacheKeysSharingAHash: a key whose hash another key's entry
// holds is never answered from that entry, nor changes it.
func TestRecentCacheKeysSharingAHash(t *testing.T) {
	c := newRecentCache(1 << 20)
	a := []byte("key-a")
	ha := maphash.Bytes(c.seed, a)
	var b []byte
	var hb uint64
	for i := 0; b == nil || hb%cacheShards != ha%cacheShards; i++ {
		b = fmt.Appendf(nil, "key-b%d", i)
		hb = maphash.Bytes(c.seed, b)
	}
	c.put(0, a, []byte("value of a"), 0, true)
	// Give b's hash to a's entry, as if the two keys' hashes were equal.
	s := &c.shards[ha%cacheShards]
	s.index[hb] = s.index[ha]
	if cached(c, b, 0) != nil {
		t.Fatal("b was answered from a's entry")
	}
	c.put(0, b, []byte("value of b, longer than a's"), 0, true)
	c.invalidate(0, b)
	if got := cached(c, a, 0); string(got) != "value of a" {
		t.Fatalf("a after the writes of b: %q", got)
	}
}

// TestRecentCacheGroupsShareAShard: the keys of a group are kept in one
// shard, so that they are dropped together.
func TestRecentCacheGroupsShareAShard(t *testing.T) {
	c := newRecentCache(1 << 20)
	for i := 0; i < 100; i++ {
		c.put(len("row:"), fmt.Appendf(nil, "row:%03d", i), []byte("v"), 0, true)
	}
	filled := 0
	for i := range c.shards {
		if len(c.shards[i].entries) > 0 {
			filled++
		}
	}
	if filled != 1 {
		t.Fatalf("the keys of one group are in %d shards", filled)
	}
}

// TestRecentCacheFullShardReplaces: a cache offered three times the keys
// it holds, all of one size, stays full, each key it answers with its own
// value, where starting again empty kept about half of them.
func TestRecentCacheFullShardReplaces(t *testing.T) {
	const size = 1 << 20
	c := newRecentCache(size)
	value := func(i int) []byte { return fmt.Appendf(nil, "value-%058d", i) }
	const keys = 30000
	most := int64(0) // the most entries held at once
	for i := 0; i < keys; i++ {
		c.put(0, fmt.Appendf(nil, "key-%06d", i), value(i), 0, true)
		if i%500 == 0 {
			most = max(most, c.stats().entries)
		}
	}
	st := c.stats()
	found := 0
	for i := 0; i < keys; i++ {
		if got := cached(c, fmt.Appendf(nil, "key-%06d", i), 0); got != nil {
			found++
			if !bytes.Equal(got, value(i)) {
				t.Fatalf("key %d answered %q", i, got)
			}
		}
	}
	if st.bytes > size || found > int(st.entries) || int64(found) < most*9/10 {
		t.Fatalf("%d keys answered, cache %+v, %d entries at most (want nine in ten of those, within %d bytes)", found, st, most, size)
	}
	if found >= keys {
		t.Fatalf("every one of %d keys answered: the cache never filled", keys)
	}
}
