package badgerstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Scan implements store.Engine.
func (e *Engine) Scan(ctx context.Context, t *store.Table, q *store.ScanQuery, out *store.SliceResult, visit func(key []byte) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTable(t); err != nil {
		return err
	}
	tp := appendTablePrefix(nil, dataIDOf(t))
	start := e.scanBound(tp, t, &q.Start, true)
	end := e.scanBound(tp, t, &q.End, false)
	if bytes.Compare(start, end) >= 0 {
		return nil
	}
	txn := e.db.NewTransaction(false)
	defer txn.Discard()
	it := txn.NewIterator(badger.IteratorOptions{Prefix: tp})
	defer it.Close()

	r := &reader{txn: txn, t: t, now: e.nowSeconds(), fwd: it}
	var keyBuf []byte
	rows := 0
	for it.Seek(start); it.Valid(); {
		k := it.Item().Key()
		if bytes.Compare(k, end) >= 0 {
			return nil
		}
		rp, rowKey, err := e.splitRow(txn, keyBuf[:0], k)
		if err != nil {
			return fmt.Errorf("scan %s.%s: %w", t.Def.Keyspace, t.Def.Name, err)
		}
		keyBuf = rowKey
		r.rp = append(r.rp[:0], rp...)
		if err := r.loadRow(); err != nil {
			return err
		}
		out.Clear()
		if err := r.slice(&q.Slice, out); err != nil {
			return err
		}
		more, err := visit(rowKey)
		if err != nil || !more {
			return err
		}
		if rows++; rows%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		it.Seek(append(r.rp, 0xff))
	}
	return nil
}

// scanBound turns a row bound into a key: the first key of the range at
// the start, the first key past it at the end.
func (e *Engine) scanBound(tp []byte, t *store.Table, b *store.RowBound, start bool) []byte {
	switch {
	case b.Kind == store.BoundKey && len(b.Key) > 0:
		rp, _ := e.rowPrefix(nil, t, b.Key)
		if start {
			return rp
		}
		return append(rp, 0xff)
	case b.Kind == store.BoundToken && len(b.Token) > 0:
		return e.part.AppendTokenBound(append([]byte{}, tp...), b.Token, false)
	case start:
		return append([]byte{}, tp...)
	default:
		return prefixEnd(tp)
	}
}

// splitRow finds the row prefix a key starts with and the row's key. A
// prefix that was cut (its row key is too long) does not decode; it has
// the fixed length maxRowPrefix and its header holds the key.
func (e *Engine) splitRow(txn *badger.Txn, dst, k []byte) (rp, key []byte, err error) {
	key, rest, derr := e.part.DecodeRowKey(dst, k[tablePrefixLen:])
	if derr == nil {
		return k[:len(k)-len(rest)], key, nil
	}
	if len(k) < maxRowPrefix {
		return nil, nil, fmt.Errorf("undecodable row key %x: %w", k, derr)
	}
	rp = k[:maxRowPrefix]
	h, found, err := readHeader(txn, append(append([]byte{}, rp...), kindRowHeader))
	if err != nil {
		return nil, nil, err
	}
	if !found || h.flags&flagRawKey == 0 {
		return nil, nil, fmt.Errorf("row with a long key %x has no header", rp[:64])
	}
	return rp, append(dst, h.rawName...), nil
}
