package partition

import (
	"crypto/md5"
	"math/big"
	"slices"
)

const (
	randomShort    = "RandomPartitioner"
	randomTokenLen = md5.Size
)

// randomMaxToken is RandomPartitioner's largest token, 2**127.
var randomMaxToken = new(big.Int).Lsh(big.NewInt(1), 127)

// RandomPartitioner is Cassandra's MD5 partitioner: the token of a key is
// abs(MD5(key) read as a signed 128-bit big-endian integer), a BigInteger
// in [0, 2**127]; the minimum token is -1.
//
// A Token is the value as 16 big-endian unsigned bytes; the minimum token
// is the empty Token. The row prefix is those 16 bytes followed by the
// escaped key (16 zero bytes for the empty key, which Cassandra refuses
// anyway; it still sorts first, as its escaped key is the smallest).
type RandomPartitioner struct{}

var _ Partitioner = RandomPartitioner{}

// Name implements Partitioner.
func (RandomPartitioner) Name() string { return classPrefix + randomShort }

// Ordered implements Partitioner.
func (RandomPartitioner) Ordered() bool { return false }

// Token implements Partitioner.
func (RandomPartitioner) Token(key []byte) Token {
	if len(key) == 0 {
		return Token{}
	}
	sum := randomHash(key)
	return append(make(Token, 0, randomTokenLen), sum[:]...)
}

// randomHash returns the 16 token bytes of a non-empty key.
func randomHash(key []byte) [randomTokenLen]byte {
	sum := md5.Sum(key)
	if sum[0]&0x80 == 0 {
		return sum
	}
	// Two's complement negation; -2**127 becomes 2**127, which fits
	// because the bytes are read back unsigned.
	carry := true
	for i := len(sum) - 1; i >= 0; i-- {
		sum[i] = ^sum[i]
		if carry {
			sum[i]++
			carry = sum[i] == 0
		}
	}
	return sum
}

// MinToken implements Partitioner.
func (RandomPartitioner) MinToken() Token { return Token{} }

// FormatToken implements Partitioner: a non-negative decimal, "-1" for the
// minimum.
func (RandomPartitioner) FormatToken(t Token) string {
	switch len(t) {
	case 0:
		return "-1"
	case randomTokenLen:
		return new(big.Int).SetBytes(t).String()
	}
	return malformedToken(randomShort, t)
}

// maxRandomTokenDigits bounds the input ParseToken reads (2**127 has 39
// digits; leading zeros and a sign are allowed).
const maxRandomTokenDigits = 64

// ParseToken implements Partitioner. It accepts a decimal integer in
// [0, 2**127], or -1 for the minimum token.
func (RandomPartitioner) ParseToken(s string) (Token, error) {
	const want = "expected a decimal integer between 0 and 2**127, or -1"
	if len(s) > maxRandomTokenDigits {
		return nil, invalidTokenError(randomShort, s, want)
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, invalidTokenError(randomShort, s, want)
	}
	if v.Sign() < 0 {
		if v.IsInt64() && v.Int64() == -1 {
			return Token{}, nil
		}
		return nil, invalidTokenError(randomShort, s, want)
	}
	if v.Cmp(randomMaxToken) > 0 {
		return nil, invalidTokenError(randomShort, s, want)
	}
	return v.FillBytes(make(Token, randomTokenLen)), nil
}

// AppendRowKey implements Partitioner.
func (RandomPartitioner) AppendRowKey(dst, key []byte) []byte {
	dst = slices.Grow(dst, randomTokenLen+len(key)+2)
	if len(key) == 0 {
		var zero [randomTokenLen]byte
		dst = append(dst, zero[:]...)
	} else {
		sum := randomHash(key)
		dst = append(dst, sum[:]...)
	}
	return appendEscaped(dst, key)
}

// DecodeRowKey implements Partitioner.
func (RandomPartitioner) DecodeRowKey(dst, src []byte) (key, rest []byte, err error) {
	return decodeFixedWidthRowKey(randomShort, randomTokenLen, dst, src)
}

// AppendTokenBound implements Partitioner.
func (RandomPartitioner) AppendTokenBound(dst []byte, t Token, inclusive bool) []byte {
	return appendFixedWidthBound(dst, t, inclusive)
}

// Midpoint implements Partitioner as RandomPartitioner.midpoint does: the
// minimum token counts as zero, the ring has 2**127 values and the
// remainder is dropped. Malformed tokens count as the minimum.
func (RandomPartitioner) Midpoint(left, right Token) Token {
	mid, _ := ringMidpoint(randomValue(left), randomValue(right), 127)
	return mid.FillBytes(make(Token, randomTokenLen))
}

// randomValue is the value of a Token, zero for the minimum (as midpoint
// treats it) and for malformed tokens.
func randomValue(t Token) *big.Int {
	if len(t) != randomTokenLen {
		return new(big.Int)
	}
	return new(big.Int).SetBytes(t)
}
