package badgerstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// casSentinelTTL is how long a conditional update's sentinel key lives;
// it only has to outlive the transactions it serialises.
const casSentinelTTL = time.Minute

// ApplyIf implements store.Engine. The read happens inside the write
// transaction, which holds the row's lock: no other writer of the row runs
// meanwhile, and Badger's conflict detection would still catch one that
// did not take the lock.
func (e *Engine) ApplyIf(ctx context.Context, m *store.RowMutation, cond *store.Condition, current *store.SliceResult) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := checkTable(m.Table); err != nil {
		return false, err
	}
	if err := e.disk.check(); err != nil {
		return false, err
	}
	if err := cond.Validate(m.Table); err != nil {
		return false, err
	}
	check := cond.Reads()
	rp, _ := e.rowPrefix(nil, m.Table, m.Key)
	unlock, err := e.lockRowsSettled(ctx, []store.RowMutation{*m})
	if err != nil {
		return false, err
	}
	defer unlock()
	var applied bool
	err = retryWrites(ctx, func() error {
		applied = false
		current.Reset()
		txn := e.db.NewTransaction(true)
		defer txn.Discard()
		r := &reader{txn: txn, t: m.Table, now: e.nowSeconds(), rp: rp}
		// Every conditional update of the row reads and writes its
		// sentinel, so two of them would conflict, even when the cells
		// they read did not exist yet, if one ever ran without the row
		// lock.
		sentinel := append([]byte{nsCAS}, r.rp[1:]...)
		if _, err := txn.Get(sentinel); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := txn.SetEntry(badger.NewEntry(sentinel, nil).WithTTL(casSentinelTTL)); err != nil {
			return err
		}
		if err := r.loadRow(); err != nil {
			return err
		}
		if err := r.slice(&check, current); err != nil {
			return err
		}
		if !cond.Holds(m.Table, current.Cells) {
			return nil
		}
		w := e.newWriter(txn)
		defer e.releaseWriter(w)
		if err := w.row(m); err != nil {
			return err
		}
		if err := e.commit(txn); err != nil {
			return err
		}
		w.publish()
		applied = true
		return nil
	})
	if errors.Is(err, badger.ErrTxnTooBig) {
		return false, store.ErrBatchTooLarge
	}
	if err != nil {
		return false, fmt.Errorf("conditional update: %w", err)
	}
	return applied, nil
}
