package partition

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

const (
	orderPreservingShort = "OrderPreservingPartitioner"
	hexDigits            = "0123456789abcdef"
)

// OrderPreservingPartitioner orders rows by their key read as a string:
// the token of a key is the key decoded as UTF-8 into a Java String, and
// tokens compare as Java's String.compareTo does, by UTF-16 code units
// (so U+10000, stored as D800 DC00, sorts before U+FFFF). A key that is
// not valid UTF-8 gets the lowercase hex of its bytes as its token, as
// Cassandra's getToken does when decoding fails; such a token may equal
// another key's token, and the key bytes then order the two rows.
//
// A Token is the string as UTF-16BE code units; the minimum token is the
// empty string. The row prefix is the escaped token followed by the escaped
// key.
type OrderPreservingPartitioner struct{}

var _ Partitioner = OrderPreservingPartitioner{}

// Name implements Partitioner.
func (OrderPreservingPartitioner) Name() string { return classPrefix + orderPreservingShort }

// Ordered implements Partitioner.
func (OrderPreservingPartitioner) Ordered() bool { return true }

// Token implements Partitioner.
func (OrderPreservingPartitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Token{}
	}
	if !utf8.Valid(key) {
		t := make(Token, 0, 4*len(key))
		for _, c := range key {
			t = append(t, 0, hexDigits[c>>4], 0, hexDigits[c&0x0f])
		}
		return t
	}
	t := make(Token, 0, 2*utf16Len(key))
	for b := key; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		t = appendUTF16(t, r)
		b = b[size:]
	}
	return t
}

// utf16Len returns the number of UTF-16 code units of valid UTF-8 b.
// (The loops here decode with utf8.DecodeRune rather than ranging over
// string(b), which copies keys longer than 32 bytes.)
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		n += utf16.RuneLen(r)
		b = b[size:]
	}
	return n
}

// appendUTF16 appends r as UTF-16BE code units.
func appendUTF16(dst []byte, r rune) []byte {
	if r < 0x10000 {
		return append(dst, byte(r>>8), byte(r))
	}
	hi, lo := utf16.EncodeRune(r)
	return append(dst, byte(hi>>8), byte(hi), byte(lo>>8), byte(lo))
}

// MinToken implements Partitioner.
func (OrderPreservingPartitioner) MinToken() Token { return Token{} }

// FormatToken implements Partitioner: the string itself. A lone surrogate
// (only a Midpoint can make one) is written as '?', as Java's UTF-8
// encoder does.
func (OrderPreservingPartitioner) FormatToken(t Token) string {
	if len(t)%2 != 0 {
		return malformedToken(orderPreservingShort, t)
	}
	var sb strings.Builder
	sb.Grow(len(t) / 2)
	for i := 0; i < len(t); i += 2 {
		u := rune(t[i])<<8 | rune(t[i+1])
		if !utf16.IsSurrogate(u) {
			sb.WriteRune(u)
			continue
		}
		if u < 0xDC00 && i+3 < len(t) {
			next := rune(t[i+2])<<8 | rune(t[i+3])
			if r := utf16.DecodeRune(u, next); r != utf8.RuneError {
				sb.WriteRune(r)
				i += 2
				continue
			}
		}
		sb.WriteByte('?')
	}
	return sb.String()
}

// ParseToken implements Partitioner. Every string is a token; bytes that
// are not valid UTF-8 read as U+FFFD, as Java's Thrift string decoding
// reads them. It never fails.
func (OrderPreservingPartitioner) ParseToken(s string) (Token, error) {
	t := make(Token, 0, 2*len(s))
	for _, r := range s {
		t = appendUTF16(t, r)
	}
	return t, nil
}

// AppendRowKey implements Partitioner. It writes the token without
// building it first.
func (OrderPreservingPartitioner) AppendRowKey(dst, key []byte) []byte {
	if len(key) == 0 {
		return appendEscaped(appendEnd(dst), key)
	}
	if !utf8.Valid(key) {
		dst = slices.Grow(dst, 6*len(key)+2+len(key)+2)
		for _, c := range key {
			dst = append(dst, escapeLow, escapedLow, hexDigits[c>>4], escapeLow, escapedLow, hexDigits[c&0x0f])
		}
		return appendEscaped(appendEnd(dst), key)
	}
	dst = slices.Grow(dst, 3*len(key)+2+len(key)+2)
	var units [4]byte
	for b := key; len(b) > 0; {
		r, size := utf8.DecodeRune(b)
		for _, c := range appendUTF16(units[:0], r) {
			dst = appendEscapedByte(dst, c)
		}
		b = b[size:]
	}
	return appendEscaped(appendEnd(dst), key)
}

// DecodeRowKey implements Partitioner.
func (OrderPreservingPartitioner) DecodeRowKey(dst, src []byte) (key, rest []byte, err error) {
	afterToken, err := skipEscaped(src)
	if err != nil {
		return dst, nil, rowKeyError(orderPreservingShort, err)
	}
	key, rest, err = decodeEscaped(dst, afterToken)
	if err != nil {
		return key, nil, rowKeyError(orderPreservingShort, err)
	}
	return key, rest, nil
}

// AppendTokenBound implements Partitioner.
func (OrderPreservingPartitioner) AppendTokenBound(dst []byte, t Token, inclusive bool) []byte {
	return appendEscapedBound(dst, t, inclusive)
}

// Midpoint implements Partitioner as OrderPreservingPartitioner.midpoint
// does, on UTF-16 code units. The result may hold lone surrogates.
func (OrderPreservingPartitioner) Midpoint(left, right Token) Token {
	return unitMidpoint(left, right, 2)
}
