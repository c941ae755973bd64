package marshal

import (
	"encoding/binary"
	"encoding/hex"
)

// UUIDType is Cassandra's UUIDType: 16 bytes ordered by version nibble
// first; version-1 UUIDs then by timestamp and their low 8 bytes unsigned,
// other versions by their 16 bytes unsigned.
type UUIDType struct{}

func (UUIDType) Name() string            { return marshalPackage + "UUIDType" }
func (UUIDType) className() string       { return "UUIDType" }
func (UUIDType) Validate(b []byte) error { return validateUUIDLength(b) }
func (UUIDType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	va, ka, la := uuidTypeKey(a)
	vb, kb, lb := uuidTypeKey(b)
	if va != vb {
		return int(va) - int(vb)
	}
	if c := compareUint64(ka, kb); c != 0 {
		return c
	}
	return compareUint64(la, lb)
}

// uuidTypeKey returns the version, the most significant half (with a
// version-1 UUID's timestamp fields reordered most significant first) and
// the least significant half.
func uuidTypeKey(b []byte) (version byte, hi, lo uint64) {
	msb := be64(b)
	version = byte(msb >> 12 & 0xF)
	lo = lowHalf(b)
	if version == 1 {
		return version, reorderTimestamp(msb), lo
	}
	return version, msb, lo
}

// AppendKey appends 0x01+version, then the 16 bytes with a version-1 UUID's
// timestamp fields reordered most significant first.
func (UUIDType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	version, hi, lo := uuidTypeKey(b)
	dst = append(dst, keyPresent+version)
	dst = binary.BigEndian.AppendUint64(dst, hi)
	return binary.BigEndian.AppendUint64(dst, lo)
}
func (t UUIDType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t UUIDType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag > keyPresent+15:
		return dst, corruptKey(t, "bad tag")
	}
	var buf [16]byte
	if !r.fill(buf[:]) {
		return dst, corruptKey(t, "truncated")
	}
	hi := binary.BigEndian.Uint64(buf[:8])
	if tag-keyPresent == 1 {
		hi = unreorderTimestamp(hi)
	}
	if byte(hi>>12&0xF) != tag-keyPresent {
		return dst, corruptKey(t, "version mismatch")
	}
	dst = binary.BigEndian.AppendUint64(dst, hi)
	return append(dst, buf[8:]...), nil
}
func (UUIDType) Lossless() bool            { return true }
func (UUIDType) Normalize(b []byte) []byte { return b }
func (t UUIDType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t UUIDType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (UUIDType) CQLType() string                     { return "uuid" }
func (UUIDType) String(b []byte) string              { return uuidString(b) }
func (UUIDType) FromString(s string) ([]byte, error) { return parseUUID(s) }
func (UUIDType) CQLLiteral(b []byte) string          { return uuidLiteral(b, "blobAsUuid") }

// TimeUUIDType is Cassandra's TimeUUIDType: version-1 UUIDs ordered by
// their 60-bit timestamp, then by their low 8 bytes compared one by one as
// signed bytes.
type TimeUUIDType struct{}

func (TimeUUIDType) Name() string      { return marshalPackage + "TimeUUIDType" }
func (TimeUUIDType) className() string { return "TimeUUIDType" }
func (TimeUUIDType) Validate(b []byte) error {
	if err := validateUUIDLength(b); err != nil {
		return err
	}
	if len(b) > 0 && b[6]&0xF0 != 0x10 {
		return invalid("Invalid version for TimeUUID type.")
	}
	return nil
}
func (TimeUUIDType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	ka, la := timeUUIDKey(a)
	kb, lb := timeUUIDKey(b)
	if c := compareUint64(ka, kb); c != 0 {
		return c
	}
	return compareUint64(la, lb)
}

// signedBytesFlip turns a per-byte signed comparison of 8 bytes into an
// unsigned comparison of the whole word.
const signedBytesFlip = 0x8080808080808080

func timeUUIDKey(b []byte) (hi, lo uint64) {
	return reorderTimestamp(be64(b)), lowHalf(b) ^ signedBytesFlip
}
func (TimeUUIDType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	hi, lo := timeUUIDKey(b)
	dst = binary.BigEndian.AppendUint64(append(dst, keyPresent), hi)
	return binary.BigEndian.AppendUint64(dst, lo)
}
func (t TimeUUIDType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t TimeUUIDType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	start := len(dst)
	out, err := decodeFixedKey(t, dst, r, 16)
	if err != nil || len(out) == start {
		return out, err
	}
	v := out[start:]
	binary.BigEndian.PutUint64(v, unreorderTimestamp(binary.BigEndian.Uint64(v)))
	binary.BigEndian.PutUint64(v[8:], binary.BigEndian.Uint64(v[8:])^signedBytesFlip)
	return out, nil
}
func (TimeUUIDType) Lossless() bool            { return true }
func (TimeUUIDType) Normalize(b []byte) []byte { return b }
func (t TimeUUIDType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t TimeUUIDType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (TimeUUIDType) CQLType() string        { return "timeuuid" }
func (TimeUUIDType) String(b []byte) string { return uuidString(b) }

// FromString parses a version-1 UUID in its canonical text form.
func (t TimeUUIDType) FromString(s string) ([]byte, error) {
	b, err := parseUUID(s)
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[6]&0xF0 != 0x10 {
		return nil, formatErrorf(nil, "TimeUUID supports only version 1 UUIDs")
	}
	return b, nil
}
func (TimeUUIDType) CQLLiteral(b []byte) string { return uuidLiteral(b, "blobAsTimeuuid") }

// LexicalUUIDType is Cassandra's LexicalUUIDType: 16 bytes ordered as
// java.util.UUID.compareTo, i.e. as two signed longs.
type LexicalUUIDType struct{}

func (LexicalUUIDType) Name() string            { return marshalPackage + "LexicalUUIDType" }
func (LexicalUUIDType) className() string       { return "LexicalUUIDType" }
func (LexicalUUIDType) Validate(b []byte) error { return validateUUIDLength(b) }
func (LexicalUUIDType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	if c := compareUint64(be64(a)^1<<63, be64(b)^1<<63); c != 0 {
		return c
	}
	return compareUint64(lowHalf(a)^1<<63, lowHalf(b)^1<<63)
}
func lowHalf(b []byte) uint64 {
	if len(b) > 8 {
		return be64(b[8:])
	}
	return 0
}
func (LexicalUUIDType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	dst = binary.BigEndian.AppendUint64(append(dst, keyPresent), be64(b)^1<<63)
	return binary.BigEndian.AppendUint64(dst, lowHalf(b)^1<<63)
}
func (t LexicalUUIDType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t LexicalUUIDType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	start := len(dst)
	out, err := decodeFixedKey(t, dst, r, 16)
	if err != nil || len(out) == start {
		return out, err
	}
	out[start] ^= 0x80
	out[start+8] ^= 0x80
	return out, nil
}
func (LexicalUUIDType) Lossless() bool            { return true }
func (LexicalUUIDType) Normalize(b []byte) []byte { return b }
func (t LexicalUUIDType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t LexicalUUIDType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (t LexicalUUIDType) CQLType() string                   { return quoteCQL(t.Name()) }
func (LexicalUUIDType) String(b []byte) string              { return uuidString(b) }
func (LexicalUUIDType) FromString(s string) ([]byte, error) { return parseUUID(s) }
func (LexicalUUIDType) CQLLiteral(b []byte) string          { return blobLiteral(b) }

func validateUUIDLength(b []byte) error {
	if len(b) != 16 && len(b) != 0 {
		return invalidf("UUID should be 16 or 0 bytes (%d)", len(b))
	}
	return nil
}

// reorderTimestamp moves the fields of a version-1 UUID's most significant
// half (time_low, time_mid, version+time_hi) into most-significant-first
// order: version+time_hi, time_mid, time_low.
func reorderTimestamp(msb uint64) uint64 {
	return msb<<48 | (msb<<16)&0x0000FFFF00000000 | msb>>32
}

func unreorderTimestamp(k uint64) uint64 {
	return k<<32 | (k>>16)&0x00000000FFFF0000 | k>>48
}

// uuidString renders 16 bytes in the canonical 8-4-4-4-12 form.
func uuidString(b []byte) string {
	if len(b) != 16 {
		return hex.EncodeToString(b)
	}
	var buf [36]byte
	hex.Encode(buf[0:8], b[0:4])
	buf[8] = '-'
	hex.Encode(buf[9:13], b[4:6])
	buf[13] = '-'
	hex.Encode(buf[14:18], b[6:8])
	buf[18] = '-'
	hex.Encode(buf[19:23], b[8:10])
	buf[23] = '-'
	hex.Encode(buf[24:36], b[10:16])
	return string(buf[:])
}

// parseUUID reads the canonical 8-4-4-4-12 hex form (either case).
func parseUUID(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, formatErrorf(nil, "Unable to make UUID from '%s'", s)
	}
	digits := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	b, err := hex.DecodeString(digits)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make UUID from '%s'", s)
	}
	return b, nil
}

func uuidLiteral(b []byte, castFn string) string {
	if len(b) != 16 {
		return castBlobLiteral(castFn, b)
	}
	return uuidString(b)
}
