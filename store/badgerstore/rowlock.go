package badgerstore

import (
	"hash/maphash"
	"math"
	"slices"
	"sync"

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

type rowLocks struct {
	seed    maphash.Seed
	stripes [rowLockStripes]paddedMutex
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

// stripe is the stripe of the row with prefix rp (see Engine.rowPrefix).
func (l *rowLocks) stripe(rp []byte) uint16 {
	return uint16(maphash.Bytes(l.seed, rp) % rowLockStripes)
}

// lock locks the given stripes and returns the function that unlocks them.
// Stripes are locked once each and in ascending order, so transactions
// locking several rows never wait on each other in a cycle. It sorts
// stripes in place.
func (l *rowLocks) lock(stripes []uint16) (unlock func()) {
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		l.stripes[s].Lock()
	}
	return func() {
		for i := len(stripes) - 1; i >= 0; i-- {
			l.stripes[stripes[i]].Unlock()
		}
	}
}

// lockRow locks the stripe of one row, given its prefix.
func (l *rowLocks) lockRow(rp []byte) (unlock func()) {
	m := &l.stripes[l.stripe(rp)]
	m.Lock()
	return m.Unlock
}

// lockRows locks the rows of a set of row mutations.
func (e *Engine) lockRows(rows []store.RowMutation) (unlock func()) {
	if len(rows) == 1 {
		rp, _ := e.rowPrefix(nil, rows[0].Table, rows[0].Key)
		return e.rowLocks.lockRow(rp)
	}
	stripes := make([]uint16, len(rows))
	var rp []byte
	for i := range rows {
		rp, _ = e.rowPrefix(rp[:0], rows[i].Table, rows[i].Key)
		stripes[i] = e.rowLocks.stripe(rp)
	}
	return e.rowLocks.lock(stripes)
}
