package marshal

import (
	"math"
	"strconv"
	"strings"
)

// bigDecimalString lays out a decimal as Java's BigDecimal.toString: plain
// notation when the scale is not negative and the adjusted exponent is at
// least -6, scientific notation ("1.23E+5", "0E-9") otherwise. coeff holds
// the digits of the unscaled magnitude without leading zeros ("0" for 0).
func bigDecimalString(neg bool, coeff []byte, scale int64) string {
	var sb strings.Builder
	if neg {
		sb.WriteByte('-')
	}
	n := int64(len(coeff))
	adjusted := -scale + n - 1
	switch {
	case scale >= 0 && adjusted >= -6:
		switch {
		case scale == 0:
			sb.Write(coeff)
		case n > scale:
			sb.Write(coeff[:n-scale])
			sb.WriteByte('.')
			sb.Write(coeff[n-scale:])
		default:
			sb.WriteString("0.")
			sb.WriteString(strings.Repeat("0", int(scale-n)))
			sb.Write(coeff)
		}
	default:
		sb.WriteByte(coeff[0])
		if n > 1 {
			sb.WriteByte('.')
			sb.Write(coeff[1:])
		}
		if adjusted != 0 {
			sb.WriteByte('E')
			if adjusted > 0 {
				sb.WriteByte('+')
			}
			sb.WriteString(strconv.FormatInt(adjusted, 10))
		}
	}
	return sb.String()
}

// parseBigDecimal reads the grammar of Java's BigDecimal(String):
// [+-] digits [. digits] or [+-] . digits, then an optional exponent
// [eE][+-]digits. It returns the sign, the digits of the unscaled value
// and the scale, which must fit an int32.
func parseBigDecimal(s string) (neg bool, digits []byte, scale int32, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	frac := int64(-1)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if frac >= 0 {
				frac++
			}
			continue
		case c == '.' && frac < 0:
			frac = 0
			continue
		}
		break
	}
	if len(digits) == 0 {
		return false, nil, 0, false
	}
	exp := int64(0)
	if i < len(s) {
		// Java reads the exponent as a long; only the resulting scale
		// must fit an int.
		e, err := strconv.ParseInt(s[i+1:], 10, 64)
		if (s[i] != 'e' && s[i] != 'E') || err != nil || !isSignedDigits(s[i+1:]) {
			return false, nil, 0, false
		}
		exp = e
	}
	if exp < math.MinInt32-int64(len(digits)) || exp > math.MaxInt32+int64(len(digits)) {
		return false, nil, 0, false
	}
	sc := max(frac, 0) - exp
	if sc < math.MinInt32 || sc > math.MaxInt32 {
		return false, nil, 0, false
	}
	return neg, digits, int32(sc), true
}
