package marshal

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// DoubleType is Cassandra's DoubleType: an 8-byte IEEE 754 double, ordered
// as Java's Double.compareTo: -Inf < ... < -0.0 < 0.0 < ... < +Inf < NaN,
// every NaN bit pattern equal.
type DoubleType struct{ fixed[DoubleType] }

func (DoubleType) fixedSpec() fixedSpec           { return fixedSpec{8, kindFloat, &doubleNames} }
func (DoubleType) Compare(a, b []byte) int        { return compareFloat(a, b, 8) }
func (DoubleType) AppendKey(dst, b []byte) []byte { return appendFloatKey(dst, b, 8) }

var doubleNames = fixedNames{
	name: marshalPackage + "DoubleType", class: "DoubleType",
	sizeError: "Expected 8 or 0 byte value for a double (%d)", what: "double", cqlType: "double", cast: "blobAsDouble",
}

// FloatType is Cassandra's FloatType: a 4-byte IEEE 754 float, ordered as
// Java's Float.compareTo.
type FloatType struct{ fixed[FloatType] }

func (FloatType) fixedSpec() fixedSpec           { return fixedSpec{4, kindFloat, &floatNames} }
func (FloatType) Compare(a, b []byte) int        { return compareFloat(a, b, 4) }
func (FloatType) AppendKey(dst, b []byte) []byte { return appendFloatKey(dst, b, 4) }

var floatNames = fixedNames{
	name: marshalPackage + "FloatType", class: "FloatType",
	sizeError: "Expected 4 or 0 byte value for a float (%d)", what: "float", cqlType: "float", cast: "blobAsFloat",
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
