package marshal

import (
	"bytes"
	"encoding/binary"
)

// Fixed-width values (longs, ints, timestamps, floats, UUIDs) are keyed as a
// tag byte (keyEmpty for the empty value, keyPresent otherwise) followed by
// the value's bytes transformed so that unsigned byte order is the type's
// order.
const (
	keyEmpty   = 0x00
	keyPresent = 0x01
)

// compareSigned compares two big-endian two's-complement integers of the
// given width, the empty value first. Values of another width (never valid)
// fall back to byte order so that Compare cannot panic.
func compareSigned(a, b []byte, width int) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	if len(a) != width || len(b) != width {
		return bytes.Compare(a, b)
	}
	if a[0] != b[0] {
		return int(int8(a[0])) - int(int8(b[0]))
	}
	return bytes.Compare(a[1:], b[1:])
}

// appendFixedKey appends the key of a fixed-width value: the tag, then the
// value (padded or cut to width if it is invalid) with the top bit of its
// first byte inverted when signed, which turns two's-complement order into
// unsigned byte order.
func appendFixedKey(dst, b []byte, width int, signed bool) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	dst = append(dst, keyPresent)
	start := len(dst)
	dst = appendPadded(dst, b, width)
	if signed {
		dst[start] ^= 0x80
	}
	return dst
}

// decodeFixedKey is the inverse of appendFixedKey.
func decodeFixedKey(t Type, dst []byte, r *keyReader, width int, signed bool) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag != keyPresent:
		return dst, corruptKey(t, "bad tag")
	}
	start := len(dst)
	out, ok := r.appendRaw(dst, width)
	if !ok {
		return dst, corruptKey(t, "truncated")
	}
	if signed {
		out[start] ^= 0x80
	}
	return out, nil
}

// appendPadded appends exactly width bytes of b, zero-padded or cut.
func appendPadded(dst, b []byte, width int) []byte {
	if len(b) >= width {
		return append(dst, b[:width]...)
	}
	dst = append(dst, b...)
	for i := len(b); i < width; i++ {
		dst = append(dst, 0)
	}
	return dst
}

// be64 reads up to 8 big-endian bytes (zero-padded) as a uint64.
func be64(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint64(buf[:])
}

// be32 reads up to 4 big-endian bytes (zero-padded) as a uint32.
func be32(b []byte) uint32 {
	if len(b) >= 4 {
		return binary.BigEndian.Uint32(b)
	}
	var buf [4]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint32(buf[:])
}
