package partition

import (
	"bytes"
	"encoding/hex"
)

const byteOrderedShort = "ByteOrderedPartitioner"

// ByteOrderedPartitioner orders rows by their key bytes: the token of a key
// is the key itself, shown as lowercase hex; the minimum token is empty.
//
// A Token is the key bytes. The row prefix is the escaped key alone, since
// it carries the token already.
type ByteOrderedPartitioner struct{}

var _ Partitioner = ByteOrderedPartitioner{}

// Name implements Partitioner.
func (ByteOrderedPartitioner) Name() string { return classPrefix + byteOrderedShort }

// Ordered implements Partitioner.
func (ByteOrderedPartitioner) Ordered() bool { return true }

// Token implements Partitioner; the Token is a copy of key.
func (ByteOrderedPartitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Token{}
	}
	return Token(bytes.Clone(key))
}

// MinToken implements Partitioner.
func (ByteOrderedPartitioner) MinToken() Token { return Token{} }

// FormatToken implements Partitioner: lowercase hex.
func (ByteOrderedPartitioner) FormatToken(t Token) string { return hex.EncodeToString(t) }

// ParseToken implements Partitioner. It accepts hex digits of either case
// in pairs. (Cassandra pads an odd-length string with a leading zero; an
// odd length is refused here, as it cannot come from FormatToken.)
func (ByteOrderedPartitioner) ParseToken(s string) (Token, error) {
	if len(s)%2 != 0 {
		return nil, invalidTokenError(byteOrderedShort, s, "expected an even number of hex digits")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, invalidTokenError(byteOrderedShort, s, "expected hex digits only")
	}
	return Token(b), nil
}

// AppendRowKey implements Partitioner.
func (ByteOrderedPartitioner) AppendRowKey(dst, key []byte) []byte {
	return appendEscaped(dst, key)
}

// DecodeRowKey implements Partitioner.
func (ByteOrderedPartitioner) DecodeRowKey(dst, src []byte) (key, rest []byte, err error) {
	key, rest, err = decodeEscaped(dst, src)
	if err != nil {
		return key, nil, rowKeyError(byteOrderedShort, err)
	}
	return key, rest, nil
}

// AppendTokenBound implements Partitioner.
func (ByteOrderedPartitioner) AppendTokenBound(dst []byte, t Token, inclusive bool) []byte {
	return appendEscapedBound(dst, t, inclusive)
}

// Midpoint implements Partitioner as ByteOrderedPartitioner.midpoint does.
func (ByteOrderedPartitioner) Midpoint(left, right Token) Token {
	return unitMidpoint(left, right, 1)
}
