package badgerstore

import (
	"bytes"
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
		prefixes, done, ok := e.nextPendingDrop()
		if !ok {
			return
		}
		for _, p := range prefixes {
			if err := e.db.DropPrefix(p); err != nil {
				e.log.Error("dropping removed data failed; will retry", "prefix", p, "err", err)
				return
			}
		}
		if err := e.forgetPendingDrop(done); err != nil {
			e.log.Error("recording a finished drop failed", "err", err)
			return
		}
	}
}

// pendingDrop is one entry of the drop list: a family's data id (its data
// and index prefixes) or a single prefix.
type pendingDrop struct {
	dataID uint32
	prefix []byte
}

// nextPendingDrop returns the prefixes of the first pending drop.
func (e *Engine) nextPendingDrop() ([][]byte, pendingDrop, bool) {
	var m metaDoc
	err := e.db.View(func(txn *badger.Txn) error { return readJSON(txn, metaKey, &m) })
	if err != nil {
		e.log.Error("reading pending drops failed", "err", err)
		return nil, pendingDrop{}, false
	}
	if len(m.PendingDrop) > 0 {
		id := m.PendingDrop[0]
		var prefixes [][]byte
		for _, ns := range []byte{nsData, nsIndex, nsGC, nsCAS} {
			prefixes = append(prefixes, binary.BigEndian.AppendUint32([]byte{ns}, id))
		}
		return prefixes, pendingDrop{dataID: id}, true
	}
	if len(m.PendingPrefixes) > 0 {
		p := m.PendingPrefixes[0]
		return [][]byte{p}, pendingDrop{prefix: p}, true
	}
	return nil, pendingDrop{}, false
}

func (e *Engine) forgetPendingDrop(d pendingDrop) error {
	e.schemaMu.Lock()
	defer e.schemaMu.Unlock()
	return retryWrites(context.Background(), func() error {
		return e.db.Update(func(txn *badger.Txn) error {
			var m metaDoc
			if err := readJSON(txn, metaKey, &m); err != nil {
				return err
			}
			if d.prefix != nil {
				m.PendingPrefixes = slices.DeleteFunc(m.PendingPrefixes, func(p []byte) bool { return bytes.Equal(p, d.prefix) })
			} else {
				m.PendingDrop = slices.DeleteFunc(m.PendingDrop, func(x uint32) bool { return x == d.dataID })
			}
			b, err := json.Marshal(&m)
			if err != nil {
				return err
			}
			return txn.Set(metaKey, b)
		})
	})
}
