package badgerstore

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	"github.com/dgraph-io/badger/v4"
)

// cursor walks the keys of one range [lower, upper) of logical keys, forward
// or backward, yielding entries in logical order. Ordinary keys are their
// own logical keys; members of a tie group (overlong keys sharing their
// first truncatedLen bytes) are gathered and re-sorted by the logical keys
// rebuilt from their records.
type cursor struct {
	it      *seekIter
	owned   bool // the cursor opened it and closes it
	reverse bool
	lower   []byte
	upper   []byte
	rebuild func(dst []byte, rec *record) []byte

	// key and rec describe the current entry, and raw its record as
	// stored; they stay valid until the next call to next.
	key []byte
	rec record
	raw []byte

	moved  bool // it has been advanced past the current entry
	valBuf []byte
	group  []tieEntry
	gi     int

	// pack holds the subcolumns of the pack being expanded (pack.go), in
	// the direction of travel, and packKey its key, the prefix of their
	// logical keys; they alias valBuf, or packBody if it was compressed.
	pack     []packCell
	packBody []byte
	pi       int
	packKey  []byte
	keyBuf   []byte

	// busy, for a cursor its reader reuses, is set while a walk has it;
	// close clears it.
	busy *bool
	// rowFloor is the key of the row pack of the row walked, in a family
	// with row packs.
	rowFloor []byte
}

type tieEntry struct {
	key []byte
	val []byte
}

// newCursor opens a cursor over [lower, upper) under prefix. floor, when
// not nil, is the key of a pack whose subcolumns may fall in the range
// although the pack's own key sorts before lower: a forward cursor starts
// there when a pack is stored there. rowFloor, when not nil, is such a
// key too, of the row pack (rowpack.go) that holds every cell of the row
// when it is stored, tried first; the cursor then walks the row's keys.
func newCursor(txn *badger.Txn, prefix, lower, upper, floor, rowFloor []byte, reverse bool, rebuild func([]byte, *record) []byte) *cursor {
	if rowFloor != nil {
		prefix = rowFloor
	}
	// The keys under a prefix longer than truncatedLen (the subcolumns of
	// a super column with a name of tens of kilobytes) are cut: what they
	// keep of it is its first truncatedLen bytes.
	c := &cursor{
		it:       newSeekIter(txn.NewIterator(badger.IteratorOptions{Reverse: reverse, Prefix: seekKey(prefix)}), true),
		owned:    true,
		reverse:  reverse,
		lower:    lower,
		upper:    upper,
		rebuild:  rebuild,
		moved:    true,
		rowFloor: rowFloor,
	}
	if reverse {
		seek := upper
		if len(seek) > truncatedLen {
			// Land after every member of the bound's tie group.
			seek = append(append([]byte{}, seek[:truncatedLen]...), bytes.Repeat([]byte{0xff}, hashLen+1)...)
		}
		c.it.Seek(seek)
	} else {
		c.seekForward(floor)
	}
	return c
}

// newCursorOn runs a forward cursor on an iterator the caller owns.
func newCursorOn(it *seekIter, lower, upper, floor, rowFloor []byte, rebuild func([]byte, *record) []byte) *cursor {
	c := &cursor{it: it, lower: lower, upper: upper, rebuild: rebuild, moved: true, rowFloor: rowFloor}
	c.seekForward(floor)
	return c
}

// seekForward places a forward cursor on its first entry: the pack at
// floor if one holds subcolumns there, else the lower bound.
func (c *cursor) seekForward(floor []byte) {
	if c.rowFloor != nil && bytes.Compare(c.rowFloor, c.lower) < 0 && c.seekFullPack(c.rowFloor) {
		return
	}
	if floor != nil && bytes.Compare(floor, c.lower) < 0 && c.seekFullPack(floor) {
		return
	}
	c.it.Seek(seekKey(c.lower))
}

// seekFullPack places the cursor on the pack under key, and reports
// whether one with cells is stored there.
func (c *cursor) seekFullPack(key []byte) bool {
	c.it.Seek(key)
	if !c.it.Valid() || !bytes.Equal(c.it.Item().Key(), key) {
		return false
	}
	full := false
	_ = c.it.Item().Value(func(v []byte) error {
		full = isPack(v) && len(v) > 2 && v[1]&packDissolved == 0
		return nil
	})
	return full
}

// resetOn makes c a forward cursor on it, as newCursorOn makes one,
// keeping its buffers and its rebuild; busy is cleared by close.
func (c *cursor) resetOn(it *seekIter, lower, upper, floor, rowFloor []byte, busy *bool) {
	*c = cursor{
		it: it, lower: lower, upper: upper, rebuild: c.rebuild, moved: true, busy: busy, rowFloor: rowFloor,
		valBuf: c.valBuf[:0], group: c.group[:0], pack: c.pack[:0], packBody: c.packBody[:0],
		packKey: c.packKey[:0], keyBuf: c.keyBuf[:0],
	}
	c.seekForward(floor)
}

func (c *cursor) close() {
	if c.owned {
		c.it.Close()
	}
	if c.busy != nil {
		*c.busy = false
	}
}

// next moves to the next entry inside the range; false at the end.
func (c *cursor) next() (bool, error) {
	for {
		ok, err := c.step()
		if !ok || err != nil {
			return false, err
		}
		if c.reverse {
			if bytes.Compare(c.key, c.upper) >= 0 {
				continue
			}
			if bytes.Compare(c.key, c.lower) < 0 {
				return false, nil
			}
		} else {
			if bytes.Compare(c.key, c.lower) < 0 {
				continue
			}
			if bytes.Compare(c.key, c.upper) >= 0 {
				return false, nil
			}
		}
		return true, nil
	}
}

// step yields the next entry in logical order, ignoring the bounds.
func (c *cursor) step() (bool, error) {
	if c.gi < len(c.group) {
		return true, c.takeGroupEntry()
	}
	if c.pi < len(c.pack) {
		return true, c.takePackCell()
	}
	c.group, c.gi = c.group[:0], 0
	c.pack, c.pi = c.pack[:0], 0
	for {
		if !c.moved {
			c.it.Next()
		}
		c.moved = true
		if !c.it.Valid() {
			return false, nil
		}
		item := c.it.Item()
		k := item.Key()
		if mayTie(k) {
			if err := c.gatherGroup(); err != nil {
				return false, err
			}
			return true, c.takeGroupEntry()
		}
		val, err := item.ValueCopy(c.valBuf[:0])
		if err != nil {
			return false, fmt.Errorf("read value: %w", err)
		}
		c.valBuf = val
		c.moved = false
		if isPack(val) {
			if c.pack, _, err = decodePack(val, c.pack[:0], &c.packBody); err != nil {
				return false, fmt.Errorf("key %x: %w", k, err)
			}
			if len(c.pack) == 0 {
				continue // a dissolved pack: its subcolumns follow it
			}
			if c.reverse {
				slices.Reverse(c.pack)
			}
			c.packKey = append(c.packKey[:0], k...)
			return true, c.takePackCell()
		}
		if err := decodeRecord(val, &c.rec); err != nil {
			return false, fmt.Errorf("key %x: %w", k, err)
		}
		c.key, c.raw = k, val
		return true, nil
	}
}

// takePackCell makes the next subcolumn of the pack the current entry.
func (c *cursor) takePackCell() error {
	p := &c.pack[c.pi]
	c.pi++
	c.keyBuf = append(append(c.keyBuf[:0], c.packKey...), p.enc...)
	c.key, c.raw = c.keyBuf, p.rec
	if err := decodeRecord(p.rec, &c.rec); err != nil {
		return fmt.Errorf("key %x: %w", c.key, err)
	}
	return nil
}

// gatherGroup reads the whole tie group starting at the current item and
// sorts it by logical key in the direction of travel.
func (c *cursor) gatherGroup() error {
	first := c.it.Item().KeyCopy(nil)
	for ; c.it.Valid(); c.it.Next() {
		item := c.it.Item()
		if !sameTieGroup(first, item.Key()) {
			break
		}
		val, err := item.ValueCopy(nil)
		if err != nil {
			return fmt.Errorf("read value: %w", err)
		}
		key := item.KeyCopy(nil)
		var rec record
		if err := decodeRecord(val, &rec); err != nil {
			return fmt.Errorf("key %x: %w", key, err)
		}
		if rec.flags&flagCutKey != 0 {
			key = c.rebuild(nil, &rec)
		}
		c.group = append(c.group, tieEntry{key: key, val: val})
	}
	c.moved = true
	sort.Slice(c.group, func(i, j int) bool {
		if c.reverse {
			return bytes.Compare(c.group[j].key, c.group[i].key) < 0
		}
		return bytes.Compare(c.group[i].key, c.group[j].key) < 0
	})
	return nil
}

func (c *cursor) takeGroupEntry() error {
	g := &c.group[c.gi]
	c.gi++
	c.key, c.raw = g.key, g.val
	return decodeRecord(g.val, &c.rec)
}
