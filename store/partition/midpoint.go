package partition

import "math/big"

// ringMidpoint is the midpoint of Cassandra's FBUtilities.midpoint: left
// and right are points of a ring of 2^sigbits values; when right <= left
// the range wraps around the end of the ring. It also reports whether the
// halving dropped a one bit.
func ringMidpoint(left, right *big.Int, sigbits uint) (mid *big.Int, remainder bool) {
	sum := new(big.Int)
	if left.Cmp(right) < 0 {
		sum.Add(left, right)
		remainder = sum.Bit(0) == 1
		return sum.Rsh(sum, 1), remainder
	}
	ring := new(big.Int).Lsh(big.NewInt(1), sigbits)
	sum.Add(ring, right)
	sum.Sub(sum, left)
	remainder = sum.Bit(0) == 1
	sum.Rsh(sum, 1)
	sum.Add(sum, left)
	return sum.Mod(sum, ring), remainder
}

// unitMidpoint is the midpoint of the order-preserving partitioners: both
// tokens are read as big-endian numbers of as many units (bytes for
// ByteOrderedPartitioner, UTF-16 code units for OrderPreservingPartitioner)
// as the longer one has, the shorter one padded with zero units on the
// right; a dropped one bit becomes an extra unit with its top bit set.
func unitMidpoint(left, right Token, unit int) Token {
	units := (max(len(left), len(right)) + unit - 1) / unit
	width := units * unit
	l := new(big.Int).SetBytes(padRight(left, width))
	r := new(big.Int).SetBytes(padRight(right, width))
	mid, remainder := ringMidpoint(l, r, uint(8*width))
	out := make(Token, width, width+unit)
	mid.FillBytes(out)
	if remainder {
		out = append(out, 0x80)
		for range unit - 1 {
			out = append(out, 0)
		}
	}
	return out
}

// padRight returns b extended with zero bytes to width bytes.
func padRight(b []byte, width int) []byte {
	if len(b) >= width {
		return b[:width]
	}
	out := make([]byte, width)
	copy(out, b)
	return out
}
