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

// dropPending removes the data of every pending drop with one DropPrefix:
// Badger blocks writes, flushes its memtables and compacts every level that
// holds a prefix once per call, so a dropped keyspace of many families
// costs one pass, not one per family and prefix.
func (e *Engine) dropPending() {
	for {
		select {
		case <-e.stop:
			return
		default:
		}
		prefixes, done, ok := e.pendingDrops()
		if !ok {
			return
		}
		if err := e.dropPrefix(prefixes...); err != nil {
			e.log.Error("dropping removed data failed; will retry", "drops", len(done), "err", err)
			return
		}
		if err := e.forgetPendingDrops(done); err != nil {
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

// pendingDrops returns the prefixes of every pending drop, and the drops.
func (e *Engine) pendingDrops() ([][]byte, []pendingDrop, bool) {
	var m metaDoc
	err := e.db.View(func(txn *badger.Txn) error { return readJSON(txn, metaKey, &m) })
	if err != nil {
		e.log.Error("reading pending drops failed", "err", err)
		return nil, nil, false
	}
	var prefixes [][]byte
	var drops []pendingDrop
	for _, id := range m.PendingDrop {
		for _, ns := range []byte{nsData, nsIndex, nsGC, nsCAS, nsRowMarks} {
			prefixes = append(prefixes, binary.BigEndian.AppendUint32([]byte{ns}, id))
		}
		drops = append(drops, pendingDrop{dataID: id})
	}
	for _, p := range m.PendingPrefixes {
		prefixes = append(prefixes, p)
		drops = append(drops, pendingDrop{prefix: p})
	}
	return prefixes, drops, len(drops) > 0
}

// forgetPendingDrops takes finished drops off the drop list. Drops added
// meanwhile stay on it for the next pass.
func (e *Engine) forgetPendingDrops(done []pendingDrop) error {
	e.schemaMu.Lock()
	defer e.schemaMu.Unlock()
	return retryWrites(context.Background(), func() error {
		return e.update(func(txn *badger.Txn) error {
			var m metaDoc
			if err := readJSON(txn, metaKey, &m); err != nil {
				return err
			}
			for _, d := range done {
				if d.prefix != nil {
					m.PendingPrefixes = slices.DeleteFunc(m.PendingPrefixes, func(p []byte) bool { return bytes.Equal(p, d.prefix) })
				} else {
					m.PendingDrop = slices.DeleteFunc(m.PendingDrop, func(x uint32) bool { return x == d.dataID })
				}
			}
			b, err := json.Marshal(&m)
			if err != nil {
				return err
			}
			return txn.Set(metaKey, b)
		})
	})
}
