package marshal

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"
)

// TestCompositeSliceVectors filters Cassandra's stored names by the key
// range each get_slice query's bounds give and compares with what
// Cassandra returned.
func TestCompositeSliceVectors(t *testing.T) {
	var v compositeSliceVectors
	loadVectors(t, "composite_slices.json", &v)
	typ, err := Parse(v.Comparator)
	if err != nil {
		t.Fatal(err)
	}
	stored := make([][]byte, len(v.Stored))
	keys := make([][]byte, len(v.Stored))
	for i, h := range v.Stored {
		stored[i] = unhex(t, h)
		keys[i] = typ.AppendKey(nil, stored[i])
		if i > 0 && bytes.Compare(keys[i-1], keys[i]) >= 0 {
			t.Errorf("stored order: key of %s not above the previous one", h)
		}
	}
	inserted := map[string]bool{}
	for _, h := range v.Inserted {
		inserted[hex.EncodeToString(typ.Normalize(unhex(t, h)))] = true
	}
	if len(inserted) != len(stored) {
		t.Errorf("%d distinct inserted names, %d stored", len(inserted), len(stored))
	}

	ran := 0
	for _, q := range v.Queries {
		start, finish := unhex(t, q.Start), unhex(t, q.Finish)
		if q.Error != nil {
			// Bound validation is the type's; inverted ranges are the caller's.
			for _, b := range [][]byte{start, finish} {
				if err := typ.Validate(b); err != nil && err.Error() != q.Error.Why {
					t.Errorf("%s: Validate = %q, want %q", q.Description, err, q.Error.Why)
				}
			}
			continue
		}
		for _, b := range [][]byte{start, finish} {
			if err := typ.Validate(b); err != nil {
				t.Errorf("%s: bound %x: %v", q.Description, b, err)
			}
		}
		lowBound, highBound := start, finish
		if q.Reversed {
			lowBound, highBound = finish, start
		}
		var lower, upper []byte
		if len(lowBound) > 0 {
			lower = typ.AppendLowerBound(nil, lowBound)
		}
		if len(highBound) > 0 {
			upper = typ.AppendUpperBound(nil, highBound)
		}
		var got []string
		for i, k := range keys {
			// The store appends a suffix to every key; 0x00 stands for it.
			k = append(slices.Clip(k), 0x00)
			if (lower == nil || bytes.Compare(k, lower) >= 0) && (upper == nil || bytes.Compare(k, upper) < 0) {
				got = append(got, hex.EncodeToString(stored[i]))
			}
		}
		if q.Reversed {
			slices.Reverse(got)
		}
		if len(got) > q.Count {
			got = got[:q.Count]
		}
		if !slices.Equal(got, q.Result) && !(len(got) == 0 && len(q.Result) == 0) {
			t.Errorf("%s:\n got  %v\n want %v", q.Description, got, q.Result)
		}
		ran++
	}
	if ran < 35 {
		t.Fatalf("only %d slice queries ran", ran)
	}

	for _, p := range v.NamesPredicates {
		var got []string
		for i, k := range keys {
			for _, h := range p.Names {
				n := unhex(t, h)
				if typ.Validate(n) == nil && bytes.Equal(typ.AppendKey(nil, typ.Normalize(n)), k) {
					got = append(got, hex.EncodeToString(stored[i]))
					break
				}
			}
		}
		if !slices.Equal(got, p.Result) && !(len(got) == 0 && len(p.Result) == 0) {
			t.Errorf("names %v: got %v, want %v", p.Names, got, p.Result)
		}
	}
}
