package marshal

import (
	"bytes"
	"math/big"
)

// IntegerType is Cassandra's IntegerType (CQL varint): a big-endian two's
// complement integer of any length. Encodings with redundant sign bytes
// (0001 and 01, ffff and ff) are the same number and compare equal.
type IntegerType struct{}

// Key tags of signed arbitrary-precision numbers (IntegerType, DecimalType):
// empty, negative, zero, positive.
const (
	numKeyNegative = 0x01
	numKeyZero     = 0x02
	numKeyPositive = 0x03
)

func (IntegerType) Name() string          { return marshalPackage + "IntegerType" }
func (IntegerType) className() string     { return "IntegerType" }
func (IntegerType) Validate([]byte) error { return nil }
func (IntegerType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return compareVarint(minimalVarint(a), minimalVarint(b))
}

// minimalVarint drops the leading bytes that only repeat the sign.
func minimalVarint(b []byte) []byte {
	for len(b) > 1 && ((b[0] == 0x00 && b[1] < 0x80) || (b[0] == 0xFF && b[1] >= 0x80)) {
		b = b[1:]
	}
	return b
}

// compareVarint compares two non-empty minimal two's-complement integers.
func compareVarint(a, b []byte) int {
	na, nb := a[0] >= 0x80, b[0] >= 0x80
	switch {
	case na != nb:
		if na {
			return -1
		}
		return 1
	case len(a) != len(b):
		// More significant bytes mean a larger magnitude.
		if (len(a) > len(b)) != na {
			return 1
		}
		return -1
	}
	return bytes.Compare(a, b)
}

// AppendKey appends the tag, then for a non-zero number the byte length of
// its minimal encoding (as an ordered integer, complemented when negative,
// since a longer negative number is smaller) and the minimal encoding.
func (IntegerType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	m := minimalVarint(b)
	switch {
	case len(m) == 1 && m[0] == 0:
		return append(dst, numKeyZero)
	case m[0] < 0x80:
		dst = appendOrderedInt(append(dst, numKeyPositive), int64(len(m)))
	default:
		dst = append(dst, numKeyNegative)
		start := len(dst)
		dst = appendOrderedInt(dst, int64(len(m)))
		complementBytes(dst[start:])
	}
	return append(dst, m...)
}
func (t IntegerType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}
func (t IntegerType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag == numKeyZero:
		return append(dst, 0), nil
	case tag != numKeyNegative && tag != numKeyPositive:
		return dst, corruptKey(t, "bad tag")
	}
	if tag == numKeyNegative {
		r.flip ^= 0xFF
	}
	n, ok := r.orderedInt()
	if tag == numKeyNegative {
		r.flip ^= 0xFF
	}
	if !ok || n < 1 || n > int64(len(r.src)) {
		return dst, corruptKey(t, "bad length")
	}
	start := len(dst)
	out, _ := r.appendRaw(dst, int(n))
	if (out[start] >= 0x80) != (tag == numKeyNegative) {
		return dst, corruptKey(t, "sign mismatch")
	}
	return out, nil
}
func (IntegerType) Lossless() bool            { return false }
func (IntegerType) Normalize(b []byte) []byte { return b }
func (t IntegerType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t IntegerType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (IntegerType) CQLType() string { return "varint" }
func (IntegerType) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return varintToBig(b).String()
}

// FromString parses a decimal integer of any size.
func (IntegerType) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || !isSignedDigits(s) {
		return nil, formatErrorf(nil, "unable to make int from '%s'", s)
	}
	return bigToVarint(nil, v), nil
}
func (t IntegerType) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsVarint", b)
	}
	return t.String(b)
}

// isSignedDigits matches [+-]?[0-9]+ (big.Int also takes underscores).
func isSignedDigits(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// varintToBig reads a two's-complement integer.
func varintToBig(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0] >= 0x80 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// bigToVarint appends the minimal two's-complement encoding of v.
func bigToVarint(dst []byte, v *big.Int) []byte {
	switch v.Sign() {
	case 0:
		return append(dst, 0)
	case 1:
		mag := v.Bytes()
		if mag[0] >= 0x80 {
			dst = append(dst, 0)
		}
		return append(dst, mag...)
	}
	// -v - 1 has the complemented bits of v's two's complement.
	w := new(big.Int).Neg(v)
	w.Sub(w, big.NewInt(1))
	mag := w.Bytes()
	start := len(dst)
	if len(mag) == 0 || mag[0] >= 0x80 {
		dst = append(dst, 0)
	}
	dst = append(dst, mag...)
	complementBytes(dst[start:])
	return dst
}
