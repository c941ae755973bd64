package badgerstore

import (
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
)

// Read snapshots. Every Badger transaction, read-only ones too, registers
// its read timestamp with the oracle when it opens and again when it is
// discarded, each time a message to a goroutine of Badger's that wakes to
// take it: under single-column gets, that goroutine took 5% of thriftd's
// CPU and opening transactions 3%, beside the scheduler's work of waking
// it. Reads that start while nothing has been written since another read
// opened its transaction see the same data, so they share it
// (docs/PERFORMANCE-LOG.md, "Reads share a snapshot").
//
// Every write to the store goes through commit, update, dropPrefix or
// writeBatch below, which count it in Engine.writes once Badger has
// applied it (before the caller acknowledges it) and retire the shared
// snapshot. A read takes the shared snapshot only if no write was counted
// since it opened, and counts are read before a transaction opens, so a
// read that starts after a write was acknowledged opens a transaction
// that sees it. TestWritesGoThroughTheSnapshotGuard holds the package to
// these four doors. A snapshot is discarded when it is neither current
// nor in use, so it never pins old versions in Badger for longer than a
// read (Badger keeps versions and conflict records back to the oldest open
// transaction).

// readSnapshots is the shared snapshot.
type readSnapshots struct {
	mu  sync.Mutex
	cur *readSnapshot // nil when a write retired it
	// shared counts the reads that took a current snapshot, opened those
	// that opened one.
	shared, opened atomic.Int64
}

// readSnapshot is a read-only transaction some reads share.
type readSnapshot struct {
	txn    *badger.Txn
	writes uint64 // Engine.writes, read before the transaction opened
	refs   int    // under readSnapshots.mu: its readers, and one while current
}

// acquireRead returns a snapshot that sees every write acknowledged before
// the call; the caller releases it with releaseRead.
func (e *Engine) acquireRead() *readSnapshot {
	rs := &e.snapshots
	w := e.writes.Load()
	rs.mu.Lock()
	if s := rs.cur; s != nil && s.writes == w {
		s.refs++
		rs.mu.Unlock()
		rs.shared.Add(1)
		return s
	}
	rs.mu.Unlock()
	rs.opened.Add(1)
	// Open outside the lock: the oracle may make it wait for commits.
	s := &readSnapshot{txn: e.db.NewTransaction(false), writes: w, refs: 1}
	var retired *readSnapshot
	rs.mu.Lock()
	if w == e.writes.Load() && (rs.cur == nil || rs.cur.writes < w) {
		retired = rs.cur
		rs.cur = s
		s.refs++
		retired = unref(retired)
	}
	rs.mu.Unlock()
	if retired != nil {
		retired.txn.Discard()
	}
	return s
}

// releaseRead ends a read of s.
func (e *Engine) releaseRead(s *readSnapshot) {
	e.snapshots.mu.Lock()
	done := unref(s)
	e.snapshots.mu.Unlock()
	if done != nil {
		done.txn.Discard()
	}
}

// unref drops a reference to s (nil: none) under readSnapshots.mu, and
// returns s if that was its last, for the caller to discard.
func unref(s *readSnapshot) *readSnapshot {
	if s == nil {
		return nil
	}
	s.refs--
	if s.refs == 0 {
		return s
	}
	return nil
}

// wrote counts a write to the store and retires the shared snapshot.
func (e *Engine) wrote() {
	e.writes.Add(1)
	e.retireSnapshot()
}

// retireSnapshot makes the next read open a transaction of its own; the
// shared one is discarded once its readers are done.
func (e *Engine) retireSnapshot() {
	rs := &e.snapshots
	rs.mu.Lock()
	retired := rs.cur
	rs.cur = nil
	retired = unref(retired)
	rs.mu.Unlock()
	if retired != nil {
		retired.txn.Discard()
	}
}

// commit commits a write transaction.
func (e *Engine) commit(txn *badger.Txn) error {
	defer e.wrote()
	return txn.Commit()
}

// update runs fn in a write transaction and commits it (badger.DB.Update).
func (e *Engine) update(fn func(txn *badger.Txn) error) error {
	defer e.wrote()
	return e.db.Update(fn)
}

// dropPrefix removes every key under the prefixes (badger.DB.DropPrefix).
func (e *Engine) dropPrefix(prefixes ...[]byte) error {
	defer e.wrote()
	return e.db.DropPrefix(prefixes...)
}

// writeBatch writes what fill sets in a batch of transactions
// (badger.WriteBatch).
func (e *Engine) writeBatch(fill func(wb *badger.WriteBatch) error) error {
	defer e.wrote()
	wb := e.db.NewWriteBatch()
	defer wb.Cancel()
	if err := fill(wb); err != nil {
		return err
	}
	return wb.Flush()
}
