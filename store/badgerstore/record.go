package badgerstore

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Record flags.
const (
	flagTombstone byte = 1 << iota // a deletion
	flagExpiring                   // written with a TTL
	flagCounter                    // a counter cell: the value is an int64
	flagRawName                    // the raw cell name follows
	flagRawSuper                   // the raw super column name follows
	flagRawKey                     // (row header) the raw row key follows
	flagCutKey                     // the key was cut: rebuild it from the raw names
	flagHasRanges                  // (row header) the row has range tombstones
)

// record is a decoded value. Its byte slices alias the buffer it was
// decoded from.
type record struct {
	flags     byte
	timestamp int64
	ttl       uint32
	// expiresAt is the local expiration time of an expiring cell, in Unix
	// seconds (uint32: no 2038 limit).
	expiresAt uint32
	// deletedAt is the local deletion time of a tombstone (Unix seconds).
	deletedAt uint32
	rawSuper  []byte
	rawName   []byte
	value     []byte
}

var errBadRecord = errors.New("corrupt record")

func (r *record) tombstone() bool { return r.flags&flagTombstone != 0 }
func (r *record) expiring() bool  { return r.flags&flagExpiring != 0 }
func (r *record) counter() bool   { return r.flags&flagCounter != 0 }

// expired reports whether an expiring cell has expired at now.
func (r *record) expired(now uint32) bool {
	return r.flags&flagExpiring != 0 && now >= r.expiresAt
}

// live reports whether the record is a cell visible at now (not a deletion,
// not expired).
func (r *record) live(now uint32) bool {
	return r.flags&flagTombstone == 0 && !r.expired(now)
}

// counterValue returns the value of a counter cell.
func (r *record) counterValue() int64 {
	if len(r.value) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(r.value))
}

// appendRecord encodes r.
func appendRecord(dst []byte, r *record) []byte {
	dst = append(dst, r.flags)
	dst = binary.BigEndian.AppendUint64(dst, uint64(r.timestamp))
	if r.flags&flagExpiring != 0 {
		dst = binary.BigEndian.AppendUint32(dst, r.ttl)
		dst = binary.BigEndian.AppendUint32(dst, r.expiresAt)
	}
	if r.flags&flagTombstone != 0 {
		dst = binary.BigEndian.AppendUint32(dst, r.deletedAt)
	}
	if r.flags&flagRawSuper != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(r.rawSuper)))
		dst = append(dst, r.rawSuper...)
	}
	if r.flags&(flagRawName|flagRawKey) != 0 {
		dst = binary.AppendUvarint(dst, uint64(len(r.rawName)))
		dst = append(dst, r.rawName...)
	}
	return append(dst, r.value...)
}

// decodeRecord decodes src into r; r's slices alias src.
func decodeRecord(src []byte, r *record) error {
	if len(src) < 9 {
		return errBadRecord
	}
	r.flags = src[0]
	r.timestamp = int64(binary.BigEndian.Uint64(src[1:9]))
	src = src[9:]
	r.ttl, r.expiresAt, r.deletedAt = 0, 0, 0
	r.rawSuper, r.rawName = nil, nil
	if r.flags&flagExpiring != 0 {
		if len(src) < 8 {
			return errBadRecord
		}
		r.ttl = binary.BigEndian.Uint32(src)
		r.expiresAt = binary.BigEndian.Uint32(src[4:])
		src = src[8:]
	}
	if r.flags&flagTombstone != 0 {
		if len(src) < 4 {
			return errBadRecord
		}
		r.deletedAt = binary.BigEndian.Uint32(src)
		src = src[4:]
	}
	var err error
	if r.flags&flagRawSuper != 0 {
		if r.rawSuper, src, err = readBytes(src); err != nil {
			return err
		}
	}
	if r.flags&(flagRawName|flagRawKey) != 0 {
		if r.rawName, src, err = readBytes(src); err != nil {
			return err
		}
	}
	r.value = src
	return nil
}

func readBytes(src []byte) (b, rest []byte, err error) {
	n, k := binary.Uvarint(src)
	if k <= 0 || uint64(len(src)-k) < n {
		return nil, nil, errBadRecord
	}
	return src[k : k+int(n)], src[k+int(n):], nil
}

// wins reports whether the incoming cell n supersedes the stored cell o,
// following Cassandra's reconciliation: the higher timestamp wins; at equal
// timestamps a deletion (or an expired cell) beats a live cell, then the
// greater value wins, then the later local expiry/deletion time.
func wins(n, o *record, now uint32) bool {
	if n.timestamp != o.timestamp {
		return n.timestamp > o.timestamp
	}
	nLive, oLive := n.live(now), o.live(now)
	if nLive != oLive {
		return !nLive
	}
	if !nLive {
		// Both dead: a tombstone beats an expired cell, then the later
		// local deletion time wins.
		if n.tombstone() != o.tombstone() {
			return n.tombstone()
		}
		return localDeletionTime(n) > localDeletionTime(o)
	}
	if n.counter() || o.counter() {
		return false
	}
	if c := bytes.Compare(n.value, o.value); c != 0 {
		return c > 0
	}
	return localDeletionTime(n) > localDeletionTime(o)
}

// localDeletionTime is when a record became (or becomes) dead.
func localDeletionTime(r *record) uint32 {
	switch {
	case r.tombstone():
		return r.deletedAt
	case r.expiring():
		return r.expiresAt
	default:
		return ^uint32(0)
	}
}
