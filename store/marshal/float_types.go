package marshal

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
)

// DoubleType is Cassandra's DoubleType: an 8-byte IEEE 754 double, ordered
// as Java's Double.compareTo: -Inf < ... < -0.0 < 0.0 < ... < +Inf < NaN,
// every NaN bit pattern equal.
type DoubleType struct{}

func (DoubleType) Name() string      { return marshalPackage + "DoubleType" }
func (DoubleType) className() string { return "DoubleType" }
func (DoubleType) Validate(b []byte) error {
	if len(b) != 8 && len(b) != 0 {
		return invalidf("Expected 8 or 0 byte value for a double (%d)", len(b))
	}
	return nil
}
func (DoubleType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return compareUint64(sortableDouble(be64(a)), sortableDouble(be64(b)))
}
func (DoubleType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	return binary.BigEndian.AppendUint64(append(dst, keyPresent), sortableDouble(be64(b)))
}
func (t DoubleType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t DoubleType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	start := len(dst)
	out, err := decodeFixedKey(t, dst, r, 8, false)
	if err != nil || len(out) == start {
		return out, err
	}
	binary.BigEndian.PutUint64(out[start:], unsortableDouble(binary.BigEndian.Uint64(out[start:])))
	return out, nil
}
func (DoubleType) Lossless() bool            { return false }
func (DoubleType) Normalize(b []byte) []byte { return b }
func (t DoubleType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t DoubleType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (DoubleType) CQLType() string { return "double" }
func (DoubleType) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return javaFloatString(math.Float64frombits(be64(b)), 64)
}

// FromString parses a decimal or special ("NaN", "Infinity") double.
func (DoubleType) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	f, err := parseJavaFloat(s, 64)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make double from '%s'", s)
	}
	return binary.BigEndian.AppendUint64(nil, math.Float64bits(f)), nil
}
func (t DoubleType) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsDouble", b)
	}
	return t.String(b)
}

// FloatType is Cassandra's FloatType: a 4-byte IEEE 754 float, ordered as
// Java's Float.compareTo.
type FloatType struct{}

func (FloatType) Name() string      { return marshalPackage + "FloatType" }
func (FloatType) className() string { return "FloatType" }
func (FloatType) Validate(b []byte) error {
	if len(b) != 4 && len(b) != 0 {
		return invalidf("Expected 4 or 0 byte value for a float (%d)", len(b))
	}
	return nil
}
func (FloatType) Compare(a, b []byte) int {
	if c, done := compareEmptyFirst(a, b); done {
		return c
	}
	return compareUint64(uint64(sortableFloat(be32(a))), uint64(sortableFloat(be32(b))))
}
func (FloatType) AppendKey(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, keyEmpty)
	}
	return binary.BigEndian.AppendUint32(append(dst, keyPresent), sortableFloat(be32(b)))
}
func (t FloatType) DecodeKey(dst, src []byte) ([]byte, []byte, error) {
	return decodeWith(t, dst, src)
}
func (t FloatType) decodeKey(dst []byte, r *keyReader) ([]byte, error) {
	start := len(dst)
	out, err := decodeFixedKey(t, dst, r, 4, false)
	if err != nil || len(out) == start {
		return out, err
	}
	binary.BigEndian.PutUint32(out[start:], unsortableFloat(binary.BigEndian.Uint32(out[start:])))
	return out, nil
}
func (FloatType) Lossless() bool            { return false }
func (FloatType) Normalize(b []byte) []byte { return b }
func (t FloatType) AppendLowerBound(dst, bound []byte) []byte {
	return simpleLowerBound(t, dst, bound)
}
func (t FloatType) AppendUpperBound(dst, bound []byte) []byte {
	return simpleUpperBound(t, dst, bound)
}
func (FloatType) CQLType() string { return "float" }
func (FloatType) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return javaFloatString(float64(math.Float32frombits(be32(b))), 32)
}

// FromString parses a decimal or special ("NaN", "Infinity") float.
func (FloatType) FromString(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	f, err := parseJavaFloat(s, 32)
	if err != nil {
		return nil, formatErrorf(err, "Unable to make float from '%s'", s)
	}
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
}
func (t FloatType) CQLLiteral(b []byte) string {
	if len(b) == 0 {
		return castBlobLiteral("blobAsFloat", b)
	}
	return t.String(b)
}

// sortableDouble maps IEEE bits to an unsigned key in Java compareTo order:
// NaNs become the canonical NaN (above +Inf), negative values are inverted,
// positive ones get the sign bit set.
func sortableDouble(bits uint64) uint64 {
	if bits&0x7FF0000000000000 == 0x7FF0000000000000 && bits&0x000FFFFFFFFFFFFF != 0 {
		bits = 0x7FF8000000000000
	}
	if bits>>63 != 0 {
		return ^bits
	}
	return bits | 1<<63
}

func unsortableDouble(k uint64) uint64 {
	if k>>63 != 0 {
		return k &^ (1 << 63)
	}
	return ^k
}

func sortableFloat(bits uint32) uint32 {
	if bits&0x7F800000 == 0x7F800000 && bits&0x007FFFFF != 0 {
		bits = 0x7FC00000
	}
	if bits>>31 != 0 {
		return ^bits
	}
	return bits | 1<<31
}

func unsortableFloat(k uint32) uint32 {
	if k>>31 != 0 {
		return k &^ (1 << 31)
	}
	return ^k
}

func compareUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// FormatJavaDouble renders f as Java's Double.toString does, for texts
// that quote a value the way Cassandra's messages do.
func FormatJavaDouble(f float64) string { return javaFloatString(f, 64) }

// javaFloatString renders f as Java's Double.toString / Float.toString do
// (with the shortest digits that read back as the same value): "NaN",
// "Infinity", "-0.0", "100.0", "0.001", and outside [1e-3, 1e7) computer
// scientific notation such as "1.0E7" or "1.234E-5". The result is also a
// valid CQL floating-point literal.
func javaFloatString(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if abs := math.Abs(f); abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, bitSize)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'e', -1, bitSize)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// parseJavaFloat reads what Java's Double.parseDouble reads for ordinary
// input: decimal and exponent forms, "NaN", "Infinity" and "-Infinity",
// surrounding blanks, and a trailing type letter (f, F, d, D).
func parseJavaFloat(s string, bitSize int) (float64, error) {
	t := strings.TrimSpace(s)
	switch t {
	case "NaN", "+NaN", "-NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	if n := len(t); n > 1 && strings.ContainsRune("fFdD", rune(t[n-1])) {
		t = t[:n-1]
	}
	if t == "" || strings.ContainsAny(t, "_xXpPiInN") {
		return 0, strconv.ErrSyntax
	}
	f, err := strconv.ParseFloat(t, bitSize)
	if errors.Is(err, strconv.ErrRange) {
		return f, nil // Java rounds overflow to an infinity
	}
	return f, err
}
