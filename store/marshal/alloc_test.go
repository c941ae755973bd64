package marshal

import (
	"encoding/hex"
	"testing"
)

// TestHotPathAllocations: Compare and AppendKey of the simple types, and
// of composites of them, run per cell and must not allocate.
func TestHotPathAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	tests := []struct{ typ, a, b string }{
		{"BytesType", "0102", "0103"},
		{"UTF8Type", "61", "62"},
		{"LongType", "0000000000000001", "ffffffffffffffff"},
		{"Int32Type", "00000001", "ffffffff"},
		{"IntegerType", "0001", "ff"},
		{"DecimalType", "000000010a", "0000000264"},
		{"DecimalType", "0000000105", "fffffffe05"},
		{"DoubleType", "3ff0000000000000", "7ff8000000000001"},
		{"FloatType", "3f800000", "7fc00000"},
		{"BooleanType", "00", "01"},
		{"TimestampType", "0000000000000001", "ffffffffffffffff"},
		{"UUIDType", "5fe94000f5bc11ea8000000000000000", "123456789abc4ef00000000000000000"},
		{"TimeUUIDType", "5fe94000f5bc11ea8000000000000000", "5fe94000f5bc11ea0000000000000000"},
		{"LexicalUUIDType", "5fe94000f5bc11ea8000000000000000", "5fe94000f5bc11ea0000000000000000"},
		{"InetAddressType", "7f000001", "00000000000000000000000000000001"},
		{"ReversedType(LongType)", "0000000000000001", "ffffffffffffffff"},
		{"CompositeType(UTF8Type,LongType)", "000161000008000000000000000500", "000161000008000000000000000600"},
		{"DynamicCompositeType(s=>UTF8Type,l=>LongType)", "807300016100806c0008000000000000000500", "0008555446385479706500016300"},
	}
	for _, tt := range tests {
		typ := mustParse(t, tt.typ)
		a, _ := hex.DecodeString(tt.a)
		b, _ := hex.DecodeString(tt.b)
		if n := testing.AllocsPerRun(100, func() { typ.Compare(a, b) }); n != 0 {
			t.Errorf("%s.Compare allocates %.0f times", tt.typ, n)
		}
		dst := make([]byte, 0, 256)
		if n := testing.AllocsPerRun(100, func() { typ.AppendKey(dst[:0], a) }); n != 0 {
			t.Errorf("%s.AppendKey allocates %.0f times", tt.typ, n)
		}
	}
}
