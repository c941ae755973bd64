package partition

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// syntheticRow lays out the row prefix of an arbitrary (token, key) pair
// the way AppendRowKey lays out a real key, so that bounds can be tested
// on tokens no known key hashes to (the largest Murmur3 token, say).
func syntheticRow(p Partitioner, tok Token, key []byte) []byte {
	switch p.(type) {
	case Murmur3Partitioner:
		if len(tok) == 0 {
			tok = make(Token, murmur3TokenLen)
		}
		return appendEscaped(bytes.Clone(tok), key)
	case RandomPartitioner:
		if len(tok) == 0 {
			tok = make(Token, randomTokenLen)
		}
		return appendEscaped(bytes.Clone(tok), key)
	case ByteOrderedPartitioner:
		return appendEscaped(nil, key)
	case OrderPreservingPartitioner:
		return appendEscaped(appendEscaped(nil, tok), key)
	}
	panic("unknown partitioner")
}

type row struct {
	token Token
	key   []byte
}

// boundRows returns rows of p: real keys and, where the layout allows it,
// synthetic tokens at the edges of the token space.
func boundRows(p Partitioner, r *rand.Rand) []row {
	var rows []row
	keys := edgeKeys()
	for range 150 {
		keys = append(keys, randomKey(r, 12))
	}
	for _, k := range keys {
		rows = append(rows, row{p.Token(k), k})
	}
	var extra []Token
	switch p.(type) {
	case Murmur3Partitioner:
		for _, v := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MinInt64 + 1, math.MinInt64 + 2, -1, 0, 1} {
			extra = append(extra, murmur3Token(v))
		}
		for range 20 {
			extra = append(extra, murmur3Token(int64(r.Uint64()|1)))
		}
	case RandomPartitioner:
		top := randomMaxToken.FillBytes(make(Token, randomTokenLen))
		extra = append(extra, make(Token, randomTokenLen), top, bytes.Repeat([]byte{0xff}, randomTokenLen))
		for range 20 {
			t := make(Token, randomTokenLen)
			binary.BigEndian.PutUint64(t, r.Uint64()>>1)
			binary.BigEndian.PutUint64(t[8:], r.Uint64())
			extra = append(extra, t)
		}
	case OrderPreservingPartitioner:
		for _, s := range []string{"a", "a\x00", "a\U00010000", "\uffff", "\uffff\uffff", "\x00", "ab"} {
			extra = append(extra, p.Token([]byte(s)))
		}
		extra = append(extra, Token{0xff, 0xff, 0xff}, Token{0x00, 0x00, 0x00, 0x61})
	}
	for _, t := range extra {
		for _, k := range [][]byte{{0x00}, {0xff}, {0xff, 0xff, 0xff}, []byte("k"), {0x00, 0xff}} {
			rows = append(rows, row{t, k})
		}
	}
	return rows
}

// boundTokens returns the tokens to bound with: every row token and
// neighbours of it.
func boundTokens(rows []row) []Token {
	var out []Token
	for _, rw := range rows {
		t := rw.token
		out = append(out, t, append(bytes.Clone(t), 0x00), append(bytes.Clone(t), 0xff))
		if len(t) > 0 {
			out = append(out, t[:len(t)-1])
		}
	}
	return out
}

// TestAppendTokenBound checks the bound contract on every pair of bound
// token and row: a row prefix is >= the bound iff the row's token is
// >= t (inclusive) or > t (exclusive).
func TestAppendTokenBound(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range allPartitioners {
		t.Run(p.Name(), func(t *testing.T) {
			for _, k := range edgeKeys() {
				if got, want := p.AppendRowKey(nil, k), syntheticRow(p, p.Token(k), k); !bytes.Equal(got, want) {
					t.Fatalf("test layout disagrees with AppendRowKey for %x: %x vs %x", k, want, got)
				}
			}
			rows := boundRows(p, r)
			for _, bt := range boundTokens(rows) {
				if fixedWidth(p) && len(bt) != 0 && len(bt) != len(rows[0].token) {
					continue // not a token of p
				}
				incl := p.AppendTokenBound([]byte("x"), bt, true)[1:]
				excl := p.AppendTokenBound([]byte("x"), bt, false)[1:]
				for _, rw := range rows {
					prefix := syntheticRow(p, rw.token, rw.key)
					cmp := bytes.Compare(rw.token, bt)
					if got, want := bytes.Compare(prefix, incl) >= 0, cmp >= 0; got != want {
						t.Fatalf("inclusive bound of token %x: row (%x, %x) >= bound is %v, token >= t is %v",
							bt, rw.token, rw.key, got, want)
					}
					if len(bt) == 0 {
						continue // the minimum: both bounds mean "from the first row"
					}
					if got, want := bytes.Compare(prefix, excl) >= 0, cmp > 0; got != want {
						t.Fatalf("exclusive bound of token %x: row (%x, %x) >= bound is %v, token > t is %v",
							bt, rw.token, rw.key, got, want)
					}
				}
			}
		})
	}
}

func fixedWidth(p Partitioner) bool {
	switch p.(type) {
	case Murmur3Partitioner, RandomPartitioner:
		return true
	}
	return false
}

func TestMinTokenBoundIsEmpty(t *testing.T) {
	for _, p := range allPartitioners {
		for _, inclusive := range []bool{true, false} {
			if b := p.AppendTokenBound(nil, p.MinToken(), inclusive); len(b) != 0 {
				t.Errorf("%s: bound of the minimum token (inclusive=%v) = %x, want nothing", p.Name(), inclusive, b)
			}
		}
	}
}

// TestNaiveExclusiveBoundsAreWrong records why AppendTokenBound does not
// use "encoded token + 0xFF" as an exclusive bound.
func TestNaiveExclusiveBoundsAreWrong(t *testing.T) {
	// Fixed width: a key starting with 0xFF continues the token with 0xFF.
	m := Murmur3Partitioner{}
	key := []byte{0xff, 0xff}
	naive := append(m.Token(key), 0xff)
	if bytes.Compare(m.AppendRowKey(nil, key), naive) < 0 {
		t.Errorf("expected the row of %x to sort after token+0xFF", key)
	}
	// Escaped token with its end codeword: the same, after the end codeword.
	p := OrderPreservingPartitioner{}
	tok := p.Token([]byte("a"))
	naive = append(appendEscaped(nil, tok), 0xff)
	if bytes.Compare(p.AppendRowKey(nil, []byte{'a'}), naive) >= 0 {
		t.Fatalf("setup: row of key a should sort below enc(a)+0xFF")
	}
	rowSameToken := syntheticRow(p, tok, []byte{0xff})
	if bytes.Compare(rowSameToken, naive) < 0 {
		t.Errorf("expected a row of token %x whose key starts with 0xFF to pass enc(t)+0xFF", tok)
	}
	// Escaped token without its end codeword: a longer token whose next
	// code unit starts with 0x00 (any ASCII character) sorts below it.
	naive = append(appendEscaped(nil, tok)[:len(appendEscaped(nil, tok))-2], 0xff)
	if bytes.Compare(p.AppendRowKey(nil, []byte("ab")), naive) >= 0 {
		t.Errorf("expected the row of ab (token > a) to sort below esc(a)+0xFF")
	}
	// The bound that is used gets all three right.
	excl := p.AppendTokenBound(nil, tok, false)
	if bytes.Compare(rowSameToken, excl) >= 0 || bytes.Compare(p.AppendRowKey(nil, []byte("ab")), excl) < 0 {
		t.Errorf("exclusive bound %x misplaces rows", excl)
	}
	if excl := m.AppendTokenBound(nil, m.Token(key), false); bytes.Compare(m.AppendRowKey(nil, key), excl) >= 0 {
		t.Errorf("Murmur3 exclusive bound %x does not exclude the row of %x", excl, key)
	}
}

func TestMidpoint(t *testing.T) {
	m := Murmur3Partitioner{}
	mt := func(v int64) Token { return murmur3Token(v) }
	murmurCases := []struct{ l, r, want int64 }{
		{0, 10, 5},
		{math.MinInt64, math.MinInt64, -1},
		{math.MinInt64, math.MinInt64 + 1, math.MinInt64},
		{10, 0, -9223372036854775803},
		{-5, -7, 9223372036854775801},
		{5, 5, -9223372036854775803},
		{math.MinInt64, 0, -4611686018427387904},
		{math.MaxInt64, math.MinInt64, math.MaxInt64},
		{math.MaxInt64, math.MaxInt64, -1},
	}
	for _, c := range murmurCases {
		if got := m.Midpoint(mt(c.l), mt(c.r)); !bytes.Equal(got, mt(c.want)) {
			t.Errorf("Murmur3 midpoint(%d, %d) = %s, want %d", c.l, c.r, m.FormatToken(got), c.want)
		}
	}

	rp := RandomPartitioner{}
	parse := func(s string) Token {
		tok, err := rp.ParseToken(s)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	randomCases := []struct{ l, r, want string }{
		{"0", "10", "5"},
		{"-1", "-1", "85070591730234615865843651857942052864"},
		{"10", "0", "85070591730234615865843651857942052869"},
		{"-1", "11", "5"},
		{"3", "4", "3"},
	}
	for _, c := range randomCases {
		if got := rp.FormatToken(rp.Midpoint(parse(c.l), parse(c.r))); got != c.want {
			t.Errorf("Random midpoint(%s, %s) = %s, want %s", c.l, c.r, got, c.want)
		}
	}

	b := ByteOrderedPartitioner{}
	bopCases := []struct{ l, r, want string }{
		{"", "", "80"},
		{"00", "02", "01"},
		{"01", "02", "0180"},
		{"ff", "00", "ff80"},
		{"61", "6200", "6180"},
		{"6200", "61", "e180"},
	}
	for _, c := range bopCases {
		l, _ := b.ParseToken(c.l)
		r, _ := b.ParseToken(c.r)
		if got := b.FormatToken(b.Midpoint(l, r)); got != c.want {
			t.Errorf("ByteOrdered midpoint(%s, %s) = %s, want %s", c.l, c.r, got, c.want)
		}
	}

	o := OrderPreservingPartitioner{}
	oppCases := []struct{ l, r, want string }{
		{"", "", "\u8000"},
		{"a", "c", "b"},
		{"a", "b", "a\u8000"},
		{"a", "bb", "a\u8031"},
	}
	for _, c := range oppCases {
		l, _ := o.ParseToken(c.l)
		r, _ := o.ParseToken(c.r)
		want, _ := o.ParseToken(c.want)
		if got := o.Midpoint(l, r); !bytes.Equal(got, want) {
			t.Errorf("OrderPreserving midpoint(%q, %q) = %x, want %x", c.l, c.r, got, want)
		}
	}
}
