package cqlstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"time"

	"github.com/thriftbridge/thriftbridge/store"
	"github.com/thriftbridge/thriftbridge/store/marshal"
)

// convertedCell is one live legacy cell read from a converted table.
type convertedCell struct {
	super []byte // super column name (pivot), nil otherwise
	cell  store.Cell
}

// readConverted reads every live legacy cell of a row of a pivot or static
// table (of one super column when super is set), in comparator order:
// super column names first, then names. A converted row is read whole
// and sliced by the engine: its named columns are a small set, and what
// CQL can restrict (clustering ranges of the compact part of a mixed
// table) is a fraction of what a slice asks.
func (e *Engine) readConverted(ctx context.Context, ti *tableInfo, key, super []byte, serial bool) ([]convertedCell, error) {
	ct := ti.conv
	var w where
	if err := w.key(ti, key); err != nil {
		return nil, err
	}
	if super != nil {
		if err := w.names(ti.superCols, ti.superType, super); err != nil {
			return nil, err
		}
	}
	var sel []string
	for _, c := range ti.superCols {
		sel = append(sel, c.name)
	}
	for _, c := range ti.nameCols {
		sel = append(sel, c.name)
	}
	values := make([]string, 0, len(ct.named)+1)
	for _, n := range ct.named {
		values = append(values, n.col)
	}
	if ti.value != "" {
		values = append(values, ti.value)
	}
	for _, v := range values {
		sel = append(sel, v)
		if !ti.counter {
			sel = append(sel, "writetime("+v+")", "ttl("+v+")")
		}
	}
	cons := e.readConsistency(ctx)
	if serial {
		cons, _ = e.lwtConsistency(ctx)
	}
	iter := e.session.Query("SELECT "+strings.Join(sel, ", ")+" FROM "+ti.qname+w.sb.String(), w.args...).
		PageSize(pageSize).Consistency(cons).IterContext(ctx)
	defer iter.Close()
	dest := make([]rawDest, len(sel))
	ptrs := make([]any, len(sel))
	for i := range dest {
		ptrs[i] = &dest[i]
	}
	now := time.Now().Unix()
	var out []convertedCell
	var statics []convertedCell
	first := true
	for iter.Scan(ptrs...) {
		j := 0
		var superName []byte
		if len(ti.superCols) > 0 {
			parts := make([][]byte, len(ti.superCols))
			for i := range parts {
				parts[i] = append([]byte(nil), dest[j].b...)
				j++
			}
			superName = joinName(ti.superType, parts)
		}
		var clustName []byte
		if len(ti.nameCols) > 0 {
			parts := make([][]byte, len(ti.nameCols))
			null := false
			for i := range parts {
				null = null || dest[j].b == nil
				parts[i] = append([]byte(nil), dest[j].b...)
				j++
			}
			if !null {
				clustName = joinName(ti.nameType, parts)
			}
		}
		var row []convertedCell
		for i := range values {
			v := dest[j]
			var wt, ttl rawDest
			j++
			if !ti.counter {
				wt, ttl = dest[j], dest[j+1]
				j += 2
			}
			if v.b == nil {
				continue
			}
			c := store.Cell{}
			if ti.counter {
				if len(v.b) == 8 {
					c.CounterValue = int64(binary.BigEndian.Uint64(v.b))
				}
			} else {
				c.Value = append([]byte{}, v.b...)
				if len(wt.b) == 8 {
					c.Timestamp = int64(binary.BigEndian.Uint64(wt.b))
				}
				if len(ttl.b) == 4 {
					if n := int32(binary.BigEndian.Uint32(ttl.b)); n > 0 {
						c.TTL, c.ExpiresAt = n, uint32(now+int64(n))
					}
				}
			}
			if i < len(ct.named) {
				if ct.named[i].static {
					if first {
						c.Name = ct.named[i].legacy
						statics = append(statics, convertedCell{cell: c})
					}
					continue
				}
				c.Name = ct.named[i].legacy
			} else {
				if clustName == nil {
					continue
				}
				c.Name = clustName
			}
			row = append(row, convertedCell{super: superName, cell: c})
		}
		first = false
		// The named cells of a row come in name order; the compact part's
		// one cell per row in clustering order.
		out = append(out, row...)
	}
	if err := iter.Close(); err != nil {
		return nil, wrapErr("read", err)
	}
	if len(statics) > 0 {
		out = mergeByName(ti.nameType, statics, out)
	}
	return out, nil
}

// mergeByName merges two runs of cells sorted by name.
func mergeByName(t marshal.Type, a, b []convertedCell) []convertedCell {
	out := make([]convertedCell, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if t.Compare(a[0].cell.Name, b[0].cell.Name) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// convertedSlice is slice for a pivot or static table: the row's cells
// read whole, then the slice's names, ranges, order and count applied.
func (e *Engine) convertedSlice(ctx context.Context, t *store.Table, key []byte, q *store.SliceQuery, out *store.SliceResult, counting, serial bool) (int, error) {
	ti := info(t)
	limit := q.Count
	if q.Names != nil {
		if len(q.Names) == 0 {
			return 0, nil
		}
		limit = len(q.Names)
	} else if limit <= 0 {
		return 0, nil
	}
	superLvl := ti.superType != nil && q.Super == nil
	cells, err := e.readConverted(ctx, ti, key, q.Super, serial)
	if err != nil {
		return 0, err
	}
	levelT := ti.nameType
	if superLvl {
		levelT = ti.superType
	}
	// The level's entries: cells, or super columns (runs of one name).
	type entry struct {
		name       []byte
		start, end int
	}
	var entries []entry
	for i := 0; i < len(cells); {
		j := i + 1
		name := cells[i].cell.Name
		if superLvl {
			name = cells[i].super
			for j < len(cells) && bytes.Equal(cells[j].super, name) {
				j++
			}
		}
		entries = append(entries, entry{name, i, j})
		i = j
	}
	var names map[string]bool
	var ranges []bounds
	if q.Names != nil {
		names = map[string]bool{}
		for _, nm := range q.Names {
			names[string(levelT.AppendKey(nil, levelT.Normalize(normalName(levelT, nm))))] = true
		}
	} else if len(q.Ranges) > 0 {
		for _, nr := range q.Ranges {
			ranges = append(ranges, makeBounds(levelT, nr.Start, nr.Finish, q.Reversed))
		}
	} else {
		ranges = []bounds{makeBounds(levelT, q.Start, q.Finish, q.Reversed)}
	}
	reversed := q.Reversed && q.Names == nil
	n := 0
	for i := range entries {
		en := entries[i]
		if reversed {
			en = entries[len(entries)-1-i]
		}
		k := levelT.AppendKey(nil, en.name)
		if names != nil && !names[string(k)] || names == nil && !anyHolds(ranges, k) {
			continue
		}
		if n == limit {
			break
		}
		n++
		if counting {
			continue
		}
		if superLvl {
			// A reversed slice of super columns reverses their subcolumns
			// too, as the compact table's reads and Cassandra 3.11 do.
			sc := store.SuperColumn{Name: out.Keep(en.name)}
			for k := en.start; k < en.end; k++ {
				c := cells[k]
				if reversed {
					c = cells[en.end-1-(k-en.start)]
				}
				sc.Cells = append(sc.Cells, keepCell(out, c.cell))
			}
			out.Supers = append(out.Supers, sc)
			continue
		}
		out.Cells = append(out.Cells, keepCell(out, cells[en.start].cell))
	}
	return n, nil
}

func keepCell(out *store.SliceResult, c store.Cell) store.Cell {
	c.Name = out.Keep(c.Name)
	if c.Value != nil {
		c.Value = out.Keep(c.Value)
		if c.Value == nil {
			c.Value = []byte{}
		}
	}
	return c
}
