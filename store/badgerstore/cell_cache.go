package badgerstore

import (
	"time"

	"github.com/thriftbridge/thriftbridge/store"
)

// The cell cache. A get of one column looks its cell up in Badger: a walk
// down the memtables' skiplists and a seek in a block of each table that
// may hold the key, three to five microseconds, a third of thriftd's CPU
// under single-column gets. The engine keeps the records that reads of
// named cells of standard families found, by key, and a read that finds
// its cell there reads nothing from Badger for it.
//
// No write touches the cache. An entry carries the version of its row's
// slot (rowlock.go) that the reader which put it saw before it opened its
// snapshot, and answers only a reader that saw the same even version
// before it opened its own snapshot and sees it still once it has the
// entry: then no write of the slot's rows began since the entry's reader
// looked, the entry holds what Badger holds, and the reader's snapshot
// holds the same (a snapshot sees every write counted before the reader
// looked, and a write is counted before its row's version is raised the
// second time). A reader puts what it read only while the version is
// still the one it saw. That every write of a data row's keys holds the
// row's lock, which raises the version, is the row locks' own rule.
//
// Truncating or dropping a family gives its rows a fresh data id (or
// none) at once and removes the old keys later (drop.go): entries of an
// old id are never asked for again, and random replacement (recent_cache.go)
// reclaims their room.
//
// Counter families (whose adds have the counter cache) and the cells of
// super families (whose subcolumns live in packs, which have the pack
// cache) are left out. Reads of several cells of a row, and slices, keep
// to one snapshot and read no cells from the cache; the cache keeps the
// images of small rows for them, under the same stamps (row_image.go).
// It also keeps, under the same stamps and their own keys, the row packs
// that reads of one row of a Super family read (rowpack.go): a get of a
// subcolumn by name then reads neither Badger nor its memtables.

// cellCache is the engine's cache of cells read; a nil one holds nothing.
type cellCache struct {
	entries *recentCache
	locks   *rowLocks
}

func newCellCache(maxBytes int64, locks *rowLocks) *cellCache {
	entries := newRecentCache(maxBytes)
	if entries == nil {
		return nil
	}
	return &cellCache{entries: entries, locks: locks}
}

// cellTicket is what a reader saw before it opened its snapshot: its row's
// slot and the slot's version. A zero ticket does not use the cache.
type cellTicket struct {
	slot    rowSlot
	version uint64
	ok      bool
}

// cacheableCells reports whether reads of t's cells may use the cache.
func cacheableCells(t *store.Table) bool {
	return !t.Counter && !t.Def.Super
}

// ticket returns the ticket of a read of the row with prefix rp, which
// must be taken before the read's snapshot is.
func (c *cellCache) ticket(rp []byte) cellTicket {
	if c == nil {
		return cellTicket{}
	}
	slot := c.locks.slot(rp)
	v := c.locks.version(slot)
	if v%2 != 0 {
		return cellTicket{}
	}
	return cellTicket{slot: slot, version: v, ok: true}
}

// current reports whether no write of the ticket's row began since the
// ticket was taken.
func (c *cellCache) current(t *cellTicket) bool {
	return c.locks.version(t.slot) == t.version
}

// read calls use with the record stored under key, of the ticket's row, if
// the cache holds it for the ticket, and reports whether it did. use may
// be called and the read still fail (a write began meanwhile): the caller
// then reads Badger.
func (c *cellCache) read(t *cellTicket, key []byte, use func(val []byte)) bool {
	if c == nil || !t.ok {
		return false
	}
	return c.entries.readStamped(0, key, time.Now().Unix(), t.version, false, func(val []byte) bool {
		use(val)
		return true
	}) && c.current(t)
}

// put keeps the record val, with its Badger expiry (Unix seconds, 0:
// none), that a read with ticket t found under key in its snapshot, if
// nothing changed since the ticket.
func (c *cellCache) put(t *cellTicket, key, val []byte, expiresAt uint64) {
	if c == nil || !t.ok {
		return
	}
	c.entries.putStamped(0, key, val, expiresAt, t.version, true, func() bool { return c.current(t) })
}

func (c *cellCache) stats() cacheStats {
	if c == nil {
		return cacheStats{}
	}
	return c.entries.stats()
}
