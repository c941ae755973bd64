package badgerstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"slices"

	"github.com/dgraph-io/badger/v4"
)

// kickDrops wakes the background loop that removes the data of dropped and
// truncated families.
func (e *Engine) kickDrops() {
	select {
	case e.dropKick <- struct{}{}:
	default:
	}
}

// dropPendingLoop removes pending data prefixes: once at start (a drop cut
// short by a crash resumes) and whenever kicked.
func (e *Engine) dropPendingLoop() {
	defer e.bg.Done()
	for {
		e.dropPending()
		select {
		case <-e.stop:
			return
		case <-e.dropKick:
		}
	}
}

func (e *Engine) dropPending() {
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		id, ok := e.nextPendingDrop()
		if !ok {
			return
		}
		prefix := binary.BigEndian.AppendUint32([]byte{nsData}, id)
		if err := e.db.DropPrefix(prefix); err != nil {
			e.log.Error("dropping data of a removed family failed; will retry", "data_id", id, "err", err)
			return
		}
		if err := e.forgetPendingDrop(id); err != nil {
			e.log.Error("recording a finished drop failed", "data_id", id, "err", err)
			return
		}
		e.log.Debug("dropped data of a removed family", "data_id", id)
	}
}

func (e *Engine) nextPendingDrop() (uint32, bool) {
	var m metaDoc
	err := e.db.View(func(txn *badger.Txn) error { return readJSON(txn, metaKey, &m) })
	if err != nil || len(m.PendingDrop) == 0 {
		if err != nil {
			e.log.Error("reading pending drops failed", "err", err)
		}
		return 0, false
	}
	return m.PendingDrop[0], true
}

func (e *Engine) forgetPendingDrop(id uint32) error {
	e.schemaMu.Lock()
	defer e.schemaMu.Unlock()
	return retryWrites(context.Background(), func() error {
		return e.db.Update(func(txn *badger.Txn) error {
			var m metaDoc
			if err := readJSON(txn, metaKey, &m); err != nil {
				return err
			}
			m.PendingDrop = slices.DeleteFunc(m.PendingDrop, func(x uint32) bool { return x == id })
			b, err := json.Marshal(&m)
			if err != nil {
				return err
			}
			return txn.Set(metaKey, b)
		})
	})
}
