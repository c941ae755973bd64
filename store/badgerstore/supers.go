package badgerstore

import (
	"bytes"
	"fmt"

	"github.com/thriftbridge/thriftbridge/store"
)

// superKey is a key at super level split into its parts.
type superKey struct {
	encSuper []byte // the encoded super column name
	header   bool   // the super column's header (its tombstone)
	encName  []byte // the encoded subcolumn name (not for headers)
}

// splitSuperKey splits the part of a key after rp+kindCells.
func (r *reader) splitSuperKey(k []byte) (superKey, error) {
	var sk superKey
	name, rest, err := r.t.Comparator.DecodeKey(r.name[:0], k)
	if err != nil || len(rest) == 0 {
		return sk, fmt.Errorf("corrupt super column key %x: %v", k, err)
	}
	r.name = name
	sk.encSuper = k[:len(k)-len(rest)]
	sk.header = rest[0] == superHeader
	sk.encName = rest[1:]
	return sk, nil
}

// superName returns the raw name of a super column: from a record that
// carries it, else decoded from its key.
func (r *reader) superName(encSuper []byte, rec *record) ([]byte, error) {
	if rec != nil && rec.flags&flagRawSuper != 0 {
		return rec.rawSuper, nil
	}
	name, _, err := r.t.Comparator.DecodeKey(r.name[:0], encSuper)
	if err != nil {
		return nil, fmt.Errorf("decode super column name %x: %w", encSuper, err)
	}
	r.name = name
	return name, nil
}

// sliceSupers reads whole super columns selected by names or a range of
// super column names.
func (r *reader) sliceSupers(q *store.SliceQuery, out *store.SliceResult) error {
	prefix := append(append([]byte{}, r.rp...), kindCells)
	if q.Names != nil {
		for _, k := range sortedNameKeys(nil, nil, prefix, r.t.Comparator, q.Names) {
			if err := r.namedSuper(prefix, k, out); err != nil {
				return err
			}
		}
		return nil
	}
	if q.Count <= 0 {
		return nil
	}
	lower, upper := rangeKeys(prefix, r.t.Comparator, q)
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	c := r.cursor(prefix, lower, upper, nil, q.Reversed)
	defer c.close()

	var g superGroup
	for {
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		sk, err := r.splitSuperKey(c.key[len(prefix):])
		if err != nil {
			return err
		}
		if g.started && !bytes.Equal(sk.encSuper, g.encSuper) {
			if err := r.closeGroup(&g, out); err != nil {
				return err
			}
			if len(out.Supers) >= q.Count {
				return nil
			}
		}
		if !g.started {
			g.start(sk.encSuper)
		}
		if c.rec.flags&flagRawSuper != 0 && g.rawSuper == nil {
			g.rawSuper = append([]byte{}, c.rec.rawSuper...)
		}
		if sk.header {
			if c.rec.tombstone() {
				g.del = c.rec.timestamp
			}
			continue
		}
		if r.dead(c.key, &c.rec, r.rowDel) {
			continue
		}
		name, err := r.cellName(sk.encName, r.t.SubComparator, &c.rec)
		if err != nil {
			return err
		}
		g.cells = append(g.cells, keepCell(out, name, &c.rec))
	}
	if g.started {
		return r.closeGroup(&g, out)
	}
	return nil
}

// superGroup gathers one super column while walking super-level keys.
type superGroup struct {
	started  bool
	encSuper []byte
	rawSuper []byte
	del      int64
	cells    []store.Cell
}

func (g *superGroup) start(encSuper []byte) {
	g.started = true
	g.encSuper = append(g.encSuper[:0], encSuper...)
	g.rawSuper = nil
	g.del = noDeletion
	g.cells = g.cells[:0]
}

// closeGroup emits the gathered super column if any of its cells outlive
// its deletion.
func (r *reader) closeGroup(g *superGroup, out *store.SliceResult) error {
	g.started = false
	var cells []store.Cell
	for _, c := range g.cells {
		if c.Timestamp > g.del {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil
	}
	name := g.rawSuper
	if name == nil {
		var err error
		if name, err = r.superName(g.encSuper, nil); err != nil {
			return err
		}
	}
	out.Supers = append(out.Supers, store.SuperColumn{Name: out.Keep(name), Cells: cells})
	return nil
}

// namedSuper reads one whole super column by its encoded name key.
func (r *reader) namedSuper(prefix, encKey []byte, out *store.SliceResult) error {
	encSuper := encKey[len(prefix):]
	hk := append(append(r.buf[:0], encKey...), superHeader)
	r.buf = hk
	del, err := r.deletionAt(hk)
	if err != nil {
		return err
	}
	del = max(del, r.rowDel)
	subPrefix := append(append([]byte{}, encKey...), superCells)
	var cells []store.Cell
	var rawSuper []byte
	err = r.sliceCells(subPrefix, r.t.SubComparator, &store.SliceQuery{Count: int(^uint(0) >> 1)}, del,
		func(name []byte, rec *record) bool {
			if rawSuper == nil && rec.flags&flagRawSuper != 0 {
				rawSuper = append([]byte{}, rec.rawSuper...)
			}
			cells = append(cells, keepCell(out, name, rec))
			return true
		})
	if err != nil || len(cells) == 0 {
		return err
	}
	name := rawSuper
	if name == nil {
		if name, err = r.superName(encSuper, nil); err != nil {
			return err
		}
	}
	out.Supers = append(out.Supers, store.SuperColumn{Name: out.Keep(name), Cells: cells})
	return nil
}

// countSupers counts the live super columns a query selects (those with at
// least one live subcolumn), walking forward.
func (r *reader) countSupers(q *store.SliceQuery, n *int) error {
	prefix := append(append([]byte{}, r.rp...), kindCells)
	if q.Names != nil {
		for _, k := range sortedNameKeys(nil, nil, prefix, r.t.Comparator, q.Names) {
			hk := append(append([]byte{}, k...), superHeader)
			del, err := r.deletionAt(hk)
			if err != nil {
				return err
			}
			found := false
			err = r.sliceCells(append(append([]byte{}, k...), superCells), r.t.SubComparator,
				&store.SliceQuery{Count: 1}, max(del, r.rowDel),
				func([]byte, *record) bool { found = true; return false })
			if err != nil {
				return err
			}
			if found {
				*n++
			}
		}
		return nil
	}
	if q.Count <= 0 {
		return nil
	}
	fq := *q
	if fq.Reversed {
		fq.Start, fq.Finish, fq.Reversed = q.Finish, q.Start, false
	}
	lower, upper := rangeKeys(prefix, r.t.Comparator, &fq)
	if bytes.Compare(lower, upper) >= 0 {
		return nil
	}
	c := r.cursor(prefix, lower, upper, nil, false)
	defer c.close()
	var cur []byte
	del, live := int64(noDeletion), false
	for {
		ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		sk, err := r.splitSuperKey(c.key[len(prefix):])
		if err != nil {
			return err
		}
		if cur == nil || !bytes.Equal(sk.encSuper, cur) {
			if live {
				*n++
				if *n >= q.Count {
					return nil
				}
			}
			cur = append(cur[:0], sk.encSuper...)
			del, live = noDeletion, false
		}
		if sk.header {
			if c.rec.tombstone() {
				del = c.rec.timestamp
			}
			continue
		}
		if !r.dead(c.key, &c.rec, max(del, r.rowDel)) {
			live = true
		}
	}
	if live {
		*n++
	}
	return nil
}
