package partition

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

var allPartitioners = []Partitioner{
	Murmur3Partitioner{},
	RandomPartitioner{},
	ByteOrderedPartitioner{},
	OrderPreservingPartitioner{},
}

// compareRows orders two rows as Cassandra's DecoratedKey does.
func compareRows(p Partitioner, a, b []byte) int {
	if c := bytes.Compare(p.Token(a), p.Token(b)); c != 0 {
		return c
	}
	return bytes.Compare(a, b)
}

// checkRowKeyOrder checks that sorting keys by their row prefixes gives
// the (token, key) order, and that every prefix decodes back to its key.
func checkRowKeyOrder(t *testing.T, p Partitioner, keys [][]byte) {
	t.Helper()
	byRow := slices.Clone(keys)
	slices.SortFunc(byRow, func(a, b []byte) int {
		return bytes.Compare(p.AppendRowKey(nil, a), p.AppendRowKey(nil, b))
	})
	byToken := slices.Clone(keys)
	slices.SortFunc(byToken, func(a, b []byte) int { return compareRows(p, a, b) })
	for i := range byRow {
		if !bytes.Equal(byRow[i], byToken[i]) {
			t.Fatalf("%s: position %d: row-prefix order has key %x, (token, key) order has %x",
				p.Name(), i, byRow[i], byToken[i])
		}
	}
	for _, k := range keys {
		checkDecode(t, p, k, []byte("trailer\x00\xff"))
	}
}

// checkDecode checks that AppendRowKey's output decodes to key and
// leaves what follows untouched.
func checkDecode(t testing.TB, p Partitioner, key, trailer []byte) {
	t.Helper()
	prefix := []byte("dst:")
	enc := p.AppendRowKey(slices.Clone(prefix), key)
	if !bytes.HasPrefix(enc, prefix) {
		t.Fatalf("%s: AppendRowKey overwrote dst", p.Name())
	}
	enc = append(enc[len(prefix):], trailer...)
	got, rest, err := p.DecodeRowKey([]byte("out:"), enc)
	if err != nil {
		t.Fatalf("%s: DecodeRowKey(AppendRowKey(%x)): %v", p.Name(), key, err)
	}
	if !bytes.Equal(got, append([]byte("out:"), key...)) || !bytes.Equal(rest, trailer) {
		t.Fatalf("%s: DecodeRowKey(AppendRowKey(%x)) = %q, rest %q", p.Name(), key, got, rest)
	}
}

// edgeKeys are keys that stress the escaping, the tails of the hash and
// UTF-8 handling.
func edgeKeys() [][]byte {
	keys := [][]byte{
		{0x00}, {0x00, 0x00}, {0x00, 0x01}, {0x00, 0xff}, {0x01}, {0xfe}, {0xff},
		{0xff, 0x00}, {0xff, 0xff}, {0xff, 0xff, 0xff}, []byte("a"), []byte("a\x00"),
		[]byte("a\xff"), []byte("ab"), []byte("b"), []byte("é"), []byte("\uffff"),
		[]byte("\U00010000"), []byte("\U0010ffff"), []byte("\xed\xa0\x80"),
		[]byte("\xc0\x80"), []byte("61"), {0x61}, []byte("\x00a"), []byte("zz"),
		bytes.Repeat([]byte{0xff}, 17), bytes.Repeat([]byte{0x80}, 31),
	}
	for n := 1; n <= 33; n++ {
		keys = append(keys, bytes.Repeat([]byte{0xab}, n))
	}
	return keys
}

// randomKey returns a key of 1..maxLen bytes drawn to hit the escaped
// bytes often.
func randomKey(r *rand.Rand, maxLen int) []byte {
	k := make([]byte, 1+r.IntN(maxLen))
	for i := range k {
		switch r.IntN(6) {
		case 0:
			k[i] = 0x00
		case 1:
			k[i] = 0xff
		case 2:
			k[i] = byte('a' + r.IntN(3))
		default:
			k[i] = byte(r.Uint32())
		}
	}
	return k
}

func TestRowKeyOrderRandomKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := edgeKeys()
	for range 2000 {
		keys = append(keys, randomKey(r, 40))
	}
	for _, p := range allPartitioners {
		t.Run(p.Name(), func(t *testing.T) { checkRowKeyOrder(t, p, keys) })
	}
}

func TestEmptyKeyIsMinimum(t *testing.T) {
	for _, p := range allPartitioners {
		if tok := p.Token(nil); len(tok) != 0 || !bytes.Equal(tok, p.MinToken()) {
			t.Errorf("%s: Token(empty) = %x, want the minimum token", p.Name(), tok)
		}
		empty := p.AppendRowKey(nil, nil)
		for _, k := range edgeKeys() {
			if bytes.Compare(empty, p.AppendRowKey(nil, k)) >= 0 {
				t.Errorf("%s: the empty key's row prefix does not sort before %x", p.Name(), k)
			}
		}
		checkDecode(t, p, nil, []byte{0xff})
	}
}

func TestFormatParseRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, p := range allPartitioners {
		tokens := []Token{p.MinToken()}
		for _, k := range edgeKeys() {
			tokens = append(tokens, p.Token(k))
		}
		for range 500 {
			tokens = append(tokens, p.Token(randomKey(r, 40)))
		}
		for _, tok := range tokens {
			s := p.FormatToken(tok)
			back, err := p.ParseToken(s)
			if err != nil || !bytes.Equal(back, tok) {
				t.Errorf("%s: ParseToken(FormatToken(%x) = %q) = %x, %v", p.Name(), tok, s, back, err)
			}
		}
	}
}

func TestParseTokenErrors(t *testing.T) {
	cases := []struct {
		p     Partitioner
		input string
	}{
		{Murmur3Partitioner{}, "abc"},
		{Murmur3Partitioner{}, ""},
		{Murmur3Partitioner{}, "9223372036854775808"},
		{Murmur3Partitioner{}, "1.5"},
		{RandomPartitioner{}, "abc"},
		{RandomPartitioner{}, "-2"},
		{RandomPartitioner{}, "170141183460469231731687303715884105729"}, // 2**127 + 1
		{RandomPartitioner{}, ""},
		{ByteOrderedPartitioner{}, "abc"},
		{ByteOrderedPartitioner{}, "zz"},
	}
	for _, c := range cases {
		_, err := c.p.ParseToken(c.input)
		if err == nil {
			t.Errorf("%s: ParseToken(%q) succeeded", c.p.Name(), c.input)
			continue
		}
		if !errors.Is(err, ErrInvalidToken) || !bytes.Contains([]byte(err.Error()), []byte(c.input)) {
			t.Errorf("%s: ParseToken(%q) error %q does not wrap ErrInvalidToken and quote the input", c.p.Name(), c.input, err)
		}
	}
	for _, s := range []string{"170141183460469231731687303715884105728", "0", "-1", "+5"} {
		if _, err := (RandomPartitioner{}).ParseToken(s); err != nil {
			t.Errorf("RandomPartitioner: ParseToken(%q): %v", s, err)
		}
	}
	if tok, err := (ByteOrderedPartitioner{}).ParseToken("ABcd"); err != nil || !bytes.Equal(tok, []byte{0xab, 0xcd}) {
		t.Errorf("ByteOrderedPartitioner: ParseToken(ABcd) = %x, %v", tok, err)
	}
	if tok, err := (Murmur3Partitioner{}).ParseToken("-9223372036854775808"); err != nil || len(tok) != 0 {
		t.Errorf("Murmur3Partitioner: ParseToken(Long.MIN_VALUE) = %x, %v; want the minimum token", tok, err)
	}
}

func TestDecodeRowKeyRejectsGarbage(t *testing.T) {
	garbage := [][]byte{
		nil, {0x00}, {0x00, 0x02}, {0xff, 0x01}, {'a', 'b'}, {0x00, 0xff},
		bytes.Repeat([]byte{1}, 7), bytes.Repeat([]byte{1}, 16),
	}
	for _, p := range allPartitioners {
		for _, g := range garbage {
			if _, _, err := p.DecodeRowKey(nil, g); err == nil {
				t.Errorf("%s: DecodeRowKey(%x) succeeded", p.Name(), g)
			} else if !errors.Is(err, ErrMalformedRowKey) {
				t.Errorf("%s: DecodeRowKey(%x): %v does not wrap ErrMalformedRowKey", p.Name(), g, err)
			}
		}
	}
}

func TestMurmur3Normalisation(t *testing.T) {
	p := Murmur3Partitioner{}
	if got := p.FormatToken(murmur3Token(math.MaxInt64)); got != "9223372036854775807" {
		t.Errorf("max token formats as %s", got)
	}
	if tok := murmur3Token(math.MinInt64); len(tok) != 0 {
		t.Errorf("Long.MIN_VALUE encodes as %x, want the empty (minimum) token", tok)
	}
	// The tail quirk: a single byte 0x80 hashes differently when it is
	// read as the signed byte -128.
	if got := cassandraMurmur3([]byte{0x80}); got == standardMurmur3Tail1(0x80) {
		t.Errorf("tail byte 0x80 was not sign-extended")
	}
	if got := cassandraMurmur3([]byte{0x7f}); got != standardMurmur3Tail1(0x7f) {
		t.Errorf("tail byte 0x7f hashed differently from the reference algorithm")
	}
}

// standardMurmur3Tail1 is h1 of the reference MurmurHash3 x64_128 for a
// one-byte key (unsigned tail).
func standardMurmur3Tail1(b byte) uint64 {
	var h1, h2 uint64
	h1 ^= mixK1(uint64(b))
	h1 ^= 1
	h2 ^= 1
	h1 += h2
	h2 += h1
	h1 = fmix64(h1)
	h2 = fmix64(h2)
	return h1 + h2
}

func TestOrderPreservingTokens(t *testing.T) {
	p := OrderPreservingPartitioner{}
	cases := []struct {
		key       string
		formatted string
	}{
		{"abc", "abc"},
		{"é\U0001F600", "é\U0001F600"},
		{"\xff\x00a", "ff0061"},                // not UTF-8: hex of the bytes
		{"\xed\xa0\x80", "eda080"},             // an encoded surrogate is not UTF-8 for Java either
		{"\xc0\x80", "c080"},                   // nor is an overlong NUL
		{"\xf4\x90\x80\x80", "f4908080"},       // nor a code point above U+10FFFF
		{"\xef\xbf\xbe", "\ufffe"},             // a noncharacter is valid UTF-8
		{"caf\xc3", "636166c3"},                // truncated sequence
		{"\x00", "\x00"},                       // NUL is a character
		{"\U0010ffff", "\U0010ffff"},           // largest code point
		{"\u0800\u07ff", "\u0800\u07ff"},       // two- and three-byte forms
		{"\U00010000", "\U00010000"},           // first supplementary code point
		{"a\U00010000b", "a\U00010000b"},       // mixed
		{"\xe2\x82", "e282"},                   // truncated three-byte form
		{"\x80", "80"},                         // lone continuation byte
		{"\xf0\x9f\x98", "f09f98"},             // truncated four-byte form
		{"ok\xfe", "6f6bfe"},                   // byte never valid in UTF-8
		{"\xf8\x88\x80\x80\x80", "f888808080"}, // five-byte form
	}
	for _, c := range cases {
		if got := p.FormatToken(p.Token([]byte(c.key))); got != c.formatted {
			t.Errorf("token of %x formats as %q, want %q", c.key, got, c.formatted)
		}
	}
	// Java's String.compareTo compares UTF-16 code units: U+10000 (D800 DC00)
	// sorts before U+FFFF, and U+FFFF after U+E000.
	order := []string{"", "\x00", "A", "a", "\u00e9", "\ud7ff", "\U00010000", "\U0010ffff", "\ue000", "\uffff"}
	for i := 1; i < len(order); i++ {
		a, b := p.Token([]byte(order[i-1])), p.Token([]byte(order[i]))
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("token of %q does not sort before token of %q", order[i-1], order[i])
		}
	}
	// An invalid key and a valid key can share a token; the key bytes
	// then order the rows.
	invalid, valid := []byte{0x61}, []byte("61")
	if !bytes.Equal(p.Token([]byte{0x61, 0xff}), p.Token([]byte("61ff"))) {
		t.Errorf("hex token of an invalid key differs from the equal string token")
	}
	checkRowKeyOrder(t, p, [][]byte{{0x61, 0xff}, []byte("61ff"), invalid, valid, []byte("61fe"), {0x61, 0xfe}})
}

func TestOrderPreservingFormatLoneSurrogate(t *testing.T) {
	p := OrderPreservingPartitioner{}
	lone := Token{0x00, 'a', 0xd8, 0x00, 0x00, 'b', 0xdc, 0x00}
	if got := p.FormatToken(lone); got != "a?b?" {
		t.Errorf("FormatToken with lone surrogates = %q, want %q", got, "a?b?")
	}
}

func TestByName(t *testing.T) {
	for _, p := range allPartitioners {
		short := p.Name()[len(classPrefix):]
		for _, name := range []string{short, p.Name()} {
			got, err := ByName(name)
			if err != nil || got.Name() != p.Name() {
				t.Errorf("ByName(%q) = %v, %v", name, got, err)
			}
		}
	}
	for _, bad := range []string{"", "murmur3partitioner", "LocalPartitioner", "dht.Murmur3Partitioner", "org.apache.cassandra.dht."} {
		if _, err := ByName(bad); err == nil {
			t.Errorf("ByName(%q) succeeded", bad)
		}
	}
}

func TestOrdered(t *testing.T) {
	want := map[string]bool{
		"org.apache.cassandra.dht.Murmur3Partitioner":         false,
		"org.apache.cassandra.dht.RandomPartitioner":          false,
		"org.apache.cassandra.dht.ByteOrderedPartitioner":     true,
		"org.apache.cassandra.dht.OrderPreservingPartitioner": true,
	}
	for _, p := range allPartitioners {
		if p.Ordered() != want[p.Name()] {
			t.Errorf("%s: Ordered() = %v", p.Name(), p.Ordered())
		}
	}
}
