package badgerstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Secondary (KEYS) indexes: one entry per indexed cell,
//
//	0x04 dataID(4) enc(column) enc(value) row
//
// written in the transaction that writes the cell, so entries for one
// value iterate in partitioner order. Row, super column and range
// deletions and expiry are not chased into the index: lookups return
// candidate rows, and readers check the row itself.

const nsIndex byte = 0x04

func indexPrefix(dst []byte, t *store.Table, column []byte) []byte {
	dst = append(dst, nsIndex)
	dst = binary.BigEndian.AppendUint32(dst, dataIDOf(t))
	return t.Comparator.AppendKey(dst, column)
}

// indexEntryKey is the entry of a row whose column holds value; rp is the
// row prefix (its table part is dropped: the entry has its own).
func indexEntryKey(dst []byte, t *store.Table, column, value, rp []byte) []byte {
	dst = indexPrefix(dst, t, column)
	dst = t.ValueValidator(column).AppendKey(dst, value)
	return append(dst, rp[tablePrefixLen:]...)
}

// updateIndex moves a row's index entry for column from the old cell's
// value to the new one's, inside the write transaction.
func (w *writer) updateIndex(rp []byte, t *store.Table, column []byte, old, rec *record, entryExpiry uint64) error {
	if old != nil && old.live(w.now) && !old.counter() {
		k := indexEntryKey(w.slab.scratch(len(column)+len(old.value)+len(rp)+16), t, column, old.value, rp)
		if err := w.txn.Delete(k); err != nil {
			return fmt.Errorf("drop index entry: %w", err)
		}
	}
	if !rec.live(w.now) {
		return nil
	}
	k := indexEntryKey(w.slab.scratch(len(column)+len(rec.value)+len(rp)+16), t, column, rec.value, rp)
	e := w.entries.entry(k, binary.BigEndian.AppendUint64(w.slab.scratch(8), uint64(rec.timestamp)))
	e.ExpiresAt = entryExpiry
	if err := w.txn.SetEntry(e); err != nil {
		return fmt.Errorf("write index entry: %w", err)
	}
	return nil
}

// indexScan visits, in partitioner order, the rows of the range whose
// index entries for ix's column hold ix's value. Entries may be stale (the
// cell since deleted, expired or changed): the row visitor checks the
// filter on the row itself.
func (e *Engine) indexScan(ctx context.Context, txn *badger.Txn, t *store.Table, q *store.ScanQuery, ix *store.Expression, s *rowVisitor) error {
	prefix := t.ValueValidator(ix.Column).AppendKey(indexPrefix(nil, t, ix.Column), ix.Value)
	tp := appendTablePrefix(nil, dataIDOf(t))
	// Row bounds, translated from the data layout to the entries'.
	start := append(append([]byte{}, prefix...), e.scanBound(tp, t, &q.Start, true)[tablePrefixLen:]...)
	endBound := e.scanBound(tp, t, &q.End, false)
	var end []byte
	if bytes.Equal(endBound, prefixEnd(tp)) {
		end = prefixEndAll(prefix)
	} else {
		end = append(append([]byte{}, prefix...), endBound[tablePrefixLen:]...)
	}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	r := &reader{txn: txn, t: t, now: e.nowSeconds()}
	var dataKey, keyBuf []byte
	for it.Seek(start); it.Valid(); it.Next() {
		k := it.Item().Key()
		if end != nil && bytes.Compare(k, end) >= 0 {
			return nil
		}
		// The entry ends with the row prefix without its table part.
		dataKey = append(append(dataKey[:0], tp...), k[len(prefix):]...)
		rp, key, err := e.splitRow(txn, keyBuf[:0], dataKey)
		if err != nil {
			return fmt.Errorf("index entry %x: %w", k, err)
		}
		keyBuf = key
		r.rp = append(r.rp[:0], rp...)
		if more, err := s.row(ctx, r, key); err != nil || !more {
			return err
		}
	}
	return nil
}

// prefixEndAll is the smallest key after every key starting with prefix,
// or nil if there is none.
func prefixEndAll(prefix []byte) []byte {
	end := append([]byte{}, prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

// buildIndexes writes the entries of newly indexed columns for the data
// already in the family.
func (e *Engine) buildIndexes(ctx context.Context, t *store.Table, columns [][]byte) error {
	if len(columns) == 0 {
		return nil
	}
	var res store.SliceResult
	var batch []store.RowMutation
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := retryWrites(ctx, func() error {
			txn := e.db.NewTransaction(true)
			defer txn.Discard()
			w := writer{e: e, txn: txn, now: e.nowSeconds()}
			for _, m := range batch {
				rp, _ := e.rowPrefix(nil, t, m.Key)
				for _, op := range m.Ops {
					rec := record{timestamp: op.Timestamp, value: op.Value}
					if err := w.updateIndex(rp, t, op.Name, nil, &rec, 0); err != nil {
						return err
					}
				}
			}
			return e.commit(txn)
		})
		batch = batch[:0]
		return err
	}
	q := &store.ScanQuery{Slice: store.SliceQuery{Names: columns}}
	err := e.Scan(ctx, t, q, &res, func(key []byte) (bool, error) {
		if len(res.Cells) == 0 {
			return true, nil
		}
		m := store.RowMutation{Key: append([]byte(nil), key...)}
		for _, c := range res.Cells {
			m.Ops = append(m.Ops, store.Op{Name: append([]byte(nil), c.Name...), Value: append([]byte(nil), c.Value...), Timestamp: c.Timestamp})
		}
		res.Reset()
		batch = append(batch, m)
		if len(batch) >= 512 {
			return true, flush()
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("build indexes of %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
	}
	return flush()
}
