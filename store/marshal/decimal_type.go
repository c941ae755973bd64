package marshal

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// DecimalType is Cassandra's DecimalType: a 4-byte signed scale followed by
// a two's-complement unscaled integer; the value is unscaled × 10^-scale and
// values compare numerically (1, 1.0 and 1.00 are equal). Cassandra accepts
// a 4-byte value with no unscaled bytes; it is read here as zero.
type DecimalType struct{}

func (DecimalType) Name() string      { return marshalPackage + "DecimalType" }
func (DecimalType) className() string { return "DecimalType" }
func (DecimalType) Validate(b []byte) error {
	if len(b) != 0 && len(b) < 4 {
		return invalidf("Expected 0 or at least 4 bytes (%d)", len(b))
	}
	return nil
}

// decimalParts splits a decimal into its scale and minimal unscaled bytes.
func decimalParts(b []byte) (scale int32, unscaled []byte) {
	scale = int32(be32(b))
	if len(b) > 4 {
		unscaled = minimalVarint(b[4:])
	}
	if len(unscaled) == 0 {
		unscaled = []byte{0}
	}
	return scale, unscaled
}

// varintSign returns -1, 0 or 1 for a minimal two's-complement integer.
func varintSign(m []byte) int {
	switch {
	case m[0] >= 0x80:
		return -1
	case len(m) == 1 && m[0] == 0:
		return 0
	}
	return 1
}

func (DecimalType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	sa, ua := decimalParts(a)
	sb, ub := decimalParts(b)
	signA, signB := varintSign(ua), varintSign(ub)
	switch {
	case signA != signB:
		return signA - signB
	case signA == 0:
		return 0
	}
	return signA * compareDecimalMagnitudes(sa, ua, sb, ub)
}

// compareDecimalMagnitudes compares |ua|×10^-sa with |ub|×10^-sb.
func compareDecimalMagnitudes(sa int32, ua []byte, sb int32, ub []byte) int {
	if len(ua) <= 8 && len(ub) <= 8 {
		ma, mb := varintMagnitude64(ua), varintMagnitude64(ub)
		if d := int64(sa) - int64(sb); d >= 0 {
			return compareScaled(ma, mb, d)
		} else {
			return -compareScaled(mb, ma, -d)
		}
	}
	ma := new(big.Int).Abs(varintToBig(ua))
	mb := new(big.Int).Abs(varintToBig(ub))
	// log10 of each value lies in [(bits-1)·log10(2), bits·log10(2)) - scale;
	// when those ranges are more than one apart the order is known.
	const log10of2 = 0.30102999566398120
	loA := float64(ma.BitLen()-1)*log10of2 - float64(sa)
	hiA := float64(ma.BitLen())*log10of2 - float64(sa)
	loB := float64(mb.BitLen()-1)*log10of2 - float64(sb)
	hiB := float64(mb.BitLen())*log10of2 - float64(sb)
	switch {
	case hiA+1 < loB:
		return -1
	case hiB+1 < loA:
		return 1
	}
	// The exponents differ by little: scale one side exactly.
	d := int64(sa) - int64(sb)
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(absInt64(d)), nil)
	if d >= 0 {
		return ma.Cmp(p.Mul(p, mb))
	}
	return p.Mul(p, ma).Cmp(mb)
}

// compareScaled compares a with b×10^k (k >= 0) without overflow.
func compareScaled(a, b uint64, k int64) int {
	if k == 0 || b == 0 {
		return compareUint64(a, b)
	}
	if k >= int64(len(pow10)) {
		return -1 // b×10^k >= 10^20 > any uint64
	}
	hi, lo := bits.Mul64(b, pow10[k])
	if hi != 0 {
		return -1
	}
	return compareUint64(a, lo)
}

var pow10 = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// varintMagnitude64 is |v| for a two's-complement integer of at most 8 bytes.
func varintMagnitude64(m []byte) uint64 {
	u := uint64(0)
	if m[0] >= 0x80 {
		u = ^uint64(0)
	}
	for _, c := range m {
		u = u<<8 | uint64(c)
	}
	if m[0] >= 0x80 {
		return -u
	}
	return u
}

func absInt64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// decimalDigits appends the decimal digits of |unscaled| ("0" for zero).
func decimalDigits(dst, unscaled []byte) []byte {
	if len(unscaled) <= 8 {
		return strconv.AppendUint(dst, varintMagnitude64(unscaled), 10)
	}
	return new(big.Int).Abs(varintToBig(unscaled)).Append(dst, 10)
}

// AppendKey appends the tag, and for a non-zero value with normalised
// digits d1 d2 ... dn (no trailing zeros) equal to 0.d1...dn × 10^E: E as
// an ordered integer, then the digits packed two per byte as nibbles 1..10
// ending with a 0 nibble. For negative values everything after the tag is
// complemented.
func (DecimalType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	scale, unscaled := decimalParts(b)
	sign := varintSign(unscaled)
	if sign == 0 {
		return append(dst, numKeyZero)
	}
	var buf [24]byte
	digits := decimalDigits(buf[:0], unscaled)
	exp := int64(len(digits)) - int64(scale)
	for digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	tag := byte(numKeyPositive)
	if sign < 0 {
		tag = numKeyNegative
	}
	dst = append(dst, tag)
	start := len(dst)
	dst = appendOrderedInt(dst, exp)
	dst = appendPackedDigits(dst, digits)
	if sign < 0 {
		complementBytes(dst[start:])
	}
	return dst
}

func appendPackedDigits(dst, digits []byte) []byte {
	dst = grow(dst, len(digits)/2+1)
	i := 0
	for ; i+1 < len(digits); i += 2 {
		dst = append(dst, (digits[i]-'0'+1)<<4|(digits[i+1]-'0'+1))
	}
	if i < len(digits) {
		return append(dst, (digits[i]-'0'+1)<<4)
	}
	return append(dst, 0)
}

// unpackDigits reads packed digits up to their terminating 0 nibble.
func (r *keyReader) unpackDigits(dst []byte) ([]byte, bool) {
	for {
		c, ok := r.byte()
		if !ok {
			return dst, false
		}
		hi, lo := c>>4, c&0xF
		switch {
		case hi == 0 && lo == 0:
			return dst, true
		case hi == 0 || hi > 10 || lo > 10:
			return dst, false
		}
		dst = append(dst, '0'+hi-1)
		if lo == 0 {
			return dst, true
		}
		dst = append(dst, '0'+lo-1)
	}
}

func (t DecimalType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	r := keyReader{src: src}
	value, err := t.decodeKey(dst, &r)
	return decoded(value, dst, src, r.src, err)
}

// maxDecimalDigits bounds the digits a key may hold: a 65535-byte unscaled
// value has fewer than 160000.
const maxDecimalDigits = 1 << 20

func (t DecimalType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	tag, ok := r.byte()
	switch {
	case !ok:
		return dst, corruptKey(t, "truncated")
	case tag == keyEmpty:
		return dst, nil
	case tag == numKeyZero:
		return append(dst, 0, 0, 0, 0, 0), nil
	case tag != numKeyNegative && tag != numKeyPositive:
		return dst, corruptKey(t, "bad tag")
	}
	neg := tag == numKeyNegative
	if neg {
		r.flip ^= 0xFF
	}
	exp, okExp := r.orderedInt()
	var buf [24]byte
	digits, okDigits := r.unpackDigits(buf[:0])
	if neg {
		r.flip ^= 0xFF
	}
	if !okExp || !okDigits || len(digits) == 0 || digits[0] == '0' || digits[len(digits)-1] == '0' {
		return dst, corruptKey(t, "bad digits")
	}
	scale := int64(len(digits)) - exp
	if scale > math.MaxInt32 {
		return dst, corruptKey(t, "scale out of range")
	}
	if scale < math.MinInt32 {
		// Keep trailing zeros in the unscaled value so the scale fits.
		pad := int64(math.MinInt32) - scale
		if pad > maxDecimalDigits {
			return dst, corruptKey(t, "scale out of range")
		}
		for ; pad > 0; pad-- {
			digits = append(digits, '0')
		}
		scale = math.MinInt32
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(int32(scale)))
	return appendDigitsVarint(dst, digits, neg), nil
}

// appendDigitsVarint appends the minimal two's complement of ±digits.
func appendDigitsVarint(dst, digits []byte, neg bool) []byte {
	if len(digits) <= 18 {
		v, _ := strconv.ParseInt(string(digits), 10, 64)
		if neg {
			v = -v
		}
		return appendInt64Varint(dst, v)
	}
	v := digitsToBig(digits)
	if neg {
		v.Neg(v)
	}
	return bigToVarint(dst, v)
}

// digitsToBig converts decimal digits by halves, so that the ~160000
// digits of the largest unscaled value do not cost a quadratic conversion.
func digitsToBig(digits []byte) *big.Int {
	if len(digits) <= 1000 {
		v, _ := new(big.Int).SetString(string(digits), 10)
		return v
	}
	low := len(digits) / 2
	hi := digitsToBig(digits[:len(digits)-low])
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(low)), nil)
	return hi.Add(hi.Mul(hi, p), digitsToBig(digits[len(digits)-low:]))
}

// appendInt64Varint appends the minimal two's complement of v.
func appendInt64Varint(dst []byte, v int64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(v))
	return append(dst, minimalVarint(buf[:])...)
}

func (DecimalType) Lossless() bool            { return false }
func (DecimalType) Normalize(b []byte) []byte { return b }
func (t DecimalType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t DecimalType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (DecimalType) CQLType() string { return "decimal" }

// String renders the value as Java's BigDecimal.toString.
func (DecimalType) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	scale, unscaled := decimalParts(b)
	var buf [24]byte
	return bigDecimalString(varintSign(unscaled) < 0, decimalDigits(buf[:0], unscaled), int64(scale))
}

// FromString parses Java's BigDecimal text forms ("1.50", "-2E+3", ".5").
func (DecimalType) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	neg, digits, scale, ok := parseBigDecimal(s)
	if !ok {
		return nil, formatErrorf(nil, "unable to make BigDecimal from '%s'", s)
	}
	dst := binary.BigEndian.AppendUint32(nil, uint32(scale))
	return appendDigitsVarint(dst, digits, neg), nil
}

func (t DecimalType) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsDecimal", b)
	}
	return t.String(b)
}
