package marshal

// The ordered integer encoding maps an int64 to 1..9 bytes whose unsigned
// byte order is the numeric order (it holds decimal exponents and varint
// lengths, which are almost always small):
//
//	-64 <= v < 64   one byte 0x80+v                        (0x40..0xBF)
//	v >= 64         0xC0+(n-1), then v in n big-endian bytes (n minimal)
//	v < -64         0x3F-(n-1), then the low n bytes of v, n minimal for ^v
func appendOrderedInt(dst []byte, v int64) []byte {
	switch {
	case v >= -64 && v < 64:
		return append(dst, byte(0x80+v))
	case v >= 64:
		n := byteLen(uint64(v))
		dst = append(dst, byte(0xC0+n-1))
		return appendUintN(dst, uint64(v), n)
	default:
		n := byteLen(uint64(^v))
		dst = append(dst, byte(0x3F-(n-1)))
		return appendUintN(dst, uint64(v), n)
	}
}

// orderedInt decodes one ordered integer from r.
func (r *keyReader) orderedInt() (int64, bool) {
	p, ok := r.byte()
	if !ok {
		return 0, false
	}
	switch {
	case p >= 0x40 && p <= 0xBF:
		return int64(p) - 0x80, true
	case p >= 0xC0 && p <= 0xC7:
		n := int(p-0xC0) + 1
		u, ok := r.uintN(n)
		if !ok || int64(u) < 64 || byteLen(u) != n {
			return 0, false
		}
		return int64(u), true
	case p >= 0x38 && p <= 0x3F:
		n := int(0x3F-p) + 1
		u, ok := r.uintN(n)
		if !ok {
			return 0, false
		}
		if n < 8 {
			u |= ^uint64(0) << (8 * n)
		}
		v := int64(u)
		if v >= -64 || byteLen(uint64(^v)) != n {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// byteLen is the number of bytes needed for u (at least 1).
func byteLen(u uint64) int {
	n := 1
	for u > 0xFF {
		u >>= 8
		n++
	}
	return n
}

func appendUintN(dst []byte, u uint64, n int) []byte {
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(u>>(8*i)))
	}
	return dst
}

func (r *keyReader) uintN(n int) (uint64, bool) {
	var buf [8]byte
	if !r.fill(buf[:n]) {
		return 0, false
	}
	var u uint64
	for _, b := range buf[:n] {
		u = u<<8 | uint64(b)
	}
	return u, true
}
