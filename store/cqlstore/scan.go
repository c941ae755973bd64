package cqlstore

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// scanPage is how many partition keys a scan lists per round trip.
const scanPage = 500

// Scan implements store.Engine: it lists the partitions of the range in
// token order (SELECT DISTINCT, one page at a time through the driver's
// page state, no iterator open while rows are visited), then reads each
// row's slice as Slice does.
func (e *Engine) Scan(ctx context.Context, t *store.Table, q *store.ScanQuery, out *store.SliceResult, visit func(key []byte) (bool, error)) error {
	ti := info(t)
	if len(q.Filter) > 0 && t.Def.Super {
		return nil // no row of a Super family has cells at the top level
	}
	tokenExpr := "token(" + strings.Join(ti.keyCols, ", ") + ")"
	var cond []string
	var args []any
	var startKey, endKey []byte
	var startTok, endTok int64
	switch q.Start.Kind {
	case store.BoundKey:
		startKey = q.Start.Key
		startTok = e.longToken(e.part.Token(startKey))
		cond = append(cond, tokenExpr+" >= ?")
		args = append(args, startTok)
	case store.BoundToken:
		if len(q.Start.Token) > 0 {
			cond = append(cond, tokenExpr+" > ?")
			args = append(args, e.longToken(q.Start.Token))
		}
	}
	switch q.End.Kind {
	case store.BoundKey:
		endKey = q.End.Key
		endTok = e.longToken(e.part.Token(endKey))
		cond = append(cond, tokenExpr+" <= ?")
		args = append(args, endTok)
	case store.BoundToken:
		if len(q.End.Token) > 0 {
			cond = append(cond, tokenExpr+" <= ?")
			args = append(args, e.longToken(q.End.Token))
		}
	}
	stmt := "SELECT DISTINCT " + strings.Join(ti.keyCols, ", ") + ", " + tokenExpr + " FROM " + ti.qname
	if len(cond) > 0 {
		stmt += " WHERE " + strings.Join(cond, " AND ")
	}
	budget := q.PageCells
	first := true
	var state []byte
	keyParts := make([]rawDest, len(ti.keyCols))
	dest := make([]any, 0, len(keyParts)+1)
	for i := range keyParts {
		dest = append(dest, &keyParts[i])
	}
	var tok int64
	dest = append(dest, &tok)
	type found struct {
		key []byte
		tok int64
	}
	for {
		iter := e.session.Query(stmt, args...).Consistency(e.readConsistency(ctx)).PageSize(scanPage).PageState(state).IterContext(ctx)
		var keys []found
		for iter.Scan(dest...) {
			parts := make([][]byte, len(keyParts))
			for i := range keyParts {
				parts[i] = keyParts[i].b
			}
			keys = append(keys, found{append([]byte(nil), join(ti.keyType, parts)...), tok})
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			return wrapErr("scan", err)
		}
		for _, k := range keys {
			if startKey != nil && k.tok == startTok && bytes.Compare(k.key, startKey) < 0 {
				continue
			}
			if endKey != nil && k.tok == endTok && bytes.Compare(k.key, endKey) > 0 {
				return nil
			}
			if len(q.Filter) > 0 {
				var res store.SliceResult
				if _, err := e.slice(ctx, t, k.key, &store.SliceQuery{Names: store.FilterColumns(q.Filter)}, &res, false, false); err != nil {
					return err
				}
				if !store.MatchFilter(t, q.Filter, res.Cells) {
					continue
				}
			}
			out.Clear()
			sq := q.Slice
			if q.PageCells > 0 {
				sq.Count = budget
				if first && q.PageStart != nil {
					sq.Start = q.PageStart
				}
			}
			first = false
			if _, err := e.slice(ctx, t, k.key, &sq, out, false, false); err != nil {
				return err
			}
			more, err := visit(k.key)
			if err != nil || !more {
				return err
			}
			if q.PageCells > 0 {
				if budget -= out.Len(); budget <= 0 {
					return nil
				}
			}
		}
		if len(state) == 0 {
			return nil
		}
	}
}

// longToken is a Murmur3 token as CQL's token() returns it.
func (e *Engine) longToken(t partition.Token) int64 {
	v, err := strconv.ParseInt(e.part.FormatToken(t), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("cqlstore: token %x: %v", []byte(t), err))
	}
	return v
}
