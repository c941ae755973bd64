package partition

import (
	"bytes"
	"testing"
)

func FuzzMurmur3(f *testing.F) {
	f.Add([]byte("a"), []byte("b"))
	f.Add([]byte{0xff}, []byte{0x80})
	f.Add(bytes.Repeat([]byte{0xff}, 31), []byte{})
	f.Add([]byte{0x00, 0xff}, []byte{0x00})
	p := Murmur3Partitioner{}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ta := p.Token(a)
		if !bytes.Equal(ta, p.Token(a)) || !bytes.Equal(ta, murmur3Token(p.LongToken(a))) {
			t.Fatalf("token of %x is not deterministic", a)
		}
		if (len(ta) == 0) != (len(a) == 0) {
			t.Fatalf("token of %x is %x: only the empty key has the minimum token", a, ta)
		}
		if back, err := p.ParseToken(p.FormatToken(ta)); err != nil || !bytes.Equal(back, ta) {
			t.Fatalf("token %x does not round-trip through its string: %x, %v", ta, back, err)
		}
		ra, rb := p.AppendRowKey(nil, a), p.AppendRowKey(nil, b)
		if got, want := sign(bytes.Compare(ra, rb)), sign(compareRows(p, a, b)); got != want {
			t.Fatalf("row prefixes of %x and %x compare %d, (token, key) compares %d", a, b, got, want)
		}
		checkDecode(t, p, a, b)
	})
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func FuzzDecodeRowKey(f *testing.F) {
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0, 0, 0, 0, 'k', 0, 1}, []byte("k"))
	f.Add(uint8(1), []byte{0xff, 0x00, 0x00, 0xff, 0x00, 0x01}, []byte{0xff})
	f.Add(uint8(2), []byte{0x00, 0x02}, []byte{})
	f.Add(uint8(3), []byte{0x00, 0xff, 'a', 0x00, 0x01, 'a', 0x00, 0x01}, []byte("a"))
	f.Fuzz(func(t *testing.T, which uint8, garbage, key []byte) {
		p := allPartitioners[int(which)%len(allPartitioners)]
		if k, rest, err := p.DecodeRowKey(nil, garbage); err == nil {
			if len(k) > len(garbage) || len(rest) > len(garbage) {
				t.Fatalf("%s: DecodeRowKey(%x) = %x, rest %x: longer than its input", p.Name(), garbage, k, rest)
			}
			if !bytes.HasSuffix(garbage, rest) {
				t.Fatalf("%s: DecodeRowKey(%x) rest %x is not the input's tail", p.Name(), garbage, rest)
			}
		}
		checkDecode(t, p, key, garbage)
	})
}

// checkParseToken fuzzes ParseToken of one partitioner: no panic, and a
// parsed token formats to a string that parses to the same token.
func checkParseToken(f *testing.F, p Partitioner, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := p.ParseToken(s)
		if err != nil {
			return
		}
		formatted := p.FormatToken(tok)
		back, err := p.ParseToken(formatted)
		if err != nil || !bytes.Equal(back, tok) {
			t.Fatalf("%s: %q parses to %x, which formats as %q and parses to %x, %v", p.Name(), s, tok, formatted, back, err)
		}
		// Bounds and midpoints of any parsed token must not panic.
		p.AppendTokenBound(nil, tok, true)
		p.AppendTokenBound(nil, tok, false)
		p.Midpoint(tok, p.MinToken())
		p.Midpoint(p.MinToken(), tok)
		p.Midpoint(tok, tok)
	})
}

func FuzzParseTokenMurmur3(f *testing.F) {
	checkParseToken(f, Murmur3Partitioner{}, "0", "-9223372036854775808", "9223372036854775807", "+1", "-0", "abc")
}

func FuzzParseTokenRandom(f *testing.F) {
	checkParseToken(f, RandomPartitioner{}, "-1", "0", "170141183460469231731687303715884105728", "+00012", "1e5")
}

func FuzzParseTokenByteOrdered(f *testing.F) {
	checkParseToken(f, ByteOrderedPartitioner{}, "", "00", "ff", "ABcd", "abc", "zz")
}

func FuzzParseTokenOrderPreserving(f *testing.F) {
	checkParseToken(f, OrderPreservingPartitioner{}, "", "abc", "\xff", "\U0010ffff", "\ufffd", "\x00")
}
