package badgerstore

import "encoding/binary"

// The counter cache. An add reads the counter it adds to, and under
// thriftbench's counter mode that point read (a search of every memtable's
// skiplist, a bloom filter and a block of every level's table) was a fifth
// of thriftd's CPU. As Cassandra does (counter_cache_size_in_mb), the
// engine keeps the value and timestamp of counters it updated lately,
// from their second update on, and an add to one of them reads nothing
// from Badger. It is a recentCache (recent_cache.go), whose rules it
// keeps:
//
//   - a writer whose transaction committed publishes its writes of
//     counter cells (writer.publish): a plain counter record (no raw
//     names, no cut key) is published, any other write leaves the key
//     unknown;
//   - every other write of a counter cell's key invalidates the key's
//     entry first, under the row's lock: an add (before its transaction
//     commits), a cell deletion (writer.putCell) and garbage collection
//     (gcWalk.batch);
//   - counter cells get no Badger expiry.
//
// Row, super column and range deletions write no cell key: an add checks
// them whatever the source of the record it adds to (counterLive).
type counterCache recentCache

// counterEntrySize is the size of a counter's value in the cache: its
// value and its timestamp.
const counterEntrySize = 16

// newCounterCache returns a cache of at most maxBytes, or nil (no cache)
// for a budget too small to share among its shards.
func newCounterCache(maxBytes int64) *counterCache {
	return (*counterCache)(newRecentCache(maxBytes))
}

// get returns the counter stored under key, if the cache knows it.
func (c *counterCache) get(key []byte) (value, timestamp int64, ok bool) {
	ok = (*recentCache)(c).read(0, key, 0, func(v []byte) {
		value, timestamp = int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:]))
	})
	return value, timestamp, ok
}

// invalidate marks the entry of key, if any, as unknown: its record is
// being written.
func (c *counterCache) invalidate(key []byte) { (*recentCache)(c).invalidate(0, key) }

// put records the counter committed under key; a counter without an entry
// gets one only if admit (from its second update on).
func (c *counterCache) put(key []byte, value, timestamp int64, admit bool) {
	var buf [counterEntrySize]byte
	binary.BigEndian.PutUint64(buf[:], uint64(value))
	binary.BigEndian.PutUint64(buf[8:], uint64(timestamp))
	(*recentCache)(c).put(0, key, buf[:], 0, admit)
}

func (c *counterCache) stats() cacheStats { return (*recentCache)(c).stats() }
