package partition

import (
	"encoding/binary"
	"math"
	"math/big"
	"slices"
	"strconv"
)

const (
	murmur3Short    = "Murmur3Partitioner"
	murmur3TokenLen = 8
	signBit         = 1 << 63
)

// Murmur3Partitioner is Cassandra's default partitioner: the token of a key
// is h1 of Cassandra's MurmurHash3 x64_128 (seed 0, tail bytes
// sign-extended), a signed 64-bit integer. Long.MIN_VALUE is the minimum
// token and belongs to no key: a key hashing to it gets Long.MAX_VALUE.
//
// A Token is the value as 8 big-endian bytes with the sign bit flipped;
// the minimum token is the empty Token. The row prefix is those 8 bytes
// followed by the escaped key (8 zero bytes for the empty key, which
// Cassandra refuses anyway).
type Murmur3Partitioner struct{}

var _ Partitioner = Murmur3Partitioner{}

// Name implements Partitioner.
func (Murmur3Partitioner) Name() string { return classPrefix + murmur3Short }

// Ordered implements Partitioner.
func (Murmur3Partitioner) Ordered() bool { return false }

// LongToken returns the token of key as Cassandra's LongToken holds it,
// without allocating: math.MinInt64 for the empty key, never for another.
func (Murmur3Partitioner) LongToken(key []byte) int64 {
	if len(key) == 0 {
		return math.MinInt64
	}
	h := int64(cassandraMurmur3(key))
	if h == math.MinInt64 {
		return math.MaxInt64
	}
	return h
}

// Token implements Partitioner.
func (p Murmur3Partitioner) Token(key []byte) Token { return murmur3Token(p.LongToken(key)) }

// MinToken implements Partitioner.
func (Murmur3Partitioner) MinToken() Token { return Token{} }

// FormatToken implements Partitioner: a signed decimal.
func (Murmur3Partitioner) FormatToken(t Token) string {
	v, ok := murmur3Value(t)
	if !ok {
		return malformedToken(murmur3Short, t)
	}
	return strconv.FormatInt(v, 10)
}

// ParseToken implements Partitioner. It accepts what Java's Long.parseLong
// accepts, restricted to ASCII digits.
func (Murmur3Partitioner) ParseToken(s string) (Token, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, invalidTokenError(murmur3Short, s, "expected a signed 64-bit decimal integer")
	}
	return murmur3Token(v), nil
}

// AppendRowKey implements Partitioner.
func (p Murmur3Partitioner) AppendRowKey(dst, key []byte) []byte {
	dst = slices.Grow(dst, murmur3TokenLen+len(key)+2)
	dst = binary.BigEndian.AppendUint64(dst, uint64(p.LongToken(key))^signBit)
	return appendEscaped(dst, key)
}

// DecodeRowKey implements Partitioner.
func (Murmur3Partitioner) DecodeRowKey(dst, src []byte) (key, rest []byte, err error) {
	return decodeFixedWidthRowKey(murmur3Short, murmur3TokenLen, dst, src)
}

// AppendTokenBound implements Partitioner.
func (Murmur3Partitioner) AppendTokenBound(dst []byte, t Token, inclusive bool) []byte {
	return appendFixedWidthBound(dst, t, inclusive)
}

// Midpoint implements Partitioner as Murmur3Partitioner.midpoint does.
// Malformed tokens count as the minimum.
func (Murmur3Partitioner) Midpoint(left, right Token) Token {
	l, _ := murmur3Value(left)
	r, _ := murmur3Value(right)
	lb, rb := big.NewInt(l), big.NewInt(r)
	mid := new(big.Int)
	if lb.Cmp(rb) < 0 {
		mid.Add(lb, rb)
		mid.Rsh(mid, 1)
	} else {
		maxToken, minToken := big.NewInt(math.MaxInt64), big.NewInt(math.MinInt64)
		mid.Sub(maxToken, minToken)
		mid.Add(mid, lb)
		mid.Add(mid, rb)
		mid.Rsh(mid, 1)
		if mid.Cmp(maxToken) > 0 {
			mid.Sub(mid, maxToken)
			mid.Add(mid, minToken)
		}
	}
	return murmur3Token(mid.Int64())
}

// murmur3Token encodes a token value.
func murmur3Token(v int64) Token {
	if v == math.MinInt64 {
		return Token{}
	}
	return binary.BigEndian.AppendUint64(make(Token, 0, murmur3TokenLen), uint64(v)^signBit)
}

// murmur3Value decodes a Token; ok is false if it is malformed.
func murmur3Value(t Token) (v int64, ok bool) {
	switch len(t) {
	case 0:
		return math.MinInt64, true
	case murmur3TokenLen:
		return int64(binary.BigEndian.Uint64(t) ^ signBit), true
	}
	return math.MinInt64, false
}

// decodeFixedWidthRowKey decodes a row prefix made of a token of width
// bytes and the escaped key.
func decodeFixedWidthRowKey(partitioner string, width int, dst, src []byte) (key, rest []byte, err error) {
	if len(src) < width {
		return dst, nil, rowKeyError(partitioner, errShortToken(len(src), width))
	}
	key, rest, err = decodeEscaped(dst, src[width:])
	if err != nil {
		return key, nil, rowKeyError(partitioner, err)
	}
	return key, rest, nil
}
