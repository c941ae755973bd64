package marshal

import "bytes"

// The escape encoding is the key of variable-length byte-ordered values
// (BytesType, AsciiType, UTF8Type and canonical type names). Every 0x00 of
// the value becomes 0x00 0xFF and the value ends with 0x00 0x01. The result
// sorts exactly as the raw values compare (a proper prefix first, the empty
// value before everything) and no encoding is a prefix of another.
const (
	escapeMark  = 0x00
	escapeZero  = 0xFF
	escapeClose = 0x01
)

func appendEscaped(dst, b []byte) []byte {
	dst = grow(dst, len(b)+2)
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(dst, b[:i]...)
		dst = append(dst, escapeMark, escapeZero)
		b = b[i+1:]
	}
	dst = append(dst, b...)
	return append(dst, escapeMark, escapeClose)
}

// unescape decodes one escape-encoded value from r and appends it to dst.
func (r *keyReader) unescape(dst []byte) ([]byte, bool) {
	mark := escapeMark ^ r.flip
	for {
		i := bytes.IndexByte(r.src, mark)
		if i < 0 || i+1 >= len(r.src) {
			return dst, false
		}
		dst, _ = r.appendRaw(dst, i)
		switch r.src[1] ^ r.flip {
		case escapeZero:
			dst = append(dst, 0)
			r.src = r.src[2:]
		case escapeClose:
			r.src = r.src[2:]
			return dst, true
		default:
			return dst, false
		}
	}
}

// grow makes room for n more bytes in dst.
func grow(dst []byte, n int) []byte {
	if cap(dst)-len(dst) < n {
		nd := make([]byte, len(dst), len(dst)+n)
		copy(nd, dst)
		return nd
	}
	return dst
}
