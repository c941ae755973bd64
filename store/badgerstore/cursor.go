package badgerstore

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/dgraph-io/badger/v4"
)

// cursor walks the keys of one range [lower, upper) of logical keys, forward
// or backward, yielding entries in logical order. Ordinary keys are their
// own logical keys; members of a tie group (overlong keys sharing their
// first truncatedLen bytes) are gathered and re-sorted by the logical keys
// rebuilt from their records.
type cursor struct {
	it      *badger.Iterator
	owned   bool // the cursor opened it and closes it
	reverse bool
	lower   []byte
	upper   []byte
	rebuild func(dst []byte, rec *record) []byte

	// key and rec describe the current entry; they stay valid until the
	// next call to next.
	key []byte
	rec record

	moved  bool // it has been advanced past the current entry
	valBuf []byte
	group  []tieEntry
	gi     int
}

type tieEntry struct {
	key []byte
	val []byte
}

func newCursor(txn *badger.Txn, prefix, lower, upper []byte, reverse bool, rebuild func([]byte, *record) []byte) *cursor {
	c := &cursor{
		it:      txn.NewIterator(badger.IteratorOptions{Reverse: reverse, Prefix: prefix}),
		owned:   true,
		reverse: reverse,
		lower:   lower,
		upper:   upper,
		rebuild: rebuild,
		moved:   true,
	}
	if reverse {
		seek := upper
		if len(seek) > truncatedLen {
			// Land after every member of the bound's tie group.
			seek = append(append([]byte{}, seek[:truncatedLen]...), bytes.Repeat([]byte{0xff}, hashLen+1)...)
		}
		c.it.Seek(seek)
	} else {
		c.it.Seek(seekKey(lower))
	}
	return c
}

// newCursorOn runs a forward cursor on an iterator the caller owns.
func newCursorOn(it *badger.Iterator, lower, upper []byte, rebuild func([]byte, *record) []byte) *cursor {
	c := &cursor{it: it, lower: lower, upper: upper, rebuild: rebuild, moved: true}
	c.it.Seek(seekKey(lower))
	return c
}

func (c *cursor) close() {
	if c.owned {
		c.it.Close()
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
	c.group, c.gi = c.group[:0], 0
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
	if err := decodeRecord(val, &c.rec); err != nil {
		return false, fmt.Errorf("key %x: %w", k, err)
	}
	c.key = k
	c.moved = false
	return true, nil
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
	c.key = g.key
	return decodeRecord(g.val, &c.rec)
}
