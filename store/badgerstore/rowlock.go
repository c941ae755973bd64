package badgerstore

import (
	"hash/maphash"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/thriftbridge/thriftbridge/store"
)

// Row locks. Badger's transactions are optimistic: a transaction that read
// a key fails at commit (ErrConflict) if another one committed a write of
// that key after it started. Every write here reads what it overwrites
// (reconciliation of puts, counter adds, the row header, the check of a
// conditional update), so concurrent writers of one hot row kept failing
// each other and, past maxAttempts, a client's counter add failed — which
// Cassandra never does. Every transaction that writes data rows therefore
// holds the lock of each of its rows: writers of one row take turns and
// never conflict; writers of different rows mostly proceed in parallel.
//
// The locks are striped: a fixed array of mutexes, a row taking the one its
// row prefix hashes to. Every key a data write reads or writes belongs to
// one row and carries its row prefix (cells, headers, range tombstones, the
// CAS sentinel, the GC marker, index entries), so two transactions that
// could conflict share a stripe.

// rowLockStripes is the number of stripes. Rows that share a stripe are
// serialised needlessly; with this many the chance stays low at the
// concurrency a server sees.
const rowLockStripes = 1024

// Row versions. Each row also hashes to one of rowVersionSlots version
// counters, a finer division of the same hash (a slot belongs to the
// stripe of its number modulo rowLockStripes), which a write of the row
// raises twice: once when it has taken the row's lock, before it writes,
// and once after it has committed or failed, before it lets the lock go.
// A slot's version is therefore odd while a row of the slot is being
// written, and a reader that saw the same even version before it opened
// its snapshot and again later knows that no write of the slot's rows
// began in between: the read cache of cells (cell_cache.go) rests on it.
//
// A write therefore also takes from the cache the entries of every other
// row of its slot: with 2^16 slots, 21k writes a second to rows the cache
// did not hold (thriftbench's mixed mode) invalidated the images of the
// rows being read every three seconds on average, and the cache missed
// 2.3 times a row's one first read. With 2^18 slots (2 MiB of versions,
// and 1 MiB of the deferred writes' counts) it missed 1.2 times.
const rowVersionSlots = 1 << 18

// rowSlot is the number of a row's version slot, below rowVersionSlots.
type rowSlot uint32

type rowLocks struct {
	seed     maphash.Seed
	stripes  [rowLockStripes]paddedMutex
	versions [rowVersionSlots]atomic.Uint64
}

// paddedMutex keeps each stripe on its own cache line, with the greatest
// timestamp of the cells written in its rows (timestamps.go), guarded by
// the mutex.
type paddedMutex struct {
	sync.Mutex
	maxTimestamp int64
	_            [48]byte
}

func newRowLocks() *rowLocks {
	l := &rowLocks{seed: maphash.MakeSeed()}
	for i := range l.stripes {
		l.stripes[i].maxTimestamp = math.MinInt64
	}
	return l
}

// slot is the version slot of the row with prefix rp (see
// Engine.rowPrefix).
func (l *rowLocks) slot(rp []byte) rowSlot {
	return rowSlot(maphash.Bytes(l.seed, rp) % rowVersionSlots)
}

// stripe is the stripe of the row with prefix rp.
func (l *rowLocks) stripe(rp []byte) uint16 {
	return stripeOf(l.slot(rp))
}

// stripeOf is the stripe of a version slot.
func stripeOf(slot rowSlot) uint16 { return uint16(slot % rowLockStripes) }

// version is the version of a slot (odd: one of its rows is being
// written).
func (l *rowLocks) version(slot rowSlot) uint64 { return l.versions[slot].Load() }

// lock locks the stripes of the given version slots and raises each slot's
// version, and returns the function that raises them again and unlocks.
// Stripes are locked once each and in ascending order, so transactions
// locking several rows never wait on each other in a cycle. It sorts
// slots in place.
func (l *rowLocks) lock(slots []rowSlot) (unlock func()) {
	slices.Sort(slots)
	slots = slices.Compact(slots)
	stripes := make([]uint16, len(slots))
	for i, s := range slots {
		stripes[i] = stripeOf(s)
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		l.stripes[s].Lock()
	}
	for _, s := range slots {
		l.versions[s].Add(1)
	}
	return func() {
		for _, s := range slots {
			l.versions[s].Add(1)
		}
		for i := len(stripes) - 1; i >= 0; i-- {
			l.stripes[stripes[i]].Unlock()
		}
	}
}

// lockRow locks the stripe of one row, given its prefix, and raises its
// slot's version (see lock).
func (l *rowLocks) lockRow(rp []byte) (unlock func()) {
	return l.lockSlot(l.slot(rp))
}

// lockSlot locks the stripe of a version slot and raises the slot's
// version (see lock).
func (l *rowLocks) lockSlot(slot rowSlot) (unlock func()) {
	m := &l.stripes[stripeOf(slot)]
	v := &l.versions[slot]
	m.Lock()
	v.Add(1)
	return func() {
		v.Add(1)
		m.Unlock()
	}
}

// lockRows locks the rows of a set of row mutations.
func (e *Engine) lockRows(rows []store.RowMutation) (unlock func()) {
	if len(rows) == 1 {
		rp, _ := e.rowPrefix(nil, rows[0].Table, rows[0].Key)
		return e.rowLocks.lockRow(rp)
	}
	slots := make([]rowSlot, len(rows))
	var rp []byte
	for i := range rows {
		rp, _ = e.rowPrefix(rp[:0], rows[i].Table, rows[i].Key)
		slots[i] = e.rowLocks.slot(rp)
	}
	return e.rowLocks.lock(slots)
}

// lockSlots locks the rows of the given version slots (see lock), which
// it leaves as they are.
func (l *rowLocks) lockSlots(slots []rowSlot) (unlock func()) {
	if len(slots) == 1 {
		return l.lockSlot(slots[0])
	}
	return l.lock(slices.Clone(slots))
}

// withSlots runs f holding the locks of the given version slots, which it
// raises as lockSlots does. The lock of one slot costs no allocation, where
// lockSlots's unlock function costs one: a deferred write takes it on every
// call.
func (l *rowLocks) withSlots(slots []rowSlot, f func()) {
	if len(slots) == 1 {
		m, v := &l.stripes[stripeOf(slots[0])], &l.versions[slots[0]]
		m.Lock()
		v.Add(1)
		defer func() {
			v.Add(1)
			m.Unlock()
		}()
		f()
		return
	}
	unlock := l.lockSlots(slots)
	defer unlock()
	f()
}
