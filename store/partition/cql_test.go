package partition

import (
	"bytes"
	"encoding/hex"
	"math/big"
	"testing"
)

// TestCQLTokenVectors holds the CQL form of every vector's token to the
// value Cassandra 3.11 printed for it: a bigint or varint of the same
// number (Murmur3, Random), the key's bytes (ByteOrdered); and reads it
// back to the same Token. store/cqlstore checks the same against token()
// on real clusters.
func TestCQLTokenVectors(t *testing.T) {
	for _, tc := range tokenVectorFiles {
		f := loadTokenVectors(t, tc.file)
		for _, v := range f.Vectors {
			key, err := hex.DecodeString(v.KeyHex)
			if err != nil {
				t.Fatal(err)
			}
			tok := tc.p.Token(key)
			c, err := CQLToken(tc.p, tok)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.file, v.Desc, err)
			}
			var printed string
			switch tc.p.(type) {
			case ByteOrderedPartitioner:
				printed = hex.EncodeToString(c)
			default:
				printed = signed(c).String()
			}
			if printed != v.Token {
				t.Errorf("%s %s: CQL token %x reads %s, Cassandra printed %s", tc.file, v.Desc, c, printed, v.Token)
			}
			back, err := ParseCQLToken(tc.p, c)
			if err != nil || !bytes.Equal(back, tok) {
				t.Errorf("%s %s: ParseCQLToken(%x) = %x, %v; want %x", tc.file, v.Desc, c, back, err, tok)
			}
		}
	}
}

// signed reads a big-endian two's complement integer, as Java's
// BigInteger(byte[]) does.
func signed(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// TestCQLTokenEdges: the minimum tokens, RandomPartitioner's largest and
// smallest tokens in their minimal varint form, and values that are no
// token.
func TestCQLTokenEdges(t *testing.T) {
	two127 := new(big.Int).Lsh(big.NewInt(1), 127)
	rp := RandomPartitioner{}
	for _, c := range []struct {
		name string
		p    Partitioner
		tok  Token
		cql  string // hex
	}{
		{"murmur3 minimum", Murmur3Partitioner{}, Token{}, "8000000000000000"},
		{"random minimum", rp, Token{}, "ff"},
		{"random zero", rp, make(Token, 16), "00"},
		{"random 127", rp, append(make(Token, 15), 0x7f), "7f"},
		{"random 128", rp, append(make(Token, 15), 0x80), "0080"},
		{"random 2**127", rp, Token(two127.FillBytes(make([]byte, 16))), "0080000000000000000000000000000000"},
		{"byte ordered minimum", ByteOrderedPartitioner{}, Token{}, ""},
	} {
		got, err := CQLToken(c.p, c.tok)
		if err != nil || hex.EncodeToString(got) != c.cql {
			t.Errorf("%s: CQLToken = %x, %v; want %s", c.name, got, err, c.cql)
		}
		want, _ := hex.DecodeString(c.cql)
		back, err := ParseCQLToken(c.p, want)
		if err != nil || !bytes.Equal(back, c.tok) {
			t.Errorf("%s: ParseCQLToken(%s) = %x, %v; want %x", c.name, c.cql, back, err, c.tok)
		}
	}
	// Sign-extended -1 is the minimum too; nothing else negative or past
	// 2**127 is a token.
	if tok, err := ParseCQLToken(rp, []byte{0xff, 0xff}); err != nil || len(tok) != 0 {
		t.Errorf("ffff: %x, %v; want the minimum", tok, err)
	}
	past := new(big.Int).Add(two127, big.NewInt(1))
	wide := make([]byte, 18) // 2**136
	wide[0] = 1
	for _, bad := range [][]byte{{}, {0xfe}, {0x80}, append([]byte{0}, past.Bytes()...), wide} {
		if tok, err := ParseCQLToken(rp, bad); err == nil {
			t.Errorf("varint %x read as token %x, want an error", bad, tok)
		}
	}
	if _, err := ParseCQLToken(Murmur3Partitioner{}, []byte{1, 2}); err == nil {
		t.Error("a Murmur3 token of 2 bytes was read")
	}
}

// FuzzParseCQLToken: whatever a cluster sends, ParseCQLToken returns an
// error or a token whose CQL form reads back to it.
func FuzzParseCQLToken(f *testing.F) {
	f.Add(byte(0), []byte{0x80, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(1), []byte{0xff})
	f.Add(byte(1), []byte{0, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(byte(2), []byte("key"))
	parts := []Partitioner{Murmur3Partitioner{}, RandomPartitioner{}, ByteOrderedPartitioner{}}
	f.Fuzz(func(t *testing.T, which byte, b []byte) {
		p := parts[int(which)%len(parts)]
		tok, err := ParseCQLToken(p, b)
		if err != nil {
			return
		}
		c, err := CQLToken(p, tok)
		if err != nil {
			t.Fatalf("%s: token %x read from %x has no CQL form: %v", p.Name(), tok, b, err)
		}
		again, err := ParseCQLToken(p, c)
		if err != nil || !bytes.Equal(again, tok) {
			t.Fatalf("%s: %x -> %x -> %x -> %x, %v", p.Name(), b, tok, c, again, err)
		}
	})
}
