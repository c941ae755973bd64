package badgerstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/thriftbridge/thriftbridge/store"
)

// rangeTombstone deletes, at timestamp ts, every cell of a row whose key
// (after the row prefix and kindCells) lies in [lower, upper). A nil lower
// or upper is open. Range tombstones live under rp+kindRanges; the row
// header's flagHasRanges tells readers to load them.
type rangeTombstone struct {
	lower, upper []byte
	ts           int64
	deletedAt    uint32
}

// covers reports whether the tombstone deletes a cell with key suffix k
// written at ts.
func (rt *rangeTombstone) covers(k []byte, ts int64) bool {
	if ts > rt.ts {
		return false
	}
	if rt.lower != nil && bytes.Compare(k, rt.lower) < 0 {
		return false
	}
	return rt.upper == nil || bytes.Compare(k, rt.upper) < 0
}

// Payload flags of a range tombstone's value.
const (
	rangeHasLower byte = 1 << iota
	rangeHasUpper
)

// rangeTombstoneKey is unique per (timestamp, bounds), so that writing the
// same deletion twice leaves one entry.
func rangeTombstoneKey(dst, rp []byte, rt *rangeTombstone) []byte {
	dst = append(dst, rp...)
	dst = append(dst, kindRanges)
	dst = binary.BigEndian.AppendUint64(dst, uint64(rt.ts)^(1<<63))
	h := sha256.New()
	h.Write(rangeTombstonePayload(nil, rt))
	return h.Sum(dst)[:len(dst)+hashLen]
}

func rangeTombstonePayload(dst []byte, rt *rangeTombstone) []byte {
	var flags byte
	if rt.lower != nil {
		flags |= rangeHasLower
	}
	if rt.upper != nil {
		flags |= rangeHasUpper
	}
	dst = append(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(len(rt.lower)))
	dst = append(dst, rt.lower...)
	dst = binary.AppendUvarint(dst, uint64(len(rt.upper)))
	return append(dst, rt.upper...)
}

// decodeRangeTombstone decodes a range tombstone's record; the bounds are
// copied.
func decodeRangeTombstone(val []byte) (rangeTombstone, error) {
	var rec record
	if err := decodeRecord(val, &rec); err != nil {
		return rangeTombstone{}, err
	}
	p := rec.value
	if len(p) < 1 {
		return rangeTombstone{}, errBadRecord
	}
	flags := p[0]
	lower, rest, err := readBytes(p[1:])
	if err != nil {
		return rangeTombstone{}, err
	}
	upper, _, err := readBytes(rest)
	if err != nil {
		return rangeTombstone{}, err
	}
	rt := rangeTombstone{ts: rec.timestamp, deletedAt: rec.deletedAt}
	if flags&rangeHasLower != 0 {
		rt.lower = append([]byte{}, lower...)
	}
	if flags&rangeHasUpper != 0 {
		rt.upper = append([]byte{}, upper...)
	}
	return rt, nil
}

// rangeBounds turns the Start and Finish of an OpDeleteRange into key
// suffix bounds, with the slice rules of the names' comparator (the super
// column comparator of a Super family).
func rangeBounds(t *store.Table, op *store.Op) (lower, upper []byte) {
	typ := t.Comparator
	if len(op.Start) > 0 {
		lower = typ.AppendLowerBound([]byte{}, op.Start)
	}
	if len(op.Finish) > 0 {
		upper = typ.AppendUpperBound([]byte{}, op.Finish)
	}
	return lower, upper
}

// putRangeTombstone records a range deletion and flags the row header.
func (w *writer) putRangeTombstone(rp []byte, t *store.Table, op *store.Op) error {
	rt := rangeTombstone{ts: op.Timestamp, deletedAt: w.now}
	rt.lower, rt.upper = rangeBounds(t, op)
	if rt.lower != nil && rt.upper != nil && bytes.Compare(rt.lower, rt.upper) >= 0 {
		return nil // selects nothing
	}
	if err := w.flagRanges(rp); err != nil {
		return err
	}
	if err := w.markForGC(rp); err != nil {
		return err
	}
	rec := record{flags: flagTombstone, timestamp: rt.ts, deletedAt: rt.deletedAt, value: rangeTombstonePayload(nil, &rt)}
	key := rangeTombstoneKey(w.slab.scratch(len(rp)+1+8+hashLen), rp, &rt)
	if err := w.set(key, appendRecord(w.slab.scratch(recordSize(&rec)), &rec)); err != nil {
		return fmt.Errorf("write range tombstone: %w", err)
	}
	return nil
}
