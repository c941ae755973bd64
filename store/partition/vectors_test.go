package partition

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"os"
	"slices"
	"testing"

	"github.com/thriftbridge/thriftbridge/internal/golden"
)

// tokenVectorFile is the layout of testdata/cassandra-3.11/*_tokens.json.
type tokenVectorFile struct {
	Partitioner string `json:"partitioner"`
	Count       int    `json:"count"`
	EmptyKey    struct {
		KeyHex string `json:"key_hex"`
		Token  string `json:"token"`
	} `json:"empty_key"`
	Vectors []struct {
		KeyHex    string `json:"key_hex"`
		KeyLength int    `json:"key_length"`
		Desc      string `json:"desc"`
		Token     string `json:"token"`
	} `json:"vectors"`
}

// loadTokenVectors reads name of the golden vectors, testdata/cassandra-3.11
// at the module root. The vectors are part of the repository, so a missing
// file fails the test.
func loadTokenVectors(t *testing.T, name string) tokenVectorFile {
	t.Helper()
	raw, err := os.ReadFile(golden.Path(t, "testdata", "cassandra-3.11", name))
	if err != nil {
		t.Fatalf("golden vectors: %v (they are part of the repository)", err)
	}
	var f tokenVectorFile
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	if len(f.Vectors) == 0 || len(f.Vectors) != f.Count {
		t.Fatalf("%s: %d vectors, header says %d", name, len(f.Vectors), f.Count)
	}
	return f
}

var tokenVectorFiles = []struct {
	file string
	p    Partitioner
}{
	{"murmur3_tokens.json", Murmur3Partitioner{}},
	{"random_partitioner_tokens.json", RandomPartitioner{}},
	{"byte_ordered_partitioner_tokens.json", ByteOrderedPartitioner{}},
}

func TestTokenVectors(t *testing.T) {
	for _, tc := range tokenVectorFiles {
		t.Run(tc.file, func(t *testing.T) {
			f := loadTokenVectors(t, tc.file)
			p := tc.p
			if f.Partitioner != p.Name() {
				t.Fatalf("file is for %s, testing %s", f.Partitioner, p.Name())
			}
			if got := p.FormatToken(p.MinToken()); got != f.EmptyKey.Token {
				t.Errorf("FormatToken(MinToken()) = %q, want %q", got, f.EmptyKey.Token)
			}
			if got := p.FormatToken(p.Token(nil)); got != f.EmptyKey.Token {
				t.Errorf("FormatToken(Token(empty key)) = %q, want %q", got, f.EmptyKey.Token)
			}
			for _, v := range f.Vectors {
				key, err := hex.DecodeString(v.KeyHex)
				if err != nil || len(key) != v.KeyLength {
					t.Fatalf("%s: bad key_hex (%d bytes, want %d): %v", v.Desc, len(key), v.KeyLength, err)
				}
				tok := p.Token(key)
				if got := p.FormatToken(tok); got != v.Token {
					t.Errorf("%s (%d bytes): token %s, want %s", v.Desc, len(key), got, v.Token)
				}
				back, err := p.ParseToken(v.Token)
				if err != nil || !bytes.Equal(back, tok) {
					t.Errorf("%s: ParseToken(%q) = %x, %v; want %x", v.Desc, v.Token, back, err, tok)
				}
			}
		})
	}
}

// TestTokenVectorsOrder checks that Token bytes order as Cassandra's
// tokens do (numerically, for the hashed partitioners), and that row
// prefixes order as (token, key).
func TestTokenVectorsOrder(t *testing.T) {
	for _, tc := range tokenVectorFiles {
		t.Run(tc.file, func(t *testing.T) {
			f := loadTokenVectors(t, tc.file)
			p := tc.p
			type entry struct {
				key   []byte
				token Token
				value *big.Int
			}
			var entries []entry
			for _, v := range f.Vectors {
				key, _ := hex.DecodeString(v.KeyHex)
				e := entry{key: key, token: p.Token(key)}
				if !p.Ordered() {
					e.value, _ = new(big.Int).SetString(v.Token, 10)
				}
				entries = append(entries, e)
			}
			if !p.Ordered() {
				byValue := slices.Clone(entries)
				slices.SortStableFunc(byValue, func(a, b entry) int { return a.value.Cmp(b.value) })
				byBytes := slices.Clone(entries)
				slices.SortStableFunc(byBytes, func(a, b entry) int { return bytes.Compare(a.token, b.token) })
				for i := range byValue {
					if byValue[i].value.Cmp(byBytes[i].value) != 0 {
						t.Fatalf("position %d: numeric order has %s, Token byte order has %s", i, byValue[i].value, byBytes[i].value)
					}
				}
			}
			keys := make([][]byte, len(entries))
			for i, e := range entries {
				keys[i] = e.key
			}
			checkRowKeyOrder(t, p, keys)
		})
	}
}
