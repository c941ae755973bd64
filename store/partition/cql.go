package partition

import (
	"encoding/binary"
	"fmt"
)

// CQLToken returns t as CQL's token() function serialises it, the form in
// which a CQL statement binds and reads tokens: a bigint for
// Murmur3Partitioner (the minimum is -2**63), a varint for
// RandomPartitioner (minimal two's complement, as Java's
// BigInteger.toByteArray; the minimum is -1), a blob for
// ByteOrderedPartitioner (the key's bytes; the minimum is empty) and text
// for OrderPreservingPartitioner. Equal tokens serialise to equal bytes.
func CQLToken(p Partitioner, t Token) ([]byte, error) {
	switch p.(type) {
	case Murmur3Partitioner:
		v, ok := murmur3Value(t)
		if !ok {
			return nil, fmt.Errorf("%s", malformedToken(murmur3Short, t))
		}
		return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
	case RandomPartitioner:
		switch len(t) {
		case 0:
			return []byte{0xFF}, nil // -1
		case randomTokenLen:
			b := []byte(t)
			for len(b) > 1 && b[0] == 0 && b[1]&0x80 == 0 {
				b = b[1:]
			}
			if b[0]&0x80 != 0 {
				// Non-negative: a sign byte goes first.
				return append([]byte{0}, b...), nil
			}
			return append([]byte(nil), b...), nil
		}
		return nil, fmt.Errorf("%s", malformedToken(randomShort, t))
	case ByteOrderedPartitioner:
		return append([]byte{}, t...), nil
	case OrderPreservingPartitioner:
		return []byte(p.FormatToken(t)), nil
	}
	return nil, fmt.Errorf("partition: no CQL form of %s tokens", p.Name())
}

// ParseCQLToken is the inverse of CQLToken: the Token of a value of CQL's
// token() function. A value that is no token of p is an error naming p.
func ParseCQLToken(p Partitioner, b []byte) (Token, error) {
	switch p.(type) {
	case Murmur3Partitioner:
		if len(b) != 8 {
			return nil, fmt.Errorf("partition: a %s token is a bigint of 8 bytes, got %d", murmur3Short, len(b))
		}
		return murmur3Token(int64(binary.BigEndian.Uint64(b))), nil
	case RandomPartitioner:
		return parseRandomVarint(b)
	case ByteOrderedPartitioner:
		return Token(append([]byte{}, b...)), nil
	case OrderPreservingPartitioner:
		return p.ParseToken(string(b))
	}
	return nil, fmt.Errorf("partition: no CQL form of %s tokens", p.Name())
}

// parseRandomVarint reads a RandomPartitioner token from a CQL varint: -1
// (the minimum) or a value in [0, 2**127].
func parseRandomVarint(b []byte) (Token, error) {
	bad := func() (Token, error) {
		return nil, fmt.Errorf("partition: varint %x is no %s token (-1 or 0 to 2**127)", b, randomShort)
	}
	switch {
	case len(b) == 0:
		return bad()
	case b[0]&0x80 != 0:
		// Negative: only -1, in any sign-extended form.
		if !allBytes(b, 0xFF) {
			return bad()
		}
		return Token{}, nil
	}
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	if len(b) > randomTokenLen || (len(b) == randomTokenLen && b[0] > 0x80) ||
		(len(b) == randomTokenLen && b[0] == 0x80 && !allBytes(b[1:], 0)) {
		return bad()
	}
	t := make(Token, randomTokenLen)
	copy(t[randomTokenLen-len(b):], b)
	return t, nil
}

// allBytes reports whether every byte of b is c.
func allBytes(b []byte, c byte) bool {
	for _, x := range b {
		if x != c {
			return false
		}
	}
	return true
}
