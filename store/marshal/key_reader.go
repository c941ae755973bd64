package marshal

// keyReader walks an encoded key during DecodeKey. Under a ReversedType the
// encoding of the base type is stored bitwise complemented; flip is then
// 0xFF and every byte read is complemented back before it is interpreted.
type keyReader struct {
	src  []byte
	flip byte
}

// byte returns the next (un-complemented) byte.
func (r *keyReader) byte() (byte, bool) {
	if len(r.src) == 0 {
		return 0, false
	}
	b := r.src[0] ^ r.flip
	r.src = r.src[1:]
	return b, true
}

// fill copies the next len(buf) (un-complemented) bytes into buf.
func (r *keyReader) fill(buf []byte) bool {
	if len(r.src) < len(buf) {
		return false
	}
	for i := range buf {
		buf[i] = r.src[i] ^ r.flip
	}
	r.src = r.src[len(buf):]
	return true
}

// appendRaw appends the next n (un-complemented) bytes to dst.
func (r *keyReader) appendRaw(dst []byte, n int) ([]byte, bool) {
	if n < 0 || len(r.src) < n {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, r.src[:n]...)
	if r.flip != 0 {
		complementBytes(dst[start:])
	}
	r.src = r.src[n:]
	return dst, true
}

// complementBytes inverts every bit of b in place.
func complementBytes(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// decoded returns what a DecodeKey returns after its decoder ran over src:
// the decoded value appended to dst and the unread rest of src, or dst and
// src with the error. Each type's DecodeKey calls its own decodeKey, not
// through the codec interface, so that the reader stays on the stack: a
// reader passed through an interface is allocated, once for every cell
// name a slice decodes.
func decoded(value, dst, src, rest []byte, err error) ([]byte, []byte, error) {
	if err != nil {
		return dst, src, err
	}
	return value, rest, nil
}

// decodeKeyOf runs the decoder of t, a component of a composite or the base
// of a reversed type, over r. A reader passed to a decoder through the
// codec interface is allocated, once for every cell name of a slice; the
// types of most components are called directly, and only the others get
// a copy of the reader to pass through the interface.
func decodeKeyOf(t codec, dst []byte, r *keyReader) ([]byte, error) {
	switch c := t.(type) {
	case BytesType:
		return c.decodeKey(dst, r)
	case UTF8Type:
		return c.decodeKey(dst, r)
	case AsciiType:
		return c.decodeKey(dst, r)
	case LongType:
		return c.decodeKey(dst, r)
	case Int32Type:
		return c.decodeKey(dst, r)
	case IntegerType:
		return c.decodeKey(dst, r)
	case UUIDType:
		return c.decodeKey(dst, r)
	case TimeUUIDType:
		return c.decodeKey(dst, r)
	case TimestampType:
		return c.decodeKey(dst, r)
	case BooleanType:
		return c.decodeKey(dst, r)
	case *Reversed:
		return c.decodeKey(dst, r)
	}
	other := *r
	out, err := t.decodeKey(dst, &other)
	*r = other
	return out, err
}
