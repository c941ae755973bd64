package partition

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

func TestIndexEscapable(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c == 0x00 || c == 0xFF {
				return i
			}
		}
		return -1
	}
	r := rand.New(rand.NewPCG(8, 9))
	alphabet := []byte{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, 'a'}
	for range 20000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		if got, want := indexEscapable(b), naive(b); got != want {
			t.Fatalf("indexEscapable(%x) = %d, want %d", b, got, want)
		}
	}
}

func TestEscapedOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for range 20000 {
		a, b := randomKey(r, 6), randomKey(r, 6)
		if r.IntN(4) == 0 {
			a = a[:0]
		}
		ea, eb := appendEscaped(nil, a), appendEscaped(nil, b)
		if sign(bytes.Compare(ea, eb)) != sign(bytes.Compare(a, b)) {
			t.Fatalf("escaped %x and %x compare %d; raw compare %d", a, b, bytes.Compare(ea, eb), bytes.Compare(a, b))
		}
		if bytes.HasPrefix(ea, []byte{0xff, 0xff}) {
			t.Fatalf("escaped %x starts with ff ff", a)
		}
		got, rest, err := decodeEscaped(nil, append(ea, eb...))
		if err != nil || !bytes.Equal(got, a) || !bytes.Equal(rest, eb) {
			t.Fatalf("decodeEscaped(%x): %x, %x, %v", ea, got, rest, err)
		}
	}
}
