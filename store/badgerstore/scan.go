package badgerstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/thriftbridge/thriftbridge/store"
)

// Scan implements store.Engine. An EQ filter on an indexed column walks
// the index entries of the range instead of the rows (see indexScan).
func (e *Engine) Scan(ctx context.Context, t *store.Table, q *store.ScanQuery, out *store.SliceResult, visit func(key []byte) (bool, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkTable(t); err != nil {
		return err
	}
	if err := e.settleAll(ctx); err != nil {
		return err
	}
	snap := e.acquireRead()
	defer e.releaseRead(snap)
	txn := snap.txn
	s := newRowVisitor(t, q, out, visit)
	if ix := store.IndexedExpression(t, q.Filter); ix != nil && !t.Def.Super {
		return e.indexScan(ctx, txn, t, q, ix, s)
	}
	tp := appendTablePrefix(nil, dataIDOf(t))
	start := e.scanBound(tp, t, &q.Start, true)
	end := e.scanBound(tp, t, &q.End, false)
	if bytes.Compare(start, end) >= 0 {
		return nil
	}
	it := newSeekIter(txn.NewIterator(badger.IteratorOptions{Prefix: tp}), false)
	defer it.Close()

	r := &reader{txn: txn, t: t, now: e.nowSeconds(), fwd: it, headers: &e.headers}
	var keyBuf []byte
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
		if more, err := s.row(ctx, r, rowKey); err != nil || !more {
			return err
		}
		it.Seek(append(r.rp, 0xff))
	}
	return nil
}

// rowVisitor applies a scan query to the rows a scan finds: the filter,
// the slice and the page budget.
type rowVisitor struct {
	t     *store.Table
	q     *store.ScanQuery
	out   *store.SliceResult
	visit func(key []byte) (bool, error)
	// probe receives the cells the filter reads.
	probe   store.SliceResult
	filterQ store.SliceQuery
	// left is what is left of the page budget; first tells whether no
	// row was visited yet.
	left  int
	first bool
	rows  int
}

func newRowVisitor(t *store.Table, q *store.ScanQuery, out *store.SliceResult, visit func(key []byte) (bool, error)) *rowVisitor {
	s := &rowVisitor{t: t, q: q, out: out, visit: visit, left: q.PageCells, first: true}
	if len(q.Filter) > 0 {
		s.filterQ = store.SliceQuery{Names: store.FilterColumns(q.Filter)}
	}
	return s
}

// row handles one row, r positioned on it; it reports whether the scan
// goes on.
func (s *rowVisitor) row(ctx context.Context, r *reader, key []byte) (bool, error) {
	if s.rows++; s.rows%64 == 0 {
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	if err := r.loadRow(); err != nil {
		return false, err
	}
	if len(s.q.Filter) > 0 {
		s.probe.Reset()
		if err := r.slice(&s.filterQ, &s.probe); err != nil {
			return false, err
		}
		if !store.MatchFilter(s.t, s.q.Filter, s.probe.Cells) {
			return true, nil
		}
	}
	q := &s.q.Slice
	if s.q.PageCells > 0 {
		paged := *q
		paged.Count = s.left
		if s.first && s.q.PageStart != nil {
			paged.Start = s.q.PageStart
		}
		q = &paged
	}
	s.first = false
	s.out.Clear()
	if err := r.slice(q, s.out); err != nil {
		return false, err
	}
	n := s.out.Len()
	more, err := s.visit(key)
	if err != nil || !more {
		return false, err
	}
	if s.q.PageCells > 0 {
		if s.left -= n; s.left <= 0 {
			return false, nil
		}
	}
	return true, nil
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
