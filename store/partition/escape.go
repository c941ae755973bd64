package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Variable-length parts of a row prefix (row keys, and the tokens of
// OrderPreservingPartitioner) are written escaped, so that the encoding is
// prefix-free and sorts exactly as the raw bytes do (unsigned, a prefix
// first). Every raw byte becomes one codeword and the end of the value is
// a codeword of its own:
//
//	end   -> 0x00 0x01
//	0x00  -> 0x00 0xFF
//	0x01 .. 0xFE -> itself
//	0xFF  -> 0xFF 0x00
//
// The codewords are prefix-free and ordered like what they stand for
// (end < 0x00 < 0x01 < ... < 0xFF), so bytes.Compare on two escaped values
// orders them as bytes.Compare on the raw values. Escaping 0xFF as well as
// 0x00 buys one more property that token bounds rely on: an escaped value
// never starts with 0xFF 0xFF, so "prefix + 0xFF 0xFF" sorts after every
// escaped value written after that prefix (see appendAfterAll).
const (
	escapeLow     = 0x00 // first byte of the end codeword and of 0x00's
	escapedLow    = 0xFF // second byte of 0x00's codeword
	escapeHigh    = 0xFF // first byte of 0xFF's codeword
	escapedHigh   = 0x00 // second byte of 0xFF's codeword
	terminatorEnd = 0x01 // second byte of the end codeword
)

// ErrMalformedRowKey is wrapped by every error DecodeRowKey returns.
var ErrMalformedRowKey = errors.New("malformed row key")

// appendEscaped appends the escaped form of b, end codeword included.
func appendEscaped(dst, b []byte) []byte {
	dst = slices.Grow(dst, len(b)+2)
	for len(b) > 0 {
		i := indexEscapable(b)
		if i < 0 {
			dst = append(dst, b...)
			break
		}
		dst = append(dst, b[:i]...)
		dst = appendEscapedByte(dst, b[i])
		b = b[i+1:]
	}
	return appendEnd(dst)
}

// appendEscapedByte appends the codeword of one raw byte.
func appendEscapedByte(dst []byte, c byte) []byte {
	switch c {
	case 0x00:
		return append(dst, escapeLow, escapedLow)
	case 0xFF:
		return append(dst, escapeHigh, escapedHigh)
	default:
		return append(dst, c)
	}
}

// appendEnd appends the end codeword.
func appendEnd(dst []byte) []byte { return append(dst, escapeLow, terminatorEnd) }

// appendAfterAll appends 0xFF 0xFF, which sorts after every escaped value.
func appendAfterAll(dst []byte) []byte { return append(dst, 0xFF, 0xFF) }

// indexEscapable returns the index of the first 0x00 or 0xFF in b, or -1.
// It tests eight bytes at a time: hasZeroByte flags the zero bytes of a
// word and, applied to the complement, its 0xFF bytes. A flag can be
// spurious only above a genuine one, so the lowest flag is exact.
func indexEscapable(b []byte) int {
	i := 0
	for ; len(b)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := hasZeroByte(w) | hasZeroByte(^w); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == 0x00 || c == 0xFF {
			return i
		}
	}
	return -1
}

// hasZeroByte sets the top bit of the lowest zero byte of w (and maybe of
// bytes above it); it is zero iff w has no zero byte.
func hasZeroByte(w uint64) uint64 {
	const lows, highs = 0x0101010101010101, 0x8080808080808080
	return (w - lows) &^ w & highs
}

// decodeEscaped reads one escaped value from the start of src, appends the
// raw bytes to dst and returns them with what follows the end codeword.
// Only the canonical encoding is accepted.
func decodeEscaped(dst, src []byte) (value, rest []byte, err error) {
	for i := 0; ; {
		j := indexEscapable(src[i:])
		if j < 0 {
			return dst, nil, fmt.Errorf("escaped value has no end marker: %w", ErrMalformedRowKey)
		}
		dst = append(dst, src[i:i+j]...)
		i += j
		if i+1 >= len(src) {
			return dst, nil, fmt.Errorf("escaped value truncated at byte %d: %w", i, ErrMalformedRowKey)
		}
		switch c, next := src[i], src[i+1]; {
		case c == escapeLow && next == terminatorEnd:
			return dst, src[i+2:], nil
		case c == escapeLow && next == escapedLow:
			dst = append(dst, 0x00)
		case c == escapeHigh && next == escapedHigh:
			dst = append(dst, 0xFF)
		default:
			return dst, nil, fmt.Errorf("invalid escape %02x %02x at byte %d: %w", c, next, i, ErrMalformedRowKey)
		}
		i += 2
	}
}

// skipEscaped returns what follows the escaped value at the start of src.
func skipEscaped(src []byte) (rest []byte, err error) {
	for i := 0; ; {
		j := indexEscapable(src[i:])
		if j < 0 {
			return nil, fmt.Errorf("escaped value has no end marker: %w", ErrMalformedRowKey)
		}
		i += j
		if i+1 >= len(src) {
			return nil, fmt.Errorf("escaped value truncated at byte %d: %w", i, ErrMalformedRowKey)
		}
		switch c, next := src[i], src[i+1]; {
		case c == escapeLow && next == terminatorEnd:
			return src[i+2:], nil
		case c == escapeLow && next == escapedLow, c == escapeHigh && next == escapedHigh:
			i += 2
		default:
			return nil, fmt.Errorf("invalid escape %02x %02x at byte %d: %w", c, next, i, ErrMalformedRowKey)
		}
	}
}
