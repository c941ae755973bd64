package marshal

import (
	"bytes"
	"encoding/hex"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// TestOrderingVectors checks every comparator of ordering.json: the
// described name, Cassandra's order under Compare and under the keys, the
// equal groups, a sort of the inserted names and the rejections.
func TestOrderingVectors(t *testing.T) {
	var v orderingVectors
	loadVectors(t, "ordering.json", &v)
	if len(v.Types) != 22 {
		t.Fatalf("ordering.json has %d comparators, want 22", len(v.Types))
	}
	for _, vec := range v.Types {
		t.Run(vec.Comparator, func(t *testing.T) {
			typ, err := Parse(vec.Comparator)
			if err != nil {
				t.Fatal(err)
			}
			if typ.Name() != vec.Described {
				t.Errorf("Name() = %s, described as %s", typ.Name(), vec.Described)
			}
			order := decodeNames(t, typ, vec.OrderHex)
			for i := 1; i < len(order); i++ {
				a, b := order[i-1], order[i]
				if c := typ.Compare(a, b); c >= 0 {
					t.Errorf("Compare(%x, %x) = %d, want < 0", a, b, c)
				}
				if c := typ.Compare(b, a); c <= 0 {
					t.Errorf("Compare(%x, %x) = %d, want > 0", b, a, c)
				}
				ka, kb := typ.AppendKey(nil, a), typ.AppendKey(nil, b)
				if bytes.Compare(ka, kb) >= 0 {
					t.Errorf("keys not increasing: %x (%x) >= %x (%x)", ka, a, kb, b)
				}
			}
			for _, g := range vec.EqualGroups {
				names := decodeNames(t, typ, g.Names)
				k0 := typ.AppendKey(nil, names[0])
				for _, n := range names[1:] {
					if c := typ.Compare(names[0], n); c != 0 {
						t.Errorf("Compare(%x, %x) = %d, want 0", names[0], n, c)
					}
					if k := typ.AppendKey(nil, n); !bytes.Equal(k, k0) {
						t.Errorf("equal names %x and %x have keys %x and %x", names[0], n, k0, k)
					}
				}
			}
			checkSortedLikeCassandra(t, typ, decodeNames(t, typ, vec.InsertedHex), order)
			for _, r := range vec.Rejected {
				name := unhex(t, r.NameHex)
				if len(name) == 0 {
					continue // "column name must not be empty" is the caller's check
				}
				if err := typ.Validate(name); err == nil || err.Error() != r.Why {
					t.Errorf("Validate(%s) = %v, want %q", r.NameHex, err, r.Why)
				}
			}
		})
	}
}

// decodeNames decodes, validates and normalises stored names.
func decodeNames(t *testing.T, typ Type, hexes []string) [][]byte {
	t.Helper()
	out := make([][]byte, len(hexes))
	for i, h := range hexes {
		b := unhex(t, h)
		if err := typ.Validate(b); err != nil {
			t.Fatalf("Validate(%s): %v", h, err)
		}
		out[i] = typ.Normalize(b)
	}
	return out
}

// checkSortedLikeCassandra sorts a shuffled copy of names by Compare and by
// key and checks that runs of equal names line up with Cassandra's order
// (which holds one member of each run).
func checkSortedLikeCassandra(t *testing.T, typ Type, names, order [][]byte) {
	t.Helper()
	rng := rand.New(rand.NewSource(42))
	for _, byKey := range []bool{false, true} {
		shuffled := slices.Clone(names)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if byKey {
			slices.SortStableFunc(shuffled, func(a, b []byte) int {
				return bytes.Compare(typ.AppendKey(nil, a), typ.AppendKey(nil, b))
			})
		} else {
			slices.SortStableFunc(shuffled, typ.Compare)
		}
		var runs [][][]byte
		for i, n := range shuffled {
			if i > 0 && typ.Compare(shuffled[i-1], n) == 0 {
				runs[len(runs)-1] = append(runs[len(runs)-1], n)
				continue
			}
			runs = append(runs, [][]byte{n})
		}
		if len(runs) != len(order) {
			t.Fatalf("byKey=%v: %d distinct names, Cassandra returned %d", byKey, len(runs), len(order))
		}
		for i, run := range runs {
			if !slices.ContainsFunc(run, func(n []byte) bool { return bytes.Equal(n, order[i]) }) {
				t.Errorf("byKey=%v: position %d holds %s, Cassandra has %x", byKey, i, hexList(run), order[i])
			}
		}
	}
}

func hexList(bs [][]byte) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = hex.EncodeToString(b)
	}
	return "[" + strings.Join(s, " ") + "]"
}
