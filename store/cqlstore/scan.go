package cqlstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/partition"
)

// scanPage is how many partition keys a scan lists per round trip.
const scanPage = 500

// Scan implements store.Engine: it lists the partitions of the range in
// token order (SELECT DISTINCT, one page at a time through the driver's
// page state, no iterator open while rows are visited), then reads each
// row's slice as Slice does: without a filter or a cell budget, several
// rows' slices at once (visitWindows).
func (e *Engine) Scan(ctx context.Context, t *store.Table, q *store.ScanQuery, out *store.SliceResult, visit func(key []byte) (bool, error)) error {
	ti := info(t)
	if len(q.Filter) > 0 && t.Def.Super {
		return nil // no row of a Super family has cells at the top level
	}
	tokenExpr := "token(" + strings.Join(ti.keyCols, ", ") + ")"
	var cond []string
	var args []any
	// The key bounds: a row of the bound key's token is in the range by
	// its key bytes.
	var startKey, endKey []byte
	var startTok, endTok []byte // in their CQL form
	bound := func(op string, t partition.Token) ([]byte, error) {
		c, err := partition.CQLToken(e.part, t)
		if err != nil {
			return nil, fmt.Errorf("cqlstore: scan: %w", err)
		}
		cond = append(cond, tokenExpr+" "+op+" ?")
		args = append(args, raw(c))
		return c, nil
	}
	var err error
	switch q.Start.Kind {
	case store.BoundKey:
		startKey = q.Start.Key
		startTok, err = bound(">=", e.part.Token(startKey))
	case store.BoundToken:
		if len(q.Start.Token) > 0 {
			_, err = bound(">", q.Start.Token)
		}
	}
	if err != nil {
		return err
	}
	switch q.End.Kind {
	case store.BoundKey:
		endKey = q.End.Key
		endTok, err = bound("<=", e.part.Token(endKey))
	case store.BoundToken:
		if len(q.End.Token) > 0 {
			_, err = bound("<=", q.End.Token)
		}
	}
	if err != nil {
		return err
	}
	// before and after report a row of the start key's token listed before
	// the start key, and one of the end key's token after the end key.
	before := func(tok, key []byte) bool {
		return startKey != nil && bytes.Equal(tok, startTok) && bytes.Compare(key, startKey) < 0
	}
	after := func(tok, key []byte) bool {
		return endKey != nil && bytes.Equal(tok, endTok) && bytes.Compare(key, endKey) > 0
	}
	where := ""
	if len(cond) > 0 {
		where = " WHERE " + strings.Join(cond, " AND ")
	}
	if wholeRows(ti, q) {
		return e.scanWholeRows(ctx, ti, q, tokenExpr+", "+strings.Join(ti.keyCols, ", "), where, args, before, after, out, visit)
	}
	stmt := "SELECT DISTINCT " + strings.Join(ti.keyCols, ", ") + ", " + tokenExpr + " FROM " + ti.qname + where
	budget := q.PageCells
	first := true
	var state []byte
	keyParts := make([]rawDest, len(ti.keyCols))
	dest := make([]any, 0, len(keyParts)+1)
	for i := range keyParts {
		dest = append(dest, &keyParts[i])
	}
	var tok rawDest
	dest = append(dest, &tok)
	type found struct {
		key           []byte
		before, after bool
	}
	keysPage := scanPage
	if q.Rows > 0 && len(q.Filter) == 0 {
		// One more than the rows taken: the start key may be left out.
		// A filter may leave out any number of keys: full pages then.
		keysPage = min(scanPage, q.Rows+1)
	}
	for {
		iter := e.session.Query(stmt, args...).Consistency(e.readConsistency(ctx)).PageSize(keysPage).PageState(state).IterContext(ctx)
		var keys []found
		for iter.Scan(dest...) {
			parts := make([][]byte, len(keyParts))
			for i := range keyParts {
				parts[i] = keyParts[i].b
			}
			key := append([]byte(nil), join(ti.keyType, parts)...)
			keys = append(keys, found{key, before(tok.b, key), after(tok.b, key)})
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			return wrapErr("scan", err)
		}
		if len(q.Filter) == 0 && q.PageCells == 0 {
			// The rows' slices do not depend on one another: they are read
			// a window at a time, concurrently, and visited in order.
			var sel [][]byte
			ended := false
			for _, k := range keys {
				if k.before {
					continue
				}
				if k.after {
					ended = true
					break
				}
				sel = append(sel, k.key)
			}
			more, err := e.visitWindows(ctx, t, &q.Slice, sel, out, visit)
			if err != nil || !more || ended || len(state) == 0 {
				return err
			}
			continue
		}
		for _, k := range keys {
			if k.before {
				continue
			}
			if k.after {
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

// A scan of whole rows reads the rows the caller takes (ScanQuery.Rows;
// wholeRowsPageRows when it does not say) of Count cells per round trip,
// within [wholeRowsMinPage, wholeRowsMaxPage] cells: a page much larger
// than what the caller takes makes the cluster read rows for nothing.
const (
	wholeRowsPageRows = 100
	wholeRowsMinPage  = 100
	wholeRowsMaxPage  = 5000
)

// wholeRowsPage is the page size, in cells, of a scan of whole rows.
func wholeRowsPage(q *store.ScanQuery) int {
	rows := wholeRowsPageRows
	if q.Rows > 0 {
		rows = q.Rows
	}
	return min(max(q.Slice.Count*rows, wholeRowsMinPage), wholeRowsMaxPage)
}

// wholeRows reports a scan whose rows scanWholeRows reads in one query:
// the first Count cells of every row of a Standard family of simple names,
// no filter, no cell budget.
func wholeRows(ti *tableInfo, q *store.ScanQuery) bool {
	sq := &q.Slice
	// A converted (pivot, static, mixed) table's rows are read by
	// convertedSlice only.
	return ti.conv == nil && len(q.Filter) == 0 && q.PageCells == 0 && ti.superType == nil &&
		len(ti.nameCols) == 1 && !isComposite(ti.nameType) &&
		sq.Names == nil && len(sq.Ranges) == 0 && len(sq.Start) == 0 && len(sq.Finish) == 0 &&
		!sq.Reversed && sq.Super == nil && sq.Count > 0
}

// scanWholeRows is Scan of whole rows (wholeRows) as one statement, the
// cells of the range's partitions in token order, PER PARTITION LIMIT the
// slice's count, a page of cells at a time through the driver's page
// state: the rows of a page are visited once the page is read, no
// iterator open; the last row of a page, which may go on in the next, is
// visited with the next unless it has Count cells, the most the query
// gives a partition. A partition of no live cell is not visited, as with
// SELECT DISTINCT (RangeGhosts false).
func (e *Engine) scanWholeRows(ctx context.Context, ti *tableInfo, q *store.ScanQuery, keySel, where string, args []any,
	before, after func(tok, key []byte) bool, out *store.SliceResult, visit func(key []byte) (bool, error)) error {
	stmt := "SELECT " + keySel + ", " + ti.selected + " FROM " + ti.qname + where + " PER PARTITION LIMIT ?"
	args = append(args, q.Slice.Count)
	row := newRowScanner(ti)
	keyParts := make([]rawDest, len(ti.keyCols))
	var tok rawDest
	dest := []any{&tok}
	for i := range keyParts {
		dest = append(dest, &keyParts[i])
	}
	dest = append(dest, row.dest...)
	parts := make([][]byte, len(keyParts))
	// cur is the row being read: its key, whether it is in the range, and
	// its cells in out.
	var cur []byte
	curIn, started := false, false
	out.Clear()
	var state []byte
	for {
		page := wholeRowsPage(q)
		iter := e.session.Query(stmt, args...).Consistency(e.readConsistency(ctx)).PageSize(page).PageState(state).IterContext(ctx)
		now := time.Now().Unix()
		// done are the rows of this page complete before the next page.
		type done struct {
			key   []byte
			cells []store.Cell
		}
		var rows []done
		for iter.Scan(dest...) {
			for i := range keyParts {
				parts[i] = keyParts[i].b
			}
			key := join(ti.keyType, parts)
			if !started || !bytes.Equal(key, cur) {
				if started && curIn {
					rows = append(rows, done{cur, out.Cells})
					out.Cells = nil
				}
				started = true
				cur = append([]byte(nil), key...)
				curIn = !before(tok.b, cur) && !after(tok.b, cur)
			}
			if curIn {
				appendCell(out, &out.Cells, row, row.clust[0].b, now)
			}
		}
		state = iter.PageState()
		if err := iter.Close(); err != nil {
			return wrapErr("scan", err)
		}
		if curIn && len(out.Cells) >= q.Slice.Count {
			// The page's last row is whole: visited now, so that a
			// caller taking no more rows needs no next page. A cell of
			// it in the next page (there is none) would be left out.
			rows = append(rows, done{cur, out.Cells})
			out.Cells = nil
			curIn = false
		}
		pending := out.Cells
		for _, r := range rows {
			out.Cells = r.cells
			more, err := visit(r.key)
			if err != nil || !more {
				return err
			}
		}
		out.Cells = pending
		if len(state) == 0 {
			break
		}
	}
	if started && curIn {
		_, err := visit(cur)
		return err
	}
	return nil
}

// Windows of visitWindows: the first is small, for scans that stop after
// a few rows; each next one twice as large, up to scanWindowMax.
const (
	scanWindowMin = 4
	scanWindowMax = 32
)

// visitWindows reads the slices of keys a window at a time, the slices of
// a window concurrently, and visits the rows in order with out holding
// each row's slice. It reports whether visit asked for more rows; a
// window may have read a few rows past the last one visited.
func (e *Engine) visitWindows(ctx context.Context, t *store.Table, sq *store.SliceQuery, keys [][]byte, out *store.SliceResult, visit func(key []byte) (bool, error)) (bool, error) {
	bufs := make([]store.SliceResult, min(scanWindowMax, len(keys)))
	for window := scanWindowMin; len(keys) > 0; window = min(2*window, scanWindowMax) {
		n := min(window, len(keys))
		g, gctx := errgroup.WithContext(ctx)
		for i := range n {
			bufs[i].Clear()
			g.Go(func() error {
				_, err := e.slice(gctx, t, keys[i], sq, &bufs[i], false, false)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return false, err
		}
		for i := range n {
			// The buffers trade places with out, so no slice is copied.
			*out, bufs[i] = bufs[i], *out
			more, err := visit(keys[i])
			if err != nil || !more {
				return false, err
			}
		}
		keys = keys[n:]
	}
	return true, nil
}
