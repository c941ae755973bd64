package legacy

import (
	"math"
	"strconv"
	"strings"
)

// javaDouble formats a float64 as Java's Double.toString does, for error
// texts that quote a client's value.
func javaDouble(f float64) string {
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
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	// Scientific: mantissa with at least one fractional digit, "E", exponent.
	s := strconv.FormatFloat(f, 'E', -1, 64)
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	exp = strings.TrimPrefix(exp, "+")
	if neg, ok := strings.CutPrefix(exp, "-"); ok {
		exp = "-" + strings.TrimLeft(neg, "0")
	} else {
		exp = strings.TrimLeft(exp, "0")
	}
	return mant + "E" + exp
}
