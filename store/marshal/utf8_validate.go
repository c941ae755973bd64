package marshal

// validUTF8 reports whether Cassandra's UTF8Type accepts b. Cassandra does
// not use a strict UTF-8 decoder but a small state machine of its own, and
// its quirks are part of what clients can store:
//
//   - c0 80 (the "modified UTF-8" NUL) is accepted, every other c0/c1 lead
//     byte is refused;
//   - ed a0..bf xx (UTF-16 surrogates) are accepted;
//   - after e0 only a second byte in 80..9f is refused: any other byte,
//     even ASCII, is taken as the second byte, the third must be 80..bf;
//   - f0..f7 lead four-byte sequences; after f0 the second byte only needs
//     one of its 0x30 bits set (any value otherwise), after f1..f7 it must
//     be 80..bf; the last two must be 80..bf;
//   - f8..ff, bare continuation bytes and truncated sequences are refused.
func validUTF8(b []byte) bool {
	const (
		start   = iota
		cont1   // one continuation byte (80..bf) left
		cont2   // two continuation bytes left
		cont3   // three continuation bytes left
		nulTail // after c0: exactly 80
		afterE0 // after e0: anything but 80..9f
		afterF0 // after f0: a byte with a 0x30 bit set
	)
	state := start
	for _, c := range b {
		switch state {
		case start:
			switch {
			case c < 0x80:
			case c < 0xc0:
				return false
			case c == 0xc0:
				state = nulTail
			case c == 0xc1:
				return false
			case c < 0xe0:
				state = cont1
			case c == 0xe0:
				state = afterE0
			case c < 0xf0:
				state = cont2
			case c == 0xf0:
				state = afterF0
			case c < 0xf8:
				state = cont3
			default:
				return false
			}
		case cont1, cont2, cont3:
			if c&0xc0 != 0x80 {
				return false
			}
			state--
		case nulTail:
			if c != 0x80 {
				return false
			}
			state = start
		case afterE0:
			if c&0xe0 == 0x80 {
				return false
			}
			state = cont1
		case afterF0:
			if c&0x30 == 0 {
				return false
			}
			state = cont2
		}
	}
	return state == start
}
