package cqlstore

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// pageSize is the number of CQL rows a read fetches per page.
const pageSize = 1000

// bounds is a range of names in comparator order as key encodings
// (nil: open), as the Badger engine bounds its slices.
type bounds struct{ lower, upper []byte }

func makeBounds(t marshal.Type, start, finish []byte, reversed bool) bounds {
	lo, hi := start, finish
	if reversed {
		lo, hi = hi, lo
	}
	var b bounds
	if len(lo) > 0 {
		b.lower = t.AppendLowerBound(nil, lo)
	}
	if len(hi) > 0 {
		b.upper = t.AppendUpperBound(nil, hi)
	}
	return b
}

func (b bounds) holds(key []byte) bool {
	return (b.lower == nil || bytes.Compare(key, b.lower) >= 0) && (b.upper == nil || bytes.Compare(key, b.upper) < 0)
}

// sliceReader reads one row's slice: the query, then a client-side check
// of what CQL cannot restrict exactly (composite names, several ranges).
type sliceReader struct {
	ti       *tableInfo
	q        *store.SliceQuery
	superLvl bool // a Super family read at the super column level
	levelT   marshal.Type
	levelC   []clustCol
	// filter, when set, decides each name at the level.
	ranges []bounds
	names  [][]byte
	exact  bool // the CQL restriction selects exactly; no check needed
}

// Slice implements store.Engine.
func (e *Engine) Slice(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery, out *store.SliceResult) error {
	_, err := e.slice(ctx, t, key, q, out, false, false)
	return err
}

// Count implements store.Engine.
func (e *Engine) Count(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery) (int, error) {
	var res store.SliceResult
	return e.slice(ctx, t, key, q, &res, true, false)
}

func (e *Engine) slice(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery, out *store.SliceResult, counting, serial bool) (int, error) {
	ti := info(t)
	if ti.conv != nil {
		return e.convertedSlice(ctx, t, key, q, out, counting, serial)
	}
	r := &sliceReader{ti: ti, q: q, levelT: ti.nameType, levelC: ti.nameCols}
	insideSuper := ti.superType != nil && q.Super != nil
	if ti.superType != nil && q.Super == nil {
		r.superLvl, r.levelT, r.levelC = true, ti.superType, ti.superCols
	}
	limit := q.Count
	if q.Names != nil {
		if len(q.Names) == 0 {
			return 0, nil
		}
		limit = len(q.Names)
	} else if limit <= 0 {
		return 0, nil
	}

	var w where
	if err := w.key(ti, key); err != nil {
		return 0, err
	}
	if insideSuper {
		if err := w.names(ti.superCols, ti.superType, q.Super); err != nil {
			return 0, err
		}
	}
	simple := len(r.levelC) == 1 && !isComposite(r.levelT)
	order := ""
	switch {
	case q.Names != nil:
		r.names = q.Names
		if simple {
			w.sb.WriteString(" AND " + r.levelC[0].name + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(q.Names)), ", ") + ")")
			for _, n := range q.Names {
				w.args = append(w.args, raw(n))
			}
		}
	case len(q.Ranges) > 0:
		for _, nr := range q.Ranges {
			r.ranges = append(r.ranges, makeBounds(r.levelT, nr.Start, nr.Finish, q.Reversed))
		}
	default:
		r.ranges = []bounds{makeBounds(r.levelT, q.Start, q.Finish, q.Reversed)}
		if simple {
			r.exact = true
			lo, hi := q.Start, q.Finish
			if q.Reversed {
				lo, hi = hi, lo
			}
			lop, hip := ">=", "<="
			if r.levelC[0].desc {
				lop, hip = hip, lop
			}
			if len(lo) > 0 {
				w.rel(r.levelC[0].name, lop, lo)
			}
			if len(hi) > 0 {
				w.rel(r.levelC[0].name, hip, hi)
			}
		}
	}
	if q.Reversed && q.Names == nil {
		order = ti.reversedOrder
	}
	limitClause := ""
	if r.exact && !r.superLvl {
		// A bind marker: one prepared statement whatever the count.
		limitClause = " LIMIT ?"
		w.args = append(w.args, limit)
	}
	stmt := "SELECT " + ti.selected + " FROM " + ti.qname + w.sb.String() + order + limitClause
	cons := e.readConsistency(ctx)
	if serial {
		cons, _ = e.lwtConsistency(ctx)
	}
	query := e.session.Query(stmt, w.args...).PageSize(min(limit+1, pageSize)).Consistency(cons)
	iter := query.IterContext(ctx)
	defer iter.Close()

	row := newRowScanner(ti)
	if !counting && !r.superLvl {
		// One allocation for the cells, not one each time append doubles.
		out.Cells = slices.Grow(out.Cells, min(limit, pageSize))
	}
	now := time.Now().Unix()
	n := 0
	var lastSuper []byte
	var names map[string]bool
	if r.names != nil {
		names = map[string]bool{}
		for _, nm := range r.names {
			names[string(r.levelT.AppendKey(nil, r.levelT.Normalize(normalName(r.levelT, nm))))] = true
		}
	}
	for iter.Scan(row.dest...) {
		var levelName []byte
		if r.superLvl {
			levelName = joinName(ti.superType, row.superParts())
		} else {
			levelName = joinName(ti.nameType, row.nameParts())
		}
		if r.superLvl && lastSuper != nil && bytes.Equal(levelName, lastSuper) {
			// Another subcolumn of the super column taken last.
			if !counting {
				appendCell(out, &out.Supers[len(out.Supers)-1].Cells, row, joinName(ti.nameType, row.nameParts()), now)
			}
			continue
		}
		if !r.exact || names != nil {
			k := r.levelT.AppendKey(nil, levelName)
			if names != nil {
				if !names[string(k)] {
					continue
				}
			} else if !anyHolds(r.ranges, k) {
				continue
			}
		}
		if n == limit {
			break
		}
		n++
		if r.superLvl {
			lastSuper = append(lastSuper[:0], levelName...)
			if lastSuper == nil {
				lastSuper = []byte{}
			}
			if !counting {
				out.Supers = append(out.Supers, store.SuperColumn{Name: out.Keep(levelName)})
				appendCell(out, &out.Supers[len(out.Supers)-1].Cells, row, joinName(ti.nameType, row.nameParts()), now)
			}
			continue
		}
		if !counting {
			appendCell(out, &out.Cells, row, levelName, now)
		}
	}
	if err := iter.Close(); err != nil {
		return 0, wrapErr("read", err)
	}
	if names != nil && !counting {
		sortCells(t, r, out)
	}
	return n, nil
}

func anyHolds(rs []bounds, k []byte) bool {
	for _, b := range rs {
		if b.holds(k) {
			return true
		}
	}
	return false
}

// sortCells puts a names read in comparator order (CQL returns clustering
// order, which is the same for simple names; composite names were read in
// order too): nothing to do but keep the contract explicit.
func sortCells(t *store.Table, r *sliceReader, out *store.SliceResult) {
	if r.superLvl {
		sort.SliceStable(out.Supers, func(i, j int) bool { return t.Comparator.Compare(out.Supers[i].Name, out.Supers[j].Name) < 0 })
		return
	}
	sort.SliceStable(out.Cells, func(i, j int) bool { return r.levelT.Compare(out.Cells[i].Name, out.Cells[j].Name) < 0 })
}

// rowScanner receives one CQL row of a slice.
type rowScanner struct {
	ti      *tableInfo
	clust   []rawDest
	value   rawDest
	counter int64
	ts      int64
	ttl     int
	dest    []any
}

func newRowScanner(ti *tableInfo) *rowScanner {
	r := &rowScanner{ti: ti, clust: make([]rawDest, len(ti.superCols)+len(ti.nameCols))}
	for i := range r.clust {
		r.dest = append(r.dest, &r.clust[i])
	}
	if ti.counter {
		r.dest = append(r.dest, &r.counter)
	} else {
		r.dest = append(r.dest, &r.value, &r.ts, &r.ttl)
	}
	return r
}

func (r *rowScanner) superParts() [][]byte {
	out := make([][]byte, len(r.ti.superCols))
	for i := range out {
		out[i] = r.clust[i].b
	}
	return out
}

func (r *rowScanner) nameParts() [][]byte {
	n := len(r.ti.superCols)
	out := make([][]byte, len(r.ti.nameCols))
	for i := range out {
		out[i] = r.clust[n+i].b
	}
	return out
}

func appendCell(out *store.SliceResult, cells *[]store.Cell, r *rowScanner, name []byte, now int64) {
	c := store.Cell{Name: out.Keep(name)}
	if r.ti.counter {
		c.CounterValue = r.counter
	} else {
		c.Value = out.Keep(r.value.b)
		if c.Value == nil {
			c.Value = []byte{}
		}
		c.Timestamp = r.ts
		if r.ttl > 0 {
			c.TTL = int32(r.ttl)
			c.ExpiresAt = uint32(now + int64(r.ttl))
		}
	}
	*cells = append(*cells, c)
}
