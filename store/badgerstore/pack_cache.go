package badgerstore

import "time"

// The pack cache. A write into a super column of a packed family reads
// the super column's pack first (pack.go), and a row written again and
// again keeps its packs' versions in every memtable and level-0 table:
// under thriftbench's super batches into 1,000 hot rows, reading them
// was half of thriftd's CPU, in blocks decompressed and cached anew as
// compaction replaces them. The engine keeps the packs it wrote lately,
// from their second write on, and a write into one of them reads nothing
// from Badger. A row's packs are one group of the cache: a batch into the
// row reads nothing only if it finds them all, so a full shard of the
// cache starts again empty rather than give a new pack the place of one
// picked at random (newWholeGroupCache): that left most rows with some of
// their packs, and a row missing one is read from Badger whole. Under
// super batches into 5,000 and 10,000 rows, of which the cache held part,
// about 40% and 19% of the batches found all their packs, against 20%
// and 6% with replacement. Its share of the memory budget is the counter
// cache's (MemorySizing.PackCache). It is a recentCache
// (recent_cache.go), whose rules it keeps:
//
//   - a writer whose transaction committed publishes its writes of packs
//     (writer.publish), the value and Badger expiry it wrote, or the
//     key's deletion, which leaves it unknown;
//   - every write of a pack key invalidates the key's entry first, under
//     the row's lock: flushPacks, the one writer of pack keys, and
//     garbage collection (gcWalk.pack, gcWalk.dropUnneededMarker);
//   - an entry answers as Badger would at the time of the read: not once
//     its expiry has passed.
//
// Every reader of packs other than a writer reads Badger: a slice reads
// one snapshot of the row, which a cache of single keys cannot give.

// packWrite is a write of a pack's key, for the pack cache once the
// writer's transaction commits: the pack written, with its expiry
// (known), or a deletion. admit: the pack was stored before, so it gets
// an entry if it has none.
type packWrite struct {
	key, val     []byte // in the writer's slab
	row          int    // length of the row prefix key starts with
	expiresAt    uint64
	known, admit bool
}

// cachedPack returns a copy, in the writer's slab, of the pack stored
// under key, of the row being written, if the pack cache knows it.
func (w *writer) cachedPack(key []byte) ([]byte, bool) {
	var val []byte
	ok := w.e.packs.read(len(w.rp), key, time.Now().Unix(), func(v []byte) { val = w.slab.copy(v) })
	return val, ok
}

// publishPacks tells the pack cache the packs the writer's transaction
// committed, in the order written, so that the last write of a key
// decides; the writer still holds their rows' locks (publish).
func (w *writer) publishPacks() {
	for _, p := range w.packWrites {
		if p.known {
			w.e.packs.put(p.row, p.key, p.val, p.expiresAt, p.admit)
		} else {
			w.e.packs.invalidate(p.row, p.key)
		}
	}
}

// publish tells the engine's caches what the writer's transaction
// committed; the writer still holds its rows' locks.
func (w *writer) publish() {
	w.publishCounters()
	w.publishPacks()
}
