package badgerstore

import (
	"bytes"
	"fmt"
	"math/rand/v2"
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
	ha := c.hashOf(a)
	var b []byte
	var hb uint64
	for i := 0; b == nil || hb%cacheShards != ha%cacheShards; i++ {
		b = fmt.Appendf(nil, "key-b%d", i)
		hb = c.hashOf(b)
	}
	c.put(0, a, []byte("value of a"), 0, true)
	// Give b's hash to a's entry, as if the two keys' hashes were equal.
	s := &c.shards[ha%cacheShards]
	s.insert(hb, s.slots[s.probe(ha)].at)
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
		if c.shards[i].count > 0 {
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

// TestWholeGroupCacheKeepsGroupsWhole: a cache of whole groups offered
// about eight times the bytes it holds, in groups of ten keys, keeps each
// group it answers for whole, but for at most one a shard, the group
// whose put filled the shard, where replacing single entries left most
// groups in part.
func TestWholeGroupCacheKeepsGroupsWhole(t *testing.T) {
	const size = 1 << 20
	c := newWholeGroupCache(size)
	const groups, perGroup = 6000, 10
	key := func(g, k int) []byte { return fmt.Appendf(nil, "row:%05d:super-%02d", g, k) }
	value := func(g, k int) []byte { return bytes.Repeat([]byte{byte(g + k)}, 80) }
	group := len("row:00000:")
	for g := 0; g < groups; g++ {
		for k := 0; k < perGroup; k++ {
			c.put(group, key(g, k), value(g, k), 0, true)
		}
	}
	whole, part := 0, 0
	for g := 0; g < groups; g++ {
		n := 0
		for k := 0; k < perGroup; k++ {
			var got []byte
			if c.read(group, key(g, k), 0, func(v []byte) { got = append([]byte{}, v...) }) {
				if !bytes.Equal(got, value(g, k)) {
					t.Fatalf("group %d key %d answered %d bytes, not its value", g, k, len(got))
				}
				n++
			}
		}
		switch n {
		case perGroup:
			whole++
		case 0:
		default:
			part++
		}
	}
	st := c.stats()
	if part > cacheShards || whole == 0 || whole*perGroup > int(st.entries) || st.bytes > size {
		t.Fatalf("%d groups whole and %d in part (want at most %d in part), cache %+v", whole, part, cacheShards, st)
	}
	if whole >= groups {
		t.Fatalf("every one of %d groups answered: the cache never filled", groups)
	}
}

// BenchmarkRecentCacheRead reads keys at random from a full cache of
// 32 MiB, the cell cache's share of the default budget, with keys and
// values of the size thriftbench's gets find: what a read costs is mostly
// where its index, entry and key sit in memory.
func BenchmarkRecentCacheRead(b *testing.B) {
	const size = 32 << 20
	c := newRecentCache(size)
	value := bytes.Repeat([]byte{'v'}, 80)
	var keys [][]byte
	for i := 0; ; i++ {
		key := fmt.Appendf(nil, "\x00\x00\x00\x01row%07d\x00col%02d", i/20, i%20)
		c.put(0, key, value, 0, true)
		if i%1000 == 0 && c.stats().entries < int64(len(keys)) {
			break // a shard filled and started again
		}
		keys = append(keys, key)
	}
	// The keys the cache still holds.
	held := keys[:0]
	for _, k := range keys {
		if c.read(0, k, 0, func([]byte) {}) {
			held = append(held, k)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	order := make([]int, 1<<16)
	for i := range order {
		order[i] = rng.IntN(len(held))
	}
	var n int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.read(0, held[order[i&(len(order)-1)]], 0, func(v []byte) { n += len(v) })
	}
	b.ReportMetric(float64(len(held)), "keys")
}

// TestRecentCacheIndexKeepsEveryEntryReachable puts, rewrites larger and
// invalidates keys of many sizes at random in a cache small enough to
// replace and start again often, and checks after every step that every
// slot of the index is found by the probe of its hash, that the count is
// the slots used, and that every key the cache answers for has its last
// value.
func TestRecentCacheIndexKeepsEveryEntryReachable(t *testing.T) {
	c := newRecentCache(cacheShards * cacheShardMin)
	rng := rand.New(rand.NewPCG(3, 4))
	last := map[string][]byte{} // the value put last, nil once invalidated
	const keys = 3000
	for step := 0; step < 60000; step++ {
		key := fmt.Appendf(nil, "k%d%s", rng.IntN(keys), bytes.Repeat([]byte{'x'}, rng.IntN(40)%7))
		switch op := rng.IntN(10); {
		case op < 6:
			val := bytes.Repeat([]byte{byte(step)}, 1+rng.IntN(120))
			c.put(0, key, val, 0, true)
			last[string(key)] = val
		case op < 8:
			c.invalidate(0, key)
			last[string(key)] = nil
		default:
			if got := cached(c, key, 0); got != nil && !bytes.Equal(got, last[string(key)]) {
				t.Fatalf("step %d: %q answered %d bytes, want its last value of %d", step, key, len(got), len(last[string(key)]))
			}
		}
		if step%97 != 0 {
			continue
		}
		for i := range c.shards {
			s := &c.shards[i]
			used := 0
			for j, sl := range s.slots {
				if sl.hash == 0 {
					continue
				}
				used++
				if p := s.probe(sl.hash); p != j {
					t.Fatalf("step %d, shard %d: the slot %d of hash %x is found at %d", step, i, j, sl.hash, p)
				}
			}
			if used != s.count || s.count > slotsHold(len(s.slots)) {
				t.Fatalf("step %d, shard %d: %d slots used, count %d, %d slots", step, i, used, s.count, len(s.slots))
			}
			if m := cacheMemory(len(s.slots), cap(s.arena)); m > s.max {
				t.Fatalf("step %d, shard %d: %d bytes, bound %d", step, i, m, s.max)
			}
		}
	}
	answered := 0
	for k, v := range last {
		if got := cached(c, []byte(k), 0); got != nil {
			answered++
			if !bytes.Equal(got, v) {
				t.Fatalf("%q answered %d bytes, want its last value of %d", k, len(got), len(v))
			}
		}
	}
	if st := c.stats(); answered == 0 || st.entries < int64(answered) {
		t.Fatalf("%d keys answered, %+v", answered, st)
	}
}

// TestRecentCacheLeavesOutLargeEntries: an entry over an eighth of its
// shard is not cached, and pushes out none of the entries there; a
// cached value that grows that large leaves the cache.
func TestRecentCacheLeavesOutLargeEntries(t *testing.T) {
	c := newRecentCache(cacheShards * cacheShardMin)
	// The keys of group "row:" share a shard.
	group := len("row:")
	answers := func(key string) string {
		var got string
		c.read(group, []byte(key), 0, func(v []byte) { got = string(v) })
		return got
	}
	for i := 0; i < 50; i++ {
		c.put(group, fmt.Appendf(nil, "row:%02d", i), []byte("small"), 0, true)
	}
	large := bytes.Repeat([]byte{'L'}, cacheShardMin/cacheLargestShare)
	c.put(group, []byte("row:large"), large, 0, true)
	if answers("row:large") != "" {
		t.Fatal("an entry over an eighth of its shard was cached")
	}
	c.put(group, []byte("row:07"), large, 0, true)
	if answers("row:07") != "" {
		t.Fatal("a value grown over an eighth of its shard is still answered")
	}
	for i := 0; i < 50; i++ {
		if got := answers(fmt.Sprintf("row:%02d", i)); i != 7 && got != "small" {
			t.Fatalf("row:%02d after the large puts: %q", i, got)
		}
	}
}
