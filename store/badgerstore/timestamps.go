package badgerstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/dgraph-io/badger/v4"
)

// Writes without a read. A cell written with a timestamp greater than the
// timestamp of every cell ever stored under its key wins whatever is
// stored there (reconciliation compares timestamps first), so it needs no
// read of the old cell. Thrift clients take timestamps from the clock, in
// microseconds, so nearly every write is such a write; reading the old
// cell first was 16% of thriftd's CPU under single-column inserts, and
// the row reads of batches (prefetch.go) with their block decompression
// were the largest allocation of the write path.
//
// What the engine knows, for that:
//
//   - each row lock stripe (rowlock.go) holds the greatest timestamp of
//     the cells and deletions written in its rows since the engine
//     opened, kept under the stripe's lock, which every writer of those
//     rows holds: raised before the transaction that writes the cell
//     commits, so the next writer of the row sees it;
//   - the floor: a bound of the timestamps of every cell and deletion
//     stored before the engine opened;
//   - the persisted bound, a key of the store: every cell and deletion
//     stored has a timestamp at most this, raised (in a transaction of
//     its own, committed before the cell's) whenever a write goes above
//     it, ahead by boundMargin so that clock-driven timestamps raise it
//     every ten seconds, not on every write. Badger's log is written in
//     commit order, so after a crash every cell there is still under the
//     bound there. It opens as the next floor, and is in backups.
//
// The same holds for the timestamps of deletions (of rows, super columns,
// ranges): a counter cell stored with a timestamp above them all is not
// shadowed, and its update reads neither the row header nor the super
// column's (counter.go).
//
// A put or cell deletion skips the read when its timestamp is greater than
// the floor and its stripe's greatest as they were when its row mutation
// began, and the cell is not one of those that need the old record
// anyway: an indexed column (the old index entry goes), a name the
// comparator does not keep byte for byte or a cut key (names that compare
// equal share the first name's bytes), a counter family, a name written
// more than once in the row mutation (the second write reconciles with
// the first). A store written before the bound existed opens with the floor
// at the maximum (every write reads) and finds its greatest timestamp by
// one scan in the background.

// timestampBoundKey holds the persisted bound, a big-endian int64.
var timestampBoundKey = []byte{nsSchema, schemaMeta, 't', 's', 'b', 'o', 'u', 'n', 'd'}

// boundMargin is how far above the timestamp that raised it the
// persisted bound goes: 10 s of microsecond timestamps.
const boundMargin = 10_000_000

// blindFloor is the floor above which a write may skip its read: the
// timestamps of cells stored before the engine opened are at most this.
func (e *Engine) blindFloor() int64 { return e.tsFloor.Load() }

// noteTimestamp records that a cell with timestamp ts is about to be
// written in a row of stripe s, whose lock the caller holds: it raises
// the stripe's greatest timestamp, and the persisted bound if ts is above
// it.
func (e *Engine) noteTimestamp(s uint16, ts int64) error {
	stripe := &e.rowLocks.stripes[s]
	if ts > stripe.maxTimestamp {
		stripe.maxTimestamp = ts
	}
	if ts <= e.tsBound.Load() {
		return nil
	}
	return e.raiseBound(ts)
}

// raiseBound persists a bound above ts before the write of a cell with
// timestamp ts commits.
func (e *Engine) raiseBound(ts int64) error {
	e.tsBoundMu.Lock()
	defer e.tsBoundMu.Unlock()
	if ts <= e.tsBound.Load() {
		return nil
	}
	bound := int64(math.MaxInt64)
	if ts < math.MaxInt64-boundMargin {
		bound = ts + boundMargin
	}
	if err := e.storeBound(bound); err != nil {
		return err
	}
	e.tsBound.Store(bound)
	return nil
}

func (e *Engine) storeBound(bound int64) error {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(bound))
	if err := e.update(func(txn *badger.Txn) error { return txn.Set(timestampBoundKey, v[:]) }); err != nil {
		return fmt.Errorf("record the timestamp bound: %w", err)
	}
	return nil
}

// loadTimestampBound sets the floor and the bound at open: the persisted
// bound; for an empty store, the minimum; for a store written before the
// bound existed, the maximum until a background scan has found its
// greatest timestamp.
func (e *Engine) loadTimestampBound(empty bool) error {
	var bound int64
	found := false
	err := e.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(timestampBoundKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("timestamp bound of %d bytes", len(v))
			}
			bound = int64(binary.BigEndian.Uint64(v))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("read the timestamp bound: %w", err)
	}
	switch {
	case found:
		e.tsFloor.Store(bound)
		e.tsBound.Store(bound)
	case empty:
		e.tsFloor.Store(math.MinInt64)
		e.tsBound.Store(math.MinInt64)
	default:
		e.tsFloor.Store(math.MaxInt64)
		e.tsBound.Store(math.MaxInt64)
		e.background(func(ctx context.Context) {
			if err := e.findTimestampBound(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("every write reads the cell it overwrites until the store's greatest timestamp is known", "err", err)
			}
		})
	}
	return nil
}

// findTimestampBound scans the records of a store that has no persisted
// bound for their greatest timestamp, then, with every row lock held (no
// write between raising its stripe and committing), sets the floor and
// persists the bound.
func (e *Engine) findTimestampBound(ctx context.Context) error {
	greatest, err := e.greatestTimestamp(ctx)
	if err != nil {
		return err
	}
	all := make([]rowSlot, rowLockStripes)
	for i := range all {
		all[i] = rowSlot(i)
	}
	unlock := e.rowLocks.lock(all)
	defer unlock()
	for i := range e.rowLocks.stripes {
		greatest = max(greatest, e.rowLocks.stripes[i].maxTimestamp)
	}
	e.tsBoundMu.Lock()
	defer e.tsBoundMu.Unlock()
	bound := int64(math.MaxInt64)
	if greatest < math.MaxInt64-boundMargin {
		bound = greatest + boundMargin
	}
	if err := e.storeBound(bound); err != nil {
		return err
	}
	e.tsBound.Store(bound)
	e.tsFloor.Store(greatest)
	e.log.Info("found the store's greatest timestamp: writes above it skip reading the cells they overwrite", "timestamp", greatest)
	return nil
}

// greatestTimestamp is the greatest timestamp of the cells, row headers
// and range tombstones of the store (math.MinInt64 for none), read in one
// transaction.
func (e *Engine) greatestTimestamp(ctx context.Context) (int64, error) {
	greatest := int64(math.MinInt64)
	err := e.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{nsData}, PrefetchValues: false})
		defer it.Close()
		var keyBuf []byte
		var rec record
		var cells []packCell
		var body []byte
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := item.Key()
			if len(k) <= tablePrefixLen {
				continue
			}
			var kind byte
			if key, rest, err := e.part.DecodeRowKey(keyBuf[:0], k[tablePrefixLen:]); err == nil {
				keyBuf = key[:0]
				if len(rest) == 0 {
					continue
				}
				kind = rest[0]
			} else if len(k) > maxRowPrefix {
				kind = k[maxRowPrefix]
			} else {
				continue
			}
			if kind != kindCells && kind != kindRowHeader && kind != kindRanges {
				continue
			}
			err := item.Value(func(v []byte) error {
				if isPack(v) {
					var err error
					if cells, _, err = decodePack(v, cells[:0], &body); err != nil {
						return fmt.Errorf("pack %x: %w", k, err)
					}
					for _, c := range cells {
						if err := decodeRecord(c.rec, &rec); err != nil {
							return fmt.Errorf("pack %x: %w", k, err)
						}
						greatest = max(greatest, rec.timestamp)
					}
					return nil
				}
				if err := decodeRecord(v, &rec); err != nil {
					return fmt.Errorf("record %x: %w", k, err)
				}
				greatest = max(greatest, rec.timestamp)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("find the greatest timestamp: %w", err)
	}
	return greatest, nil
}
